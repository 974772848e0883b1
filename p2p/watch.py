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
* a connection that speaks within :data:`ASK_WINDOW` s of connecting is
  not a spectator but a *count request* (a seat's header asks how many
  watch, :func:`ask_count`): one record ``{t:"count", v}`` gets one
  answer ``{t:"count", v, table, watching, max}`` and the port closes; a
  malformed or too frequent request gets ``{t:"refused", v, reason}``
  (one line) instead. Either way nothing else changes and it is never
  counted as a spectator. A silent connection gets its hello after the
  window;
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
ASK_WINDOW = 0.5
"""seconds a new connection has to send a count request before it is a spectator"""
ASK_MOST = 256
"""bytes at most of a count request (its frame included)"""
ASK_TIMEOUT = 2.0
"""seconds a count request has to arrive whole once it has begun"""
ASK_BURST, ASK_RATE = 8, 3.0
"""count requests answered per source address: a burst of 8, then 3 a second"""
ASK_ALL_BURST, ASK_ALL_RATE = 32, 16.0
"""and from every address together: a burst of 32, then 16 a second"""
ASK_ADDRESSES = 256
"""source addresses whose request budget is remembered at most"""
OPEN_SPARE = 32
"""connections open at once besides the spectators (count requests, new
connections that have not yet said what they are); more are closed at once"""
OPEN_PER_ADDRESS = 8
"""connections open at once from one source address that are not watching
(a flood from one address cannot take the spare ones)"""
REQUEST_SHAPE = 'a count request is one record {t:"count", v} of at most 256 bytes'


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
    counted: int = 0
    """count requests answered"""
    count_refused: int = 0
    """count requests refused (malformed, another version, too many)"""


class Budget:
    """A token bucket: :meth:`take` is True while the requests come no
    faster than ``rate`` a second (after a burst of ``burst``)."""

    def __init__(self, burst: int, rate: float, now: float) -> None:
        self.burst, self.rate = burst, rate
        self.tokens, self.at = float(burst), now

    def fill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def take(self, now: float) -> bool:
        self.fill(now)
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class AskBudgets:
    """The count requests' rate limit: per source address and over all."""

    def __init__(self) -> None:
        self.all: Budget | None = None
        self.by_address: dict[str, Budget] = {}

    def take(self, address: str, now: float) -> bool:
        if self.all is None:
            self.all = Budget(ASK_ALL_BURST, ASK_ALL_RATE, now)
        mine = self.by_address.get(address)
        if mine is None:
            if len(self.by_address) >= ASK_ADDRESSES:  # forget the ones back to full
                for key, budget in list(self.by_address.items()):
                    budget.fill(now)
                    if budget.tokens >= budget.burst:
                        del self.by_address[key]
            if len(self.by_address) >= ASK_ADDRESSES:
                return False
            mine = self.by_address[address] = Budget(ASK_BURST, ASK_RATE, now)
        mine.fill(now)
        self.all.fill(now)
        if mine.tokens < 1 or self.all.tokens < 1:
            return False
        return mine.take(now) and self.all.take(now)


def count_answer(record: Any, table: bytes, watching: int, most: int) -> dict[str, Any]:
    """The answer to a count request's record (already unframed): the count,
    or a refusal whose ``reason`` is one line.

    >>> count_answer({"t": "count", "v": 2}, b"t", 1, 4)["watching"]
    1
    >>> count_answer({"t": "count", "v": 2, "x": 1}, b"t", 1, 4)["t"]
    'refused'
    """
    if type(record) is not dict or record.get("t") != "count" or set(record) != {"t", "v"}:
        return _refusal(REQUEST_SHAPE)
    if record["v"] != PROTOCOL_VERSION:
        return _refusal(f"protocol version {record['v']!r:.20}; this seat speaks "
                        f"{PROTOCOL_VERSION}")  # fmt: skip
    return {"t": "count", "v": PROTOCOL_VERSION, "table": table, "watching": watching,
            "max": most}  # fmt: skip


