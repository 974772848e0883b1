"""Mao as whole games: random event sequences keep every card, never leak a
hidden face into another seat's view and replay to identical bytes; 1000 bot
games of 3–8 players, 5 rounds each, with secret rules added by the winners,
finish without error (issue 4)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.bots import Simulator
from engines.bots.mao import LegalBot, SensibleBot
from engines.cards import Card, full_deck
from engines.core import EngineError, Event
from engines.mao import GAME, MaoState
from engines.mao_events import Call, Draw, MaoConfig, PlayCard, Say
from tests.engine_walk import assert_replays, walk_with_strays

STRAY_SAYS = ["last card", "Mao", "point of order", "point taken", "hearts", "hello", "damn",
              "thank you", "have a nice day", "two fat ladies", '"point of order"']  # fmt: skip
STRAY_CALLS = ["bad card", "failure to say last card", "colour clash", "lying", "talking"]


def positions_in_play(state: MaoState) -> list[int]:
    zones = [p for h in state.hands for p in h] + list(state.draw)
    zones += [c.position for c in state.pile]
    return zones + ([state.start] if state.start >= 0 else [])


def check_invariants(t: Simulator) -> None:
    state = t.state
    if state.phase in ("ending", "over"):
        return
    zones = positions_in_play(state)
    assert len(zones) == len(set(zones)) == len(GAME.deck(state.config)), "a card was lost"
    if not state.requests:  # every deal and reshuffle answered: faces are settled
        faces = sorted(t.faces[p] for p in zones)
        assert faces == sorted(full_deck(state.config.decks)), "a card was duplicated"
    for c in (*state.pile, *state.shown):
        assert t.faces[c.position] == c.card, "a public face differs from the deck"
    if state.requests:
        return  # a deal is in flight: its seat does not know those faces yet
    for seat in range(t.seats):
        mine = {p: t.faces[p] for p in t.known[seat]}
        # the whole truth gives a seat no more than its own knowledge does
        assert GAME.view(state, seat, t.faces) == GAME.view(state, seat, mine)
        others = set(positions_in_play(state)) - set(state.hands[seat])
        public = {c.position for c in (*state.pile, *state.shown)}
        view = GAME.view(state, seat, t.faces)
        hidden = [str(t.faces[p]) for p in others - public]
        shown = [v for o in view["others"].values() for v in o["shown"].values()]
        assert not set(shown) & (set(hidden) - {str(c.card) for c in state.shown})


def stray(rng: random.Random, t: Simulator) -> Event:
    seat = rng.randrange(t.seats)
    state = t.state
    kind = rng.randrange(4)
    if kind == 0:
        # the session proves a played face, so a stray play names the true one
        known = [p for p in positions_in_play(state) if p in t.faces]
        if not known:
            return Draw(seat)
        position = rng.choice(known)
        return PlayCard(seat, position, t.faces[position], tuple(rng.sample(STRAY_SAYS, 1)))
    if kind == 1:
        return Say(seat, tuple(rng.sample(STRAY_SAYS, rng.randint(1, 3))))
    if kind == 2:
        return Call(seat, rng.randrange(t.seats), rng.choice(STRAY_CALLS))
    return Draw(seat)


@settings(max_examples=25, deadline=None)
@given(
    seats=st.integers(2, 6),
    seed=st.integers(0, 2**32),
    stray_rate=st.floats(0, 0.4),
    no_talking=st.booleans(),
    conduct=st.booleans(),
    seven_draw=st.sampled_from(["discard", "draw"]),
)
def test_random_event_sequences_keep_cards_hide_faces_and_replay(
    seats: int, seed: int, stray_rate: float, no_talking: bool, conduct: bool, seven_draw: str
) -> None:
    config = MaoConfig(hand_size=4, no_talking=no_talking, conduct=conduct,
                       seven_draw=seven_draw, decks=2 if seats > 5 else 1)  # fmt: skip
    t = Simulator(GAME, config, seats, deck_seed=seed)
    bots = [SensibleBot(seed + s, rounds=2) if s % 2 else LegalBot(seed + s, rounds=2)
            for s in range(seats)]  # fmt: skip
    rng = random.Random(seed)
    walk_with_strays(t, bots, rng, rng, 300, stray_rate, stray, check_invariants)
    assert_replays(t)


def play_bot_game(seed: int, rounds: int = 5) -> tuple[Simulator, Counter]:
    seats = 3 + seed % 6
    config = MaoConfig.for_seats(seats)
    t = Simulator(GAME, config, seats, deck_seed=seed)
    bots = [
        SensibleBot(seed * 16 + s, rounds) if (s + seed) % 3 else LegalBot(seed * 16 + s, rounds)
        for s in range(seats)
    ]
    outcome = t.play(bots, seed=seed, max_events=60_000)
    assert outcome is not None
    return t, Counter(e.KIND for e in t.events)


def test_a_bot_game_replays_identically() -> None:
    t, _ = play_bot_game(7)
    replay = GAME.new(t.state.config, t.seats)
    for event in t.events:
        replay = GAME.apply(replay, event)
    assert GAME.encode(replay) == GAME.encode(t.state)
    assert GAME.outcome(replay) == GAME.outcome(t.state)


@pytest.mark.slow
@pytest.mark.parametrize("games", [400, pytest.param(1000, marks=pytest.mark.long)])
def test_bot_games_with_secret_rules_finish(games: int) -> None:
    totals: Counter = Counter()
    for seed in range(games):
        t, kinds = play_bot_game(seed)
        state = t.state
        outcome = GAME.outcome(state)
        assert state.round >= 5 and outcome.cheaters == ()  # honest authors
        assert all(r.status == "revealed" and not r.faults for r in state.rules)
        totals.update(kinds)
        totals["rules"] += len(state.rules)
        totals["rounds"] += state.round
    assert totals["rules"] >= 0.9 * totals["rounds"]  # the winners added secret rules
    assert totals["verdict"] > 0 and totals["reveal_rule"] == totals["rules"]


_ints = st.integers(-2, 140)
_words = st.sampled_from([*STRAY_SAYS, *STRAY_CALLS, "", " ", "ab" * 32])
_text = st.one_of(_words, st.text(max_size=30))
_DOS = ["penalty", "return", "skip", "reverse", "again", "draw", "uphold", "x"]
_effect = st.fixed_dictionaries(
    {"do": st.sampled_from(_DOS), "target": _ints, "n": st.integers(-1, 4), "phrase": _text}
)
_says = st.lists(_text, max_size=3)
_EVENT_DATA = {
    "play": {"seat": _ints, "position": _ints, "card": _ints, "says": st.lists(_text, max_size=3)},
    "draw": {"seat": _ints, "says": st.lists(_text, max_size=3)},
    "say": {"seat": _ints, "says": st.lists(_text, max_size=3)},
    "call": {"seat": _ints, "target": _ints, "phrase": _text},
    "verdict": {"seat": _ints, "slot": _ints, "on": _ints,
                "effects": st.lists(_effect, max_size=3)},
    "add_rule": {"seat": _ints, "commitment": _text},
    "propose": {"seat": _ints, "action": st.sampled_from(["drop", "change", "end", "x"]),
                "slot": _ints},
    "vote": {"seat": _ints, "yes": st.booleans()},
    "timer": {"purpose": _text},
    "dealt": {"seat": _ints, "positions": st.lists(_ints, max_size=3)},
    "revealed": {"positions": st.lists(_ints, max_size=2), "cards": st.lists(_ints, max_size=2)},
    "reshuffled": {"new_positions": st.lists(_ints, max_size=3)},
}  # fmt: skip
_events = st.sampled_from(sorted(_EVENT_DATA)).flatmap(
    lambda kind: st.fixed_dictionaries({"kind": st.just(kind), **_EVENT_DATA[kind]})
)


def _mid_game() -> MaoState:
    t = Simulator(GAME, MaoConfig(conduct=True), 3, deck_seed=5)
    bots = [SensibleBot(s) for s in range(3)]
    rng = random.Random(5)
    while t.state.round < 1 or not t.state.rules or t.state.phase != "play":
        t.step(bots, rng)
    while not t.state.judgements:
        t.step(bots, rng)
    return t.state


MID_GAME = _mid_game()


@settings(max_examples=300, deadline=None)
@given(data=st.lists(_events, min_size=1, max_size=4))
def test_arbitrary_event_data_never_crashes_the_engine(data: list[dict]) -> None:
    state = MID_GAME
    for item in data:
        try:
            event = GAME.decode_event(item)
            after = GAME.apply(state, event)
        except EngineError:
            continue
        GAME.encode(after)
        state = after


# -- the bots themselves -----------------------------------------------------------------


def test_bots_never_play_a_bad_card_or_out_of_turn() -> None:
    for seed in range(12):
        seats = 3 + seed % 4
        t = Simulator(GAME, MaoConfig.for_seats(seats), seats, deck_seed=seed)
        bots = [LegalBot(s) if s % 2 else SensibleBot(s) for s in range(seats)]
        rng = random.Random(seed)
        seen = 0
        while not GAME.is_over(t.state):
            t.step(bots, rng)
            for note in t.state.notes:
                if note.seq >= seen:
                    assert note.phrase not in ("bad card", "playing out of turn", "bad call")
            seen = t.state.seq


def test_sensible_bot_says_its_phrases() -> None:
    from tests.test_mao_script import Script

    s = Script([["7♠", "K♣"], ["4♣", "Q♥"]], "2♠", config=MaoConfig(hand_size=2))
    event = SensibleBot(1).act(GAME, s.state, 0, s.table.known[0])
    assert event == PlayCard(0, s.position(0, "7♠"), Card.parse("7♠"),
                         ("have a nice day", "seven of spades", "last card"))  # fmt: skip


def test_sensible_bot_calls_a_penalty_it_is_sure_of() -> None:
    from tests.test_mao_script import Script

    s = Script([["5♠", "K♣", "2♣"], ["4♣", "Q♣", "3♣"], ["6♣", "8♣", "9♦"]], "10♠",
               config=MaoConfig(hand_size=3))  # fmt: skip
    s.play(0, "5♠")  # the spade's name is owed: a penalty nobody can dispute
    assert SensibleBot(3).act(GAME, s.state, 2, s.table.known[2]) == Call(
        2, 0, "failure to say five of spades"
    )
    s.submit(SensibleBot(3).act(GAME, s.state, 2, s.table.known[2]))
    assert s.notes() == [(0, "failure to say five of spades")]


def test_sensible_bot_learns_a_secret_rule_from_penalties() -> None:
    from engines.mao_rules import M29_EXAMPLES
    from tests.test_mao import _with_rule

    s, _slot = _with_rule(
        M29_EXAMPLES["red on black"], [["5♦", "9♣"], ["5♥", "5♠"], ["6♠", "8♥"]], "5♣"
    )
    bot = SensibleBot(11)
    s.play(1, "5♥")  # red on black: penalised and sent back
    s.judge()
    s.play(1, "5♠", "five of spades")
    s.judge()
    s.draw(2)
    s.judge()
    # seat 0 holds 5♦ (red on black) and 9♣ (invalid on 5♠) and a penalty-free choice:
    # a learner that saw "colour clash" for red on black draws rather than play 5♦
    choice = bot.act(GAME, s.state, 0, s.table.known[0])
    assert isinstance(choice, Draw)
    naive = LegalBot(11).act(GAME, s.state, 0, s.table.known[0])
    assert isinstance(naive, PlayCard) and naive.card == Card.parse("5♦")


def test_a_winning_bot_writes_a_fair_secret_rule() -> None:
    from engines.mao_rules import commitment, validate
    from tests.test_mao_script import Script

    s = Script([["5♣", "K♣"], ["4♣", "Q♥"]], "2♣", config=MaoConfig(hand_size=2))
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    s.play(0, "K♣", "Mao")
    bot = SensibleBot(5)
    event = bot.act(GAME, s.state, 0, s.table.known[0])
    assert event is not None and event.KIND == "add_rule"
    ((rule, salt, commit),) = bot.written
    assert validate(rule) is rule and commitment(rule, salt) == commit == event.commitment


@pytest.mark.parametrize(
    "switches",
    [{"continuous": True}, {"dictator": 1, "dictator_plays": False}, {"dictator": 0},
     {"mini": True}, {"no_talking": True}, {"conduct": True}, {"seven_draw": "draw"}],
    ids=["M36", "M39-no-cards", "M39", "M40", "M37", "M38", "M9-draw"],
)  # fmt: skip
def test_bot_games_finish_under_every_variant(switches: dict) -> None:
    for seed in range(8):
        seats = 3 + seed % 5
        t = Simulator(GAME, MaoConfig.for_seats(seats, **switches), seats, deck_seed=seed)
        bots = [SensibleBot(seed * 16 + s) if s % 3 else LegalBot(seed * 16 + s)
                for s in range(seats)]  # fmt: skip
        outcome = t.play(bots, seed=seed, max_events=60_000)
        assert outcome is not None and outcome.cheaters == ()
        assert sum(t.state.wins) >= 5
