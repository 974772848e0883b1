"""The rules the networked session relies on, checked on the pure table and
replay (no sockets): timer authority by term, stale bodies overtaken by
another seat's, a relock whose body was lost in a crash, final reveals once
the game was stopped, and a replay rebuilt after the log is cut back."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.bots import sensible_bots
from engines.core import Timer, Transfer
from p2p.envelope import TableSpec
from p2p.identity import Identity
from table.local import LocalTable
from table.machine import Table, TableSetup
from table.replay import Replay, setup_body
from table.seat import Seat


def bluff(seats: int, name: bytes = b"rules", version: int = 3) -> LocalTable:
    setup = TableSetup(name, "bluff", seats, proven=False, version=version)
    return LocalTable(setup, sensible_bots("bluff", seats, 2))


def until(local: LocalTable, done, limit: int = 2000) -> None:
    for _ in range(limit):
        if done():
            return
        assert local.step(), "the game ended first"
    pytest.fail("never happened")


def starter_timer(local: LocalTable) -> Timer | None:
    return next((r for r in local.table.pending() if isinstance(r, Timer)), None)


def test_only_the_sequencer_of_the_entry_term_times_out_a_timer_on_v2() -> None:
    local = bluff(2, version=2)  # v3: tests/test_timers.py
    until(local, lambda: starter_timer(local) is not None)  # B3: waiting for A♠
    table = local.table
    purpose = starter_timer(local).purpose
    before = table.game.encode(table.state)
    # seat 1 in term 0 (sequencer: seat 0) and in term 2 (seat 0 again)
    for term in (0, 2):
        verdict = table.feed(1, {"t": "timer", "purpose": purpose, "at": table.count}, term)
        assert not verdict.ok and verdict.seat == 1 and "only the sequencer" in verdict.reason
        assert table.game.encode(table.state) == before
    # claiming to have led term 0 does not help seat 1 (seat 0 led it)
    body = {"t": "timer", "purpose": purpose, "term": 0, "at": table.count}
    verdict = table.feed(1, body, 2)
    assert not verdict.ok and verdict.seat == 1
    assert table.game.encode(table.state) == before
    # in term 1 seat 1 is the sequencer: its timer runs out
    body = {"t": "timer", "purpose": purpose, "term": 1, "at": table.count}
    assert table.feed(1, body, 1).ok
    assert table.game.encode(table.state) != before, "the timer ran out"


def test_a_timer_carried_into_the_next_term_by_a_failover_is_stale_on_v2() -> None:
    local = bluff(2, b"failover", version=2)
    until(local, lambda: starter_timer(local) is not None)
    table = local.table
    purpose = starter_timer(local).purpose
    before, faults = table.game.encode(table.state), len(table.faults)
    body = {"t": "timer", "purpose": purpose, "term": 0, "at": table.count}
    assert table.feed(0, body, 1).ok  # issued by seat 0 as sequencer of term 0
    assert table.game.encode(table.state) == before and len(table.faults) == faults
    assert table.stale[-1][0] == 0 and "term 0" in table.stale[-1][2]
    forged = {"t": "timer", "purpose": purpose, "term": 1, "at": table.count}
    verdict = table.feed(0, forged, 3)  # seat 0 never led term 1
    assert not verdict.ok and verdict.seat == 0


def test_a_timer_that_stopped_before_its_body_arrived_is_stale_on_v2() -> None:
    local = bluff(2, b"timer-race", version=2)
    until(local, lambda: starter_timer(local) is not None)
    table = local.table
    purpose, seen = starter_timer(local).purpose, table.count
    until(local, lambda: starter_timer(local) is None)  # A♠ shown meanwhile
    verdict = table.feed(0, {"t": "timer", "purpose": purpose, "at": seen}, 0)
    assert verdict.ok and "stopped" in table.stale[-1][2]
    verdict = table.feed(0, {"t": "timer", "purpose": purpose, "at": table.count}, 0)
    assert not verdict.ok and "no pending timer" in verdict.reason
    verdict = table.feed(0, {"t": "timer", "purpose": purpose, "at": table.count + 5}, 0)
    assert not verdict.ok and "'at'" in verdict.reason


def test_two_challenges_of_one_play_the_second_is_stale_not_a_cheat() -> None:
    local = bluff(3, b"two-challenges")
    game = local.table.game

    def challengers() -> list[int]:
        state = local.table.state
        return [s for s in range(3) if "challenge" in game.legal_kinds(state, s)]

    until(local, lambda: len(challengers()) == 2)
    table = local.table
    first, second = challengers()
    seen = table.count
    for seat in (first, second):
        body = {"t": "move", "event": {"kind": "challenge", "seat": seat}, "at": seen}
        assert table.feed(seat, body, 0).ok
    assert not table.faults
    assert table.stale and table.stale[-1][0] == second
    # an illegal move at the state its author saw is still a cheat
    verdict = table.feed(second, {"t": "move", "event": {"kind": "challenge", "seat": second}}, 0)
    assert not verdict.ok and verdict.seat == second


def test_a_relock_lost_in_a_crash_is_replaced_and_the_game_ends_audited() -> None:
    for attempt in range(20):
        local = bluff(2, f"relock-{attempt}".encode())

        def transfer(local: LocalTable = local) -> Transfer | None:
            return next((r for r in local.table.pending() if isinstance(r, Transfer)), None)

        try:
            until(local, lambda: transfer() is not None, limit=500)
        except (AssertionError, pytest.fail.Exception):
            continue  # this deal never made anyone pick up the pile
        taker = transfer().seat
        seat = local.seats[taker]
        lost = [b for b in seat.duties() if b["msg"]["type"] == "relock"]
        assert lost, "the taker owes relocks"
        # crash: the keys were kept, the relock bodies never signed
        restarted = Seat(local.table, taker)
        restarted.secrets, restarted.draw_values = seat.secrets, seat.draw_values
        local.seats[taker] = restarted
        while local.step():
            pass
        assert local.table.audit().ok and not local.table.faults
        return
    pytest.fail("no Bluff game with a pile pick-up")


def test_a_stopped_game_owes_only_final_reveals_and_accepts_them() -> None:
    local = bluff(2, b"stopped")
    until(local, lambda: local.table.deals[0].dealt and local.table.events)
    table = local.table
    verdict = table.feed(1, {"t": "move", "event": {"kind": "accept", "seat": 1}}, 0)
    assert not verdict.ok and not table.over
    for seat in local.seats:
        duties = seat.duties(stopped=True)
        assert duties and all(b["msg"]["type"] == "final" for b in duties)
        for body in duties:
            assert table.feed(seat.seat, body, 0).ok
    assert all(not d.missing_final() for d in table.deals if d.dealt)
    assert table.audit() == table.faults[0]


def test_replay_rewind_rebuilds_the_same_table() -> None:
    local = bluff(2, b"rewind")
    while local.step():
        pass
    ids = [Identity.generate() for _ in range(2)]
    replay = Replay(TableSpec(b"rewind", tuple(i.public for i in ids)))
    replay.feed(1, 0, 0, setup_body("bluff", 2, None, False))
    for seq, (author, body) in enumerate(local.log, start=2):
        assert replay.feed(seq, 0, author, body) is None
    assert replay.table is not None and replay.table.over
    final = replay.table.game.encode(replay.table.state)
    middle = Table(local.setup)
    for author, body in local.log[:40]:
        middle.feed(author, body)
    replay.rewind(41)
    assert len(replay.items) == 41 and replay.table.count == 40
    assert replay.table.game.encode(replay.table.state) == middle.game.encode(middle.state)
    for seq, (author, body) in enumerate(local.log[40:], start=42):
        assert replay.feed(seq, 0, author, body) is None
    assert replay.table.game.encode(replay.table.state) == final
    assert replay.audit().ok and not replay.finals_missing()


BODY_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.text(max_size=8)
    | st.binary(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "t",
                    "deal",
                    "msg",
                    "event",
                    "kind",
                    "seat",
                    "at",
                    "term",
                    "purpose",
                    "digest",
                    "value",
                    "type",
                    "keys",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)
TABLE_BODIES = (
    st.fixed_dictionaries(
        {"t": st.sampled_from(["deal", "move", "commit", "open", "timer", "setup", "x"])},
        optional={
            "deal": st.integers(-1, 3) | BODY_VALUES,
            "msg": BODY_VALUES,
            "event": st.fixed_dictionaries(
                {"kind": st.sampled_from(["play", "challenge", "accept", "show", "x"])},
                optional={"seat": st.integers(-1, 3), "position": st.integers(-1, 60)},
            )
            | BODY_VALUES,
            "at": BODY_VALUES,
            "term": BODY_VALUES,
            "purpose": st.sampled_from(["starter", "x"]) | BODY_VALUES,
            "digest": BODY_VALUES,
            "value": BODY_VALUES,
        },
    )
    | BODY_VALUES
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    setup=st.none() | BODY_VALUES,
    bodies=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 3), TABLE_BODIES), max_size=6),
)
def test_arbitrary_bodies_never_crash_the_replay(setup, bodies) -> None:
    """A log with valid signatures may still carry any msgpack body: the
    replay (every peer's and the verifier's) names a seat, never crashes."""
    replay = Replay(SPEC2)
    first = setup_body("bluff", 2, None, False) if setup is None else setup
    replay.feed(1, 0, 0, first)
    for seq, (author, term, body) in enumerate(bodies, start=2):
        before = None if replay.table is None else replay.table.game.encode(replay.table.state)
        found = replay.feed(seq, term, author, body)
        if found is not None:
            assert found.seat in (author, None) and found.seq == seq
            if replay.table is not None:
                assert replay.table.game.encode(replay.table.state) == before


SPEC2 = TableSpec(b"fuzz", tuple(Identity.generate().public for _ in range(2)))


def test_session_rebuilds_its_table_when_the_log_is_cut_back(tmp_path, deterministic_deals) -> None:
    """A failover may cut entries the session already played (Rewound, v2
    tables: a v3 session gets final entries only, never cut): it replays
    the kept ones, keeps its secrets, and reads the new branch. (The cut
    points follow the game's length, whatever the deal.)"""
    from p2p.node import LogItem, Node, Rewound
    from table.session import TableSession

    local = bluff(2, b"cut-back", version=2)
    while local.step():
        pass
    ids = [Identity.generate() for _ in range(2)]
    spec = TableSpec(b"cut-back", tuple(i.public for i in ids), 2)
    node = Node(ids[1], spec, home=tmp_path)
    try:
        session = TableSession(node, proven=False, time_scale=1.0)
        log = [(0, setup_body("bluff", 2, None, False)), *local.log]
        counters = [0, 0]
        items = []
        for seq, (author, body) in enumerate(log, start=1):
            items.append(LogItem(seq, 0, author, counters[author], body))
            counters[author] += 1
        cut, later = len(items) // 3, 2 * len(items) // 3
        assert cut >= 30, "a game long enough to deal hands before the cut"
        session._feed_batch(items[:cut])
        session.seat.secrets = secrets = dict(local.seats[1].secrets)
        session.seat.draw_values = dict(local.seats[1].draw_values)
        session._refresh_snapshot()
        snap = session.snapshot
        assert snap.known, "seat 1 reads its own hand with its secrets"
        session._feed_batch(items[cut:later])
        assert session.snapshot.count == later - 1  # the setup entry is no table body
        updates = session._feed_batch([Rewound(cut), *items[cut:]])
        assert updates[0].kind == "rewound" and updates[0].seq == cut
        assert session.replay.items == [
            type(session.replay.items[0])(i.seq, i.term, i.author, i.body) for i in items
        ]
        assert session.seat.secrets == secrets, "the seat's secrets survive the rebuild"
        assert session._own_fed == counters[1]
        assert session.outcome is not None and not session.faults
        assert str(session.outcome) == str(local.table.game.outcome(local.table.state))
        # the snapshot taken before the cut is still a consistent earlier table
        assert snap.count == cut - 1 and snap.state is not None
    finally:
        node.store.close()


def test_a_card_being_dealt_to_a_seat_is_not_revealed_before_that_deal() -> None:
    """Mao: a penalty draw ("draw 2") pending ahead of the round-end reveal of
    the same cards. The drawing seat keeps its key until the draw is dealt;
    had it revealed early, the draw could never be answered (a stall)."""
    from engines.core import Deal, Reveal

    local = bluff(2, b"draw-then-reveal")
    until(local, lambda: local.table.deals[0].dealt)
    table = local.table
    number, local_pos = 0, 51
    position = next(p for p, w in table.where.items() if w == (number, local_pos))
    assert {layer.seat for layer in table.deals[0].outstanding(local_pos)} == {0, 1}
    requests = (Deal(1, (position,), "rule"), Reveal((position,), "round end"))
    table.pending = lambda: requests  # the engine's order: the draw first

    def keys(seat: int) -> set[int]:
        bodies = [b for b in local.seats[seat].duties() if b["msg"]["type"] == "keys"]
        return {p for b in bodies for p, _ in b["msg"]["keys"]}

    assert local_pos not in keys(1), "the drawing seat keeps its key"
    assert local_pos in keys(0), "the other seat reveals for the deal"
