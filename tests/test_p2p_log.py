"""The sans-I/O log machine on a simulated network: order, checks, equivocation,
failover, and the offline chain verifier."""

from __future__ import annotations

import msgpack
import pytest

from p2p.envelope import BadSignature, Entry, Event, EventError, Head, TableSpec
from p2p.identity import Identity
from p2p.log import BrokenChain, LogMachine, ReplayedEvent, Role, verify_chain, verify_prefix
from tests.p2p_sim import SimNet


def _body(value) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def _snapshot(m: LogMachine):
    return (list(m.chain), list(m.hashes), list(m.next_counter), m.term, m.role, dict(m.proofs))


def test_five_peers_hold_one_identical_chain() -> None:
    net = SimNet(5)
    net.run()
    for i in range(60):
        net.submit(i % 5, {"n": i})
    net.run()
    chains = net.chains()
    assert all(c == chains[0] for c in chains) and len(chains[0]) == 60
    verify_chain(net.table, chains[0])
    per_author = {a: [e.event.counter for e in chains[0] if e.event.author == a] for a in range(5)}
    assert all(counters == list(range(12)) for counters in per_author.values())
    assert all(m.committed == 60 for m in net.machines)
    assert net.errors == []


def test_bad_submissions_raise_and_change_nothing() -> None:
    net = SimNet(3)
    net.run()
    net.submit(1, "first")
    net.run()
    seq = net.machines[0]
    before = _snapshot(seq)
    good = seq.chain[0].event
    other_table = TableSpec(b"other", net.table.seats)
    foreign = Event.create(other_table, net.ids[1], 1, 1, _body("x"))
    tampered = Event(good.author, 1, _body("y"), good.sig)
    reuse = Event.create(net.table, net.ids[1], 1, 0, _body("again"))
    cases = [
        (1, foreign, BadSignature, "for this table"),
        (1, tampered, BadSignature, "not signed"),
        (2, good, ReplayedEvent, "submitted seat 1's event"),
        (1, reuse, ReplayedEvent, "reused counter"),
    ]
    for src, event, error, text in cases:
        with pytest.raises(error, match=text):
            seq.receive(src, {"k": "submit", "ev": event.to_wire()}, net.now)
        assert _snapshot(seq) == before
    # the author's own resubmission of a sequenced event is a harmless duplicate
    assert seq.receive(1, {"k": "submit", "ev": good.to_wire()}, net.now) == []
    assert _snapshot(seq) == before


def test_bad_entries_raise_and_change_nothing() -> None:
    net = SimNet(3)
    net.run()
    net.submit(1, "a")
    net.run()
    follower = net.machines[2]
    before = _snapshot(follower)
    ev = Event.create(net.table, net.ids[1], 1, 1, _body("b"))
    not_seq = Entry.create(net.table, net.ids[1], 2, 0, follower.head_hash, ev)
    replay_ev = follower.chain[0].event
    replay = Entry.create(net.table, net.ids[0], 2, 0, follower.head_hash, replay_ev)
    other = TableSpec(b"elsewhere", net.table.seats)
    foreign = Entry.create(other, net.ids[0], 2, 0, follower.head_hash, ev)
    cases = [
        (not_seq, BadSignature, "sequencer"),
        (replay, ReplayedEvent, "replayed or skipped"),
        (foreign, BadSignature, "not signed by that term's sequencer"),
    ]
    for entry, error, text in cases:
        with pytest.raises(error, match=text):
            follower.receive(0, {"k": "entry", "e": entry.to_wire()}, net.now)
        assert _snapshot(follower) == before
    forged_vote = Head.create(net.table, net.ids[1], "vote", 1, 1, 0, follower.head_hash)
    with pytest.raises(BadSignature):
        follower.receive(0, forged_vote.to_wire(), net.now)
    with pytest.raises(EventError, match="heartbeat"):
        beat = Head.create(net.table, net.ids[1], "beat", 0, 1, 0, follower.head_hash)
        follower.receive(1, beat.to_wire(), net.now)
    assert _snapshot(follower) == before


