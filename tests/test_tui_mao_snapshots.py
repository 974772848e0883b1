"""Snapshots of the Mao table and the rule builder (issue 13), in English and
Chinese at 80×24 and 120×40, from a fixed game (a scripted deal, no clock,
no network): ``pytest tests/test_tui_mao_snapshots.py --snapshot-update``
rewrites them after a deliberate change.

The game: seat 1 wins round 0 and writes a rule (M29's "two skips twice");
you (seat 0) win round 1 — the builder snapshot is taken there, a rule
composed with its menus and shown in words — and write "hearts must be
greeted with “I love you”". The table snapshot is round 2: seat 2 plays a
heart without the words and your rule penalises it, seat 1 calls a penalty
that is no violation (a bad call, M20) and puts your rule to the vote (M30);
it is your turn, the timer shows 7 s (the clock is fixed), and you have put
your words in line for the 7♥.

Each test also reads the screen as the snapshot draws it, at every size,
and checks that nothing the person needs is cut off."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App
from textual.widgets import Static

from engines.cards import Card
from engines.mao import GAME, author_verdict
from engines.mao_author import RuleAuthor
from engines.mao_events import MaoConfig, PlayCard, Propose
from engines.mao_rules import M29_EXAMPLES, Cond, Effect, Rule
from tests.test_mao_script import Script
from tests.test_tui_snapshots import LANGS, SIZES, ScreenApp
from tui.screens.mao import MaoScreen
from tui.screens.rule_builder import RuleBuilder
from tui.story import story

HEARTS_LOVE = Rule("play", (Cond("suit", (1,)),), (Effect("require", phrase="I love you"),))
BUILDER_KEYS = ("down", "right", "right_square_bracket", "down", "down", "right", "right")
"""The builder's keys for HEARTS_LOVE (as tests/test_tui_mao.py presses them)."""


class _Snap:
    """What a session's snapshot holds for seat 0."""

    def __init__(self, state: Any, known: dict[int, Card]) -> None:
        self.state, self.known = state, known
        self.view = GAME.view(state, 0, known)


def _out(s: Script, seat: int, card: str, *says: str) -> None:
    """``seat`` plays its last card; the verdicts are made but the next
    round is not dealt yet (``Script.deal`` deals it as scripted)."""
    s.table.submit(PlayCard(seat, s.position(seat, card), Card.parse(card), says))
    for slot, (rule, _salt) in s.secrets.items():
        verdict = author_verdict(s.state, slot, rule)
        if verdict is not None:
            s.table.submit(verdict)


def _game(author: RuleAuthor, *, round_2: bool) -> Script:
    """The fixed game of the module docstring; stops when you have won
    round 1 (``round_2`` False) or in round 2 at your turn."""
    s = Script(
        [["3♣", "Q♣", "K♥"], ["2♦", "6♣", "Q♥"], ["3♦", "10♦", "K♣"]],
        "2♣",
        ["9♣"],
        config=MaoConfig(hand_size=3),
    )
    s.draw(0)
    s.play(1, "2♦")
    s.play(2, "3♦")
    s.play(0, "3♣")
    s.play(1, "6♣", "last card")
    s.play(2, "K♣", "last card")
    s.play(0, "Q♣")
    _out(s, 1, "Q♥", "Mao")
    s.deal(
        [["Q♣", "10♣", "10♥"], ["3♣", "9♥", "4♠"], ["K♣", "6♥", "9♠"]],
        "3♦",
        ["5♦", "4♦", "6♦", "5♠"],
    )
    s.add_rule(1, M29_EXAMPLES["two skips twice"], bytes(range(32)))
    for act in (
        lambda: s.play(1, "3♣"),
        lambda: s.play(2, "K♣"),
        lambda: s.play(0, "Q♣"),
        lambda: s.draw(1),
        lambda: s.draw(2),
        lambda: s.play(0, "10♣", "last card"),
        lambda: s.draw(1),
        lambda: s.draw(2),
    ):
        act()
        s.judge()
    _out(s, 0, "10♥", "Mao")
    s.deal([["K♠", "7♥", "J♣"], ["Q♥", "9♠", "3♣"], ["5♥", "10♣", "6♦"]], "4♥")
    assert s.state.wins == (1, 1, 0) and s.state.awaiting_rule == 0
    if not round_2:
        return s
    s.submit(author.commit(s.state, 0, HEARTS_LOVE))
    s.secrets[len(s.state.rules) - 1] = (HEARTS_LOVE, author.written[-1][1])
    s.play(2, "5♥")  # no “I love you”: your rule's verdict penalises it
    s.judge()
    s.call(1, 2, "bad card")  # no bad card: the call comes back (M20)
    s.submit(Propose(1, "drop", 1))
    assert s.state.turn == 0 and [n.phrase for n in s.state.notes[-2:]] == [
        "failure to say I love you",
        "bad call",
    ]
    return s


