"""(v3) Events go to every peer; each peer holds the events it received that
its chain lacks (protocol.md §3.2, §3.5 *Censorship*)."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest
import trio

from p2p.envelope import Event, TableSpec
from p2p.log import LogMachine
from tests.p2p_mesh import make_table, mesh, wait_until
from tests.p2p_sim import SimNet


class CensoringMachine(LogMachine):
    """A sequencer that silently drops every submit of one seat (``victim``)
    and otherwise behaves: it beats, sequences the others, acks."""

    victim = 2

    def _on_submit(self, src: int, event: Event, now: float) -> None:
        if event.author == self.victim:
            return
        super()._on_submit(src, event, now)


def _body(value) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def test_a_submit_reaches_every_peer_which_holds_it_until_it_is_in_the_chain() -> None:
    net = SimNet(3)
    net.run()
    net.now = 5.0
    event = net.submit(2, {"n": 0})
    # before any delivery: the author holds its own event
    assert net.machines[2].held_events(2) == [event]
    assert net.machines[2].held_since(2) == 5.0
    (submit,) = net.queues[(2, 1)]  # sent to the follower too, not only to seat 0
    assert submit["k"] == "submit"
    net.queues[(2, 1)] = []
    net.apply(1, net.machines[1].receive(2, submit, net.now))
    assert net.machines[1].held_events(2) == [event]
    assert net.machines[1].held_since(2) == 5.0
    net.run()
    for m in net.machines:
        assert m.chain[-1].event == event
        assert m.held_events(2) == [] and m.held_since(2) is None


def test_a_v2_table_sends_events_to_the_sequencer_only() -> None:
    net = SimNet(3, version=2)
    net.run()
    net.submit(2, {"n": 0})
    assert [key for key, q in net.queues.items() if q] == [(2, 0)]
    net.run()
    assert all(m.held_events(2) == [] for m in net.machines)
    assert all(len(m.chain) == 1 for m in net.machines)


def test_held_events_come_in_counter_order_and_conflicts_are_refused() -> None:
    net = SimNet(3)
    net.run()
    author = net.machines[2]
    first = author.author(_body({"n": 0}))
    second = author.author(_body({"n": 1}))
    peer = net.machines[1]
    peer.receive(2, {"k": "submit", "ev": second.to_wire()}, 1.0)
    peer.receive(2, {"k": "submit", "ev": first.to_wire()}, 2.0)
    assert peer.held_events(2) == [first, second]
    assert peer.held_since(2) == 1.0
    other = Event.create(net.table, net.ids[2], 2, 0, _body({"n": "other"}))
    before = peer.held_events(2)
    try:
        peer.receive(2, {"k": "submit", "ev": other.to_wire()}, 3.0)
    except Exception as exc:  # a log error: the node drops that connection
        assert "two different events #0" in str(exc)
    else:
        raise AssertionError("a second event for a held counter was accepted")
    assert peer.held_events(2) == before
    # (v3) a submit passed on by another peer is held as from its author; a
    # conflicting one passed on is the author's doing: ignored, no error
    peer.receive(0, {"k": "submit", "ev": first.to_wire()}, 3.0)
    peer.receive(0, {"k": "submit", "ev": other.to_wire()}, 3.0)
    assert peer.held_events(2) == before


def test_entries_cut_by_a_failover_are_held_again_from_the_terms_start() -> None:
    # (v3, review break 5) a cut entry's event is held again (the seat saw the
    # answer), its censor_wait counted from the current term's start
    net = SimNet(3)
    net.run()
    event = net.submit(1, {"n": "kept"})
    net.run()
    m = net.machines[2]
    net.advance(5.0, ticks=5)
    m._truncate(0)
    assert m.held_events(1) == [event]
    assert m.held_since(1) == m._term_entered


def test_an_answer_cut_by_a_failover_reaches_the_next_sequencer() -> None:
    # n=7: sequencer 0 and author 3 only; the witness 6 holds the entry; 0 and
    # 3 go down, the failover runs without 6; healed, 6 holds the answer
    # again, passes it on, the innocent next sequencer keeps its term
    net = SimNet(7, timeout=1.0)
    net.run()
    net.tamper = lambda src, dst, msg: (
        None
        if (msg["k"] == "submit" and dst not in (0, 6))
        or (msg["k"] == "entry" and src == 0 and dst != 6)
        else msg
    )
    event = net.submit(3, {"answer": 3})
    net.run()
    assert [e.event for e in net.machines[6].chain] == [event]
    net.kill(0)
    net.kill(3)
    net.tamper = lambda src, dst, msg: None if 6 in (src, dst) else msg
    net.advance(8.0, ticks=80)
    net.tamper = None
    net.advance(8.0, ticks=80)
    live = [net.machines[s] for s in (1, 2, 4, 5, 6)]
    assert all(m.term == 1 for m in live)
    assert all([e.event for e in m.chain] == [event] for m in live)


@pytest.mark.trio
async def test_real_nodes_hold_what_a_censoring_sequencer_leaves_out(tmp_path: Path) -> None:
    ids, table = make_table(3)
    async with mesh(ids, table, tmp_path, timeout=2.0) as nodes:
        nodes[0].machine.__class__ = CensoringMachine
        for node in nodes[1:]:  # no vote-out in this test: only what is held
            node.log.censor_wait = 1e9
        started = trio.current_time()
        await nodes[2].submit({"from": 2})
        await nodes[1].submit({"from": 1})
        await wait_until(lambda: all(n.head == 1 for n in nodes))
        await wait_until(lambda: len(nodes[1].held_events(2)) == 1)
        (held,) = nodes[1].held_events(2)
        assert held.author == 2 and held.counter == 0
        assert msgpack.unpackb(held.body) == {"from": 2}
        since = nodes[1].held_since(2)
        assert since is not None and started <= since <= trio.current_time()
        assert nodes[0].held_events(2) == []  # the censor keeps nothing of it
        assert nodes[1].held_events(1) == [] and nodes[2].held_events(1) == []
        assert nodes[2].held_events(2) == [held]  # its author holds it too


@pytest.mark.trio
async def test_a_v2_table_of_real_nodes_holds_nothing(tmp_path: Path) -> None:
    ids, _ = make_table(3)
    table = TableSpec(b"test-table", tuple(i.public for i in ids), 2)
    async with mesh(ids, table, tmp_path, timeout=2.0) as nodes:
        await nodes[2].submit({"from": 2})
        await wait_until(lambda: all(n.head == 1 for n in nodes))
        await trio.sleep(0.2)
        assert all(n.held_events(2) == [] for n in nodes)


# ---------------------------------------------------------------- censorship


def _censored_net() -> SimNet:
    net = SimNet(3, timeout=1.0)  # censor_wait: 2 s
    net.machines[0].__class__ = CensoringMachine
    net.run()
    return net


def test_a_sequencer_that_leaves_out_a_held_event_is_voted_out_though_it_beats() -> None:
    net = _censored_net()
    victim = net.submit(2, {"answer": "from seat 2"})
    net.submit(1, {"n": 1})
    net.run()
    assert [e.event.author for e in net.machines[1].chain] == [1]  # seat 2's left out
    net.advance(1.5, ticks=30)  # beats go on: no timeout, no vote yet
    assert all(m.term == 0 for m in net.machines)
    net.advance(1.5, ticks=30)  # censor_wait passed: seats 1 and 2 vote seat 0 out
    assert net.machines[1].term >= 1 and net.machines[1].role.value == "sequencer"
    for m in net.machines:
        start = next(e for e in m.chain if e.term >= 1)
        assert start.event == victim  # the new sequencer sequenced what it held first
        assert m.held_events(2) == []
    assert not any(m.proofs for m in net.machines)  # nobody is proven against
    assert net.machines[0].term == net.machines[1].term  # the censor follows the new term


def test_an_honest_sequencer_is_not_voted_out_however_long_the_game() -> None:
    net = SimNet(3, timeout=1.0)
    net.run()
    for i in range(40):
        net.submit(i % 3, {"n": i})
        net.advance(0.25, ticks=5)
    assert all(m.term == 0 and len(m.chain) == 40 for m in net.machines)


def test_a_censor_vote_is_not_called_back_by_the_censors_beats() -> None:
    net = _censored_net()
    net.submit(2, {"answer": 1})
    net.run()
    net.advance(2.1, ticks=42)
    voter = net.machines[2]
    assert voter.term >= 1 or voter.election is not None
    assert net.machines[1].term >= 1


@pytest.mark.trio
async def test_real_nodes_vote_out_a_sequencer_that_drops_every_submit_of_seat_2(
    tmp_path: Path,
) -> None:
    # issue 28, attack 1, at the log: the host (sequencer of term 0) drops
    # every submit of seat 2 while it keeps beating. Seat 2's events end up
    # in the log, the censor loses its term, nobody is proven against.
    ids, table = make_table(3)
    async with mesh(ids, table, tmp_path, timeout=1.0) as nodes:
        nodes[0].machine.__class__ = CensoringMachine
        for i in range(3):
            await nodes[2].submit({"seat 2 answers": i})
            await nodes[1].submit({"seat 1 plays": i})
        await wait_until(
            lambda: all(
                sum(e.event.author == 2 for e in n.chain) == 3 for n in nodes
            ),
            timeout=40,
        )
        assert all(n.term >= 1 and n.log.sequencer != 0 for n in nodes)
        assert all(n.proofs == [] for n in nodes)
        assert len({n.log.head_hash for n in nodes if n.head == nodes[1].head}) == 1
        await nodes[2].submit({"seat 2 answers": "after"})  # the game goes on
        await wait_until(lambda: all(n.head == 7 for n in nodes), timeout=20)


def test_an_author_that_leaves_out_the_sequencer_cannot_frame_it() -> None:
    """(v3, review break 3) Seat 4 sends its event to every peer but the
    sequencer: the followers pass it on, the honest sequencer sequences it
    and keeps its term."""
    net = SimNet(5, timeout=1.0)
    net.run()

    def tamper(src: int, dst: int, msg: dict) -> dict | None:
        if src == 4 and msg["k"] == "submit" and net.machines[dst].role.name == "SEQUENCER":
            return None
        return msg

    net.tamper = tamper
    net.submit(4, {"bait": 1})
    net.advance(6 * net.machines[1].censor_wait, ticks=60)
    assert [m.term for m in net.machines] == [0] * 5
    assert [m.head for m in net.machines] == [1] * 5
    assert not net.errors


@pytest.mark.parametrize("inflate", [False, True])
def test_a_censor_beating_a_longer_head_than_it_hands_out_loses_its_term(inflate: bool) -> None:
    """(v3, review break 2) The censor (seat 0) beats a head one longer than
    it gives anyone, or beats truthfully but sends each entry only after the
    next beat: censorship is measured on entries received, not on beats."""
    import os

    from p2p.envelope import Head

    net = SimNet(3, timeout=1.0)
    net.run()
    censor = net.machines[0]
    late: list[dict] = []

    def tamper(src: int, dst: int, msg: dict) -> dict | None:
        if dst == 0 and msg["k"] == "submit" and msg["ev"]["a"] == 1:
            return None  # it never takes seat 1's events
        if src == 0 and msg["k"] == "beat" and inflate:
            return Head.create(
                net.table, net.ids[0], "beat", censor.term, censor.head + 1, censor.term,
                os.urandom(32),
            ).to_wire()
        if src == 0 and msg["k"] == "entry" and not inflate:
            late.append(msg)  # handed out one beat late
            return None
        if src == 0 and msg["k"] == "beat" and not inflate:
            for entry in late:
                net.queues.setdefault((0, dst), []).append(entry)
            late.clear()
        return msg

    net.tamper = tamper
    victim = net.submit(1, {"victim": 1})
    for i in range(40):
        if not inflate:
            net.submit(2, {"n": i})
        net.advance(0.5, ticks=5)
        if net.machines[1].term >= 1 and net.machines[2].term >= 1:
            break
    assert net.machines[1].term >= 1 and net.machines[2].term >= 1
    net.tamper = None
    net.advance(2.0, ticks=20)
    assert any(e.event == victim for e in net.machines[2].chain)
