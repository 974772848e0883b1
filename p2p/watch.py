"""The watch service: a seat serves its table's log, read-only, to
spectators (protocol.md §8).

Theory of operation
-------------------
A spectator holds no seat and no key the table knows: it can only read.
The log file (:mod:`p2p.store`, protocol.md §3.6) already holds exactly
what every seat knows publicly and nothing secret, every entry signed, so
the service sends that file as it is and as it grows:

* the spectator connects to the seat's watch port; the seat sends a
  *hello* record ``{t:"watch", v, table, watching, max}`` framed like a
  log record (``u32 length ‖ u32 CRC-32 ‖ msgpack``), then the bytes of
  its log file from the start, then whatever is appended to it, until
  either side closes. A table that is full sends ``{t:"full", v, table,
  watching, max}`` and closes;
* a spectator sends nothing: the first byte it sends (a move, a phrase, a
  vote or garbage) closes its connection. Nothing it could send reaches
  the table, whose log accepts only bodies signed by a seat;
* each spectator is served by its own task reading the file at its own
  offset, a chunk (64 KiB) at a time: memory per spectator is one chunk,
  the log is sent once per spectator, and a spectator that does not take a
  chunk within :data:`STALL` seconds is disconnected, so a slow reader
  never holds anything the table needs. At most ``max`` at once.

The spectator (:class:`Spectator`) checks the hello, then hands over the log's
records one by one; verifying them against the header's seat keys is its
reader's job (``tui.watch_feed``), as ``nodealer verify`` does.

p2p knows no game: this module moves bytes of a log and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import trio

from p2p.wire import PROTOCOL_VERSION, WireError, unpack_strict

FRAME = struct.Struct(">II")  # u32 length, u32 CRC-32 of the payload (protocol.md §3.6)
MAX_RECORD = 4 << 20
CHUNK = 64 << 10
"""bytes of the log sent to a spectator at a time"""
STALL = 10.0
"""seconds a spectator may take to accept a chunk before it is disconnected"""
SEND_BUFFER = 64 << 10
"""the socket send buffer asked for each spectator"""
POLL = 0.1
"""seconds between two looks at the log file's size"""
DEFAULT_MAX = 8
MAX_SPECTATORS = 64
HELLO_TIMEOUT = 10.0


class WatchError(Exception):
    """A watch port that does not speak the watch protocol, or a table that
    is full or not the one asked for."""


def frame(record: dict[str, Any]) -> bytes:
    """One record framed as in a log file."""
    payload = msgpack.packb(record, use_bin_type=True)
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


