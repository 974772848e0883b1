"""(v3) Commitment by every seat: an entry is final when every seat (not a
leaver) acknowledged it; a session acts on final entries only, and no
failover cuts one (protocol.md §3.5 *Final entries*; issue 28 point 4)."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest
import trio

from p2p.envelope import Head
from p2p.node import LogItem
from tests.p2p_mesh import make_table, mesh, wait_until
from tests.p2p_sim import SimNet


def _acted(net: SimNet, seat: int) -> list:
    """What the session of ``seat`` has acted on: v3 the final entries, v2
    everything in the chain (a v2 session acts on every entry it holds)."""
    m = net.machines[seat]
    return list(m.chain[: m.final if m.v3 else m.head])


def test_entries_are_final_once_every_seat_acknowledged_them() -> None:
    net = SimNet(3)
    net.run()
    net.submit(1, "a")
    net.run()
    assert all(m.final == 1 for m in net.machines)
    net.kill(2)  # seat 2 is gone: a majority still acknowledges, not every seat
    net.submit(1, "b")
    net.run()
    assert all(net.machines[s].committed == 2 for s in (0, 1))
    assert all(net.machines[s].final == 1 for s in (0, 1))
    # the table layer abandons seat 2 (it left): the others are enough
    for s in (0, 1):
        net.apply(s, net.machines[s].set_leavers({2}))
    assert all(net.machines[s].final == 2 for s in (0, 1))


def test_a_v2_table_has_no_final_mark() -> None:
    net = SimNet(3, version=2)
    net.run()
    net.submit(1, "a")
    net.run()
    assert all(m.final == 0 and m.kept == m.committed == 1 for m in net.machines)


@pytest.mark.parametrize("version", [2, 3])
def test_a_seat_that_acks_and_then_votes_a_shorter_head_undoes_nothing_acted_on(
    version: int,
) -> None:
    # issue 28 point 4: seat 2 acknowledges entry 3 (so a majority, seats 0
    # and 2, holds it: committed the Raft way), then, seat 0 gone, votes a
    # shorter head for seat 1's term and withholds the entry.
    net = SimNet(3, timeout=1.0, version=version)
    net.run()
    net.submit(1, "a")
    net.submit(2, "b")
    net.run()
    liar = 2

    def tamper(src, dst, msg):
        if dst == 1 and msg["k"] == "entry" and msg["e"]["seq"] >= 3 and src in (0, liar):
            return None  # seat 1 never gets entry 3 (lost on the way, withheld by the liar)
        if src == liar and msg["k"] == "vote":
            m = net.machines[liar]
            short = Head.create(
                net.table, net.ids[liar], "vote", msg["term"], 2, m.chain[1].term, m.hashes[2]
            )
            return short.to_wire()
        return msg

    net.tamper = tamper
    net.submit(0, "c")  # entry 3: at seats 0 and 2, acked by both
    net.run()
    assert net.machines[0].head == 3 and net.machines[0].committed == 3
    acted = {s: _acted(net, s) for s in (0, 1)}
    if version >= 3:
        assert net.machines[0].final == 2  # seat 1 never acked it: seat 0 does not act on it
    net.kill(0)
    net.advance(3.0, ticks=30)  # seat 1 leads term 1 on the liar's short vote
    assert net.machines[1].role.value == "sequencer"
    net.submit(1, "d")  # entry 3 of term 1, another than seat 0's
    net.run()
    net.tamper = None
    net.down.discard(0)  # seat 0 comes back
    for s in (1, 2):
        net.apply(0, net.machines[0].peer_connected(s, net.now))
        net.apply(s, net.machines[s].peer_connected(0, net.now))
    net.run()
    net.advance(3.0, ticks=30)
    lost = [s for s in (0, 1) if net.machines[s].chain[: len(acted[s])] != acted[s]]
    split = net.machines[0].chain != net.machines[1].chain
    if version >= 3:
        assert lost == [] and not split  # nothing acted on is undone, one table
        m0, m1 = net.machines[0], net.machines[1]
        assert m0.final == m1.final == m0.head and m0.chain[2].term == 1
        # seat 0's own event, cut with entry 3, was submitted again (or held
        # again by seat 2, which passed it on): it is final now, once
        bodies = [msgpack.unpackb(e.event.body) for e in m0.chain]
        assert bodies[:2] == ["a", "b"] and sorted(bodies[2:]) == ["c", "d"]
        assert not any(m.proofs for m in net.machines)
    else:  # v2: seat 0 acted on entry 3, which a majority acknowledged: the table splits
        assert lost or split


def test_an_entry_every_seat_acknowledged_is_never_cut_by_a_short_certificate() -> None:
    # 5 seats, 3 of them colluding (a majority): they ack entry 3, then vote
    # a shorter head for the term of one of them. The honest seats held it
    # final and refuse that term; nothing they acted on is cut.
    net = SimNet(5, timeout=1.0)
    net.run()
    for i in range(3):
        net.submit(i, i)
    net.run()
    assert all(m.final == 3 for m in net.machines)
    liars = (2, 3, 4)
    term = 2  # seat 2's
    votes = []
    for s in liars:
        m = net.machines[s]
        v = Head.create(net.table, net.ids[s], "vote", term, 2, m.chain[1].term, m.hashes[2])
        votes.append({"seat": s, "seq": v.seq, "hterm": v.hterm, "h": v.hash, "s": v.sig})
    m2 = net.machines[2]
    start = Head.create(net.table, net.ids[2], "newterm", term, 2, m2.chain[1].term, m2.hashes[2])
    newterm = {**start.to_wire(), "votes": votes}
    for honest in (0, 1):
        m = net.machines[honest]
        before = list(m.chain)
        with pytest.raises(Exception, match="every seat acknowledged"):
            m.receive(2, newterm, net.now)
        assert m.chain == before and m.term == 0


@pytest.mark.trio
async def test_real_nodes_yield_only_final_entries_and_set_leavers_ends_the_wait(
    tmp_path: Path,
) -> None:
    ids, table = make_table(3)
    async with mesh(ids, table, tmp_path, timeout=1.0) as nodes:
        await nodes[1].submit("one")
        await wait_until(lambda: all(n.final == 1 for n in nodes))
        seen: list[LogItem] = []

        async def consume() -> None:
            async for item in nodes[0].entries():
                seen.append(item)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(consume)
            await wait_until(lambda: len(seen) == 1)
            # seat 2 stops acknowledging (its acks are lost): entry 2 is in
            # seat 0's chain but not final, and not yielded
            nodes[2].machine.flushed = lambda *a, **k: []  # type: ignore[method-assign]
            nodes[2].machine._ack = _frozen_ack(nodes[2])  # type: ignore[method-assign]
            await nodes[1].submit("two")
            await wait_until(lambda: nodes[0].head == 2)
            await trio.sleep(0.5)
            assert nodes[0].final == 1 and len(seen) == 1
            # the tail waits, visible for the ending rule only
            assert [(i.seq, i.body) for i in nodes[0].tentative()] == [(2, "two")]
            nodes[0].set_leavers({2})  # the table layer abandoned seat 2
            await wait_until(lambda: len(seen) == 2)
            assert msgpack.unpackb(nodes[0].chain[1].event.body) == "two"
            assert seen[1].body == "two" and nodes[0].final == 2
            assert nodes[0].tentative() == []
            nursery.cancel_scope.cancel()


def _frozen_ack(node):
    ack = node.machine._ack()

    def frozen() -> Head:
        return ack

    return frozen


def test_the_final_mark_survives_a_restart_and_a_lazy_record_waits_for_a_sync(tmp_path) -> None:
    from p2p.log import LogMachine
    from p2p.store import Store

    net = SimNet(3)
    net.run()
    for i in range(4):
        net.submit(i % 3, i)
    net.run()
    m = net.machines[1]
    assert m.final == 4
    store = Store(net.table, tmp_path)
    for entry in m.chain:
        store.append("log", {"t": "entry", "e": entry.to_wire()})
    store.append("own", {"t": "final", "seq": 4}, lazy=True)
    assert store.take_dirty(["own"]) == []  # lazy: no fsync of its own
    store.append("own", {"t": "final", "seq": 2}, lazy=True)
    store.sync()
    store.close()
    again = Store(net.table, tmp_path)
    assert again.final == 4  # the highest wins
    restarted = LogMachine(
        net.table, net.ids[1], entries=again.entries, led_terms=[], final=again.final
    )
    assert restarted.final == 4 and restarted.kept == 4
    again.close()
    # a mark past the head it loaded (its log lost a tail) is capped at the head
    short = LogMachine(net.table, net.ids[1], entries=m.chain[:3], final=4)
    assert short.final == 3


def test_a_relayed_ack_counts_for_nobody_but_its_signer() -> None:
    """(v3, review) Seat 2 signs no ack and sends seat 1's signed ack as its
    own: it must not count as seat 2's acknowledgement."""
    net = SimNet(3, timeout=1.0)
    net.run()
    net.tamper = lambda s, d, msg: None if (msg["k"] == "ack" and s == 2) else msg
    for i in range(3):
        net.submit(i % 2, {"i": i})
        net.run()
    m = net.machines[0]
    assert m.head == 3 and m.final == 0
    relayed = Head.create(net.table, net.ids[1], "ack", 0, 3, 0, m.hashes[3])
    m.receive(2, relayed.to_wire(), net.now)
    assert m.final == 0


def test_set_leavers_refuses_the_own_seat_every_seat_and_strangers() -> None:
    net = SimNet(3, timeout=1.0)
    net.run()
    m = net.machines[2]
    for bad in ([2], [0, 1, 2], [5], [-1]):
        with pytest.raises(ValueError):
            m.set_leavers(bad)
        assert m.leavers == frozenset()
    m.set_leavers([1])
    assert m.leavers == frozenset({1})
