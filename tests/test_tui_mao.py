"""A person plays Mao in the TUI (issue 13): Pilot plays against a bot peer
(real peers on 127.0.0.1, the person's seat driven through its session) by
key presses only — phrases typed with completion and said in time, a point
of order, penalty calls on the bot (one that stands, one that comes back as
"bad call"), winning a round, writing a secret rule with the rule builder
(a broken rule refused with the engine's reason first), and the next round
judged by it by the person's own session; then an M30 vote, refused by the
bot; and a game that ends (M31): every rule revealed, the person's by its own
session, its verdicts re-checked, the game-over screen with a clean log. The
screens and the builder are also rendered in both languages at 80×24 and
120×40.

The Pilot games are deterministic enough to be quick: the deals come from a
seeded stream (``deterministic_deals``; the bot plays in this process so that
the stream reaches it), hands are 3 cards, and on those deals the person
(a sensible brain behind the keys) wins the first round. Real time still
runs (turns of 60 s, M23, that no move by keys should take), and a game
that does not get where it should within ``BUDGET`` fails, saying what the
table waits for, instead of hanging."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
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

SEED = 4
"""The bot's choices (its seeded ``random.Random``)."""
BRAIN = 9
"""The choices of the sensible brain behind the person's keys."""
CONFIG = MaoConfig(hand_size=3, timeout=60)
"""Short rounds (M2 deals 5; the table creator may deal fewer), and turns of
60 s (M23's 10 s is a table switch): a person at a loaded machine — the keys
of one move may take more than 10 s under two CPU burners — never runs out of
time, so the game goes the way the seeded deals say."""
BUDGET = 110.0
"""Real seconds a whole Pilot game may take; past it the test fails, saying
where the table is."""


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
        hand = [p for p, _ in screen._hand_widget().cards]  # as shown: sorted
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


class _Game:
    """One Pilot game: the app, the person's brain, and one deadline that
    every wait of the game shares."""

    def __init__(self, pilot: Any, app: PlayApp) -> None:
        self.pilot, self.app = pilot, app
        self.brain = SensibleBot(BRAIN)
        self.deadline = time.monotonic() + BUDGET
        self.screen: MaoScreen = app.table_screen  # type: ignore[assignment]
        self.paused: list[str] = []  # the status line during a point of order
        show_status = self.screen._show_status

        def recording_status() -> None:
            show_status()
            view = self.screen.view
            if view is not None and view["point_of_order"] >= 0:
                self.paused.append(str(self.screen.query_one("#mao-status").render()))

        self.screen._show_status = recording_status  # type: ignore[method-assign]

    @property
    def state(self) -> Any:
        return self.screen.state

    def feed(self) -> str:
        return _feed(self.screen)

    def check(self, doing: str) -> None:
        """Fail, saying where the table is, once the game's time is up."""
        if time.monotonic() <= self.deadline:
            return
        tail = self.feed().splitlines()[-15:]
        state = self.state
        pending = "no table yet" if state is None else (
            f"round={state.round} wins={state.wins} phase={state.phase} "
            f"judgements={state.judgements} requests={state.requests} calls={state.calls} "
            f"awaiting_rule={state.awaiting_rule} poo={state.poo} proposal={state.proposal}"
        )  # fmt: skip
        pytest.fail(
            f"{doing}: not done {BUDGET:.0f} s into the game; the feed ends:\n"
            + "\n".join(tail)
            + f"\nstate: {pending}\nscreen: {type(self.app.screen).__name__}"
        )

    async def wait(self, until: Callable[[], bool], doing: str) -> None:
        while not until():
            self.check(doing)
            await self.pilot.pause(0.05)

    async def chores(self) -> bool:
        """What the person does before choosing a move; True when it did
        something. A proposal the bot put to the vote (M30, at any time) gets
        a no, so that the table does not wait for the person's vote; the
        words the person still owes are said (M24)."""
        pilot, screen, state = self.pilot, self.screen, self.state
        proposal = None if state is None else state.proposal
        if proposal is not None and 0 not in (*proposal.yes, *proposal.no):
            await pilot.press("n")
            await pilot.pause(0.2)
            return True
        if _settled(screen) and screen.view["turn"] == 0 and screen.view["owed"]:
            await pilot.press(*_words(screen, tuple(screen.view["owed"])), "s")
            await pilot.pause(0.3)
            return True
        return False

    def my_turn(self) -> bool:
        return _settled(self.screen) and self.screen.view["turn"] == 0

    async def move(self) -> Any:
        """The person's move on their turn, by keys; the event it made."""
        keys, event = _turn_keys(self.app, self.brain)
        if not keys:
            return None
        seq = self.state.seq
        await self.pilot.press(*keys)
        await self.wait(lambda: self.state.seq > seq, "the person's move reaches the table")
        return event