async def _show(app: ScreenApp, round_2: bool) -> MaoScreen:
    author = RuleAuthor(salt_source=lambda n: bytes(n))
    s = _game(author, round_2=round_2)
    app.game = "mao"
    screen = MaoScreen(seat=0, author=author)
    screen.timer_left = lambda: None if screen.timer is None else 7.0  # type: ignore[method-assign]
    await app.push_screen(screen)
    for event in s.table.events:
        line = story(str(event), app.lang)
        if line:
            screen.story(line)
    screen.refresh_table(_Snap(s.state, s.table.known[0]), GAME)
    if round_2:
        screen.words = ["have a nice day", "I love you"]  # put in line for the 7♥
        screen._show_words()
    return screen


def _table(app: ScreenApp) -> Any:
    return _show(app, round_2=True)


def _builder(app: ScreenApp) -> Any:
    return _show(app, round_2=False)  # you have won round 1: the builder opens by itself


async def _settle(pilot: Any) -> None:
    """Until the screen is drawn as it stays (the feed scrolled to its end)."""
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def _text(app: App[Any]) -> str:
    """The screen as drawn (every line of the terminal, as plain text)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


BOX = str.maketrans("", "", "│╭╮╰╯─▊▎▔▁┃━┏┓┗┛█▀▄▅▃▂")


def _cut_off(shown: str, wanted: list[str]) -> list[str]:
    """What of ``wanted`` the screen does not show (a wrapped line counts)."""
    flat = " ".join(shown.translate(BOX).split())
    return [w for w in wanted if " ".join(w.split()) not in flat]


TABLE_WANTS = {
    "en": [
        "round 3",
        "your turn",
        "⏱ 7 s",
        "top card",
        "seat 2: 3 cards",
        "K♠",
        "7♥",
        "J♣",
        "rule 0 (seat 1): ?",
        "rule 1 (yours)",
        "seat 1 proposes to drop rule 1",
        "y/n to vote",
        "“have a nice day” “I love you”",
        "“failure to say I love you”",
        "“bad call”",
    ],
    "zh": [
        "第 3 局",
        "轮到你",
        "⏱ 7 秒",
        "顶牌",
        "K♠",
        "7♥",
        "J♣",
        "规则 0（座位1）：？",
        "规则 1（你写的）",
        "按 y/n 投票",
        "“have a nice day” “I love you”",
    ],
}
BUILDER_WANTS = {
    "en": [
        "When: a card is played",
        "If: the card's suit: ♥",
        "Then: the player must say “I love you”",
        "Penalty phrase",
        "In words: When a card is played and the card is ♥: the player must say “I love you”",
        "✓ fair and playable: enter commits it",
        "enter commit · x no rule · esc later",
    ],
    "zh": [
        "何时: 出牌时",
        "如果: 这张牌的花色: ♥",
        "那么: 出牌者必须说 “我爱你”",
        "罚语",
        "规则原文： 出牌时，如果这张牌是♥：出牌者必须说 “我爱你”",
        "✓ 公平可玩：按回车提交",
        "回车 提交 · x 不加规则 · esc 稍后",
    ],
}
"""The builder's menus, the rule in words, the verdict and its keys (the
phrase menu speaks the table's language: “I love you” is 我爱你 in zh)."""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
def test_mao_table_snapshot(snap_compare, lang: str, size: tuple[int, int]) -> None:
    seen: list[str] = []

    async def read(pilot: Any) -> None:
        await _settle(pilot)
        seen.append(_text(pilot.app))

    assert snap_compare(ScreenApp(_table, lang), terminal_size=size, run_before=read)
    missing = _cut_off(seen[0], TABLE_WANTS[lang])
    assert not missing, f"cut off at {size}: {missing}\n{seen[0]}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
def test_rule_builder_snapshot(snap_compare, lang: str, size: tuple[int, int]) -> None:
    seen: list[str] = []

    async def compose_the_rule(pilot: Any) -> None:
        await pilot.pause()
        assert isinstance(pilot.app.screen, RuleBuilder)
        await pilot.press(*BUILDER_KEYS)
        await _settle(pilot)
        words = str(pilot.app.screen.query_one("#rb-words", Static).render())
        assert ("我爱你" if lang == "zh" else "I love you") in words and "♥" in words
        seen.append(_text(pilot.app))

    assert snap_compare(ScreenApp(_builder, lang), terminal_size=size, run_before=compose_the_rule)
    missing = _cut_off(seen[0], BUILDER_WANTS[lang])
    assert not missing, f"cut off at {size}: {missing}\n{seen[0]}"
