"""The Bomb game as whole games: random legal (and illegal) event sequences
keep every card, never leak a hidden face (identities above all) into
another seat's view, and replay to identical bytes; 1000 bot games finish."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.bomb import GAME, BombConfig, Detonate, Kind, Pass, PlaceBomb, PlayToArea
from engines.bots import Simulator
from engines.bots.bomb import RandomBombBot, SensibleBombBot, legal_plays
from engines.cards import Card
from engines.core import Reshuffle, Revealed
from tests.engine_walk import assert_replays, walk_with_strays


def check_invariants(t: Simulator) -> None:
    state = t.state
    live = list(range(state.seats)) + [p for h in state.hands for p in h]
    live += list(state.draw) + list(state.discard) + list(state.area)
    assert len(live) == 54 and len(set(live)) == 54, "a card was lost or duplicated"
    reshuffling = any(isinstance(r, Reshuffle) for r in GAME.pending(state))
    if not reshuffling:  # fresh positions get their faces when the reshuffle is done
        assert sorted(t.faces[p] for p in live) == sorted(GAME.deck(state.config))
    for p, card in state.faces:
        assert t.faces[p] == card
    for seat in range(t.seats):
        assert GAME.view(state, seat, t.faces) == GAME.view(state, seat, t.known[seat])


def stray_event(rng: random.Random, t: Simulator):
    seat = rng.randrange(t.seats)
    positions = tuple(rng.sample(range(54), rng.randint(1, 3)))
    faces = tuple(Card(i) for i in rng.sample(range(54), len(positions)))
    return rng.choice(
        [
            PlayToArea(seat, positions, faces, rng.choice(list(Kind))),
            PlaceBomb(seat, rng.randrange(t.seats)),
            Detonate(seat),
            Pass(seat),
        ]
    )


@settings(max_examples=30, deadline=None)
@given(seats=st.integers(3, 9), seed=st.integers(0, 2**32), stray_rate=st.floats(0, 0.5))
def test_random_event_sequences_keep_cards_hide_faces_and_replay(
    seats: int, seed: int, stray_rate: float
) -> None:
    rng = random.Random(seed)
    config = BombConfig(time_limit=rng.choice([0, 300, 3600]))
    t = Simulator(GAME, config, seats, deck_seed=seed, version=rng.choice([2, 3]))  # v3: a race
    bots = [RandomBombBot(random.Random(f"{seed}/{s}"), 0.01) for s in range(seats)]
    order = random.Random(seed + 1)
    walk_with_strays(t, bots, rng, order, 300, stray_rate, stray_event, check_invariants)
    assert_replays(t)
    # K2: no identity position is ever revealed before the game ends
    for event in t.events:
        if isinstance(event, Revealed) and set(event.positions) & set(range(seats)):
            assert event.positions == tuple(range(seats))


def test_legal_plays_are_accepted_by_the_engine() -> None:
    t = Simulator(GAME, BombConfig(), 4, deck_seed=3)
    while "play" not in GAME.legal_kinds(t.state, t.state.turn):
        t.serve()
    seat = t.state.turn
    hand = [(p, t.faces[p]) for p in t.state.hands[seat]]
    plays = legal_plays(hand, t.faces[seat])
    assert plays
    for play in plays:
        GAME.apply(t.state, PlayToArea(seat, play.positions, play.cards, play.rule))


@pytest.mark.slow
def test_1000_bot_games_finish() -> None:
    reasons: Counter[str] = Counter()
    sensible_won = random_won = lots = 0
    for seed in range(1000):
        seats = 3 + seed % 7
        kinds = [(SensibleBombBot if (s + seed) % 2 else RandomBombBot) for s in range(seats)]
        bots = [k(random.Random(f"{seed}/{s}")) for s, k in enumerate(kinds)]
        config = BombConfig(time_limit=1800)
        t = Simulator(GAME, config, seats, deck_seed=seed, version=2 + seed % 2)  # v3: K17 a race
        outcome = t.play(bots, seed, max_events=20_000)
        lots += any(getattr(e, "purpose", "") == "assassin" for e in t.events)
        assert outcome.cheaters == () and not set(outcome.winners) & set(outcome.losers)
        assert sorted(outcome.winners + outcome.losers) == list(range(seats))
        reasons[outcome.reason[:3]] += 1
        sensible_won += sum(kinds[s] is SensibleBombBot for s in outcome.winners)
        random_won += sum(kinds[s] is RandomBombBot for s in outcome.winners)
    assert set(reasons) <= {"K18", "K19", "K20", "K22", "K23", "K25"}
    assert reasons["K18"] + reasons["K19"] > 0
    # playing to the identity and detonating only when sure should pay off
    assert sensible_won > random_won, (sensible_won, random_won)
    assert lots > 0, "no two bots ever detonated in one race"


@pytest.mark.slow
def test_sensible_bots_detonate_well_and_rarely_run_out_of_time() -> None:
    # The sensible bot judges sampled identities with the engine's K4 roles
    # and grows impatient (K25 makes both alliances lose at the time limit):
    # among sensible bots alone, good assassinations (K18/K19) outnumber
    # failed ones (K20) and hardly any game reaches the time limit (K25; it
    # stays right when no seat has a good target at all).
    reasons: Counter[str] = Counter()
    for seed in range(100):
        seats = 3 + seed % 4
        bots = [SensibleBombBot(random.Random(f"{seed}/{s}")) for s in range(seats)]
        t = Simulator(GAME, BombConfig(), seats, deck_seed=seed)
        reasons[t.play(bots, seed, max_events=20_000).reason[:3]] += 1
    assert reasons["K18"] + reasons["K19"] > 3 * reasons["K20"], reasons
    assert reasons["K25"] <= 3, reasons


def test_a_detonation_decision_holds_for_its_window() -> None:
    # K16: a networked peer may poll its bot again before its answer is on
    # the log; the sensible bot decides once per window, not once per poll
    windows = 0
    for seed in range(30):
        t = Simulator(GAME, BombConfig(), 4, deck_seed=seed)
        bots = [SensibleBombBot(random.Random(f"{seed}/{s}")) for s in range(4)]
        order = random.Random(seed)
        while not GAME.is_over(t.state) and windows < 60:
            if t.state.bomb is not None and not t.state.work:
                for seat in range(4):
                    if seat == t.state.bomb or "detonate" not in GAME.legal_kinds(t.state, seat):
                        continue
                    fresh = SensibleBombBot(random.Random(f"poll/{seed}/{seat}"), nerve=0.35)
                    polls = [fresh.act(GAME, t.state, seat, t.known[seat]) for _ in range(25)]
                    assert len({type(p) for p in polls}) == 1, (seed, seat, polls)
                    windows += 1
            t.step(bots, order)
    assert windows >= 60
