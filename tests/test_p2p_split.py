"""(v3, third review A3) Two seats of four cannot split the two honest ones:
seat 0, the sequencer of term 0, gives each honest seat another entry at one
seq (a proven equivocation); seat 1, the next sequencer, then signs a
newterm for each honest seat with the *other's* branch as its start and
sends each that branch. Each honest seat must not hold its seq final while
the other holds another entry there final (it may stall: a coalition may
stop the table, never split it).

Real :class:`p2p.log.LogMachine`s over the in-memory network of
tests/p2p_sim.py (real wire codec); seats 0 and 1 speak only through the
test, with their own keys."""

from __future__ import annotations

import msgpack

from p2p.envelope import Entry, Head
from tests.p2p_sim import SimNet

COALITION = {0, 1}


def test_a_double_newterm_after_an_equivocation_splits_nobody() -> None:
    net = SimNet(4, timeout=1.0)
    for seat in range(4):
        for i in range(2):
            net.submit(seat, {"t": "warmup", "s": seat, "i": i})
            net.run()
    net.advance(0.5)
    m2, m3 = net.machines[2], net.machines[3]
    k = m2.head + 1
    assert m2.final == m3.final == k - 1
    captured: list[tuple[int, int, dict]] = []

    def tamper(src: int, dst: int, msg: dict):
        if src in COALITION:
            return None  # the coalition's machines stay frozen: the test speaks for them
        if dst in COALITION:
            captured.append((src, dst, msg))
            return None
        return msg

    net.tamper = tamper
    ids, table = net.ids, net.table
    prev = m2.hashes[k - 1]
    x = Entry.create(table, ids[0], k, 0, prev, net.machines[0].author(msgpack.packb({"t": "X"})))
    y = Entry.create(table, ids[0], k, 0, prev, net.machines[1].author(msgpack.packb({"t": "Y"})))
    hx, hy = x.hash(table), y.hash(table)

    def inject(src: int, dst: int, msg: dict) -> None:
        net.queues.setdefault((src, dst), []).append(msg)

    inject(0, 2, {"k": "entry", "e": y.to_wire()})  # the equivocation
    inject(0, 3, {"k": "entry", "e": x.to_wire()})
    net.run()
    assert 0 in m2.banned and 0 in m3.banned  # proven, by both
    votes = {s: m for s, d, m in captured if d == 1 and m["k"] == "vote" and m["term"] == 1}
    assert set(votes) == {2, 3}
    for c in COALITION:  # the coalition acks, each victim the branch it is to be given
        for floor in (0, 1):
            inject(c, 2, Head.create(table, ids[c], "ack", floor, k, 0, hx).to_wire())
            inject(c, 3, Head.create(table, ids[c], "ack", floor, k, 0, hy).to_wire())
    net.run()
    captured.clear()
    own = Head.create(table, ids[1], "vote", 1, k, 0, hx)
    cert = [{"seat": 1, "seq": own.seq, "hterm": 0, "h": own.hash, "s": own.sig}] + [
        {"seat": s, "seq": v["seq"], "hterm": v["hterm"], "h": v["h"], "s": v["s"]}
        for s, v in sorted(votes.items())
    ]
    inject(1, 2, {**Head.create(table, ids[1], "newterm", 1, k, 0, hx).to_wire(), "votes": cert})
    inject(1, 3, {**Head.create(table, ids[1], "newterm", 1, k, 0, hy).to_wire(), "votes": cert})
    net.run()
    for src, msg in [(s, m) for s, d, m in captured if d == 1 and m["k"] == "fetch"]:
        for seq in range(msg["from"], k + 1):
            entry = (x if src == 2 else y) if seq == k else m2.chain[seq - 1]
            inject(1, src, {"k": "entry", "e": entry.to_wire()})
    net.run()
    for _ in range(4):  # the honest seats go on exchanging acks
        net.advance(0.5)
        held = {s: net.machines[s].hashes[k] for s in (2, 3) if net.machines[s].final >= k}
        assert len(set(held.values())) <= 1, f"split at seq {k}: {held}"
    assert not net.errors


def test_the_split_stays_closed_when_the_honest_seats_restart() -> None:
    """(fourth review, A2a and A2d) the rules above would be in memory only:
    the same schedule, with both honest seats restarting while their link is
    down, or while they wait for the newterm after their votes (they acked
    their own branch again at the new vote floor): no split."""
    from tests import schedule_split_after_restart, schedule_split_limbo_restart

    for schedule in (schedule_split_after_restart, schedule_split_limbo_restart):
        held = schedule.main()
        assert len(set(held.values())) <= 1, (schedule.__name__, held)
