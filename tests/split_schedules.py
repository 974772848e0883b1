"""(v3) Schedules in which two seats of four try to split the two honest
ones after a proven equivocation (the third and fourth reviews of v3,
protocol.md §3.5 proof 1, rules 1–3). Seat 0, the sequencer of term 0,
gives each honest seat another entry at seq k (y to seat 2, x to seat 3);
seat 1, the next sequencer, signs a newterm for each honest seat whose
start is the *other's* branch and sends it that branch. Each schedule
returns the honest seats that hold seq k final, with their entry's hash:
a split is two different hashes.

Real :class:`p2p.log.LogMachine`s over the in-memory network of
tests/p2p_sim.py (real wire codec); seats 0 and 1 speak only through the
schedule, with their own keys."""

from __future__ import annotations

import msgpack

from p2p.envelope import Entry, Head
from tests.p2p_sim import SimNet

COALITION = {0, 1}


class SplitAttempt:
    """The table warmed up, the coalition silenced, the two branches signed."""

    def __init__(self) -> None:
        net = self.net = SimNet(4, timeout=1.0)
        for seat in range(4):
            for i in range(2):
                net.submit(seat, {"t": "warmup", "s": seat, "i": i})
                net.run()
        net.advance(0.5)
        m2, m3 = net.machines[2], net.machines[3]
        self.k = k = m2.head + 1
        assert m2.final == m3.final == k - 1
        self.prefix = list(m2.chain)
        self.captured: list[tuple[int, int, dict]] = []
        self.link_down = False
        net.tamper = self._tamper
        ids, table = net.ids, net.table
        prev = m2.hashes[k - 1]
        self.x = Entry.create(table, ids[0], k, 0, prev, net.machines[0].author(_body("X")))
        self.y = Entry.create(table, ids[0], k, 0, prev, net.machines[1].author(_body("Y")))
        self.hx, self.hy = self.x.hash(self.net.table), self.y.hash(self.net.table)
        self.votes: dict[int, dict] = {}

    def _tamper(self, src: int, dst: int, msg: dict) -> dict | None:
        if src in COALITION:
            return None  # the coalition speaks only through the schedule
        if dst in COALITION:
            self.captured.append((src, dst, msg))
            return None
        if self.link_down and {src, dst} == {2, 3}:
            return None  # the honest pair's link is down (each still reaches the coalition)
        return msg

    def inject(self, src: int, dst: int, msg: dict) -> None:
        self.net.queues.setdefault((src, dst), []).append(msg)

    def equivocate(self) -> None:
        """Seat 0 gives seat 2 y and seat 3 x at seq k: both prove it and vote."""
        self.inject(0, 2, {"k": "entry", "e": self.y.to_wire()})
        self.inject(0, 3, {"k": "entry", "e": self.x.to_wire()})
        self.net.run()
        assert 0 in self.net.machines[2].banned and 0 in self.net.machines[3].banned
        self.votes = {
            s: m for s, d, m in self.captured if d == 1 and m["k"] == "vote" and m["term"] == 1
        }
        assert set(self.votes) == {2, 3}

    def honest_acks(self, term: int | None = None) -> dict[int, dict]:
        """Each honest seat's ack of seq k the coalition received (of ``term``)."""
        return {
            s: m
            for s, _, m in self.captured
            if m["k"] == "ack" and m["seq"] == self.k and term in (None, m["term"])
        }

    def coalition_acks(self, seats: tuple[int, ...] = (2, 3)) -> None:
        """Acks of seats 0 and 1, floors 0 and 1, each victim the branch it
        is to be given (seat 2 x, seat 3 y)."""
        ids, table = self.net.ids, self.net.table
        for seat in seats:
            h = self.hx if seat == 2 else self.hy
            for c in COALITION:
                for floor in (0, 1):
                    ack = Head.create(table, ids[c], "ack", floor, self.k, 0, h)
                    self.inject(c, seat, ack.to_wire())

    def pass_on(self, dst: int, ack: dict) -> None:
        """The coalition relays another honest seat's ack to ``dst``."""
        of = {f: ack[f] for f in ("term", "seq", "hterm", "h", "s")}
        seat = 3 if dst == 2 else 2
        self.inject(0, dst, {"k": "acks", "of": [{"seat": seat, **of}]})

    def newterms(self) -> dict[int, dict]:
        """Seat 1's two newterms for term 1: x's start for seat 2, y's for seat 3."""
        ids, table, k = self.net.ids, self.net.table, self.k
        own = Head.create(table, ids[1], "vote", 1, k, 0, self.hx)
        cert = [{"seat": 1, "seq": own.seq, "hterm": 0, "h": own.hash, "s": own.sig}] + [
            {"seat": s, "seq": v["seq"], "hterm": v["hterm"], "h": v["h"], "s": v["s"]}
            for s, v in sorted(self.votes.items())
        ]
        return {
            seat: {**Head.create(table, ids[1], "newterm", 1, k, 0, h).to_wire(), "votes": cert}
            for seat, h in ((2, self.hx), (3, self.hy))
        }

    def swap(self) -> dict[int, dict]:
        """The newterms sent, each fetch answered with the other's branch."""
        self.captured.clear()
        newterms = self.newterms()
        for seat, newterm in newterms.items():
            self.inject(1, seat, newterm)
        self.net.run()
        for src, msg in [(s, m) for s, d, m in self.captured if d == 1 and m["k"] == "fetch"]:
            for seq in range(msg["from"], self.k + 1):
                entry = (self.x if src == 2 else self.y) if seq == self.k else self.prefix[seq - 1]
                self.inject(1, src, {"k": "entry", "e": entry.to_wire()})
        self.net.run()
        return newterms

    def restart_honest(self) -> None:
        for seat in (2, 3):
            self.net.kill(seat)
        for seat in (2, 3):
            self.net.restart(seat)
        self.net.run()

    def held(self) -> dict[int, bytes]:
        """The honest seats holding seq k final -> the hash they hold there."""
        return {
            s: self.net.machines[s].hashes[self.k]
            for s in (2, 3)
            if self.net.machines[s].final >= self.k
        }

    def settle(self, steps: int, dt: float) -> None:
        for _ in range(steps):
            self.net.advance(dt)


