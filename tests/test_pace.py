"""Bots at a person's pace (issue 26, table/pace.py): a bot waits until a
person could have read the table, never takes a person's turn within the
turn's first seconds, and is asked once per table.

The pure part is tested with times passed in; one test plays real peers on
127.0.0.1 with a bot that challenges whenever it may, and measures by the
person's own session how long the person's turn was theirs."""

from __future__ import annotations

import random
from typing import Any

import pytest
import trio

from engines.bluff import GAME, BluffConfig, Challenge, Claim, Phase, PlayFaceDown, Show
from engines.bots import Simulator, sensible_bots
from engines.core import Event
from p2p.node import Node
from table.pace import Pace, Pacer, own_kinds, pace_named, people_kinds, takes_turn
from table.session import MoveRefused, TableMovedOn, TableSession
from tests.p2p_mesh import make_table


def _bluff_until(seats: int, done: Any, seed: int = 5) -> Simulator:
    """A Bluff game between sensible bots, stepped until ``done(state)``."""
    sim = Simulator(GAME, BluffConfig(), seats, deck_seed=seed)
    bots = sensible_bots("bluff", seats, seed)
    rng = random.Random(seed)
    for _ in range(2000):
        if done(sim.state):
            return sim
        sim.step(bots, rng)
    raise AssertionError("never reached")


def _persons_turn(state: Any) -> bool:
    return state.phase is Phase.PLAY and state.turn == 0 and state.last_open and state.pile


def test_a_persons_turn_is_theirs_alone_and_a_challenge_takes_it() -> None:
    sim = _bluff_until(3, _persons_turn)
    state = sim.state
    assert own_kinds(GAME, state, 3, 0) == {"play"}  # B4: only seat 0 may place now
    assert "challenge" in GAME.legal_kinds(state, 1)  # a window for everybody else
    challenger = next(s for s in (1, 2) if s != state.last.seat)
    assert takes_turn(GAME, state, 3, {0}, Challenge(challenger))  # B10: seat 0 loses its turn
    # a bot's challenge when no person's turn is at stake takes nothing
    assert not takes_turn(GAME, state, 3, {1}, Challenge(challenger if challenger != 1 else 2))


def test_a_window_everybody_has_is_not_a_turn() -> None:
    sim = _bluff_until(3, lambda s: s.phase is Phase.STARTER)
    state = sim.state
    assert own_kinds(GAME, state, 3, 0) == frozenset()  # every seat may show (B3)
    ace = next(p for p, c in sim.faces.items() if str(c) == "A♠")
    holder = state.holder(ace)
    if holder is not None and holder != 0:
        assert not takes_turn(GAME, state, 3, {0}, Show(holder, ace))


def test_moves_wait_to_be_read_and_a_turn_waits_its_seconds() -> None:
    pace = Pace(frozenset({0}), read=4.0, turn=12.0)
    pacer = Pacer(pace)
    assert pacer.look(7, 100.0, {0: frozenset({"play"})})  # the person's turn begins
    assert not pacer.look(7, 101.0, {0: frozenset({"play"})})  # same table: not asked again
    pacer.hold(Challenge(1), takes_turn=True)
    assert pacer.wake_at() == 112.0
    assert pacer.ready(111.9) is None
    assert pacer.ready(112.0) == Challenge(1)
    assert pacer.ready(113.0) is None  # made once
    # a duty body later (the table changes, the turn goes on): the turn keeps its start
    assert pacer.look(8, 105.0, {0: frozenset({"play"})})
    assert pacer.due("challenge", takes_turn=True) == 112.0
    assert pacer.due("play", takes_turn=False) == 109.0  # read from the latest change
    # the turn ends and a new one begins: its own 12 s
    pacer.look(9, 120.0, {0: frozenset()})
    pacer.look(10, 130.0, {0: frozenset({"play"})})
    assert pacer.due("challenge", takes_turn=True) == 142.0


def test_a_held_move_is_dropped_when_the_table_changes_first() -> None:
    pacer = Pacer(Pace(frozenset({0}), read=4.0, turn=12.0))
    pacer.look(1, 0.0, {0: frozenset({"play"})})
    pacer.hold(Challenge(2), takes_turn=True)
    pacer.look(2, 5.0, {0: frozenset()})  # the person played at 5 s
    assert pacer.wake_at() is None and pacer.ready(100.0) is None


def test_duties_go_at_once_and_no_timer_runs_out_on_a_bot() -> None:
    pacer = Pacer(Pace(frozenset({0}), read=4.0, turn=12.0))
    pacer.look(1, 10.0, {0: frozenset()})
    assert pacer.due("verdict", takes_turn=False) == 10.0  # M28: others wait for it
    assert pacer.due("play", takes_turn=False, timer=11.0) == 10.5  # a 1 s timer: half
    assert pacer.due("play", takes_turn=False, timer=30.0) == 14.0  # a long one: read
    assert pacer.due("challenge", takes_turn=False, timer=9.0) == 10.0  # overdue: at once


def test_doctests() -> None:
    import doctest

    import table.pace

    assert doctest.testmod(table.pace).failed == 0


def test_paces_by_name() -> None:
    human = pace_named("human", {0})
    quick = pace_named("quick", [0])
    assert human is not None and quick is not None
    assert human.turn >= 10 + 2 and human.read >= 3  # 10 s on screen, 2 s to reach it
    assert quick.turn == human.turn and quick.read < 1
    assert pace_named("off", {0}) is None
    with pytest.raises(ValueError, match="no pace"):
        pace_named("slow", {0})
    with pytest.raises(ValueError):
        Pace(frozenset({0}), read=-1)


