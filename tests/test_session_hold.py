"""A held timer (issue 26): under ``nodealer play`` the person's screen may
hold the table's timers (help open, a phrase being typed, the round
banner); the sequencer then times a timer out that much later — the hold's
length is added to every pending timer's deadline, and nothing else
changes (nothing on the wire says when a timer started)."""

from __future__ import annotations

import time

import trio

from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import LogItem, Node
from table.replay import setup_body
from table.session import TableSession
from tests.test_session_rules import bluff, starter_timer, until


def test_a_hold_moves_every_pending_timer_by_its_length(tmp_path, deterministic_deals) -> None:
    local = bluff(2, b"hold")
    until(local, lambda: starter_timer(local) is not None)  # B3: the A♠ window (a timer)
    ids = [Identity.generate() for _ in range(2)]
    node = Node(ids[1], TableSpec(b"hold", tuple(i.public for i in ids)), home=tmp_path)
    try:
        session = TableSession(node, proven=False, time_scale=1.0)
        log = [(0, setup_body("bluff", 2, None, False)), *local.log]
        counters = [0, 0]
        items = []
        for seq, (author, body) in enumerate(log, start=1):
            items.append(LogItem(seq, 0, author, counters[author], body))
            counters[author] += 1
        session._feed_batch(items)

        async def deadlines() -> None:
            first = session._timer_deadlines()
            assert len(first) == 1, "the starter timer is pending"
            ((key, due),) = first.items()
            session.hold_timers(True)
            await trio.sleep(0.3)
            held = session._timer_deadlines()[key]
            assert held >= due + 0.3  # still moving while held: it never comes due
            session.hold_timers(False)
            await trio.sleep(0.2)
            after = session._timer_deadlines()[key]
            assert after - due >= 0.3
            assert abs((after - due) - session.held_seconds()) < 1e-6  # the hold, no more
            assert session._timer_deadlines()[key] == after  # released: the deadline stays

        trio.run(deadlines)
        assert session.held_seconds() >= 0.3
        before = session.held_seconds()
        session.hold_timers(False)  # a release without a hold changes nothing
        time.sleep(0.05)
        assert session.held_seconds() == before
    finally:
        node.store.close()
