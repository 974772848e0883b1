"""A deterministic, seeded nemesis for the sans-I/O log (in the spirit of
FoundationDB's simulator and Jepsen's nemeses): on top of :class:`SimNet`
it delivers messages out of order, drops and duplicates them, partitions
seats, kills and restarts them from what they persisted, lets time pass,
and lets one seat lie (it votes a shorter head than it holds after acking
it: issue 28 point 4). After every step it checks the invariants of
protocol.md §3.5.1 for the honest seats:

* no two honest seats hold different entries at a seq final at both;
* nothing final at an honest seat is ever cut or changed, restarts included;
* no honest seat is proven against;

and :meth:`Chaos.settle` checks that once the faults stop every honest seat
finishes: one chain, every entry final, every honest event in it.
"""

from __future__ import annotations

import random

import msgpack

from p2p.envelope import Entry, Event, Head
from tests.p2p_sim import SimNet


class InvariantBroken(AssertionError):
    pass


class Chaos(SimNet):
    def __init__(self, seed: int, n: int = 3, liar: int | None = None) -> None:
        super().__init__(n, timeout=1.0)
        self.rng = random.Random(seed)
        self.liar = liar
        self.cut: set[tuple[int, int]] = set()  # links that lose everything
        self.final_seen: list[list[Entry]] = [[] for _ in range(n)]
        self.signed: list[list[Event]] = [[] for _ in range(n)]
        self.steps = 0
        self.tamper = self._lie if liar is not None else None

    @property
    def honest(self) -> list[int]:
        return [s for s in range(len(self.ids)) if s != self.liar]

    # ------------------------------------------------------------ the nemesis

    def _lie(self, src: int, dst: int, msg: dict) -> dict:
        if src == self.liar and msg["k"] == "vote" and msg["seq"] > 0:
            m = self.machines[src]
            seq = self.rng.randrange(0, msg["seq"])
            hterm = m.chain[seq - 1].term if seq else 0
            short = Head.create(
                self.table, self.ids[src], "vote", msg["term"], seq, hterm, m.hashes[seq]
            )
            return short.to_wire()
        return msg

    def submit(self, seat: int, body) -> Event:
        m = self.machines[seat]
        event = m.author(msgpack.packb(body, use_bin_type=True))
        self.persisted[seat].append({"t": "submit", "ev": event.to_wire()})  # the outbox
        self.signed[seat].append(event)
        self.apply(seat, m.submit_own(event, self.now))
        return event

    def deliver_one(self) -> bool:
        links = [k for k, q in self.queues.items() if q]
        if not links:
            return False
        src, dst = self.rng.choice(links)
        queue = self.queues[(src, dst)]
        msg = queue.pop(self.rng.randrange(len(queue)) if self.rng.random() < 0.3 else 0)
        if (src, dst) in self.cut or dst in self.down or self.machines[dst] is None:
            return True
        if self.rng.random() < 0.05:
            queue.append(msg)  # duplicated: it comes again later
        try:
            self.apply(dst, self.machines[dst].receive(src, msg, self.now))
        except Exception as exc:
            self.errors.append((src, dst, exc))
            self.apply(dst, self.machines[dst].take_effects())
        return True

    def tick_all(self, dt: float) -> None:
        self.now += dt
        for seat, m in enumerate(self.machines):
            if m is not None and seat not in self.down:
                self.apply(seat, m.tick(self.now))

    def nemesis_step(self) -> None:
        """One nemesis move (SimNet.step and run keep their plain order)."""
        self.steps += 1
        r = self.rng.random()
        n = len(self.ids)
        if r < 0.55:
            self.deliver_one()
        elif r < 0.70:
            self.tick_all(self.rng.choice([0.05, 0.2, 0.6]))
        elif r < 0.80:
            seat = self.rng.choice([s for s in range(n) if s not in self.down] or [0])
            if seat not in self.down:
                self.submit(seat, {"seat": seat, "i": len(self.signed[seat])})
        elif r < 0.86:
            a, b = self.rng.sample(range(n), 2)
            if self.rng.random() < 0.5:
                self.cut |= {(a, b), (b, a)}
            else:
                self.cut -= {(a, b), (b, a)}
        elif r < 0.89:
            seat = self.rng.randrange(n)
            if seat in self.down:
                self.restart(seat)
            elif len(self.down) < n - 1 and self.rng.random() < 0.5:
                self.kill(seat)
        elif r < 0.92:
            key = self.rng.choice(sorted(self.queues) or [(0, 1)])
            if self.queues.get(key):
                self.queues[key].pop(0)  # lost
        else:
            self.deliver_one()
        self.check()

    # ------------------------------------------------------------ invariants

    def check(self) -> None:
        finals = {}
        for s in self.honest:
            m = self.machines[s]
            if m is None or s in self.down:
                continue
            seen = self.final_seen[s]
            if m.chain[: len(seen)] != seen or m.final < len(seen):
                raise InvariantBroken(f"step {self.steps}: seat {s} cut or changed a final entry")
            self.final_seen[s] = list(m.chain[: m.final])
            finals[s] = self.final_seen[s]
            if m.banned - ({self.liar} if self.liar is not None else set()):
                raise InvariantBroken(
                    f"step {self.steps}: seat {s} holds a proof against "
                    f"honest seats {sorted(m.banned)}"
                )
        for a in finals:
            for b in finals:
                k = min(len(finals[a]), len(finals[b]))
                if finals[a][:k] != finals[b][:k]:
                    raise InvariantBroken(
                        f"step {self.steps}: seats {a} and {b} differ at a final seq"
                    )

    def settle(self, rounds: int = 60) -> None:
        """Stop the faults, heal and restart everyone: every honest seat
        ends with one chain, all of it final, every honest event in it."""
        self.cut.clear()
        for seat in sorted(self.down):
            self.restart(seat)
        for _ in range(rounds):
            self.tick_all(0.25)
            while self.deliver_one():
                self.check()
            if self._finished():
                return
        raise InvariantBroken(
            "the table did not finish after the faults stopped: "
            + ", ".join(
                f"seat {s}: term {m.term} {m.role.value} head {m.head} final {m.final}"
                for s, m in enumerate(self.machines)
            )
        )

    def _finished(self) -> bool:
        ms = [self.machines[s] for s in self.honest]
        chain = ms[0].chain
        if any(m.chain != chain or m.final != m.head for m in ms):
            return False
        held = {(e.event.author, e.event.counter) for e in chain}
        return all((s, ev.counter) in held for s in self.honest for ev in self.signed[s])
