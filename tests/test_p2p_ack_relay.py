"""(v3) Relayed acks (protocol.md §3.5 *Relayed acks*, review v3 findings 1,
1b and 5): finality needs every seat's ack, so acks are passed on by every
peer. A link down between two honest seats that both still reach a third,
or one seat withholding its acks from one other, no longer stops anyone;
a bad ack passed on is dropped without blaming who passed it; a sequencer
that sequences and beats but never acks is voted out; and every peer says
whose ack its final point waits for. Real nodes on 127.0.0.1 (the fault
relay of tests/fault_relay.py cuts one link) and the in-memory SimNet."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from p2p.chain import LogError, Role, Send
from p2p.envelope import Head
from p2p.node import Node
from tests.fault_relay import FaultyNet
from tests.p2p_mesh import make_table, mesh, wait_until
from tests.p2p_sim import SimNet

TIMEOUT = 0.5


def _all_final(nodes: list[Node], head: int) -> bool:
    return all(n.head == head and n.final == head for n in nodes)


@pytest.mark.trio
async def test_a_partial_partition_leaves_both_cut_seats_reaching_finality(tmp_path) -> None:
    ids, table = make_table(3)
    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        async with mesh(
            ids, table, tmp_path, timeout=TIMEOUT, node_class=net.node_class()
        ) as nodes:
            for node in nodes:
                await node.submit({"before": node.seat})
            await wait_until(lambda: _all_final(nodes, 3), timeout=20)
            net.cut_link(1, 2)  # both still reach seat 0 (the sequencer)
            for round_ in range(3):
                for node in nodes[1:]:
                    await node.submit({"cut": node.seat, "round": round_})
                head = 3 + 2 * (round_ + 1)
                await wait_until(lambda h=head: _all_final(nodes, h), timeout=30)
            assert all(n.waiting_for_acks() == [] for n in nodes)
            assert len({n.log.head_hash for n in nodes}) == 1
            assert all(n.term == 0 for n in nodes)  # nobody was voted out for it
        relays.cancel_scope.cancel()


class _WithholdFromOne(Node):
    """Seat 2 sends its own acks to everyone but seat 1 (relays untouched)."""

    withheld = 0

    def _execute(self, effects: list[Any]) -> None:
        if self.seat != 2:
            return super()._execute(effects)
        out = []
        for eff in effects:
            if isinstance(eff, Send) and eff.msg.get("k") == "ack":
                if eff.to == 1:
                    self.withheld += 1
                    continue
                if eff.to is None:
                    self.withheld += 1
                    out += [Send(0, eff.msg)]
                    continue
            out.append(eff)
        return super()._execute(out)


@pytest.mark.trio
async def test_a_seat_withholding_its_acks_from_one_seat_does_not_stop_that_seat(
    tmp_path,
) -> None:
    ids, table = make_table(3)
    async with mesh(ids, table, tmp_path, timeout=TIMEOUT, node_class=_WithholdFromOne) as nodes:
        for round_ in range(3):
            for node in nodes:
                await node.submit({"seat": node.seat, "round": round_})
            head = 3 * (round_ + 1)
            await wait_until(lambda h=head: _all_final(nodes, h), timeout=30)
        assert nodes[2].withheld > 0  # seat 1 never had one of seat 2's acks directly
        assert nodes[1].acked(2) == nodes[1].head  # it has them, passed on by seat 0
        assert all(n.term == 0 for n in nodes)


class _MuteSequencer(Node):
    """Seat 0 sequences and beats but never sends its own ack once the
    chain holds 3 entries."""

    def _execute(self, effects: list[Any]) -> None:
        if self.seat == 0 and self.log.head >= 3:
            effects = [
                e for e in effects if not (isinstance(e, Send) and e.msg.get("k") == "ack")
            ]
        return super()._execute(effects)


@pytest.mark.trio
async def test_a_sequencer_that_never_acks_is_voted_out(tmp_path) -> None:
    ids, table = make_table(3)
    async with mesh(ids, table, tmp_path, timeout=TIMEOUT, node_class=_MuteSequencer) as nodes:
        for node in nodes:
            await node.submit({"seat": node.seat})
        await wait_until(lambda: all(n.head == 3 for n in nodes), timeout=20)
        await nodes[1].submit({"after": 1})
        await wait_until(lambda: all(n.head == 4 for n in nodes[1:]), timeout=20)
        honest = nodes[1:]
        await wait_until(lambda: all(n.waiting_for_acks() == [0] for n in honest), timeout=20)
        assert all(n.final < n.head for n in honest)
        # censor_wait is 2 timeouts: well within 30 s the censor loses its term
        await wait_until(lambda: all(n.term >= 1 for n in honest), timeout=30)
        assert not nodes[0].is_sequencer or nodes[0].term == 0
        assert any(n.is_sequencer for n in honest)
        # seat 0 still never acks: the final point still waits for it, and says so
        assert all(0 in n.waiting_for_acks() for n in honest)


# ------------------------------------------------------------ sans-I/O (SimNet)


def test_a_bad_relayed_ack_is_dropped_without_blaming_the_relayer() -> None:
    net = SimNet(3)
    for i in range(3):
        net.submit(i, {"x": i})
    net.run()
    m = net.machines[1]
    good = net.machines[2]._ack()
    forged = Head("ack", good.term, good.seq, good.hterm, good.hash, bytes(64))
    wire = {k: v for k, v in forged.to_wire().items() if k != "k"}
    before = (m.final, dict(m.acks))
    effects = m.receive(0, {"k": "acks", "of": [{"seat": 2, **wire}]}, net.now)
    assert not [e for e in effects if isinstance(e, Send) and e.to == 0 and e.msg["k"] != "fetch"]
    assert (m.final, m.acks) == before
    assert (2, forged) not in m._verified_acks
    # seat 0's own ack named as seat 2's: signed, but not by seat 2
    other = net.machines[0]._ack()
    wire = {k: v for k, v in other.to_wire().items() if k != "k"}
    m.receive(0, {"k": "acks", "of": [{"seat": 2, **wire}]}, net.now)
    assert m.acks.get(2) != other


def test_an_older_relayed_ack_never_replaces_a_newer_one() -> None:
    net = SimNet(3)
    net.submit(1, {"x": 1})
    net.run()
    old = net.machines[2]._ack()
    net.submit(1, {"x": 2})
    net.run()
    m = net.machines[0]
    assert m.acked(2) == 2
    wire = {k: v for k, v in old.to_wire().items() if k != "k"}
    m.receive(1, {"k": "acks", "of": [{"seat": 2, **wire}]}, net.now)
    assert m.acked(2) == 2


def test_sim_partial_partition_and_withholding_reach_finality() -> None:
    for cut in (
        lambda s, d, msg: None if {s, d} == {1, 2} else msg,
        lambda s, d, msg: None if (s, d) == (2, 1) and msg["k"] == "ack" else msg,
    ):
        net = SimNet(3)
        net.run()
        net.tamper = cut
        for i in range(3):
            net.submit(i, {"x": i})
        net.advance(2.0, ticks=20)
        assert [(m.head, m.final) for m in net.machines] == [(3, 3)] * 3
        assert net.errors == []


def test_sim_a_never_acking_sequencer_is_voted_out_and_named_as_awaited() -> None:
    net = SimNet(3, timeout=1.0)
    net.run()
    net.tamper = lambda s, d, msg: None if s == 0 and msg["k"] == "ack" else msg
    for i in range(3):
        net.submit(i, {"x": i})
    net.advance(1.0, ticks=10)  # under censor_wait (2 s): no vote yet
    assert [m.term for m in net.machines] == [0, 0, 0]
    assert [m.waiting_for_acks() for m in net.machines[1:]] == [[0], [0]]
    net.advance(4.0, ticks=40)
    assert all(m.term == 1 for m in net.machines)
    assert net.machines[1].role is Role.SEQUENCER


def test_sim_a_never_acking_plain_seat_costs_the_sequencer_nothing() -> None:
    net = SimNet(3, timeout=1.0)
    net.run()
    net.tamper = lambda s, d, msg: None if s == 2 and msg["k"] in ("ack", "acks") else msg
    for i in range(3):
        net.submit(i, {"x": i})
    net.advance(6.0, ticks=60)
    assert all(m.term == 0 for m in net.machines)
    assert [m.waiting_for_acks() for m in net.machines[:2]] == [[2], [2]]


def test_v2_keeps_no_relay() -> None:
    net = SimNet(3, version=2)
    for i in range(3):
        net.submit(i, {"x": i})
    net.advance(2.0, ticks=20)
    sent: list[str] = []
    net.tamper = lambda s, d, msg: sent.append(msg["k"]) or msg
    net.submit(0, {"y": 0})
    net.advance(2.0, ticks=20)
    assert "acks" not in sent
    m = net.machines[1]
    ack = net.machines[2]._ack()
    wire = {k: v for k, v in ack.to_wire().items() if k != "k"}
    with pytest.raises(LogError):
        m.receive(0, {"k": "acks", "of": [{"seat": 2, **wire}]}, net.now)
    assert m.waiting_for_acks() == []


def test_a_sequencer_whose_ack_is_ahead_of_us_is_not_withholding() -> None:
    net = SimNet(3, timeout=1.0)
    for i in range(3):
        net.submit(i, {"x": i})
    net.advance(1.0, ticks=10)
    behind = net.machines[2]
    assert behind.final == behind.head == 3

    def tamper(src: int, dst: int, msg: dict) -> dict | None:
        if dst != 2:
            return msg
        if msg["k"] == "entry" and msg["e"]["seq"] >= 5:
            return None  # seat 2 never gets past seq 4
        if (src == 1 and msg["k"] in ("ack", "acks")) or (src == 0 and msg["k"] == "acks"):
            return None  # nor seat 1's ack of seq 4, so seq 4 stays non-final there
        return msg

    net.tamper = tamper
    net.submit(1, {"y": 1})
    net.advance(0.5, ticks=5)
    net.submit(1, {"y": 2})
    net.advance(6.0, ticks=60)  # three times censor_wait
    assert (behind.head, behind.final) == (4, 3)
    assert net.machines[0].head == 5
    assert behind.waiting_for_acks() == [1]  # seat 0's ack names seq 5: we are behind
    assert not behind._acks_withheld(net.now)
    assert behind.voted == 0 and all(m.term == 0 for m in net.machines)