async def _pilot_game(tmp_path: Path, rounds: int | None, play: Callable[[_Game], Any]) -> None:
    home = tmp_path / "me"
    app = PlayApp(
        "mao",
        2,
        bots_home=tmp_path / "bots",
        own=(Identity.load_or_create(home), home),
        proven=False,
        seed=SEED,
        time_scale=1.0,  # real seconds: a person's pace (M23)
        config=CONFIG,
        processes=0,  # the bot in this process: the seeded deals reach it
        rounds=rounds,
        name="ann",  # the bot is then "bob" in the story
    )
    async with app.run_test(size=(80, 24)) as pilot:  # a small screen draws quickest
        game = _Game(pilot, app)
        # a second guard if a wait should ever block outside the game's loops
        await asyncio.wait_for(play(game), BUDGET + 30)
        await pilot.press("ctrl+q")


@pytest.mark.slow
def test_a_mao_round_won_a_rule_written_and_judged_by_key_presses(
    tmp_path, deterministic_deals
) -> None:
    async def play(game: _Game) -> None:
        slot = await _win_a_round_and_write_a_rule(game)
        await _judged_round(game, slot)

    asyncio.run(_pilot_game(tmp_path, None, play))


@pytest.mark.slow
def test_the_game_ends_every_rule_revealed_and_rechecked(tmp_path, deterministic_deals) -> None:
    """M31 by vote: the bot agrees to end once ``rounds`` rounds were won."""

    async def play(game: _Game) -> None:
        slot = await _win_a_round_and_write_a_rule(game)
        await _the_end(game, slot)

    asyncio.run(_pilot_game(tmp_path, 1, play))


async def _win_a_round_and_write_a_rule(game: _Game) -> int:
    """Round 0, by keys: a point of order on the person's first turn (the bot
    ends it, M35), the phrases each play requires said in time, the round
    won, and the rule written in the builder that opens by itself."""
    pilot, screen = game.pilot, game.screen
    said_in_time = poo_called = False
    doing = f"the person wins round 0 (seed {SEED}, seeded deals) and writes a rule"
    while True:
        game.check(doing)
        await pilot.pause(0.05)
        state = game.state
        if state is not None and state.wins[1]:
            pytest.fail(
                f"seat 1 won round 0: on these seeded deals and seed {SEED} the person wins "
                "it (did the dealing, the bots or the engine change?); the feed:\n" + game.feed()
            )
        if isinstance(game.app.screen, RuleBuilder):
            slot = await _write_rule(game)
            break
        if await game.chores() or not game.my_turn():
            continue
        if not poo_called:  # M32: one key; the bot ends it (M35)
            poo_called = True
            await pilot.press("o")
            await game.wait(
                lambda: bool(game.paused) and screen.view["point_of_order"] < 0,
                "the bot ends the point of order",
            )
            continue
        before = state.penalties
        event = await game.move()
        if isinstance(event, PlayCard) and event.says:
            await game.wait(
                lambda: _settled(screen) or game.state.awaiting_rule >= 0,
                "the table judges the person's play",
            )
            if game.state.penalties == before:
                said_in_time = True  # the phrases the play required, typed in time
    assert said_in_time
    paused = game.paused
    assert paused and "point of order (you)" in paused[0] and "⏱" not in paused[0]
    feed = game.feed()
    assert "you say “point of order”" in feed and "“point taken”" in feed
    return slot


