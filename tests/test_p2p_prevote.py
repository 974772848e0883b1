"""(v3) Pre-vote (issue 27 point 4): a seat that cannot reach a majority
does not raise the term; after a follower's long cut the table's term is
still at most 1 and the returning seat does not take over. The cut is the
fault-injecting relay of tests/fault_relay.py (black-holes one seat both
ways, then heals); clocks are scaled: timeout 0.5 s, so a 10 s cut is 20
timeouts, as 60 s is at the default 3 s."""

from __future__ import annotations

import pytest
import trio

from p2p.log import Role
from tests.fault_relay import FaultyNet
from tests.p2p_mesh import make_table, mesh, wait_until
from tests.p2p_sim import SimNet

TIMEOUT = 0.5
CUT = 20 * TIMEOUT


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.trio
async def test_a_follower_cut_for_20_timeouts_raises_no_term(tmp_path, version: int) -> None:
    ids, table = make_table(3, version=version)
    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        async with mesh(
            ids, table, tmp_path, timeout=TIMEOUT, node_class=net.node_class()
        ) as nodes:
            for node in nodes:
                await node.submit({"before": node.seat})
            await wait_until(lambda: all(n.head == 3 for n in nodes), timeout=20)
            away = nodes[2]
            net.cut(2)
            await trio.sleep(CUT)
            voted_alone = away.log.voted
            net.heal(2)
            await wait_until(lambda: len(away.connected) == 2, timeout=20)
            await away.submit({"back": 2})
            await nodes[1].submit({"after": 1})
            await wait_until(lambda: all(n.head == 5 for n in nodes), timeout=30)
            await trio.sleep(4 * TIMEOUT)
            if version >= 3:
                assert voted_alone == 0  # it asked for pre-votes; nobody could grant one
                assert all(n.term <= 1 for n in nodes)
                assert not away.is_sequencer
                assert nodes[0].is_sequencer and all(n.log.sequencer == 0 for n in nodes)
                assert len({n.log.head_hash for n in nodes}) == 1
            else:  # v2: it called election after election alone
                assert voted_alone > 1
        relays.cancel_scope.cancel()


def test_a_peer_grants_a_pre_vote_only_when_it_too_misses_the_sequencer() -> None:
    net = SimNet(3, timeout=1.0)
    net.run()
    asker, peer = net.machines[2], net.machines[1]
    request = asker._head_statement("prevote", 1).to_wire()
    sent = peer.receive(2, request, net.now + 0.5)  # it heard seat 0 just now
    assert [e for e in sent if getattr(e, "msg", {}).get("k") == "grant"] == []
    net.kill(0)
    net.advance(1.2, ticks=12)  # seat 0 silent for the timeout at seats 1 and 2 both
    assert all(m.term == 1 for m in (asker, peer)) and peer.role is Role.SEQUENCER


def test_a_cut_seat_asks_again_but_never_votes() -> None:
    net = SimNet(3, timeout=1.0)
    net.run()
    net.tamper = lambda src, dst, msg: None if 2 in (src, dst) else msg
    net.advance(20.0, ticks=200)
    cut = net.machines[2]
    assert cut.voted == 0 and cut.election is None and cut.term == 0
    asked = sum(1 for r in net.persisted[2] if r.get("t") == "vote")
    assert asked == 0
    net.tamper = None
    net.advance(1.0, ticks=10)
    assert [m.term for m in net.machines] == [0, 0, 0]
    assert net.machines[0].role is Role.SEQUENCER


@pytest.mark.parametrize("n, liars", [(3, [2]), (5, [3, 4])])
def test_a_minority_sending_votes_without_pre_votes_raises_no_term(
    n: int, liars: list[int]
) -> None:
    """(v3, review break 1) Votes sent straight to the next term's sequencer,
    no pre-vote asked: the receiver still hears its sequencer, so it does not
    stand, and a candidate-to-be never grants on an election alone."""
    net = SimNet(n, timeout=1.0)
    net.run()
    for liar in liars:
        for term in range(1, 6):
            if net.table.sequencer_of(term) in liars:
                continue
            vote = net.machines[liar]._head_statement("vote", term).to_wire()
            net.queues.setdefault((liar, net.table.sequencer_of(term)), []).append(vote)
    net.run()
    net.advance(2.0, ticks=20)
    assert [m.term for m in net.machines] == [0] * n
    assert net.machines[0].role is Role.SEQUENCER
    asked = net.machines[1]._head_statement("prevote", 1).to_wire()
    sent = net.machines[2].receive(1, asked, net.now)
    assert [e for e in sent if getattr(e, "msg", {}).get("k") == "grant"] == []
    net.kill(0)  # a real failover still works, the early votes count once evidence is there
    net.advance(3.0, ticks=30)
    assert all(m.term == 1 for m in net.machines[1:])
    assert net.machines[1].role is Role.SEQUENCER


def test_a_voter_that_missed_the_newterm_gets_it_when_it_asks_for_pre_votes() -> None:
    """(v3) Seat 2 voted for term 1 but its newterm was lost; the new
    sequencer's beats are of a term it never saw announced. Its next
    pre-vote request is answered with the newterm: it follows term 1."""
    net = SimNet(3, timeout=1.0)
    net.run()
    net.kill(0)
    net.tamper = lambda src, dst, msg: None if msg["k"] == "newterm" and dst == 2 else msg
    net.advance(3.0, ticks=30)
    assert net.machines[1].role is Role.SEQUENCER and net.machines[2].term == 0
    net.tamper = None  # nobody sends it again unasked
    net.advance(3.0, ticks=30)
    assert net.machines[2].term == 1 and net.machines[2].role is Role.FOLLOWER
    net.submit(2, {"after": 2})
    net.advance(1.0, ticks=10)
    assert net.machines[1].head == net.machines[2].head == 1  # (final needs seat 0 back)
