"""A person plays Mao in the TUI (issue 13): Pilot plays against a bot peer
(real peers on 127.0.0.1, the person's seat driven through its session) by
key presses only — phrases typed with completion and said in time, a point
of order, penalty calls on the bot (one that stands, one that comes back as
"bad call"), winning a round, writing a secret rule with the rule builder
(a broken rule refused with the engine's reason first), and the next round
judged by it by the person's own session; then an M30 vote. The screens and
the builder are also rendered in both languages at 80×24 and 120×40."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from textual.app import App

import tui.app as tui_app
from engines.bots.mao import SensibleBot
from engines.cards import Card
from engines.mao import GAME
from engines.mao_events import Draw, MaoConfig, PlayCard
from engines.mao_rules import Cond, Effect, Rule
from engines.mao_state import judged_of
from p2p.identity import Identity
from tests.test_mao_script import Script
from tui import words
from tui.app import PlayApp
from tui.screens.mao import MaoScreen, base_phrases, complete
from tui.screens.over import GameOverScreen
from tui.screens.rule_builder import RuleBuilder, RuleDraft

HEARTS_LOVE = Rule("play", (Cond("suit", (1,)),), (Effect("require", phrase="I love you"),))


# ---------------------------------------------------------------- the person's fingers


def _typing(screen: MaoScreen, phrase: str) -> list[str]:
    """Keys that say ``phrase`` in the phrase box: the shortest prefix the box
    completes to it, then → (accept the completion), else every character."""
    keys = [c if c != " " else "space" for c in phrase]
    options = screen.completions()
    for n in range(2, len(phrase)):
        if complete(phrase[:n], options) == phrase:
            return [*keys[:n], "right"]
    return keys


def _words(screen: MaoScreen, says: tuple[str, ...]) -> list[str]:
    keys: list[str] = []
    for phrase in says:
        keys += ["t", *_typing(screen, phrase), "enter"]
    return keys


def _turn_keys(app: PlayApp, brain: SensibleBot) -> tuple[list[str], Any]:
    """What the person presses on their turn (a sensible player's choice)."""
    screen: MaoScreen = app.table_screen  # type: ignore[assignment]
    state, session = screen.state, app.session
    if state is None or session is None or screen.view is None:
        return [], None
    mine = screen.author.active_rules(state, 0)
    brain.learned.update(state)
    event = brain.turn(
        state,
        0,
        session.snapshot.known,
        lambda valid: brain._choose(state, 0, valid, mine),
        lambda card: brain._extra(state, 0, card, mine),
    )
    if isinstance(event, PlayCard):
        hand = [p for p, _ in screen._hand()]
        target = hand.index(event.position)
        keys = _words(screen, event.says)
        keys += ["right"] * ((target - screen.cursor) % len(hand)) + ["enter"]
        return keys, event
    if isinstance(event, Draw):
        return [*_words(screen, event.says), "d"], event
    return [], None


def _settled(screen: MaoScreen) -> bool:
    state = screen.state
    return (
        state is not None
        and state.phase == "play"
        and not state.judgements
        and not state.requests
        and not state.calls
        and state.awaiting_rule < 0
        and state.poo < 0
    )


def _feed(screen: MaoScreen) -> str:
    return "\n".join(line.text for line in screen.query_one("#mao-feed").lines)


# ---------------------------------------------------------------- the game


@pytest.mark.slow
@pytest.mark.xfail(
    strict=False,
    reason="can stall under load (a clean-clone CI run sat in it >10 min): rounds are not "
    "seeded yet; see the closing note of 2026-12-01",
)
def test_a_mao_round_won_a_rule_written_and_judged_by_key_presses(tmp_path) -> None:
    asyncio.run(_play(tmp_path))


async def _vote_on_the_bots_proposal(pilot: Any, screen: MaoScreen) -> bool:
    """The bot may put a proposal to the vote at any time (M30): the person
    votes no, so that the table does not wait for their vote."""
    proposal = None if screen.state is None else screen.state.proposal
    if proposal is None or 0 in (*proposal.yes, *proposal.no):
        return False
    await pilot.press("n")
    await pilot.pause(0.2)
    return True


async def _wait(pilot: Any, until: Any, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not until():
        if time.monotonic() > deadline:
            screen = pilot.app.table_screen
            tail = _feed(screen).splitlines()[-15:]
            state = screen.state
            pending = "" if state is None else (
                f"phase={state.phase} judgements={state.judgements} requests={state.requests} "
                f"calls={state.calls} awaiting_rule={state.awaiting_rule} poo={state.poo} "
                f"proposal={state.proposal}"
            )  # fmt: skip
            pytest.fail(
                "the table did not get there in time; the feed ends:\n"
                + "\n".join(tail)
                + f"\nstate: {pending}"
            )
        await pilot.pause(0.05)


async def _play(tmp_path) -> None:
    home = tmp_path / "me"
    app = PlayApp(
        "mao",
        2,
        bots_home=tmp_path / "bots",
        own=(Identity.load_or_create(home), home),
        proven=False,
        seed=4,
        time_scale=1.0,  # ten real seconds a turn: a person's pace (M23)
    )
    brain = SensibleBot(77)
    paused: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.table_screen
        assert isinstance(screen, MaoScreen)
        show_status = screen._show_status

        def recording_status() -> None:  # what the screen showed during a point of order
            show_status()
            if screen.view is not None and screen.view["point_of_order"] >= 0:
                paused.append(str(screen.query_one("#mao-status").render()))

        screen._show_status = recording_status  # type: ignore[method-assign]
        said_in_time = poo_called = False
        rule_slot = -1
        deadline = time.monotonic() + 300  # rounds until the person wins one
        while rule_slot < 0:
            if time.monotonic() > deadline:
                pytest.fail("the person did not win a round")
            await pilot.pause(0.05)
            state = screen.state
            if await _vote_on_the_bots_proposal(pilot, screen):
                continue
            if isinstance(app.screen, RuleBuilder):
                rule_slot = await _write_rule(pilot, app, screen)
                continue
            if state is None or not _settled(screen) or screen.view["turn"] != 0:
                continue
            if screen.view["owed"]:  # say what is still owed, in time (M24)
                await pilot.press(*_words(screen, tuple(screen.view["owed"])), "s")
                await pilot.pause(0.3)
                continue
            if not poo_called:  # M32: one key; the bot ends it (M35)
                poo_called = True
                await pilot.press("o")
                await _wait(pilot, lambda: bool(paused) and screen.view["point_of_order"] < 0)
                continue
            keys, event = _turn_keys(app, brain)
            if not keys:
                continue
            before = state.penalties
            await pilot.press(*keys)
            await _wait(pilot, lambda seq=state.seq: screen.state.seq > seq)
            if isinstance(event, PlayCard) and event.says:
                await _wait(pilot, lambda: _settled(screen) or screen.state.awaiting_rule >= 0)
                if screen.state.penalties == before:
                    said_in_time = True  # the phrases the play required, typed in time
        assert said_in_time
        assert paused and "point of order (seat 0)" in paused[0] and "⏱" not in paused[0]
        feed = _feed(screen)
        assert "seat 0 says “point of order”" in feed and "“point taken”" in feed
        # the round the rule was written in is the next round: it judges it now
        await _judged_round(pilot, app, screen, brain, rule_slot)
        await pilot.press("ctrl+q")


async def _write_rule(pilot: Any, app: PlayApp, screen: MaoScreen) -> int:
    """The builder opened by itself: a broken rule is refused with the
    engine's reason; then hearts must be greeted with “I love you”."""
    builder = app.screen
    assert isinstance(builder, RuleBuilder)
    assert screen.state.awaiting_rule == 0 and screen.state.wins[0] == 1
    await pilot.press("enter")  # "the card is forbidden" with no penalty phrase
    await pilot.pause(0.1)
    assert app.screen is builder
    verdict = str(builder.query_one("#rb-verdict").render())
    assert "refused" in verdict and "needs a penalty phrase" in verdict
    await pilot.press("down", "right", "right_square_bracket")  # if: the card's suit is ♥
    await pilot.press("down", "down", "right", "right")  # then: the player must say …
    shown = str(builder.query_one("#rb-words").render())
    assert "When a card is played and the card is ♥: the player must say “I love you”" in shown
    await pilot.press("enter")
    await pilot.pause(0.1)
    assert app.screen is screen
    assert screen.author.written and screen.author.written[-1][0] == HEARTS_LOVE
    await _wait(pilot, lambda: any(r.author == 0 for r in screen.state.rules))
    slot = max(i for i, r in enumerate(screen.state.rules) if r.author == 0)
    shown = str(screen.query_one("#mao-rules").render())
    assert f"rule {slot} (seat 0, yours): When a card is played" in shown
    return slot


async def _judged_round(
    pilot: Any, app: PlayApp, screen: MaoScreen, brain: SensibleBot, slot: int
) -> None:
    """The next round: the person's session judges the rule; a call on the
    bot that the rule upholds stands, a call with no violation is a bad call;
    then an M30 vote to end the game, which the bot refuses."""
    called = bad_called = False
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (called and bad_called):
        await pilot.pause(0.05)
        state = screen.state
        if await _vote_on_the_bots_proposal(pilot, screen):
            continue
        if not _settled(screen) or screen.view["turn"] != 0:
            continue
        if screen.view["owed"]:  # say what is still owed (M24)
            await pilot.press(*_words(screen, tuple(screen.view["owed"])), "s")
            await pilot.pause(0.3)
            continue
        if (slot, 1) in state.rule_hits and not called:
            # the bot was penalised under my rule in this window: c, seat 1, the taught phrase
            assert screen.call_menu()[0] == "failure to say I love you"
            before = state.penalties
            await pilot.press("c", "1", "1")
            await _wait(
                pilot, lambda: "seat 0 to seat 1: “failure to say I love you”" in _feed(screen)
            )
            await _wait(pilot, lambda: _settled(screen))
            assert screen.state.penalties == before  # upheld (M18: no second penalty, no bad call)
            called = True
            continue
        if called and not bad_called:
            before = state.penalties
            index = screen.call_menu().index("bad card") + 1
            await pilot.press("c", "1", str(index))
            await _wait(pilot, lambda n=before: screen.state.penalties > n)
            assert (screen.state.notes[-1].target, screen.state.notes[-1].phrase) == (0, "bad call")
            bad_called = True
            continue
        keys, _event = _turn_keys(app, brain)
        if keys:
            seq = state.seq
            await pilot.press(*keys)
            await _wait(pilot, lambda seq=seq: screen.state.seq > seq)
    assert called and bad_called
    rule = screen.state.rules[slot]
    assert judged_of(rule) and rule.status == "active"
    assert f"rule {slot} (seat 0) on event" in _feed(screen)  # my session's verdicts, shown
    # M30 lets a player propose at any time in play: no need for a quiet
    # table (the person's turn may be timing out meanwhile; under load the
    # penalties it draws can keep the table busy for a while)
    deadline = time.monotonic() + 60
    while not (screen.state.phase == "play" and screen.state.proposal is None):
        proposal = screen.state.proposal  # the bot may have put one to the vote (M30)
        if proposal is not None and 0 not in (*proposal.yes, *proposal.no):
            await pilot.press("n")  # the person votes no
        if time.monotonic() > deadline:
            await _wait(pilot, lambda: False, seconds=0)  # fails, saying where the table is
        await pilot.pause(0.1)
    await pilot.press("m", "e")  # M31: propose to end the game; the bot votes (M30)
    await _wait(pilot, lambda: "seat 0 proposes to end the game" in _feed(screen), seconds=60)
    await _wait(pilot, lambda: "seat 1 votes" in _feed(screen), seconds=60)
    if "seat 1 votes no" in _feed(screen):  # the bot wants its rounds first
        assert screen.state.proposal is None and screen.state.phase == "play"
        return
    # the end of the game: every rule revealed, my session reveals mine, the
    # verdicts re-checked against it, and the game-over screen with a clean log
    await _wait(pilot, lambda: isinstance(app.screen, GameOverScreen), seconds=60)
    assert f"rule {slot} (seat 0) revealed: When a card is played" in _feed(screen)
    assert "✓" in _feed(screen).split(f"rule {slot} (seat 0) revealed:")[1].splitlines()[0]
    assert "clean:" in app.screen.verdict


# ---------------------------------------------------------------- the builder alone


def test_the_builder_composes_every_menu_into_the_rule_language() -> None:
    """Menus only; every refusal is the engine's own reason (mao_rules.validate)."""
    draft = RuleDraft()
    assert draft.error("en") == "a rule that penalises needs a penalty phrase (M27)"
    draft.row = 5
    draft.value(1)  # the first phrase of the menu as the penalty phrase
    assert draft.error("en").startswith("game-breaking: on A♠ no card could ever be played")
    draft.row = 1
    draft.turn(1)  # if: the card's suit …
    draft.value(1)  # … is ♥
    assert draft.error("en") is None
    assert str(draft.build()) == (
        "When a card is played and the card is ♥: the card is forbidden (penalty: “I love you”)"
    )
    draft.row = 0
    draft.turn(1)  # when a player draws
    assert draft.error("en") == "card conditions only apply to plays, not to 'draw'"
    draft.turn(-1)
    draft.row = 2
    draft.turn(1)
    assert draft.error("en").startswith("a condition test appears twice")
    draft.turn(1)  # the card's rank: A
    assert "the card is ♥ and the card is A" in draft.words("en") and draft.error("en") is None
    draft.row = 4
    draft.turn(1)
    assert draft.error("en") == "an effect appears twice"
    draft.turn(1)
    assert draft.error("en") == "a forbidden play has no other effect: the card goes back"
    draft.row = 3
    draft.turn(3)  # skip
    draft.value(1)  # two turns
    assert draft.error("en") is None
    assert "the next player misses 2 turns; that is penalised" in str(draft.build())
    draft.type_words("two fat ladies")  # your own words: the line becomes "must say" them
    assert draft.build().effects[0] == Effect("require", phrase="two fat ladies")
    assert "必须说" in draft.words("zh")


def test_phrases_complete_in_both_languages() -> None:
    phrases = base_phrases()
    assert complete("最后", phrases) == "最后一张"
    assert complete("have a v", phrases) == "have a very nice day"
    assert complete("Thre", phrases) == "Three of spades"
    assert complete("x", phrases) is None


# ---------------------------------------------------------------- the screens, both languages


class _Shown(App[None]):
    """The Mao screen alone, fed the snapshots of a scripted game."""

    def __init__(self, lang: str) -> None:
        super().__init__(css_path=str(Path(tui_app.__file__).parent / "app.tcss"))
        self.lang = lang
        self.time_scale = 1.0
        self.session = None
        self.table_screen = MaoScreen(seat=0)

    async def on_mount(self) -> None:
        await self.push_screen(self.table_screen)


class _Snap:
    def __init__(self, state: Any, known: dict[int, Card]) -> None:
        self.state, self.known = state, known
        self.view = GAME.view(state, 0, known)


def _scripted() -> Script:
    s = Script([["5♣", "K♣", "7♥"], ["4♣", "Q♥", "2♠"]], "10♣",
               config=MaoConfig(hand_size=3))  # fmt: skip
    return s


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_table_and_the_builder_fit_and_speak_the_language(lang: str, size) -> None:
    s = _scripted()
    s.play(0, "5♣", "nice weather")
    s.say(1, "point of order")

    async def run() -> None:
        app = _Shown(lang)
        async with app.run_test(size=size) as pilot:
            screen = app.table_screen
            screen.refresh_table(_Snap(s.state, s.table.known[0]), GAME)
            await pilot.pause()
            text = str(screen.query_one("#mao-status").render())
            seats = str(screen.query_one("#mao-seats").render())
            if lang == "zh":
                assert "秩序点" in text and "座位" in seats
            else:
                assert "point of order (seat 1)" in text and "seat 1: 3 cards" in seats
            hand = str(screen.query_one("#mao-hand").render())
            assert "K♣" in hand and "7♥" in hand
            assert screen.query_one("#mao-feed").region.height >= 3  # nothing cut off
            assert screen.query_one("#mao-say").region.bottom <= size[1] - 1
            await pilot.press("c")
            assert "0–1" in str(screen.query_one("#mao-words").render())
            await pilot.press("escape")
            builder = RuleBuilder(lang)
            await app.push_screen(builder)
            await pilot.pause()
            box = builder.query_one("#rule-builder")
            assert box.region.bottom <= size[1] and box.region.right <= size[0]
            verdict = str(builder.query_one("#rb-verdict").render())
            assert ("不可用" if lang == "zh" else "refused") in verdict

    missing = set(words.MISSING)
    asyncio.run(run())
    if lang == "zh":
        new = set(words.MISSING) - missing
        assert not new, f"no Chinese wording for {sorted(new)}"


def test_the_mao_screens_doctests() -> None:
    import doctest

    import engines.mao_author
    import tui.screens.mao
    import tui.screens.rule_builder

    for module in (tui.screens.mao, tui.screens.rule_builder, engines.mao_author):
        assert doctest.testmod(module).failed == 0, module.__name__