async def _write_rule(game: _Game) -> int:
    """The builder opened by itself: a broken rule is refused with the
    engine's reason; then hearts must be greeted with “I love you”."""
    pilot, app, screen = game.pilot, game.app, game.screen
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
    await game.wait(
        lambda: any(r.author == 0 for r in screen.state.rules), "the rule's commitment is signed"
    )
    slot = max(i for i, r in enumerate(screen.state.rules) if r.author == 0)
    shown = str(screen.query_one("#mao-rules").render())
    assert f"rule {slot} (yours): When a card is played" in shown
    return slot


async def _next_round_move(game: _Game, doing: str) -> None:
    """One step of the person in a later round: chores, else a move on their
    turn. A round the person wins again adds no rule (``x`` in the builder)."""
    game.check(doing)
    await game.pilot.pause(0.05)
    if isinstance(game.app.screen, RuleBuilder):
        await game.pilot.press("x")
        return
    if await game.chores() or not game.my_turn():
        return
    await game.move()


async def _judged_round(game: _Game, slot: int) -> None:
    """The next round: the person's session judges the rule; a call on the
    bot that the rule upholds stands, a call with no violation is a bad call;
    then an M30 vote to end the game, which the bot refuses (it wants its
    rounds, M31)."""
    pilot, screen = game.pilot, game.screen
    doing = "round 1: the bot breaks the rule, the person calls it, then makes a bad call"
    while not ((slot, 1) in game.state.rule_hits and _settled(screen)):
        await _next_round_move(game, doing)
    # the bot was penalised under my rule in this window: c, seat 1, the taught phrase
    assert screen.call_menu()[0] == "failure to say I love you"
    before = game.state.penalties
    await pilot.press("c", "1", "1")
    await game.wait(
        lambda: "you to bob: “failure to say I love you”" in game.feed(),
        "the person's call reaches the table",
    )
    await game.wait(lambda: _settled(screen), "the call is judged")
    assert game.state.penalties == before  # upheld (M18: no second penalty, no bad call)
    before = game.state.penalties
    index = screen.call_menu().index("bad card") + 1
    await pilot.press("c", "1", str(index))
    await game.wait(lambda: game.state.penalties > before, "the bad call is judged")
    note = game.state.notes[-1]
    assert (note.target, note.phrase) == (0, "bad call")
    rule = game.state.rules[slot]
    assert judged_of(rule) and rule.status == "active"
    assert f"rule {slot} (you): " in game.feed()  # my session's verdicts, shown
    await _propose_the_end(game)
    assert "bob votes no" in game.feed()  # the bot wants its rounds first
    await game.wait(
        lambda: game.state.proposal is None and game.state.phase == "play",
        "the refused proposal is closed",
    )


async def _propose_the_end(game: _Game) -> None:
    """M31 by an M30 vote: ``m e`` proposes to end the game; the bot votes.
    M30 lets a player propose at any time in play (a proposal the bot put up
    meanwhile is voted down first)."""
    while not (game.state.phase == "play" and game.state.proposal is None):
        game.check("no vote open, to propose the end")
        await game.chores()
        await game.pilot.pause(0.05)
    await game.pilot.press("m", "e")
    await game.wait(
        lambda: "you propose to end the game" in game.feed(), "the proposal reaches the table"
    )
    await game.wait(lambda: "bob votes" in game.feed(), "the bot votes")


