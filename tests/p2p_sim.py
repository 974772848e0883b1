"""A deterministic in-memory network of LogMachines, for the sans-I/O log tests.

Messages go through per-link FIFO queues and are delivered one at a time in
a fixed order; time is a number the test advances. Persist effects are kept
per peer so a test can see what reached "disk".
"""

from __future__ import annotations

import msgpack

from p2p.commitment import merge_swaps
from p2p.envelope import Entry, Event, TableSpec, proof_from_wire
from p2p.identity import Identity
from p2p.log import LogMachine, Persist, Send
from p2p.wire import decode_message, encode_frame


class SimNet:
    def __init__(
        self, n: int, timeout: float = 1.0, table_id: bytes = b"sim-table", version: int = 3
    ) -> None:
        self.ids = [Identity.generate() for _ in range(n)]
        self.table = TableSpec(table_id, tuple(i.public for i in self.ids), version)
        self.now = 0.0
        self.timeout = timeout
        self.machines: list[LogMachine | None] = [
            LogMachine(self.table, ident, timeout=timeout, now=self.now) for ident in self.ids
        ]
        self.queues: dict[tuple[int, int], list[dict]] = {}
        self.persisted: list[list[dict]] = [[] for _ in range(n)]
        self.errors: list[tuple[int, int, Exception]] = []
        self.down: set[int] = set()
        self.tamper = None  # optional hook(src, dst, msg) -> msg | None
        for seat, m in enumerate(self.machines):
            self.apply(seat, m.take_effects())
        for a in range(n):
            for b in range(n):
                if a != b:
                    self.apply(a, self.machines[a].peer_connected(b, self.now))

    def apply(self, seat: int, effects) -> None:
        for eff in effects:
            if isinstance(eff, Persist):
                self.persisted[seat].append(eff.record)
            elif isinstance(eff, Send):
                targets = (
                    [eff.to]
                    if eff.to is not None
                    else [s for s in range(len(self.ids)) if s != seat]
                )
                for t in targets:
                    if t == seat or t in self.down or seat in self.down:
                        continue
                    # round-trip through the real wire codec and schema
                    msg = decode_message(encode_frame(eff.msg)[4:])
                    if self.tamper is not None:
                        msg = self.tamper(seat, t, msg)
                        if msg is None:
                            continue
                    self.queues.setdefault((seat, t), []).append(msg)
        # an acknowledgement follows every flush: the sim's "disk" is instant
        m = self.machines[seat]
        if m is not None and any(isinstance(e, Persist) for e in effects):
            for eff in m.flushed(m.head, m.head_hash):
                self.apply(seat, [eff])

    def step(self) -> bool:
        for key in sorted(self.queues):
            queue = self.queues[key]
            if queue:
                src, dst = key
                msg = queue.pop(0)
                m = self.machines[dst]
                if m is None or dst in self.down:
                    continue
                try:
                    self.apply(dst, m.receive(src, msg, self.now))
                except Exception as exc:  # recorded; the test asserts on them
                    self.errors.append((src, dst, exc))
                    self.apply(dst, m.take_effects())  # e.g. a proof found on the way (as the node)
                return True
        return False

    def run(self, max_steps: int = 1_000_000) -> None:
        for _ in range(max_steps):
            if not self.step():
                return
        raise AssertionError("network did not quiesce")

    def advance(self, dt: float, ticks: int = 4) -> None:
        for _ in range(ticks):
            self.now += dt / ticks
            for seat, m in enumerate(self.machines):
                if m is not None and seat not in self.down:
                    self.apply(seat, m.tick(self.now))
            self.run()

    def submit(self, seat: int, body) -> Event:
        m = self.machines[seat]
        event = m.author(msgpack.packb(body, use_bin_type=True))
        self.apply(seat, m.submit_own(event, self.now))
        return event

    def restart(self, seat: int) -> None:
        """Bring a killed seat back from what it persisted (as a node does)."""
        m = restored(self, seat)
        self.machines[seat] = m
        self.down.discard(seat)
        self.apply(seat, m.take_effects())
        for other in range(len(self.ids)):
            if other != seat and other not in self.down:
                self.apply(seat, m.peer_connected(other, self.now))
                self.apply(other, self.machines[other].peer_connected(seat, self.now))

    def kill(self, seat: int) -> None:
        self.down.add(seat)
        for key in list(self.queues):
            if seat in key:
                self.queues[key] = []

    def chains(self, seats=None) -> list[list[Entry]]:
        seats = range(len(self.ids)) if seats is None else seats
        return [self.machines[s].chain for s in seats]

    def live(self) -> list[int]:
        return [s for s in range(len(self.ids)) if s not in self.down]


def restored(net: SimNet, seat: int) -> LogMachine:
    """A log machine for ``seat`` built from what it persisted, as a node
    restarting reads its files (the chain, its own events, the terms it
    led, its highest vote and followed term, its cuts, its final point, the
    proofs it keeps)."""
    chain: list[Entry] = []
    own, led, voted, final, proofs = [], [], 0, 0, []
    followed, cut, followed_start = 0, None, None
    for r in net.persisted[seat]:
        t = r["t"]
        if t == "entry":
            chain.append(Entry.from_wire(r["e"]))
        elif t == "truncate":
            del chain[r["seq"] :]
        elif t == "submit":
            own.append(Event.from_wire(r["ev"]))
        elif t == "lead":
            led.append(r["term"])
        elif t == "vote":
            voted = max(voted, r["term"])
        elif t == "final":
            final = max(final, r["seq"])
        elif t == "term":
            if "start" in r and (followed_start is None or r["term"] >= followed_start[0]):
                followed_start = (r["term"], r["start"], r["h"])
            followed = max(followed, r["term"])
        elif t == "cut":
            cut = merge_swaps((r["seq"], r["floor"]), cut)
        elif t in ("proof", "forged", "replay"):
            proofs.append(proof_from_wire(t, r))
    return LogMachine(
        net.table,
        net.ids[seat],
        timeout=net.timeout,
        now=net.now,
        entries=chain,
        own_events=own,
        led_terms=led,
        proofs=proofs,
        voted=voted,
        final=final,
        followed=followed,
        cut=cut,
        followed_start=followed_start,
    )