def test_people_kinds_names_only_people() -> None:
    sim = _bluff_until(3, _persons_turn)
    assert people_kinds(GAME, sim.state, 3, {0, 7}) == {0: frozenset({"play"})}


# ---------------------------------------------------------------- real peers


class _Doubter:
    """A bot that challenges every claim it may (B6), else plays sensibly."""

    def __init__(self, seat: int) -> None:
        self.inner = sensible_bots("bluff", 3, 11)[seat]

    def act(self, game: Any, state: Any, seat: int, known: dict) -> Event | None:
        if "challenge" in game.legal_kinds(state, seat):
            return Challenge(seat)
        return self.inner.act(game, state, seat, known)


TURN = 3.0  # the pace's turn hold in this test (12 s in play)
PROMISED = 2.0  # what the person must see of it (10 s in play)


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.parametrize("paced", [True, False], ids=["paced", "unpaced"])
async def test_a_bot_never_takes_a_persons_turn_within_its_seconds(tmp_path, paced) -> None:
    ids, spec = make_table(3, b"pace-table")
    nodes = [
        Node(ids[s], spec, home=tmp_path / f"peer{s}", host="127.0.0.1", timeout=2.0)
        for s in range(3)
    ]
    pace = Pace(frozenset({0}), read=0.05, turn=TURN) if paced else None
    bots = [None, _Doubter(1), _Doubter(2)]
    changed = trio.Event()

    def note(update: Any) -> None:
        nonlocal changed
        changed.set()
        changed = trio.Event()

    person = TableSession(nodes[0], game="bluff", proven=False, time_scale=0.05, on_update=note)
    sessions = [person] + [
        TableSession(
            nodes[s],
            game="bluff",
            proven=False,
            player=bots[s],
            time_scale=0.05,
            **({} if pace is None else {"pace": pace}),
        )
        for s in (1, 2)
    ]
    held: list[float] = []  # how long each turn the person sat out was theirs

    async def play_person() -> None:
        """Seat 0 sits out every turn with a claim before it (a person
        thinking); it places one card when the pile is empty."""
        began: float | None = None
        while len(held) < 2:
            wait = changed
            snap = person.snapshot
            state, kinds = snap.state, person.legal_kinds()
            mine = state is not None and "play" in kinds
            if mine and began is None:
                began = trio.current_time()
            elif not mine and began is not None:
                held.append(trio.current_time() - began)  # a bot took the turn
                began = None
            if mine and not state.pile:  # nothing to challenge: play, or nobody may move
                began = None
                claim = GAME.legal_claims(state, limit=1)[0]
                await _try(person, PlayFaceDown(0, (state.hands[0][0],), claim))
            if state is not None and "show" in kinds:
                ace = next((p for p, c in snap.known.items() if str(c) == "A♠"), None)
                if ace is not None and ace in state.hands[0]:
                    await _try(person, Show(0, ace))
            with trio.move_on_after(0.05):
                await wait.wait()

    try:
        async with trio.open_nursery() as nursery:
            for node in nodes:
                await nursery.start(node.run)
            for node in nodes[1:]:
                await node.connect(*nodes[0].listen_address)
            with trio.fail_after(90):
                async with trio.open_nursery() as players:
                    for session in sessions:
                        players.start_soon(session.run)
                    await play_person()
                    players.cancel_scope.cancel()
            nursery.cancel_scope.cancel()
    finally:
        for node in nodes:
            node.store.close()
    assert len(held) == 2
    if paced:
        assert min(held) >= PROMISED, held
    else:  # without a pace the doubter takes the turn at once: the test can tell
        assert min(held) < PROMISED, held


async def _try(session: TableSession, event: Event) -> None:
    try:
        await session.submit_move(event)
    except MoveRefused:
        pass


@pytest.mark.trio
async def test_a_move_chosen_on_a_table_that_moved_on_is_refused(tmp_path) -> None:
    """``seen``: the person's move is refused, nothing sent, once the table
    has moved on from the one they chose it on."""
    ids, spec = make_table(2, b"seen-table")
    nodes = [
        Node(ids[s], spec, home=tmp_path / f"peer{s}", host="127.0.0.1", timeout=2.0)
        for s in range(2)
    ]
    host = TableSession(nodes[0], game="bluff", proven=False, time_scale=0.05)
    bot = TableSession(nodes[1], game="bluff", proven=False, time_scale=0.05,
                       player=sensible_bots("bluff", 2, 4)[1])  # fmt: skip
    try:
        async with trio.open_nursery() as nursery:
            for node in nodes:
                await nursery.start(node.run)
            await nodes[1].connect(*nodes[0].listen_address)
            nursery.start_soon(host.run)
            nursery.start_soon(bot.run)
            with trio.fail_after(30):
                while host.snapshot.state is None or not host.legal_kinds() & {"play", "show"}:
                    await trio.sleep(0.02)
            snap = host.snapshot
            sent = nodes[0].log.next_own_counter
            hand = snap.state.hands[0]
            with pytest.raises(TableMovedOn, match="moved on"):
                await host.submit_move(
                    PlayFaceDown(0, (hand[0],), Claim(1, 1)), seen=snap.count - 1
                )
            assert nodes[0].log.next_own_counter == sent  # nothing went out
            nursery.cancel_scope.cancel()
    finally:
        for node in nodes:
            node.store.close()
