"""A fault-injecting network between seats on 127.0.0.1 (no root needed).

Every connection between two seats passes through a relay of its own (a
listener on 127.0.0.1 that forwards bytes both ways); :class:`RoutedNode`
dials through it. :meth:`FaultyNet.cut` black-holes a seat: every relay
that carries its traffic stops passing bytes, both ways, without closing
anything - what a pulled cable or a Wi-Fi drop does to the other end.
:meth:`FaultyNet.heal` lets bytes through again, but the way TCP would:

* a connection that had bytes held during the cut (its segments were lost)
  passes them on at its next retransmission, and those back off from the
  first loss (0.2, 0.6, 1.4, 3.0, 6.2, … s, Linux's RTO from 200 ms,
  doubling, each wait at most 120 s): after a long cut an old connection
  stays mute for a long while yet;
* a connection opened during the cut is a SYN that was lost: it gets
  through at the next SYN retransmission (1, 3, 7, 15, … s after it was
  opened);
* a connection that carried nothing during the cut goes on at once.

Nothing is lost or reordered (a TCP stream never loses bytes, it delays
them), so whatever the nodes see is what a real outage shows them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import trio

from p2p.node import Node

RTO_FIRST, RTO_MAX = 0.2, 120.0
SYN_FIRST = 1.0


def next_retransmission(since: float, now: float, first: float) -> float:
    """The first retransmission at or after ``now`` of a segment first lost
    at ``since`` (waits ``first``, then doubling, at most ``RTO_MAX``)."""
    at, wait = since + first, first
    while at < now:
        wait = min(wait * 2, RTO_MAX)
        at += wait
    return at


@dataclass
class _Pipe:
    """One relayed TCP connection between seats ``a`` (dialled) and ``b``."""

    seats: tuple[int, int]
    opened: float
    syn: bool = False  # opened during a cut: its upstream is not connected yet
    stalled_since: float | None = None
    resume_at: float = -math.inf


@dataclass
class FaultyNet:
    """The relays of one table (see the module docstring)."""

    nursery: trio.Nursery
    nodes: list[Node] = field(default_factory=list)
    cut_seats: set[int] = field(default_factory=set)
    cut_links: set[frozenset[int]] = field(default_factory=set)  # pairs of seats cut apart
    relays: dict[tuple[int, str, int], int] = field(default_factory=dict)
    opened: int = 0  # connections relayed so far
    _changed: trio.Event = field(default_factory=trio.Event)

    def node_class(self, base: type[Node] = Node) -> type[Node]:
        """A node class whose dials go through this net's relays."""
        net = self

        class Routed(base):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                net.nodes.append(self)

            async def _dial(
                self,
                host: str,
                port: int,
                expect: int | None = None,
                *,
                task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
            ) -> None:
                host, port = await net.route(self.seat, host, port)
                await super()._dial(host, port, expect, task_status=task_status)

        return Routed

    def _seat_at(self, port: int) -> int:
        for node in self.nodes:
            if node.machine is not None and node.listen_port == port:
                return node.seat
        raise OSError(f"no seat listens on port {port}")

    async def route(self, src: int, host: str, port: int) -> tuple[str, int]:
        """Where seat ``src`` dials to reach ``host:port`` (its own relay)."""
        key = (src, host, port)
        if key not in self.relays:
            dst = self._seat_at(port)
            (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
            self.relays[key] = listener.socket.getsockname()[1]

            async def serve(stream: trio.SocketStream) -> None:
                await self._relay(stream, (src, dst), host, port)

            self.nursery.start_soon(trio.serve_listeners, serve, [listener])
        return "127.0.0.1", self.relays[key]

    def cut(self, seat: int) -> None:
        """Black-hole ``seat``: its bytes stop both ways, nothing closes."""
        self.cut_seats.add(seat)
        self._wake()

    def cut_link(self, a: int, b: int) -> None:
        """Black-hole the link between seats ``a`` and ``b`` only (each still
        reaches the others): a partial partition."""
        self.cut_links.add(frozenset((a, b)))
        self._wake()

    def heal_link(self, a: int, b: int) -> None:
        self.cut_links.discard(frozenset((a, b)))
        self._wake()

    def _is_cut(self, seats: tuple[int, int]) -> bool:
        return bool(self.cut_seats.intersection(seats)) or frozenset(seats) in self.cut_links

    def heal(self, seat: int) -> None:
        """Let ``seat``'s bytes through again (at TCP's pace, see above)."""
        self.cut_seats.discard(seat)
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _passable(self, pipe: _Pipe) -> None:
        """Return once ``pipe`` may carry bytes."""
        while True:
            now = trio.current_time()
            if self._is_cut(pipe.seats):
                if pipe.stalled_since is None:
                    pipe.stalled_since = pipe.opened if pipe.syn else now
                changed = self._changed
                await changed.wait()
                continue
            if pipe.stalled_since is not None:  # the first look after the heal
                first = SYN_FIRST if pipe.syn else RTO_FIRST
                pipe.resume_at = next_retransmission(pipe.stalled_since, now, first)
                pipe.stalled_since = None
            if now >= pipe.resume_at:
                return
            with trio.move_on_at(pipe.resume_at):
                await self._changed.wait()  # or a new cut meanwhile

    async def _relay(
        self, client: trio.SocketStream, seats: tuple[int, int], host: str, port: int
    ) -> None:
        self.opened += 1
        now = trio.current_time()
        pipe = _Pipe(seats, now, syn=self._is_cut(seats))
        try:
            await self._passable(pipe)  # a SYN lost in a cut waits for its retransmission
            pipe.syn = False
            upstream = await trio.open_tcp_stream(host, port)
        except OSError:
            await trio.aclose_forcefully(client)
            return
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pump, client, upstream, pipe, nursery.cancel_scope)
            nursery.start_soon(self._pump, upstream, client, pipe, nursery.cancel_scope)
        await trio.aclose_forcefully(client)
        await trio.aclose_forcefully(upstream)

    async def _pump(
        self,
        src: trio.SocketStream,
        dst: trio.SocketStream,
        pipe: _Pipe,
        scope: trio.CancelScope,
    ) -> None:
        try:
            while True:
                try:
                    data = await src.receive_some(1 << 16)
                except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                await self._passable(pipe)  # a FIN or a reset is held like the bytes
                if not data:
                    break
                await dst.send_all(data)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        scope.cancel()  # one side closed: close both (as the endpoint's kernel would)