class Frames:
    """Records out of a byte stream, whole ones only (bounded: a record
    longer than :data:`MAX_RECORD`, a bad CRC-32 or a payload that is not a
    map with a text ``t`` is a :class:`WatchError`)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._buffer += data
        out: list[dict[str, Any]] = []
        while len(self._buffer) >= FRAME.size:
            length, crc = FRAME.unpack_from(self._buffer)
            if length > MAX_RECORD:
                raise WatchError(f"a record of {length} bytes (at most {MAX_RECORD})")
            end = FRAME.size + length
            if len(self._buffer) < end:
                break
            payload = bytes(self._buffer[FRAME.size : end])
            del self._buffer[:end]
            if zlib.crc32(payload) != crc:
                raise WatchError("a record whose CRC-32 does not match")
            try:
                record = unpack_strict(payload)
            except WireError as exc:
                raise WatchError(f"a record that is not msgpack: {exc}") from None
            if type(record) is not dict or type(record.get("t")) is not str:
                raise WatchError("a record that is not a map with a text t")
            out.append(record)
        return out


@dataclass
class WatchStats:
    """What a watch server did (for a player's screen and for tests)."""

    watching: int = 0
    served: int = 0
    refused: int = 0
    dropped_slow: int = 0
    dropped_talking: int = 0
    bytes_sent: int = 0


class WatchServer:
    """Serves one table's log file to at most ``max_spectators`` spectators."""

    def __init__(
        self,
        table_id: bytes,
        log_path: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_spectators: int = DEFAULT_MAX,
        stall: float = STALL,
        send_buffer: int = SEND_BUFFER,
    ) -> None:
        if not 0 <= max_spectators <= MAX_SPECTATORS:
            raise ValueError(f"spectators: 0 to {MAX_SPECTATORS}, not {max_spectators}")
        self.table_id, self.log_path = table_id, Path(log_path)
        self.host, self.port = host, port
        self.max_spectators, self.stall = max_spectators, stall
        self.send_buffer = send_buffer
        self.stats = WatchStats()
        self.address: tuple[str, int] | None = None
        self._offsets: dict[int, int] = {}  # bytes of the log sent, per spectator

    async def drain(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until every spectator has been sent
        the whole log: a table that ends gives them its last records."""
        with trio.move_on_after(timeout):
            while any(sent < _size(self.log_path) for sent in self._offsets.values()):
                await trio.sleep(POLL)

    def _hello(self, kind: str) -> bytes:
        return frame({"t": kind, "v": PROTOCOL_VERSION, "table": self.table_id,
                      "watching": self.stats.watching, "max": self.max_spectators})  # fmt: skip

    async def run(
        self, *, task_status: trio.TaskStatus[WatchServer] = trio.TASK_STATUS_IGNORED
    ) -> None:
        listeners = await trio.open_tcp_listeners(self.port, host=self.host)
        sockname = listeners[0].socket.getsockname()
        self.address = (sockname[0], sockname[1])
        task_status.started(self)
        await trio.serve_listeners(self._serve, listeners)

    async def _serve(self, stream: trio.SocketStream) -> None:
        """One spectator; nothing it does (leaving, resetting, stalling,
        talking) ever reaches the table: every error ends only this task."""
        try:
            await self._serve_one(stream)
        except Exception:  # never the seat's problem (groups of errors too)
            pass

    async def _serve_one(self, stream: trio.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(OSError):  # the kernel's share of a spectator, bounded
                stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
            if self.stats.watching >= self.max_spectators:
                self.stats.refused += 1
                await self._send(stream, self._hello("full"), count=False)
                return
            self.stats.watching += 1
            self.stats.served += 1
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._hear_nothing, stream, nursery.cancel_scope)
                    await self._send_log(stream)
                    nursery.cancel_scope.cancel()
            finally:
                self.stats.watching -= 1

    async def _hear_nothing(self, stream: trio.SocketStream, scope: trio.CancelScope) -> None:
        """A spectator sends nothing: any byte, or its leaving, ends it."""
        try:
            data = await stream.receive_some(1)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            data = b""
        if data:
            self.stats.dropped_talking += 1
        scope.cancel()

    async def _send(self, stream: trio.SocketStream, data: bytes, count: bool = True) -> bool:
        """Send within :attr:`stall` seconds; False: the spectator is too
        slow or gone (the caller ends it)."""
        try:
            with trio.move_on_after(self.stall):
                await stream.send_all(data)
                self.stats.bytes_sent += len(data)
                return True
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return False
        if count:
            self.stats.dropped_slow += 1
        return False

    async def _send_log(self, stream: trio.SocketStream) -> None:
        if not await self._send(stream, self._hello("watch")):
            return
        key = id(stream)
        self._offsets[key] = 0
        try:
            while True:
                chunk = _read_at(self.log_path, self._offsets[key])
                if not chunk:
                    await trio.sleep(POLL)
                    continue
                if not await self._send(stream, chunk):
                    return
                self._offsets[key] += len(chunk)
        finally:
            del self._offsets[key]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read_at(path: Path, offset: int) -> bytes:
    """Up to :data:`CHUNK` bytes of a file from ``offset`` (none if missing)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return b""
    try:
        return os.pread(fd, CHUNK, offset) if hasattr(os, "pread") else _seek_read(fd, offset)
    finally:
        os.close(fd)


def _seek_read(fd: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, CHUNK)


@dataclass(frozen=True)
class Hello:
    """What the seat said first: its table and how many watch it."""

    table: bytes
    watching: int
    max: int


def _check_hello(record: dict[str, Any], table: bytes | None) -> Hello:
    if record.get("v") != PROTOCOL_VERSION:
        raise WatchError(f"a watch port of protocol version {record.get('v')!r:.20}; "
                         f"this program speaks {PROTOCOL_VERSION}")  # fmt: skip
    tid, watching, most = record.get("table"), record.get("watching"), record.get("max")
    if type(tid) is not bytes or type(watching) is not int or type(most) is not int:
        raise WatchError("a hello without table, watching and max")
    if table is not None and tid != table:
        raise WatchError("this watch port serves another table")
    if record["t"] == "full":
        raise WatchError(f"the table takes no more spectators ({watching} of {most} watching)")
    if record["t"] != "watch":
        raise WatchError(f"not a watch port (it said {record['t']!r:.20})")
    return Hello(tid, watching, most)


class Spectator:
    """A spectator's connection to a seat's watch port: :meth:`connect`
    reads the hello, :meth:`records` then gives every record of the seat's
    log (header first) as it arrives, until the seat closes. A port that
    does not speak watch is a :class:`WatchError`."""

    def __init__(self, host: str, port: int, *, table: bytes | None = None) -> None:
        self.host, self.port, self.table = host, port, table
        self.frames = Frames()
        self.stream: trio.SocketStream | None = None
        self.hello: Hello | None = None
        self._early: list[dict[str, Any]] = []

    async def connect(self, hello_timeout: float = HELLO_TIMEOUT) -> Hello:
        where = f"{self.host}:{self.port}"
        try:
            self.stream = await trio.open_tcp_stream(self.host, self.port)
        except OSError as exc:
            raise WatchError(f"cannot reach {where}: {exc.strerror or exc}") from None
        with trio.move_on_after(hello_timeout):
            while self.hello is None:
                data = await _receive(self.stream)
                if not data:
                    await self.aclose()
                    raise WatchError(f"{where} closed before it said hello")
                records = self.frames.feed(data)
                if records:
                    self.hello = _check_hello(records[0], self.table)
                    self._early = records[1:]
        if self.hello is None:
            await self.aclose()
            raise WatchError(f"{where} said no hello in {hello_timeout:g} s")
        return self.hello

    async def records(self) -> AsyncIterator[dict[str, Any]]:
        assert self.stream is not None, "connect first"
        early, self._early = self._early, []
        for record in early:
            yield record
        while True:
            data = await _receive(self.stream)
            if not data:
                return
            for record in self.frames.feed(data):
                yield record

    async def batches(self) -> AsyncIterator[list[dict[str, Any]]]:
        """:meth:`records`, as many at a time as have arrived."""
        assert self.stream is not None, "connect first"
        early, self._early = self._early, []
        if early:
            yield early
        while True:
            data = await _receive(self.stream)
            if not data:
                return
            records = self.frames.feed(data)
            if records:
                yield records

    async def aclose(self) -> None:
        if self.stream is not None:
            await self.stream.aclose()


async def _receive(stream: trio.SocketStream) -> bytes:
    try:
        return await stream.receive_some(CHUNK)
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        return b""


__all__ = ["DEFAULT_MAX", "Frames", "Hello", "Spectator", "WatchError", "WatchServer", "WatchStats",
           "frame"]  # fmt: skip