def _equivocate(net: SimNet, seq: int, victims: tuple[int, ...]) -> None:
    """Make seat 0 (the sequencer) send a different signed entry for ``seq``."""
    forged = {}

    def tamper(src, dst, msg):
        if src == 0 and msg["k"] == "entry" and msg["e"]["seq"] == seq and dst in victims:
            if "e" not in forged:
                real = Entry.from_wire(msg["e"])
                counter = net.machines[0].next_counter[0]
                ev = Event.create(net.table, net.ids[0], 0, counter, _body("forged"))
                forged["e"] = Entry.create(net.table, net.ids[0], seq, real.term, real.prev, ev)
            return {"k": "entry", "e": forged["e"].to_wire()}
        return msg

    net.tamper = tamper


def test_equivocation_gives_every_honest_peer_a_proof_and_the_log_goes_on() -> None:
    net = SimNet(5)
    net.run()
    for i in range(4):
        net.submit(1 + i % 4, i)
    net.run()
    _equivocate(net, 5, victims=(3, 4))
    net.submit(2, "split")
    net.run()
    net.tamper = None
    net.submit(1, "after")
    net.run()
    net.advance(2.0, ticks=20)
    for m in net.machines[1:]:
        (proof,) = m.proofs.values()
        assert proof.verify(net.table) == 0 and proof.seq == 5
        assert 0 in m.banned and m.sequencer != 0
    net.submit(4, "later")
    net.run()
    net.advance(0.5)
    chains = net.chains(range(1, 5))
    assert all(c == chains[0] for c in chains)
    bodies = [msgpack.unpackb(e.event.body) for e in chains[0]]
    assert bodies == [0, 1, 2, 3, "split", "after", "later"]
    verify_chain(net.table, chains[0])


def test_sequencer_silence_fails_over_to_the_next_live_seat_without_a_fork() -> None:
    net = SimNet(5, timeout=1.0)
    net.run()
    for i in range(10):
        net.submit(i % 5, i)
    net.run()
    net.kill(0)
    net.kill(1)  # the next seat is dead too: seat 2 must take over
    net.submit(3, "while nobody sequences")
    net.advance(3.0, ticks=30)
    live = [net.machines[s] for s in net.live()]
    assert [m.role for m in live] == [Role.SEQUENCER, Role.FOLLOWER, Role.FOLLOWER]
    assert live[0].me == 2 and all(m.term == 2 for m in live)
    net.submit(4, "after failover")
    net.run()
    net.advance(0.3)
    chains = net.chains(net.live())
    assert all(c == chains[0] for c in chains) and len(chains[0]) == 12
    assert chains[0][:10] == net.machines[0].chain[:10]  # nothing acknowledged was lost
    verify_chain(net.table, chains[0])


def test_failover_keeps_entries_only_some_peers_received() -> None:
    net = SimNet(5, timeout=1.0)
    net.run()
    net.submit(1, "everyone")
    net.run()

    def only_seat_3(src, dst, msg):
        return msg if not (src == 0 and msg["k"] == "entry") or dst == 3 else None

    net.tamper = only_seat_3
    net.submit(2, "reached one follower")
    net.run()
    net.tamper = None
    net.kill(0)
    net.advance(2.0, ticks=20)
    chains = net.chains(net.live())
    assert all(c == chains[0] for c in chains) and len(chains[0]) == 2


def test_verify_chain_names_the_first_bad_entry() -> None:
    net = SimNet(2)
    net.run()
    for i in range(5):
        net.submit(1, i)
    net.run()
    chain = net.machines[1].chain
    assert len(verify_chain(net.table, chain)) == 6
    broken = [*chain[:2], chain[3]]
    with pytest.raises(BrokenChain, match="seq 3"):
        verify_chain(net.table, broken)
    hashes, problem = verify_prefix(net.table, broken)
    assert len(hashes) == 3 and isinstance(problem, BrokenChain)
    other = TableSpec(b"not-this-one", net.table.seats)
    with pytest.raises(BadSignature):
        verify_chain(other, chain)


