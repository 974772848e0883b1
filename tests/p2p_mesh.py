"""Helpers for p2p tests: in-process meshes of real nodes on 127.0.0.1, and a
raw client that speaks the wire protocol by hand (for malformed input)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from p2p.envelope import TableSpec
from p2p.handshake import Handshake
from p2p.identity import Identity
from p2p.node import Node
from p2p.wire import (
    MAX_FRAME,
    SEAL_OVERHEAD,
    FrameDecoder,
    decode_message,
    encode_frame,
    encode_payload,
    frame_of,
)


def make_table(
    n: int, table_id: bytes = b"test-table", version: int = 3
) -> tuple[list[Identity], TableSpec]:
    ids = [Identity.generate() for _ in range(n)]
    return ids, TableSpec(table_id, tuple(i.public for i in ids), version)


async def wait_until(predicate, timeout: float = 10.0, interval: float = 0.01) -> None:
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(interval)


@asynccontextmanager
async def mesh(
    ids: Sequence[Identity],
    table: TableSpec,
    home: Path,
    *,
    seats: Sequence[int] | None = None,
    timeout: float = 2.0,
    node_class: type[Node] = Node,
) -> AsyncIterator[list[Node]]:
    """Start nodes for ``seats`` (default all), join them into a full mesh."""
    seats = range(len(ids)) if seats is None else seats
    async with AsyncExitStack() as stack:
        nodes = []
        for s in seats:
            node = node_class(ids[s], table, home=home / f"peer{s}", timeout=timeout)
            stack.callback(node.store.close)  # after the nursery is done
            nursery = await stack.enter_async_context(trio.open_nursery())
            stack.callback(nursery.cancel_scope.cancel)
            await nursery.start(node.run)
            nodes.append(node)
        for node in nodes[1:]:
            await node.connect(*nodes[0].listen_address)
        await wait_until(lambda: all(len(n.connected) == len(nodes) - 1 for n in nodes))
        yield nodes


def same_chain(nodes: Sequence[Node]) -> bool:
    first = nodes[0].chain
    return all(n.chain == first for n in nodes[1:])


class RawPeer:
    """A hand-driven connection to a node: send any bytes, see if it closes.
    After :meth:`handshake` it seals what it sends (like a node) unless told
    to send raw bytes."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = FrameDecoder(MAX_FRAME + SEAL_OVERHEAD)
        self.channel = None

    @classmethod
    async def connect(cls, node: Node) -> RawPeer:
        return cls(await trio.open_tcp_stream(*node.listen_address))

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def send(self, msg: dict[str, Any]) -> None:
        if self.channel is None:
            await self.stream.send_all(encode_frame(msg))
        else:
            await self.send_payload(encode_payload(msg))

    async def send_payload(self, payload: bytes) -> None:
        """Any bytes as one frame's content, sealed after the handshake."""
        if self.channel is not None:
            payload = self.channel.seal(payload)
        await self.stream.send_all(frame_of(payload))

    async def receive(self) -> dict[str, Any] | None:
        while True:
            payload = self.decoder.next_frame()
            if payload is not None:
                if self.channel is not None:
                    payload = self.channel.open(payload)
                return decode_message(payload)
            data = await self.stream.receive_some(1 << 16)
            if not data:
                return None
            self.decoder.feed(data)

    async def handshake(self, identity: Identity, table: TableSpec) -> None:
        shake = Handshake(identity, table)
        await self.send(shake.hello())
        while not shake.done:
            msg = await self.receive()
            assert msg is not None, "node closed the connection during the handshake"
            reply = shake.receive(msg)
            if reply is not None:
                await self.send(reply)
        self.channel = shake.channel

    async def closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True once the node closes the connection (reading past any frames)."""
        with trio.move_on_after(timeout):
            try:
                while True:
                    if not await self.stream.receive_some(1 << 16):
                        return True
            except trio.BrokenResourceError:
                return True
        return False

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)
