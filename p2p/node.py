"""The trio peer: listens, keeps a full TCP mesh, runs the table's log.

Theory of operation
-------------------
A :class:`Node` is one peer at one table. :func:`open_node` starts it in one
trio nursery that owns everything it does - the listener, every connection's
reader and writer, the dialers, the timer and the disk flusher - and closing
the ``async with`` block cancels all of it. The node is plain trio; the TUI
drives it through trio guest mode (tui/guest.py).

The log itself is the sans-I/O :class:`~p2p.log.LogMachine`; the node only
moves bytes. Each connection: TCP, the handshake (:mod:`p2p.handshake`, at
most ``HANDSHAKE_TIMEOUT`` seconds), then frames sealed with the handshake's
keys, opened, decoded and schema-checked (:mod:`p2p.wire`) and handed to the
machine; the machine's effects are carried out in order - records appended
to the store, frames queued on connections. A frame or message that fails
any check is a typed error: it is logged, kept in :attr:`Node.errors` (the
latest ``MAX_ERRORS``), and that one connection is closed; the machine's
state is untouched and every other connection goes on.

One peer cannot cost the others much: sending never waits (each connection
has its own writer; one that has ``MAX_QUEUED`` bytes it does not read is
dropped), a fetch answer is bounded (``FETCH_BYTES``), at most
``PENDING_PER_HOST`` handshakes run for one remote host and
``PENDING_TOTAL`` in all, and a dropped connection's tasks end at once.
Before its handshake ends a connection may send frames of at most
``HANDSHAKE_FRAME`` bytes and is read ``HANDSHAKE_CHUNK`` bytes at a time,
so strangers on the LAN hold at most PENDING_TOTAL × (HANDSHAKE_FRAME +
HANDSHAKE_CHUNK) = 192 KiB of buffers however many connections they open
(protocol.md §2.4). Warnings about closed connections come at most
``WARN_BURST`` per ``WARN_WINDOW`` seconds, then one line counts the rest.

Durability: accepted entries are appended to the log file at once and
(v2 tables) delivered to the session at once; a flusher task fsyncs the
files (on the loop while the disk is fast, else in a worker thread so that
appends go on meanwhile: :mod:`p2p.disk_pace`) and only then acknowledges
the head, so whatever this peer acknowledged survives a crash.
Our own events are fsynced to the outbox before they are sent. On v3 tables
the session gets an entry only once it is *final* (every seat acknowledged
it, :attr:`Node.final`), so the flusher acknowledges as soon as each fsync
ends; :meth:`Node.held_events` shows what other seats sent that the log
lacks, :meth:`Node.tentative` the entries not final yet.

Mesh: peers are reached by address - :meth:`Node.connect` takes a manual
HOST:PORT (discovery feeds the same call); after a handshake both sides tell
each other the addresses they know (``addrs``) and dial whoever they are not
connected to, and a lost connection is redialled until it comes back. If two
connections join the same pair, both ends keep the same one: the newer if one
side dialled both, else the one the lower seat dialled. The store remembers
where every peer listened and our own port: a restarted node listens on the
same port again (if free) and redials everyone, so it rejoins on its own.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgpack
import trio

from p2p.connection import Connection, PeerError, address_label
from p2p.disk_pace import DiskPace
from p2p.envelope import Entry, EquivocationProof, Event, EventError, TableSpec
from p2p.handshake import Handshake, HandshakeError
from p2p.identity import Identity, PeerKey
from p2p.items import LogItem, Rewound, item_of
from p2p.keepalive import keep_alive
from p2p.log import Effect, LogMachine, Persist, Role, Send
from p2p.store import Store
from p2p.warn_rate import WARN_BURST, WARN_WINDOW, WarningRate
from p2p.wire import (
    MAX_FRAME,
    SEAL_OVERHEAD,
    WireError,
    decode_message,
    encode_frame,
    encode_payload,
    frame_of,
    message,
)

log = logging.getLogger("nodealer.p2p")

HANDSHAKE_TIMEOUT = 5.0
ACK_INTERVAL = 0.25
"""At most this often an fsync + ack (acks are cumulative). Every seat
broadcasts its acks: at 50 ms they were most of a 9-seat table's messages,
and cutting them to this gave bench/latency.py p50 7.45/7.03/6.13/5.01 ms
against 7.75/7.50/7.05/6.50 ms and 475-712 against 423-486 events/s (side by
side, alternating); nothing waits for an ack (protocol.md §3.4)."""
PENDING_PER_HOST = 16  # handshakes in progress from one address at once
PENDING_TOTAL = 64  # handshakes in progress at once, from every address
HANDSHAKE_FRAME = 1024  # largest frame before the handshake ends (a hello is ~210 bytes)
HANDSHAKE_CHUNK = 2048  # bytes read at once before the handshake ends
MAX_ERRORS = 1000  # the latest connection errors kept in Node.errors
RECV_CHUNK = 1 << 16
DIAL_ATTEMPTS = 6  # dials of one seat waiting at once (one begun each second, 5 s each)
DIAL_OVERLAP = 1.0  # seconds an attempt waits before another one begins beside it
SILENT_BEATS = 2.0  # beat intervals (timeout/4) of silence before a connection is redialled
MIN_SILENCE = 1.0  # but never less than this many seconds (a loaded machine stutters)
PING = encode_payload(message("addrs", peers=[]))  # "still here": changes nothing at the peer


class WrongSeat(HandshakeError):
    """The peer at an address we dialled for one seat holds another seat."""


class Node:
    """One peer at one table (create with :func:`open_node`)."""

    def __init__(
        self,
        identity: Identity,
        table: TableSpec,
        *,
        home: Path | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        timeout: float = 3.0,
        censor_wait: float | None = None,
        banned: Collection[PeerKey] = (),
    ) -> None:
        self.identity = identity
        self.table = table
        self.host = host
        self.port = port
        self.timeout = timeout
        self.censor_wait = censor_wait  # (v3) default: twice the timeout
        self.banned = frozenset(banned)
        self.store = Store.open(table, home)
        if self.store.problem:
            log.warning("store: %s", self.store.problem)
        self.machine: LogMachine | None = None
        self.errors: list[PeerError] = []
        self.addresses: dict[int, tuple[str, int]] = {}
        self._conns: dict[int, Connection] = {}
        self._ever: set[int] = set()  # seats this node has been connected to
        self._dialing: set[int] = set()
        self._pending: dict[str, int] = {}  # handshakes in progress, per remote host
        self._pending_total = 0
        # inbound handshakes in progress, oldest first: number -> (host, scope)
        self._shaking: dict[int, tuple[str, trio.CancelScope]] = {}
        self._shakes = 0  # numbers them
        self._warnings = WarningRate()
        self._nursery: trio.Nursery | None = None
        self._changed = trio.Event()
        self._peers_moved = trio.Event()  # set (and replaced) when `connected` changes
        self._dirty = trio.Event()
        self.disk_pace = DiskPace()  # on the loop or in a thread: where fsyncs cost least
        self._unsynced_own: list[Event] = []  # signed, whose fsync failed: for the flusher
        self._flushed: tuple[int, bytes, int] | None = None  # (head, hash, cuts) last acked
        self._disk_error: OSError | None = None  # an fsync on the loop failed
        self._rewinds: list[int] = []
        self._delivered_hwm = 0
        self._last_watch = -math.inf  # when _watch_connections last ran
        self.listen_port = 0

    # ---------------------------------------------------------------- public

    @property
    def seat(self) -> int:
        return self.log.me

    @property
    def log(self) -> LogMachine:
        if self.machine is None:
            raise RuntimeError("the node is not running")
        return self.machine

    @property
    def fingerprint(self) -> str:
        return self.identity.fingerprint

    @property
    def listen_address(self) -> tuple[str, int]:
        """Where peers reach us (for discovery and ``--connect``)."""
        return self.host, self.listen_port

    @property
    def chain(self) -> list[Entry]:
        return list(self.log.chain)

    @property
    def head(self) -> int:
        return self.log.head

    @property
    def proofs(self) -> list[EquivocationProof]:
        return list(self.log.proofs.values())

    @property
    def connected(self) -> set[int]:
        return set(self._conns)

    @property
    def ever_connected(self) -> set[int]:
        """The seats this node has been connected to since it started."""
        return set(self._ever)

    @property
    def connections_moved(self) -> trio.Event:
        """Set when :attr:`connected` next changes (a peer connected, or its
        connection was lost); take it again, with ``connected``, after."""
        return self._peers_moved

    def _connections_changed(self) -> None:
        self._peers_moved.set()
        self._peers_moved = trio.Event()

    @property
    def silence(self) -> float:
        """Seconds a connection may hear nothing before it is closed and
        redialled (about two beat intervals)."""
        return max(MIN_SILENCE, SILENT_BEATS * self.timeout / 4)

    def peer_name(self, seat: int) -> str:
        return f"seat {seat} ({self.table.seats[seat].fingerprint})"

    async def run(self, *, task_status: trio.TaskStatus[Node] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the node until cancelled (``task_status`` reports it is listening)."""
        self.machine = LogMachine(
            self.table,
            self.identity,
            timeout=self.timeout,
            censor_wait=self.censor_wait,
            now=trio.current_time(),
            entries=self.store.entries,
            own_events=self.store.own_events,
            led_terms=self.store.led_terms,
            proofs=self.store.proofs,
            voted=self.store.voted,
            followed=self.store.followed,
            cut=self.store.cut,
            followed_start=self.store.followed_start,
            final=self.store.final,
        )
        self._delivered_hwm = self.machine.head
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                listeners = await self._listen()
                self.listen_port = listeners[0].socket.getsockname()[1]
                self.store.remember_listen_port(self.listen_port)
                self._execute(self.machine.take_effects())
                for seat, (host, port) in sorted(self.store.addresses.items()):
                    self.add_address(seat, host, port)  # rejoin after a restart
                nursery.start_soon(trio.serve_listeners, self._serve_inbound, listeners)
                nursery.start_soon(self._ticker)
                nursery.start_soon(self._flusher)
                task_status.started(self)
        finally:
            self._nursery = None

    async def _listen(self) -> list[trio.SocketListener]:
        if self.port is not None:
            return await trio.open_tcp_listeners(self.port, host=self.host)
        if self.store.listen_port:  # where peers last saw us, if it is free
            try:
                return await trio.open_tcp_listeners(self.store.listen_port, host=self.host)
            except OSError:
                pass
        return await trio.open_tcp_listeners(0, host=self.host)

    async def connect(self, host: str, port: int) -> int:
        """Dial HOST:PORT, run the handshake, return the peer's seat (raises
        :class:`HandshakeError` or ``OSError``, ``TimeoutError`` after
        ``HANDSHAKE_TIMEOUT`` seconds for each of the two steps)."""
        if self._nursery is None:
            raise RuntimeError("the node is not running")
        return await self._nursery.start(self._dial, host, port)

    async def _connect_seat(self, seat: int, host: str, port: int) -> None:
        if self._nursery is None:
            raise RuntimeError("the node is not running")
        await self._nursery.start(self._dial, host, port, seat)

    def add_address(self, seat: int, host: str, port: int) -> None:
        """Remember where ``seat`` listens and keep dialling it until connected
        (a peer found there that is not ``seat`` is refused)."""
        if seat == self.seat or not 0 <= seat < self.table.n:
            return
        self.addresses[seat] = (host, port)
        self.store.remember_address(seat, host, port)
        if seat not in self._conns and seat not in self._dialing and self._nursery is not None:
            self._dialing.add(seat)
            self._nursery.start_soon(self._keep_dialing, seat)

    async def submit(self, body: Any) -> int:
        """Sign ``body`` (any msgpack-able value) as our next event, make it
        durable, send it to the sequencer (v3: to every peer); return its
        counter. It appears in :meth:`entries` once sequenced (v3: once final)."""
        try:
            raw = msgpack.packb(body, use_bin_type=True)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"an event body must be msgpack-able: {exc}") from exc
        event = self.log.author(raw)
        self.store.record_own_event(event, sync=False)
        try:
            await self._sync_store("own")
        except BaseException:
            # not known to be on disk (an I/O error, or cancelled before the
            # fsync began): the flusher writes it again, syncs, then sends it
            self._unsynced_own.append(event)
            self._dirty.set()
            raise
        self._execute(self.log.submit_own(event, trio.current_time()))
        return event.counter

    async def entries(self, start: int = 1) -> AsyncIterator[LogItem | Rewound]:
        """The ordered, verified log from ``start`` on, waiting for more.

        Yields :class:`LogItem`; on the rare cut-back of entries already
        yielded it yields :class:`Rewound` and continues from there. On v3
        tables only *final* entries (acknowledged by every seat, :attr:`final`),
        which are never cut."""
        seq = start
        seen_rewinds = len(self._rewinds)
        while True:
            while seen_rewinds < len(self._rewinds):
                point = self._rewinds[seen_rewinds]
                seen_rewinds += 1
                if point < seq - 1:
                    seq = point + 1
                    yield Rewound(point)
            machine = self.log
            if seq <= (machine.final if machine.v3 else machine.head):
                entry = machine.chain[seq - 1]
                seq += 1
                yield item_of(entry, machine.hashes[entry.seq])
                continue
            await self._changed.wait()

    async def wait_for_head(self, seq: int) -> None:
        """Return once the log holds at least ``seq`` entries."""
        while self.log.head < seq:
            await self._changed.wait()

    async def put_secret(self, name: str, value: bytes) -> None:
        """Keep one of our secrets on disk (fsync'd) before returning."""
        self.store.put_secret(name, value, sync=False)
        await self._sync_store("secrets")

    def get_secret(self, name: str) -> bytes | None:
        return self.store.get_secret(name)

    # ---------------------------------------------------------------- effects

    def _execute(self, effects: list[Effect]) -> None:
        changed = False
        for effect in effects:
            if isinstance(effect, Send):
                frame = encode_payload(effect.msg)
                if effect.to is None:
                    for conn in list(self._conns.values()):
                        conn.send(frame)
                else:
                    conn = self._conns.get(effect.to)
                    if conn is not None:
                        conn.send(frame)
            elif isinstance(effect, Persist):
                try:
                    self.store.append(effect.file, effect.record, lazy=effect.lazy)
                    if effect.sync:
                        self.store.sync()  # rare (a led term, a proof): worth blocking for
                except OSError as exc:
                    # (a full disk) nothing after it may act as if it were
                    # written: no later effect (a vote's Send) goes out, and
                    # the flusher stops the node, as after a failed fsync
                    # (sixth review, #5: it was taken for a lost peer)
                    self._disk_error = self._disk_error or exc
                    self._dirty.set()
                    break
                if not effect.sync and not effect.lazy:
                    self._dirty.set()
                changed = True
        if changed:
            self._note_changes()

    def _flush_here(self) -> None:
        """(v3) fsync what was appended and acknowledge it now, in the step
        that appended it, rather than in the flusher task's next step: one
        step of the scheduler less between an entry and its ack (on a loaded
        machine a step may wait for a core). Only while the disk is fast
        (:mod:`p2p.disk_pace`), and at the sequencer only once nothing waits
        to be sent (its entry goes first); else, and for whatever it did not
        take, the flusher. A failed fsync is the flusher's to raise (it
        stops the node, as it always did: after a failed fsync nothing
        written before it can be trusted to be on disk)."""
        if not self.log.v3 or not self.store.dirty:
            return  # (v2 tables) acks at most every ACK_INTERVAL: nobody waits for them
        if not self.disk_pace.inline or self._unsynced_own or self._disk_error is not None:
            return
        machine = self.log
        if machine.role is Role.SEQUENCER and any(conn.queued for conn in self._conns.values()):
            return
        flushing = (machine.head, machine.head_hash, machine.truncations)
        try:
            self.disk_pace.fsync_here(self.store.fsync, self.store.take_dirty())
        except OSError as exc:
            self._disk_error = exc  # the flusher, woken already, raises it
            return
        self._flushed = flushing
        self._execute(machine.flushed(*flushing))

    def _note_changes(self) -> None:
        machine = self.log
        if machine.low_water < self._delivered_hwm:
            self._rewinds.append(machine.low_water)
        machine.low_water = machine.head
        self._delivered_hwm = machine.head
        self._changed.set()
        self._changed = trio.Event()

    async def _sync_store(self, *files: str) -> None:
        """fsync ``files`` (default: every file appended to since), on the
        loop while the disk is fast, else in a worker thread: a disk that
        stalls now and then must never hold up the loop for long (its beats,
        its reading, the screen; :mod:`p2p.disk_pace`). Only the named files:
        an own event must not wait for the log, and the flusher must find
        the log still to sync before it acknowledges it."""
        fds = self.store.take_dirty(files or None)
        if fds:
            await self.disk_pace.fsync(self.store.fsync, fds)

    async def _flusher(self) -> None:
        while True:
            await self._dirty.wait()
            if self.disk_pace.inline and any(c.queued for c in self._conns.values()):
                await trio.sleep(0)  # what is queued to send goes first (the sequencer's entry)
            self._dirty = trio.Event()
            if self._disk_error is not None:
                raise self._disk_error  # an fsync in _flush_here failed
            machine = self.log
            own, self._unsynced_own = self._unsynced_own, []
            for event in own:
                self.store.record_own_event(event, sync=False)
            flushing = (machine.head, machine.head_hash, machine.truncations)
            if not own and flushing == self._flushed and not self.store.dirty:
                continue  # _flush_here did it, and acknowledged it
            await self._sync_store()
            self._flushed = flushing
            self._execute(machine.flushed(*flushing))
            for event in own:
                self._execute(machine.submit_own(event, trio.current_time()))
            # batch the next fsync and ack (v3: a session waits for every
            # seat's ack of an entry, so the first ack of a new head goes at once)
            await trio.sleep(ACK_INTERVAL if not machine.v3 else 0)

    async def _ticker(self) -> None:
        interval = min(0.05, self.timeout / 10)
        while True:
            await trio.sleep(interval)
            now = trio.current_time()
            self._execute(self.log.tick(now))
            self._watch_connections(now)
            self._warnings.flush()

    def _watch_connections(self, now: float) -> None:
        """Close (and so redial) a connection that heard nothing for
        :attr:`silence` seconds; say "still here" on one that sent nothing
        for a beat interval (see the module docstring)."""
        stood_still = now - self._last_watch > self.silence / 2
        self._last_watch = now
        beat = self.timeout / 4
        for conn in list(self._conns.values()):
            if stood_still:  # our own loop was stopped or busy: the silence is ours
                conn.heard = max(conn.heard, now)
            elif now - conn.heard > self.silence:
                log.info(
                    "heard nothing from %s for %.1f s: closing and redialling",
                    conn.label,
                    now - conn.heard,
                )
                conn.close()
                continue
            if now - conn.sent >= beat:
                conn.send(PING)

    # ---------------------------------------------------------------- connections

    async def _serve_inbound(self, stream: trio.SocketStream) -> None:
        label = address_label(stream)
        host = label.rsplit(":", 1)[0]
        if self._pending.get(host, 0) >= PENDING_PER_HOST:
            # hosts opening connection after connection and never finishing
            # a handshake must not use up our descriptors or memory: that
            # host's oldest handshake goes (a seat behind the same address,
            # a NAT, a shared machine, still gets through: fourth review A4b)
            oldest = next((n for n, (h, _) in self._shaking.items() if h == host), None)
            if oldest is None:
                await trio.aclose_forcefully(stream)
                return
            self._shaking.pop(oldest)[1].cancel()
            log.debug("%s: too many handshakes at once; its oldest closed", label)
            self._warnings.note("too many handshakes at once from one host: the oldest closed")
        elif self._pending_total >= PENDING_TOTAL and self._shaking:
            # every slot taken (strangers on several addresses): the oldest
            # handshake goes, not the newcomer — a seat's handshake takes a
            # round trip, a stranger's that never ends would otherwise keep
            # a seat that lost its link out for as long as it keeps them
            # (third review, A5c: 64 held slots, the seat named as a leaver)
            oldest = next(iter(self._shaking))
            self._shaking.pop(oldest)[1].cancel()
            self._warnings.note("too many handshakes at once: the oldest closed")
        self._pending[host] = self._pending.get(host, 0) + 1
        self._pending_total += 1
        keep_alive(stream)
        conn = Connection(stream, dialed=False, label=label)
        self._shakes += 1
        number = self._shakes
        try:
            with trio.CancelScope() as scope:
                self._shaking[number] = (host, scope)
                await self._handshake(conn)
            if scope.cancelled_caught:
                await trio.aclose_forcefully(stream)
                return
        except (WireError, OSError, trio.BrokenResourceError) as exc:
            self._record(label, exc)
            await trio.aclose_forcefully(stream)
            return
        finally:
            self._shaking.pop(number, None)
            self._pending_total -= 1
            self._pending[host] -= 1
            if not self._pending[host]:
                del self._pending[host]
        await self._run_connection(conn)

    async def _dial(
        self,
        host: str,
        port: int,
        expect: int | None = None,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        with trio.move_on_after(HANDSHAKE_TIMEOUT) as connecting:
            stream = await trio.open_tcp_stream(host, port)
        if connecting.cancelled_caught:  # an address that drops our SYNs
            raise TimeoutError(f"no TCP connection to {host}:{port} within {HANDSHAKE_TIMEOUT} s")
        keep_alive(stream)
        conn = Connection(stream, dialed=True, label=f"{host}:{port}")
        try:
            await self._handshake(conn, expect)
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
        assert conn.seat is not None
        task_status.started(conn.seat)
        await self._run_connection(conn)

    async def _keep_dialing(self, seat: int) -> None:
        """Dial ``seat`` until connected: a new attempt after 0.05 s, then
        doubling to every second; one that has waited ``DIAL_OVERLAP``
        seconds gets another beside it (at most ``DIAL_ATTEMPTS`` at once,
        each given up after ``HANDSHAKE_TIMEOUT``). During an outage every
        SYN or hello is lost and its retransmission backs off; a fresh
        attempt each second means one gets through within about a second
        of the link coming back. Once connected, attempts that have waited
        that long are given up; younger ones end as a lone dial always did
        (a handshake cut short is an error at the other end)."""
        delay = 0.05
        waiting: list[tuple[float, trio.CancelScope]] = []  # (began, scope) of each attempt
        try:
            async with trio.open_nursery() as nursery:
                while seat not in self._conns and seat in self.addresses:
                    now = trio.current_time()
                    if not waiting or (
                        len(waiting) < DIAL_ATTEMPTS and now - waiting[-1][0] >= DIAL_OVERLAP
                    ):
                        attempt = (now, trio.CancelScope())
                        waiting.append(attempt)
                        host, port = self.addresses[seat]
                        nursery.start_soon(self._attempt, seat, host, port, attempt, waiting)
                    await trio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                self._dialing.discard(seat)  # a new dialer may start while these end
                _give_up_old(waiting)
        finally:
            self._dialing.discard(seat)

    async def _attempt(
        self,
        seat: int,
        host: str,
        port: int,
        attempt: tuple[float, trio.CancelScope],
        waiting: list[tuple[float, trio.CancelScope]],
    ) -> None:
        """One dial of :meth:`_keep_dialing`."""
        try:
            with attempt[1], trio.move_on_after(HANDSHAKE_TIMEOUT):
                await self._connect_seat(seat, host, port)
                _give_up_old(waiting)
        except WrongSeat as exc:
            self._record(f"{host}:{port}", exc)
            if self.addresses.get(seat) == (host, port):
                del self.addresses[seat]  # a wrong address: stop dialling it
        except (OSError, WireError, trio.BrokenResourceError) as exc:
            log.debug("dialling seat %d at %s:%d: %s", seat, host, port, exc)
        finally:
            waiting.remove(attempt)

    async def _handshake(self, conn: Connection, expect: int | None = None) -> None:
        shake = Handshake(self.identity, self.table, self.listen_port, self.banned)
        conn.decoder.limit = HANDSHAKE_FRAME
        try:
            with trio.fail_after(HANDSHAKE_TIMEOUT):
                await conn.stream.send_all(encode_frame(shake.hello()))
                while not shake.done:
                    msg = await self._next_message(conn)
                    if msg is None:
                        raise HandshakeError("connection closed during the handshake")
                    reply = shake.receive(msg)
                    if expect is not None and shake.peer_seat not in (None, expect):
                        # before our auth: the peer there never counts this connection
                        raise WrongSeat(
                            f"the peer there is seat {shake.peer_seat}, not seat {expect}"
                        )
                    if reply is not None:
                        await conn.stream.send_all(encode_frame(reply))
        except trio.TooSlowError:
            raise HandshakeError(f"no handshake within {HANDSHAKE_TIMEOUT} s") from None
        conn.channel = shake.channel
        conn.decoder.limit = MAX_FRAME + SEAL_OVERHEAD
        conn.seat = shake.peer_seat
        assert conn.seat is not None
        conn.label = self.peer_name(conn.seat)
        host = address_label(conn.stream).rsplit(":", 1)[0]
        if shake.peer_port:
            self.addresses[conn.seat] = (host, shake.peer_port)
            self.store.remember_address(conn.seat, host, shake.peer_port)

    async def _next_message(self, conn: Connection) -> dict[str, Any] | None:
        while True:
            payload = conn.decoder.next_frame()
            if payload is not None:
                if conn.channel is not None:
                    payload = conn.channel.open(payload)
                return decode_message(payload)
            chunk = RECV_CHUNK if conn.channel is not None else HANDSHAKE_CHUNK
            data = await conn.stream.receive_some(chunk)
            if not data:
                return None
            conn.heard = trio.current_time()
            conn.decoder.feed(data)

    def _register(self, conn: Connection) -> bool:
        """Make ``conn`` the connection to its seat, unless the pair already
        has the one both ends keep."""
        seat = conn.seat
        assert seat is not None
        old = self._conns.get(seat)
        if old is not None:
            if old.dialed != conn.dialed:
                lower_dialed = conn.dialed if self.seat < seat else not conn.dialed
                if not lower_dialed:
                    return False
            old.close()
        self._conns[seat] = conn
        self._ever.add(seat)
        if old is None:
            self._connections_changed()
        return True

    async def _run_connection(self, conn: Connection) -> None:
        seat = conn.seat
        assert seat is not None
        if not self._register(conn):
            await trio.aclose_forcefully(conn.stream)
            return
        log.info("connected to %s", conn.label)
        conn.heard = trio.current_time()  # its allowance of silence starts now
        try:
            async with trio.open_nursery() as nursery:
                conn.scope = nursery.cancel_scope
                if conn.closed:  # replaced before it ever ran
                    nursery.cancel_scope.cancel()
                nursery.start_soon(self._writer, conn, nursery.cancel_scope)
                self._gossip_addresses(seat)
                self._execute(self.log.peer_connected(seat, trio.current_time()))
                await self._reader(conn)
                nursery.cancel_scope.cancel()
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            log.info("lost %s: %s", conn.label, exc)
        finally:
            conn.close()
            if self._conns.get(seat) is conn:
                del self._conns[seat]
                self._connections_changed()
                log.info("disconnected from %s", conn.label)
                if seat in self.addresses:
                    self.add_address(seat, *self.addresses[seat])
            await trio.aclose_forcefully(conn.stream)

    async def _reader(self, conn: Connection) -> None:
        seat = conn.seat
        assert seat is not None
        while not conn.closed:
            try:
                msg = await self._next_message(conn)
                if msg is None:
                    return
                if msg["k"] == "addrs":
                    self._on_addrs(msg)
                    continue
                effects = self.log.receive(seat, msg, trio.current_time())
            except (WireError, EventError) as exc:
                self._record(conn.label, exc)
                self._execute(self.log.take_effects())  # e.g. a proof found on the way
                return
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                log.info("lost %s: %s", conn.label, exc)
                return
            except Exception as exc:  # a bug must not take the table down: drop this peer
                log.exception("internal error handling a message from %s", conn.label)
                self._record(conn.label, exc)
                return
            self._execute(effects)
            if not conn.decoder.has_frame():  # (a burst: one fsync for all its frames)
                self._flush_here()

    async def _writer(self, conn: Connection, scope: trio.CancelScope) -> None:
        try:
            async for frame in conn.outbox_recv:
                batch = [frame]
                while len(batch) < 256:
                    try:
                        batch.append(conn.outbox_recv.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                assert conn.channel is not None
                data = b"".join(frame_of(conn.channel.seal(p)) for p in batch)
                await conn.stream.send_all(data)
                conn.queued -= sum(map(len, batch))
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            log.info("sending to %s failed: %s", conn.label, exc)
        scope.cancel()  # the writer ends when the connection is closed or broken

    def _gossip_addresses(self, new_seat: int) -> None:
        known = [
            {"seat": s, "host": h, "port": p}
            for s, (h, p) in sorted(self.addresses.items())
            if s != new_seat and s in self._conns
        ]
        new_conn = self._conns[new_seat]
        if known:
            new_conn.send(encode_payload(message("addrs", peers=known)))
        if new_seat in self.addresses:
            h, p = self.addresses[new_seat]
            peers = [{"seat": new_seat, "host": h, "port": p}]
            frame = encode_payload(message("addrs", peers=peers))
            for seat, conn in self._conns.items():
                if seat != new_seat:
                    conn.send(frame)

    def _on_addrs(self, msg: dict[str, Any]) -> None:
        # hearsay (unsigned): it may name a seat we know no address for, never
        # replace one we learned from that seat itself or from our store
        for peer in msg["peers"]:
            seat = peer["seat"]
            if seat != self.seat and seat < self.table.n and seat not in self.addresses:
                self.add_address(seat, peer["host"], peer["port"])

    def _record(self, peer: str, exc: BaseException) -> None:
        if isinstance(exc, Exception):
            error = PeerError(peer, exc)
            self.errors.append(error)
            del self.errors[:-MAX_ERRORS]
            self._warnings.warn(exc.__class__.__name__, f"closing connection to {error}")

    @property
    def final(self) -> int:
        """(v3) The highest seq that every seat (not a leaver) acknowledged:
        :meth:`entries` yields up to here, and it is never cut. On v2 tables
        what a majority acknowledged."""
        return self.log.final if self.log.v3 else self.log.committed

    def tentative(self, after: int = 0) -> list[LogItem]:
        """(v3) The entries this peer holds past :attr:`final` (and past seq
        ``after``), with their chain hashes: sequenced, not yet acknowledged
        by every seat, so they may still be cut. For the
        ending rule only (V3.md): a seat that is away acknowledges nothing,
        so the ``abandon`` bodies that end the game wait here until the
        table layer, having seen them, calls :meth:`set_leavers`. A session
        acts on nothing else here. Empty on v2 tables."""
        machine = self.log
        if not machine.v3:
            return []
        return self.items_after(max(machine.final, after))

    def items_after(self, seq: int) -> list[LogItem]:
        """The entries this peer holds past ``seq``, final or not, with their
        chain hashes (those past :attr:`final` may still be cut)."""
        machine = self.log
        return [item_of(entry, machine.hashes[entry.seq]) for entry in machine.chain[seq:]]

    def stalled_since(self) -> float | None:
        """(v3) Since when (trio time, noted at each tick) the first entry
        past :attr:`final` has stayed non-final; None: none, or just begun."""
        return self.log.stalled_since()

    def chain_hash(self, seq: int) -> bytes | None:
        """The chain hash of our entry at ``seq`` (0: the genesis; None: past
        the head): equal hashes at one seq mean the same chain up to it."""
        hashes = self.log.hashes
        return hashes[seq] if 0 <= seq < len(hashes) else None

    def set_leavers(self, seats: Collection[int]) -> None:
        """(v3) The table layer abandoned ``seats`` (they left the game): from
        now on an entry is final once every other seat acknowledged it. Our
        own seat, if the others named it, is left out: we still ack our disk."""
        self._execute(self.log.set_leavers(set(seats) - {self.log.me}))
        self._note_changes()

    def acked(self, seat: int) -> int:
        """(v3) How far ``seat``'s latest acknowledgement reaches on our chain
        (0: none, or on another chain); our own: the head. A seat acking past
        :attr:`final` is there: it waits on the others' acks as we do."""
        return self.log.acked(seat)

    def waiting_for_acks(self) -> list[int]:
        """(v3) The seats whose acknowledgement the final point waits for
        (their latest ack, direct or passed on by a peer, does not reach the
        first entry we hold past :attr:`final`), so a screen can say whom the
        table waits for. Empty when everything we hold is final, and on v2."""
        return self.log.waiting_for_acks()

    def held_events(self, seat: int) -> list[Event]:
        """(v3) The events authored by ``seat`` that this peer holds
        (received and verified) and its chain does not, and that can enter
        the chain now: the author's next counter and those contiguous from
        it, in counter order (an event past a gap answers nothing).
        Empty on v2 tables (there events go to the sequencer only)."""
        return self.log.held_events(seat)

    def held_since(self, seat: int) -> float | None:
        """(v3) The trio time the oldest of :meth:`held_events` was first
        received, or None if none is held."""
        return self.log.held_since(seat)

    @property
    def is_sequencer(self) -> bool:
        return self.log.role is Role.SEQUENCER

    @property
    def next_own_counter(self) -> int:
        """The counter our next signed event will carry (how many we signed)."""
        return self.log.next_own_counter

    @property
    def term(self) -> int:
        """The log's current term (its sequencer is seat ``term mod n``)."""
        return self.log.term

    def acknowledged_by_all(self) -> bool:
        """Every other seat has acknowledged our whole log."""
        log = self.log
        acks = [log.acks.get(s) for s in range(log.table.n) if s != log.me]
        return all(a is not None and a.seq >= log.head for a in acks)

    def status(self) -> str:
        m = self.log
        return (
            f"seat {m.me} {self.fingerprint}: term {m.term} {m.role.value}, head {m.head}, "
            f"committed {m.committed}, peers {sorted(self._conns)}"
        )


def _give_up_old(waiting: list[tuple[float, trio.CancelScope]]) -> None:
    """Cancel the dial attempts that have waited ``DIAL_OVERLAP`` or more."""
    now = trio.current_time()
    for began, scope in waiting:
        if now - began >= DIAL_OVERLAP:
            scope.cancel()


@asynccontextmanager
async def open_node(identity: Identity, table: TableSpec, **options: Any) -> AsyncIterator[Node]:
    """Run a :class:`Node` for the duration of the ``async with`` block."""
    node = Node(identity, table, **options)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(node.run)
            try:
                yield node
            finally:
                nursery.cancel_scope.cancel()
    finally:
        node.store.close()


__all__ = ["WARN_BURST", "WARN_WINDOW", "LogItem", "Node", "PeerError", "Rewound", "open_node"]