def test_a_restarted_sequencer_never_sequences_its_term_again() -> None:
    ids = [Identity.generate() for _ in range(3)]
    table = TableSpec(b"t", tuple(i.public for i in ids))
    fresh = LogMachine(table, ids[0])
    assert fresh.role is Role.SEQUENCER and 0 in fresh.led_terms
    restarted = LogMachine(table, ids[0], led_terms=[0])
    assert restarted.role is Role.FOLLOWER
    restarted.tick(10.0)  # silence: it votes for term 1 (seat 1), still following term 0
    assert (restarted.term, restarted.election, restarted.role) == (0, 1, Role.ELECTING)
    restarted.tick(20.0)  # term 2 would be seat 2; term 3 is seat 0 again, never led
    assert restarted.election == 2
    restarted.tick(30.0)
    assert restarted.election == 3 and restarted.role is Role.CANDIDATE


def test_a_premature_timeout_does_not_strand_the_follower() -> None:
    net = SimNet(5, timeout=1.0)
    net.run()
    net.submit(3, "before")
    net.run()
    net.tamper = lambda src, dst, msg: None if src == 0 and dst == 3 else msg
    net.advance(1.5, ticks=15)  # seat 3 hears nothing from seat 0 and votes for term 1
    assert net.machines[3].role is Role.ELECTING and net.machines[3].election == 1
    # seat 1 got that vote, but it hears seat 0 alive, so it does not take over
    assert net.machines[1].role is Role.FOLLOWER and net.machines[1].term == 0
    net.tamper = None
    net.advance(0.5, ticks=5)  # seat 0's heartbeats reach seat 3 again
    assert [m.role for m in net.machines] == [Role.SEQUENCER] + [Role.FOLLOWER] * 4
    net.submit(3, "after")
    net.run()
    chains = net.chains()
    assert all(c == chains[0] for c in chains) and len(chains[0]) == 2
    assert all(m.term == 0 for m in net.machines)


def test_a_peer_far_behind_catches_up_in_several_fetches(monkeypatch) -> None:
    import p2p.log

    monkeypatch.setattr(p2p.log, "FETCH_BATCH", 7)
    net = SimNet(3)
    net.run()
    net.kill(2)
    for i in range(40):
        net.submit(i % 2, i)
    net.run()
    net.down.discard(2)  # back, 40 entries behind: the next ack shows it
    net.apply(2, net.machines[2].peer_connected(0, net.now))
    net.apply(0, net.machines[0].peer_connected(2, net.now))
    net.run()
    assert net.machines[2].chain == net.machines[0].chain and net.machines[2].head == 40


def test_an_equivocator_that_keeps_sequencing_is_ignored() -> None:
    net = SimNet(5)
    net.run()
    for i in range(3):
        net.submit(1 + i, i)
    net.run()
    _equivocate(net, 4, victims=(3, 4))
    net.submit(2, "split")
    net.run()
    net.tamper = None
    net.advance(2.0, ticks=20)
    honest = [net.machines[s] for s in range(1, 5)]
    assert all(m.sequencer == 1 and len(m.proofs) == 1 for m in honest)
    # seat 0 goes on as if it were still term 0's sequencer
    for m in honest:
        before = _snapshot(m)
        ev = Event.create(net.table, net.ids[0], 0, m.next_counter[0], _body("more"))
        entry = Entry.create(net.table, net.ids[0], m.head + 1, 0, m.head_hash, ev)
        beat = Head.create(net.table, net.ids[0], "beat", 0, m.head + 1, 0, entry.hash(net.table))
        m.receive(0, {"k": "entry", "e": entry.to_wire()}, net.now)
        m.receive(0, beat.to_wire(), net.now)
        assert _snapshot(m) == before
    net.submit(3, "after")
    net.run()
    net.advance(0.5)
    chains = net.chains(range(1, 5))
    assert all(c == chains[0] for c in chains) and len(chains[0]) == 5
    assert chains[0][-1].term == 1