def _body(text: str) -> bytes:
    return msgpack.packb({"t": text})


def double_newterm() -> list[dict[int, bytes]]:
    """(third review, A3) the schedule itself; what is final at each look."""
    attempt = SplitAttempt()
    attempt.equivocate()
    attempt.coalition_acks()
    attempt.net.run()
    attempt.swap()
    looks = []
    for _ in range(4):  # the honest seats go on exchanging acks
        attempt.settle(1, 0.5)
        looks.append(attempt.held())
    assert not attempt.net.errors
    return looks


def after_restart() -> dict[int, bytes]:
    """(fourth review, A2a) the schedule, then both honest seats restart
    while their link is down; the coalition sends the newterms again (as a
    sequencer does to a peer that connects), its acks, and the other honest
    seat's old floor-0 ack."""
    attempt = SplitAttempt()
    attempt.equivocate()
    before = attempt.honest_acks(term=0)  # seat 2's of y, seat 3's of x
    attempt.coalition_acks()
    attempt.net.run()
    newterms = attempt.swap()
    attempt.settle(2, 0.2)
    attempt.link_down = True
    attempt.restart_honest()
    for seat in (2, 3):
        attempt.inject(1, seat, newterms[seat])
        attempt.pass_on(seat, before[3 if seat == 2 else 2])
        attempt.coalition_acks((seat,))
    attempt.net.run()
    attempt.settle(4, 0.25)
    return attempt.held()


def limbo_restart() -> dict[int, bytes]:
    """(fourth review, A2d) both honest seats restart while they wait for
    term 1's newterm (after their votes), then get the schedule's newterms."""
    attempt = SplitAttempt()
    attempt.equivocate()
    attempt.restart_honest()
    attempt.coalition_acks()
    for seat, ack in attempt.honest_acks(term=0).items():
        attempt.pass_on(3 if seat == 2 else 2, ack)
    attempt.net.run()
    attempt.swap()
    attempt.settle(4, 0.25)
    return attempt.held()
