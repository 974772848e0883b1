"""One peer connection of a :class:`~p2p.node.Node`: its socket, its
frame decoder, its sealed channel once the handshake is done, and a
bounded outbox (a peer that does not read is dropped, never waited for)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import trio

from p2p.handshake import Channel
from p2p.wire import MAX_FRAME, SEAL_OVERHEAD, FrameDecoder

log = logging.getLogger("nodealer.p2p")

SEND_QUEUE = 100_000  # frames queued to one peer before it counts as stuck
MAX_QUEUED = 64 << 20  # bytes queued to one peer before it counts as stuck


@dataclass(frozen=True)
class PeerError:
    """Why a connection was closed: who (fingerprint or address) and the error."""

    peer: str
    error: Exception

    def __str__(self) -> str:
        return f"{self.peer}: {self.error.__class__.__name__}: {self.error}"


class Connection:
    def __init__(self, stream: trio.SocketStream, dialed: bool, label: str) -> None:
        self.stream = stream
        self.dialed = dialed  # did we open it?
        self.label = label
        self.seat: int | None = None
        self.decoder = FrameDecoder(MAX_FRAME + SEAL_OVERHEAD)
        self.channel: Channel | None = None  # seals frames once the handshake is done
        self.outbox_send, self.outbox_recv = trio.open_memory_channel[bytes](SEND_QUEUE)
        self.queued = 0  # bytes in the outbox, not yet handed to the socket
        self.scope: trio.CancelScope | None = None  # its reader and writer, once running
        self.closed = False
        self.heard = self.sent = trio.current_time()  # when it last brought / was given bytes

    def send(self, frame: bytes) -> None:
        """Queue a message's msgpack bytes (the writer seals and frames them)
        without waiting: a peer that does not read is dropped (bounded
        memory) rather than stalling the others."""
        if self.closed:
            return
        if self.queued + len(frame) > MAX_QUEUED:
            log.warning("%s is not reading; dropping the connection", self.label)
            self.close()
            return
        try:
            self.outbox_send.send_nowait(frame)
        except trio.WouldBlock:
            log.warning("%s is not reading; dropping the connection", self.label)
            self.close()
            return
        self.queued += len(frame)
        self.sent = trio.current_time()

    def close(self) -> None:
        """Close for good: the reader and writer end now, even mid-send."""
        self.closed = True
        self.outbox_send.close()
        if self.scope is not None:
            self.scope.cancel()


def address_label(stream: trio.SocketStream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]
    except OSError:
        return "unknown peer"
    return f"{host}:{port}"


__all__ = ["MAX_QUEUED", "SEND_QUEUE", "Connection", "PeerError", "address_label"]
