"""The Bomb game and Mao as a person meets them (issue 26): detonating asks
once; game over tells the story (every identity, role and side, who blew up
whom and why — K15–K25; every secret rule and what it judged — M27/M28)
and escape there goes back to the table, never out; the round-over banner
(M26) holds the next round's timer; a feed without engine ids; the 7 chain
explained (M9). The words are checked in both languages."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import pytest
from textual.widgets import Static

from engines.bomb import GAME as BOMB
from engines.bomb import BombState, Detonate, Pass, _judge
from engines.cards import Card
from engines.mao import GAME as MAO
from engines.mao_author import RuleAuthor
from tests.bombmao_tables import (
    LOG,
    OUTCOME,
    VERDICT,
    TableApp,
    bomb_over,
    bomb_snap,
    bomb_until,
    mao_over,
    mao_snap,
    my_window,
)
from tui.screens import mao_rounds
from tui.screens.bomb import BombScreen
from tui.screens.bomb_words import ending, phase_words
from tui.screens.mao import MaoScreen
from tui.screens.mao_news import chain_line, feed_line, rules_at_end
from tui.screens.table_over import StoryOverScreen

NAMES = ["ann", "bob", "carol", "dan", "eve"]


def _name(seat: int) -> str:
    return NAMES[seat]


def _text(widget: Any) -> str:
    return str(widget.render())


# ---------------------------------------------------------------- Bomb: words


def _judged(ids: str, assassin: int | None, target: int | None) -> BombState:
    """A Bomb end with these identities (K17), judged by the engine."""
    state = BOMB.new(BOMB.Config(), len(ids.split()))
    cards = tuple(Card.parse(c) for c in ids.split())
    ended = "detonation" if assassin is not None else "time limit"
    return _judge(replace(state, identities=cards, assassin=assassin, bomb=target,
                          ended_by=ended, last_actor=1))  # fmt: skip


ENDINGS = [
    # identities (seat 0…), assassin, target, what the story must say
    ("K♠ Q♥ 2♠ 5♥", 0, 1, "the enemy captain: the black alliance wins (K18)"),
    ("K♠ Q♥ 2♠ 5♥", 0, 2, "a traitor of their own alliance: the black alliance wins (K19)"),
    ("K♠ Q♥ 2♠ 5♥", 2, 1, "was not a captain — only captains may kill (K5): the red alliance"),
    ("K♠ Q♥ 2♠ 5♥", 0, 3, "was neither an enemy captain nor a traitor"),
    ("K♠ Q♥ BJ 5♥", 2, 1, "was a civilian: a civilian who detonates loses alone"),
    ("K♠ Q♥ BJ 5♥", 0, 2, "The target (carol) was a civilian"),
    ("K♠ Q♥ BJ 5♥", None, None, "both alliances lose, the civilians win (K25)"),
]


@pytest.mark.parametrize(("ids", "assassin", "target", "said"), ENDINGS)
def test_the_bomb_ending_says_who_was_who_and_why(ids, assassin, target, said) -> None:
    state = _judged(ids, assassin, target)
    story = " ".join(ending(state, _name, "en"))
    assert said in story, story
    winners = ", ".join(NAMES[s] for s in state.result.winners)  # type: ignore[union-attr]
    assert f"Winners: {winners or 'nobody'}." in story
    if assassin is not None:
        assert f"{NAMES[assassin]} shouted “detonate!” and blew up {NAMES[target]}." in story
        assert f"bob placed the bomb in front of {NAMES[target]}." in story
    zh = " ".join(ending(state, _name, "zh"))
    assert not any(w in zh for w in ("wins", "alliance", "captain", "Winners")), zh


def test_bomb_phases_are_said_in_player_words() -> None:
    sim = bomb_until(my_window)
    view = BOMB.view(sim.state, 0, sim.known[0])
    said = phase_words(view, 0, _name, "en")
    assert said.startswith("the bomb is in front of ") and "window" not in said
    placing = bomb_until(lambda s: s.state.phase == "place_bomb")
    seat = placing.state.turn
    view = BOMB.view(placing.state, seat, placing.known[seat])
    said = phase_words(view, seat, _name, "en")
    assert said == "7 cards: place the bomb before a player (←/→, enter)"
    other = (seat + 1) % placing.state.seats
    view = BOMB.view(placing.state, other, placing.known[other])
    assert phase_words(view, other, _name, "en") == f"{NAMES[seat]} is placing the bomb"


# ---------------------------------------------------------------- Bomb: keys


def test_detonate_asks_once_and_esc_says_no() -> None:
    asyncio.run(_detonate())


async def _detonate() -> None:
    sim = bomb_until(my_window)
    screen = BombScreen(seat=0)

    async def show(app: TableApp) -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)

    app = TableApp(show, names=NAMES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        claim = screen.query_one("#claim", Static)
        assert "💣 detonate?" in _text(claim) and "d detonates, n passes" in _text(claim)
        await pilot.pause()
        keys = _footer(screen)  # the window's keys are the ones shown at 80 columns
        assert keys["detonate!"] and keys["pass"] and not keys.get("play A"), keys  # dimmed or gone
        await pilot.press("d")
        bomb = sim.state.bomb
        asked = "blow yourself up" if bomb == 0 else f"blow up {NAMES[bomb]}"
        assert app.submitted == []  # asked, not done
        assert f"press d again to {asked} — it ends the game" in _text(claim)
        await pilot.press("escape")
        assert app.submitted == [] and "💣 detonate?" in _text(claim)
        await pilot.press("d", "d")
        assert app.submitted == [Detonate(0)]
        await pilot.press("n")  # passing never asks
        assert app.submitted[-1] == Pass(0)


def _footer(screen: Any) -> dict[str, bool]:
    """The footer's keys as drawn: description → whether it does something now."""
    from textual.widgets._footer import FooterKey

    return {k.description: not k.has_class("-disabled") for k in screen.query(FooterKey)}


