"""A malicious seat against the log: terms it was never elected to, forged
certificates, a best voter that vanishes, and what each may never do (cut
entries a majority acknowledged, fork the chain, crash or stall a peer)."""

from __future__ import annotations

import msgpack
import pytest

from p2p.envelope import Entry, Event, Head
from p2p.log import LogError, LogMachine, Role
from tests.p2p_sim import SimNet


def _body(value) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def _snapshot(m: LogMachine):
    return (list(m.chain), list(m.hashes), list(m.next_counter), m.term, m.role)


def _committed_net(n: int = 5, events: int = 6) -> SimNet:
    net = SimNet(n, timeout=1.0)
    net.run()
    for i in range(events):
        net.submit(i % n, {"i": i})
    net.run()
    assert all(m.committed == events for m in net.machines)
    return net


def _newterm(net: SimNet, seat: int, term: int, seq: int, votes=()) -> dict:
    """A newterm for ``term`` signed by ``seat`` (its sequencer), starting at ``seq``."""
    m = net.machines[1]
    hterm = m.chain[seq - 1].term if seq else 0
    head = Head.create(net.table, net.ids[seat], "newterm", term, seq, hterm, m.hashes[seq])
    return {**head.to_wire(), "votes": list(votes)}


def _vote(net: SimNet, seat: int, term: int, seq: int, hterm: int = 0) -> dict:
    h = net.machines[1].hashes[seq]
    v = Head.create(net.table, net.ids[seat], "vote", term, seq, hterm, h)
    return {"seat": seat, "seq": v.seq, "hterm": v.hterm, "h": v.hash, "s": v.sig}


def test_a_newterm_without_a_majority_of_votes_cuts_nothing() -> None:
    net = _committed_net()
    # seat 2 declares its own term 2 starting at the genesis: were it obeyed,
    # every peer would drop six entries that all five acknowledged
    bare = _newterm(net, 2, 2, 0)
    own_vote_only = _newterm(net, 2, 2, 0, [_vote(net, 2, 2, 0)])
    twice = _newterm(net, 2, 2, 0, [_vote(net, 2, 2, 0)] * 3)
    other_term = _newterm(net, 2, 2, 0, [_vote(net, s, 7, 0) for s in (2, 3, 4)])
    for victim in (0, 1, 3, 4):
        m = net.machines[victim]
        before = _snapshot(m)
        for msg, text in [
            (bare, "majority"),
            (own_vote_only, "majority"),
            (twice, "twice"),
            (other_term, "signature"),
        ]:
            with pytest.raises(LogError, match=text):
                m.receive(2, msg, net.now)
            assert _snapshot(m) == before


def test_a_certificate_cannot_start_a_term_behind_what_a_voter_holds() -> None:
    net = _committed_net()
    # votes for term 2 from a majority, one of them holding all six entries:
    # a newterm that starts at seq 2 would drop what that voter acknowledged
    votes = [_vote(net, 2, 2, 2), _vote(net, 3, 2, 2), _vote(net, 4, 2, 6)]
    behind = _newterm(net, 2, 2, 2, votes)
    m = net.machines[1]
    before = _snapshot(m)
    with pytest.raises(LogError, match="behind"):
        m.receive(2, behind, net.now)
    assert _snapshot(m) == before
    # the same votes with a head at least as far as the best one are a valid start
    m.receive(2, _newterm(net, 2, 2, 6, votes), net.now)
    assert (m.term, m.term_start, m.head) == (2, 6, 6)


def test_entries_and_beats_of_a_term_nobody_announced_change_nothing() -> None:
    net = _committed_net()
    evil = net.ids[2]
    for victim in (0, 1, 3, 4):
        m = net.machines[victim]
        before = _snapshot(m)
        ev = Event.create(net.table, evil, 2, m.next_counter[2], _body("mine"))
        first = Event.create(net.table, evil, 2, 0, _body("history, rewritten"))
        beat = Head.create(net.table, evil, "beat", 2, 0, 0, net.table.genesis)
        rewrite = Entry.create(net.table, evil, 1, 2, net.table.genesis, first)
        extend = Entry.create(net.table, evil, m.head + 1, 2, m.head_hash, ev)
        for msg in (beat.to_wire(), {"k": "entry", "e": rewrite.to_wire()}):
            m.receive(2, msg, net.now)
        m.receive(2, {"k": "entry", "e": extend.to_wire()}, net.now)
        assert _snapshot(m) == before


def test_a_candidate_whose_best_voter_vanishes_keeps_what_a_majority_acknowledged() -> None:
    net = SimNet(5, timeout=1.0)
    net.run()
    net.submit(1, "everyone")
    net.run()
    # seats 1 and 2 miss everything after the first entry: seats 0, 3, 4 hold it
    net.tamper = lambda src, dst, msg: None if msg["k"] == "entry" and dst in (1, 2) else msg
    for i in range(4):
        net.submit(3 + i % 2, {"i": i})
    net.run()
    assert net.machines[0].committed == 5 and net.machines[1].head == 1
    # seat 0 dies; seat 1 stands for term 1 and syncs from the best voter
    # (seat 3), which then never answers it
    net.kill(0)
    net.tamper = lambda src, dst, msg: None if (src, dst) == (3, 1) and msg["k"] != "vote" else msg
    net.advance(4.0, ticks=40)
    live = [net.machines[s] for s in net.live()]
    assert all(m.chain[:5] == net.machines[0].chain[:5] for m in live)
    assert [m.role for m in live] == [Role.SEQUENCER, Role.FOLLOWER, Role.FOLLOWER, Role.FOLLOWER]
    net.tamper = None
    net.submit(2, "after")
    net.run()
    net.advance(0.5)
    chains = net.chains(net.live())
    assert all(c == chains[0] for c in chains) and len(chains[0]) == 6