def _refusal(reason: str) -> dict[str, Any]:
    return {"t": "refused", "v": PROTOCOL_VERSION, "reason": reason}


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
        self._budgets = AskBudgets()
        self._open = 0  # connections being served that are not (yet) spectators
        self._open_from: dict[str, int] = {}  # of those, per source address

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
        talking) ever reaches the table: every error ends only this task.
        Connections that are not watching are bounded (:data:`OPEN_SPARE`,
        :data:`OPEN_PER_ADDRESS` from one address): one more is closed at
        once, so a flood cannot use up the seat's file descriptors (review
        3, A5: a table started during one failed, "too many open files")."""
        address = _peer_host(stream)
        if self._open >= OPEN_SPARE or self._open_from.get(address, 0) >= OPEN_PER_ADDRESS:
            self.stats.count_refused += 1
            with contextlib.suppress(Exception):
                await stream.aclose()
            return
        self._open += 1
        self._open_from[address] = self._open_from.get(address, 0) + 1
        counted = [True]

        def release() -> None:
            """Once: the connection ends or becomes a spectator (counted by
            ``max_spectators`` from then on)."""
            if counted.pop() if counted else False:
                self._open -= 1
                self._open_from[address] -= 1
                if not self._open_from[address]:
                    del self._open_from[address]

        try:
            await self._serve_one(stream, release)
        except Exception:  # never the seat's problem (groups of errors too)
            pass
        finally:
            release()

    async def _serve_one(self, stream: trio.SocketStream, release: Any) -> None:
        async with stream:
            with contextlib.suppress(OSError):  # the kernel's share of a spectator, bounded
                stream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
            first = await _first_bytes(stream)
            if first is None:  # gone before it said anything
                return
            if first:  # a count request, never a spectator
                await self._answer(stream, first)
                return
            if self.stats.watching >= self.max_spectators:
                self.stats.refused += 1
                await self._send(stream, self._hello("full"), count=False)
                return
            self.stats.watching += 1
            self.stats.served += 1
            release()  # a spectator: counted by max_spectators now
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._hear_nothing, stream, nursery.cancel_scope)
                    await self._send_log(stream)
                    nursery.cancel_scope.cancel()
            finally:
                self.stats.watching -= 1

    async def _answer(self, stream: trio.SocketStream, first: bytes) -> None:
        """One count request (its first bytes ``first``), one answer; bounded
        (:data:`ASK_MOST` bytes, :data:`ASK_TIMEOUT` s) and rate-limited."""
        address = _peer_host(stream)
        if not self._budgets.take(address, trio.current_time()):
            answer = _refusal("too many count requests: ask again in a second")
        else:
            answer = count_answer(await _request(stream, first), self.table_id,
                                  self.stats.watching, self.max_spectators)  # fmt: skip
        if answer["t"] == "count":
            self.stats.counted += 1
        else:
            self.stats.count_refused += 1
        if await self._send(stream, frame(answer), count=False):
            await _linger_out(stream)  # (bounded: OPEN_SPARE connections at most)

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


async def _first_bytes(stream: trio.SocketStream) -> bytes | None:
    """What a new connection sends within :data:`ASK_WINDOW` s: b"" if
    nothing (a spectator), None if it closed."""
    with trio.move_on_after(ASK_WINDOW):
        try:
            data = await stream.receive_some(ASK_MOST + 1)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return None
        return data or None
    return b""


async def _request(stream: trio.SocketStream, data: bytes) -> Any:
    """A count request's one record, or None if it is not one whole record
    of at most :data:`ASK_MOST` bytes within :data:`ASK_TIMEOUT` s."""
    buffer = bytearray(data)
    with trio.move_on_after(ASK_TIMEOUT):
        while len(buffer) <= ASK_MOST:
            if len(buffer) >= FRAME.size:
                length, _ = FRAME.unpack_from(buffer)
                if FRAME.size + length > ASK_MOST or len(buffer) > FRAME.size + length:
                    return None
                if len(buffer) == FRAME.size + length:
                    break
            try:
                more = await stream.receive_some(ASK_MOST + 1)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                return None
            if not more:
                return None
            buffer += more
        else:
            return None
    try:
        records = Frames().feed(bytes(buffer))
    except WatchError:
        return None
    return records[0] if len(records) == 1 else None


async def _linger_out(stream: trio.SocketStream) -> None:
    """Say no more, and read (a little, briefly) what the asker still sends
    until it closes: a socket closed with unread bytes resets, and a reset
    can lose the answer on its way."""
    with (
        trio.move_on_after(ASK_TIMEOUT),
        contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
    ):
        await stream.send_eof()
        unread = 0
        while unread <= 16 * ASK_MOST:
            data = await stream.receive_some(ASK_MOST)
            if not data:
                return
            unread += len(data)


def _peer_host(stream: trio.SocketStream) -> str:
    try:
        return str(stream.socket.getpeername()[0])
    except (OSError, IndexError):
        return "?"


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


async def ask_count(
    host: str, port: int, *, table: bytes | None = None, timeout: float = ASK_TIMEOUT + ASK_WINDOW
) -> Hello:
    """How many watch the table served on ``host:port``, asked by a count
    request (not a spectator, protocol.md §8); a :class:`WatchError` if the
    port cannot be reached in ``timeout`` s, refuses, or serves another table."""
    where = f"{host}:{port}"
    with trio.move_on_after(timeout):
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            raise WatchError(f"cannot reach {where}: {exc.strerror or exc}") from None
        async with stream:
            try:
                await stream.send_all(frame({"t": "count", "v": PROTOCOL_VERSION}))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                raise WatchError(f"{where} closed before it was asked") from None
            frames = Frames()
            while True:
                data = await _receive(stream)
                if not data:
                    raise WatchError(f"{where} closed without an answer")
                records = frames.feed(data)
                if records:
                    return _counted(records[0], table)
    raise WatchError(f"{where} did not answer in {timeout:g} s")


def _counted(record: dict[str, Any], table: bytes | None) -> Hello:
    """The count out of an answer; a hello instead (the request came after
    the window) counted this connection, which then leaves."""
    kind = record["t"]
    if kind == "refused":
        reason = record.get("reason")
        raise WatchError(f"the count was refused: {reason if type(reason) is str else '?':.200}")
    if kind not in ("count", "watch", "full"):
        raise WatchError(f"not a watch port (it said {kind!r:.20})")
    hello = _check_hello({**record, "t": "watch"}, table)
    if not (0 <= hello.watching <= MAX_SPECTATORS and 0 <= hello.max <= MAX_SPECTATORS):
        raise WatchError(f"a count out of bounds ({hello.watching} of {hello.max})")
    late = 1 if kind == "watch" else 0
    return Hello(hello.table, max(0, hello.watching - late), hello.max)


async def _receive(stream: trio.SocketStream) -> bytes:
    try:
        return await stream.receive_some(CHUNK)
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        return b""


__all__ = ["DEFAULT_MAX", "Frames", "Hello", "Spectator", "WatchError", "WatchServer", "WatchStats",
           "ask_count", "count_answer", "frame"]  # fmt: skip