def test_bomb_game_over_tells_the_story_and_esc_goes_back() -> None:
    asyncio.run(_bomb_over())


async def _bomb_over() -> None:
    sim = bomb_over()
    screen = BombScreen(seat=0)

    async def show(app: TableApp) -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)
        await app.push_screen(screen.game_over(OUTCOME, VERDICT, LOG, False))

    app = TableApp(show, names=NAMES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        over = app.screen
        assert isinstance(over, StoryOverScreen)
        details = _text(over.query_one("#details", Static))
        state: BombState = sim.state
        for seat in range(state.seats):
            name = "you" if seat == 0 else NAMES[seat]
            assert f"{name}: {state.identities[seat]} — " in details, details
        assert "shouted “detonate!” and blew up" in details and "placed the bomb" in details
        await pilot.press("escape")  # back to the table, not out of the program
        await pilot.pause()
        assert app.screen is screen and app.is_running
        assert "game over: esc shows the result" in _text(screen.query_one("#claim", Static))
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, StoryOverScreen)
        await pilot.press("f2")  # the story in Chinese too
        await pilot.pause()
        assert "炸了" in _text(app.screen.query_one("#details", Static))


# ---------------------------------------------------------------- Mao


def test_the_feed_has_no_engine_ids() -> None:
    assert feed_line("time up: turn 0.16 seat 0", _name, "en") == (
        "time up: ann did not play or draw in time (M23)"
    )
    assert feed_line("seat 1 adds a secret rule 7d5ecdc183eb…", _name, "en") == (
        "bob adds a secret rule"
    )
    assert feed_line("时间到：座位2 超时", _name, "zh") == "时间到：carol 没有按时出牌或摸牌（M23）"
    assert feed_line("seat 1 plays 7♠", _name, "en") == "seat 1 plays 7♠"  # the rest as it was


def test_the_seven_chain_is_explained() -> None:
    view = {"chain": 2, "turn": 0}
    mine = chain_line(view, 0, _name, "en")
    assert mine is not None
    assert "play a 7 and say “have a very very nice day”" in mine
    assert "“thank you very much” and take 2 cards (M9)" in mine
    theirs = chain_line({"chain": 1, "turn": 1}, 0, _name, "en")
    assert theirs == "7 chain of 1: bob must play a 7 or say “thank you” and take 1 cards (M9)"
    assert chain_line({"chain": 0, "turn": 0}, 0, _name, "en") is None
    assert "M9" in (chain_line(view, 0, _name, "zh") or "")


def test_the_secret_rules_are_revealed_at_the_end_with_what_they_judged() -> None:
    s, _author = mao_over()
    lines = rules_at_end(s.state, _name, "en")
    text = "\n".join(lines)
    assert "Rounds won: ann 1, bob 1, carol 0." in text
    assert "rule 1 by ann: When a card is played and the card is ♥: the player must say" in text
    assert "carol played 5♥ → carol “failure to say I love you” +1" in text, text
    assert "rule 0 by bob:" in text
    zh = "\n".join(rules_at_end(s.state, _name, "zh"))
    assert "秘密规则" in zh and "carol 出了 5♥" in zh


def test_mao_game_over_lists_the_rules_and_esc_goes_back() -> None:
    asyncio.run(_mao_over())


async def _mao_over() -> None:
    s, author = mao_over()
    screen = MaoScreen(seat=0, author=author)

    async def show(app: TableApp) -> None:
        await app.push_screen(screen)
        screen.refresh_table(mao_snap(s), MAO)
        await app.push_screen(screen.game_over(OUTCOME, VERDICT, LOG, True))

    app = TableApp(show, game="mao", names=NAMES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        details = _text(app.screen.query_one("#details", Static))
        assert "The secret rules:" in details and "rule 1 by you:" in details
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and app.is_running
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, StoryOverScreen)