async def _the_end(game: _Game, slot: int) -> None:
    """Round 1 is played until the person's session has judged a play under
    the rule; then the end is put to the vote and passes (the bot's rounds
    are played, M31): every rule is revealed — the person's by its own
    session — the verdicts are re-checked against it, and the game-over
    screen shows a clean log."""
    doing = "round 1: the person's session judges a play under the rule"
    while not (judged_of(game.state.rules[slot]) and _settled(game.screen)):
        await _next_round_move(game, doing)
    await _propose_the_end(game)
    assert "bob votes yes" in game.feed()
    await game.wait(lambda: isinstance(game.app.screen, GameOverScreen), "the game ends")
    state = game.state
    assert state.phase == "over" and all(r.status == "revealed" for r in state.rules)
    assert state.rules[slot].rule == HEARTS_LOVE  # revealed by the person's own session
    judged = len(judged_of(state.rules[slot]))
    flat = " ".join(game.feed().split())  # the feed's lines are wrapped at the screen's width
    line = flat.split(f"rule {slot} (you) revealed: ")[1][:160]
    assert line.startswith("When a card is played and the card is ♥")
    assert f"✓ {judged} verdicts re-checked" in line and not state.rules[slot].faults
    over = game.app.screen
    assert isinstance(over, GameOverScreen) and "clean:" in over.verdict
    assert game.app.exit_code == 0


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
            assert ("0 你 · 1 " if lang == "zh" else "0 you · 1 ") in str(
                screen.query_one("#mao-words").render()
            )
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


def test_the_builders_refusals_read_in_chinese() -> None:
    """Every reason the engine gives for refusing a rule the builder can
    compose (engines.mao_rules.validate) has a Chinese wording: no English
    word is left besides rule ids and the player's own phrases."""
    import re

    from engines.mao_rules import validate
    from tui.screens.rule_builder import refusal_text

    reasons = [
        "an effect appears twice",
        "a condition test appears twice; list several values in one instead",
        "card conditions only apply to plays, not to 'say'",
        "only a play can be forbidden (drawing is always allowed, M4)",
        "a forbidden play has no other effect: the card goes back",
        "drawing is always allowed (M4): it cannot be penalised or repeated",
        "a rule that penalises needs a penalty phrase (M27)",
        "this rule needs a penalty phrase",
        "'reverse' and 'again' together: the same player plays either way",
        "“bad card” is a base penalty phrase",
        "a secret rule may not involve saying “Mao” (M25)",
        "“bad card” is already a base penalty phrase; choose another",
        "a rule triggered by speech cannot require more speech",
        "a rule on speech needs the phrase it is about ('said')",
        "the base rules require “last card”; it cannot be penalised",
        "its conditions contradict each other: it can never apply",
        "one rule requires “I love you” and another penalises it",
        "penalty phrase too long",
        "game-breaking: on 7♠ no card could ever be played (hand 5, counter-clockwise)",
    ]
    for reason in reasons:
        said = refusal_text(reason, "zh")
        left = re.sub(r"“[^”]*”|M\d+|[AJQK2-9]0?[♠♥♦♣]", "", said)
        assert not re.search(r"[A-Za-z]{2,}", left), (reason, said)
    with pytest.raises(Exception) as refused:  # and a real refusal goes through it
        validate(Rule("draw", (), (Effect("penalize"),)))
    assert refusal_text(str(refused.value), "zh") != str(refused.value)


def test_damaged_saved_rules_are_said_once_and_the_screen_stays_usable() -> None:
    """A person's seat takes back its saved rules when the screen hands its
    author over (adopt_player); a damaged secrets file of this peer is said
    in a notification, once, instead of raising in a screen callback
    (review of 2026-12-01)."""
    from types import SimpleNamespace

    from table.session import SessionError

    class Damaged:
        player = None
        tries = 0

        def adopt_player(self, player: Any) -> None:
            self.tries += 1
            raise SessionError("this peer's saved player secrets are damaged: unknown layout 9")

    class OneScreen(App[None]):
        session = Damaged()

        def on_mount(self) -> None:
            self.push_screen(MaoScreen(seat=0))

    async def run() -> None:
        app = OneScreen()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, MaoScreen)
            empty = SimpleNamespace(view=None, state=None)
            screen.refresh_table(empty, None)
            screen.refresh_table(empty, None)
            await pilot.pause()
            said = [n.message for n in app._notifications]
            assert app.session.tries == 1 and len(said) == 1
            assert "cannot be judged" in said[0] and "unknown layout 9" in said[0]
            await pilot.press("f2")  # still usable

    asyncio.run(run())