class _Session:
    """The bits of a session the hold talks to (``hold_timers``)."""

    player = RuleAuthor()  # a player already adopted

    def __init__(self) -> None:
        self.held: list[bool] = []

    def hold_timers(self, held: bool) -> None:
        self.held.append(held)


def test_the_round_banner_holds_the_next_round_s_timer(monkeypatch) -> None:
    monkeypatch.setattr(mao_rounds, "ROUND_PAUSE", 0.6)
    monkeypatch.setattr(mao_rounds, "AFTER_DEAL", 0.3)
    asyncio.run(_banner())


async def _banner() -> None:
    from tests.test_tui_mao_snapshots import _game

    author = RuleAuthor(salt_source=lambda n: bytes(n))
    s = _game(author, round_2=False)  # you (seat 0) have just won round 2
    screen = MaoScreen(seat=0, author=author)
    session = _Session()
    before = replace(s.state, wins=(0, 1, 0), awaiting_rule=-1)  # before you won

    async def show(app: TableApp) -> None:
        app.session = session  # type: ignore[attr-defined]
        screen.builder_offered = (s.state.round, len(s.state.rules))  # no builder here
        await app.push_screen(screen)
        screen.refresh_table(mao_snap(_Before(s, before)), MAO)

    app = TableApp(show, game="mao", names=NAMES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not screen.query_one("#mao-news", Static).display
        screen.refresh_table(mao_snap(s), MAO)  # the round is won
        await pilot.pause()
        news = screen.query_one("#mao-news", Static)
        said = _text(news)
        assert news.display and "Round 2 is over: you said “Mao” and won it." in said
        assert "You write a secret rule (M27)." in said and "its timer waits" in said
        assert session.held == [True] and screen.hold.holding
        feed = "\n".join(line.text for line in screen.query_one("#mao-feed").lines)
        assert "── round 3 ──" in feed
        await pilot.pause(1.0)
        assert screen.hold.holding  # the rule is still being written: the banner stays
        written = replace(s.state, awaiting_rule=-1)
        screen.refresh_table(mao_snap(_Before(s, written)), MAO)  # the rule is in
        deadline = time.monotonic() + 10
        while screen.hold.holding and time.monotonic() < deadline:
            await pilot.pause(0.1)
        assert session.held[-1] is False and not news.display  # gone, the clock runs


class _Before:
    """A script whose state is shown as ``state`` (the round not yet won)."""

    def __init__(self, s: Any, state: Any) -> None:
        self.table, self.state = s.table, state


def test_bomb_refusals_are_said_in_player_words() -> None:
    asyncio.run(_refusals())


async def _refusals() -> None:
    sim = bomb_until(lambda s: s.state.phase == "turn" and "play" in BOMB.legal_kinds(s.state, 0)
                     and len(s.state.hands[0]) >= 2)  # fmt: skip
    screen = BombScreen(seat=0)

    async def show(app: TableApp) -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)

    def said(app: TableApp) -> list[str]:
        return [str(n.message) for n in app._notifications]

    app = TableApp(show, names=NAMES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        keys = _footer(screen)
        assert keys["play A"] and not keys.get("detonate!"), keys  # no window: d dimmed or gone
        await pilot.press("a")  # nothing picked
        assert said(app)[-1].endswith("pick cards first (space)")
        await pilot.press("n")  # no window open: nothing to pass
        assert said(app)[-1] == "not now: your turn: space picks cards, a/b/c plays them"
        await pilot.press("enter")
        assert said(app)[-1].startswith("not now: ") and app.submitted == []
        assert not any("phase" in line or "place_bomb" in line for line in said(app))


def test_typing_a_phrase_or_reading_the_help_holds_the_timer_under_play() -> None:
    asyncio.run(_typing_holds())


async def _typing_holds() -> None:
    from tests.test_tui_mao_snapshots import _game

    author = RuleAuthor(salt_source=lambda n: bytes(n))
    s = _game(author, round_2=True)  # your turn, the turn's timer running
    screen = MaoScreen(seat=0, author=author)
    session = _Session()

    async def show(app: TableApp) -> None:
        app.session = session  # type: ignore[attr-defined]
        await app.push_screen(screen)
        screen.refresh_table(mao_snap(s), MAO)

    app = TableApp(show, game="mao", names=NAMES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        left = screen.timer_left()
        assert left is not None and session.held == []
        await pilot.press("t")  # the phrase box: the clock waits
        await pilot.pause()
        assert session.held == [True]
        await pilot.pause(0.6)
        held_left = screen.timer_left()
        assert held_left is not None and held_left >= left - 0.3  # the shown timer stopped too
        assert "(held)" in _text(screen.query_one("#mao-status", Static))  # and says so
        await pilot.press("escape")
        await pilot.pause()
        assert session.held == [True, False]
        await pilot.press("f1")  # the help
        await pilot.pause()
        assert session.held[-1] is True
        await pilot.press("escape")
        await pilot.pause()
        assert session.held[-1] is False and app.screen is screen


def test_a_lan_table_never_holds_the_timer() -> None:
    asyncio.run(_lan_never_holds())


async def _lan_never_holds() -> None:
    from tests.test_tui_mao_snapshots import _game

    author = RuleAuthor(salt_source=lambda n: bytes(n))
    s = _game(author, round_2=True)
    screen = MaoScreen(seat=0, author=author)
    session = _Session()

    async def show(app: TableApp) -> None:
        app.session = session  # type: ignore[attr-defined]
        await app.push_screen(screen)
        screen.refresh_table(mao_snap(s), MAO)

    app = TableApp(show, game="mao", names=NAMES)
    app.TIMERS_WAIT = False  # a LAN app does not say its timers wait
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("escape", "f1")
        await pilot.pause()
        assert session.held == [] and not screen.hold.holding


def test_doctests() -> None:
    import doctest

    from tui.screens import bomb_words, mao_news, naming

    for module in (bomb_words, mao_news, naming):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_the_bomb_story_tells_each_play_once_and_marks_rounds_once() -> None:
    asyncio.run(_bomb_story())


async def _bomb_story() -> None:
    sim = bomb_until(my_window)
    screen = BombScreen(seat=0)

    async def show(app: TableApp) -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)

    app = TableApp(show, names=NAMES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen.story("seat 2 plays 7♠ 7♥ (kind C: a pair or a sequence)")
        screen.story("cards shown: 7♠ 7♥")  # the play named them: not told again
        screen.story("time up: detonation")
        view = dict(screen.view)  # type: ignore[arg-type]
        view["round"] += 1
        screen.refresh_table(bomb_snap(sim).__class__(sim.state, view), BOMB)
        screen.story("── round 9 ──")  # a story that marks rounds itself…
        view = dict(view, round=view["round"] + 1)
        screen.refresh_table(bomb_snap(sim).__class__(sim.state, view), BOMB)  # …is not doubled
        await pilot.pause()
        told = [line.text.removeprefix("▸ ") for line in screen.query_one("#story").lines]
        assert "cards shown: 7♠ 7♥" not in told  # (the newest move is marked ▸)
        assert "time up: nobody detonated, the area is cleared, the bomb stays (K16)" in told
        screen.story("time up: nobody detonated")  # as the story retells the log's line
        await pilot.pause()
        told = [line.text.removeprefix("▸ ") for line in screen.query_one("#story").lines]
        assert told[-1] == "time up: nobody detonated, the area is cleared, the bomb stays (K16)"
        assert sum(line.startswith("──") for line in told) == 2, told
        # the other order, as seen in a game: the screen marks the new round
        # first, the story's own separator comes with the next play
        view = dict(view, round=view["round"] + 1)
        screen.refresh_table(bomb_snap(sim).__class__(sim.state, view), BOMB)
        screen.story(f"── round {view['round']} ──")
        screen.story("seat 1 plays 9♠ (kind A: related to the identity)")
        await pilot.pause()
        told = [line.text.removeprefix("▸ ") for line in screen.query_one("#story").lines]
        assert sum(line.startswith("──") for line in told) == 3, told


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_detonation_race_is_said_on_the_screen(lang: str) -> None:
    # (v3) K17 as a race: another seat detonated, this one may still shout
    # (and knows a shout now draws lots); then it has shouted too
    asyncio.run(_race(lang))


async def _race(lang: str) -> None:
    sim = bomb_until(my_window)
    sim.state = replace(sim.state, race=True)
    other = next(s for s in range(1, sim.state.seats) if s != sim.state.bomb)
    sim.submit(Detonate(other))
    screen = BombScreen(seat=0)

    async def show(app: TableApp) -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)

    app = TableApp(show, names=NAMES, lang=lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        claim = screen.query_one("#claim", Static)
        if lang == "en":
            said = f"💣 {NAMES[other]} detonated! d d: detonate too (at once: drawn by lot)"
        else:
            said = f"💣 {NAMES[other]} 引爆了！按两次 d 也引爆（同时引爆则抽签）"
        assert said in _text(claim), _text(claim)
        await pilot.press("d", "d")
        assert app.submitted == [Detonate(0)]
        sim.submit(Detonate(0))
        screen.refresh_table(bomb_snap(sim), BOMB)
        await pilot.pause()
        text = _text(claim)
        mine = "detonated: the window closes in a moment"
        mine = "引爆了：窗口马上关闭" if lang == "zh" else mine
        assert mine in text and ("you and" in text or "你" in text), text
