"""The lobby over trio: :func:`host_lobby` and :func:`join_lobby` only move
bytes between sockets and the machines of :mod:`p2p.lobby.machines`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import trio

from p2p.envelope import TableSpec
from p2p.handshake import Channel, Handshake, HandshakeError
from p2p.identity import Identity
from p2p.wire import (
    MAX_FRAME,
    PROTOCOL_VERSION,
    SEAL_OVERHEAD,
    FrameDecoder,
    WireError,
    decode_message,
    encode_frame,
    encode_payload,
    frame_of,
)

from .machines import (
    Changed,
    Close,
    Finished,
    HostEffect,
    LobbyHostMachine,
    LobbyJoinerMachine,
    Send,
)
from .messages import (
    AGREE_TIMEOUT,
    CLOSE_GRACE,
    CONNECT_TIMEOUT,
    HANDSHAKE_FRAME,
    HANDSHAKE_TIMEOUT,
    JOINER_FRAME,
    LOBBY_ID,
    MAX_ERRORS,
    OUTBOX,
    PENDING_PER_HOST,
    PENDING_TOTAL,
    READ_CHUNK,
    REPLY_TIMEOUT,
    REQUEST_TIMEOUT,
    START_TIMEOUT,
    TICK,
    BadHostMessage,
    HostLeft,
    HostUnreachable,
    LobbyError,
    LobbyState,
    SeatedTable,
    VersionMismatch,
    WrongHost,
    log,
)

# --------------------------------------------------------------------- trio: host


class _HostConn:
    def __init__(self, conn_id: int, stream: trio.SocketStream, host: str, label: str) -> None:
        self.id = conn_id
        self.stream = stream
        self.host = host
        self.label = label
        self.decoder = FrameDecoder(HANDSHAKE_FRAME)
        self.channel: Channel | None = None
        self.outbox_send, self.outbox_recv = trio.open_memory_channel[bytes | None](OUTBOX)
        self.scope: trio.CancelScope | None = None
        self.closing = False
        self.pending = True  # holds a pending slot (not seated yet)

    def send(self, payload: bytes) -> None:
        if self.closing:
            return
        try:
            self.outbox_send.send_nowait(payload)
        except trio.WouldBlock:
            log.info("lobby: %s is not reading; closing", self.label)
            self.abort()

    def close(self) -> None:
        """Close once what is queued is sent."""
        if self.closing:
            return
        self.closing = True
        try:
            self.outbox_send.send_nowait(None)
        except trio.WouldBlock:
            self.abort()

    def abort(self) -> None:
        self.closing = True
        if self.scope is not None:
            self.scope.cancel()


def _peer(stream: trio.SocketStream, local: bool = False) -> tuple[str, int]:
    try:
        name = stream.socket.getsockname() if local else stream.socket.getpeername()
        return str(name[0]), int(name[1])
    except OSError:
        return "unknown", 0


def _lobby_table(identity: Identity, version: int) -> TableSpec:
    return TableSpec(LOBBY_ID, (identity.public,), version)


class LobbyHost:
    """A running lobby (from ``await nursery.start(host_lobby, ...)``).

    :attr:`port` is where joiners connect; :meth:`start` starts with the
    seats taken now; :attr:`state` is what the lobby shows; :attr:`errors`
    says why connections were refused or closed."""

    def __init__(
        self,
        machine: LobbyHostMachine,
        listeners: list[trio.SocketListener],
        on_change: Callable[[LobbyState], None] | None,
    ) -> None:
        self.machine = machine
        self.listeners = listeners
        sock = listeners[0].socket.getsockname()
        self.host, self.port = str(sock[0]), int(sock[1])
        self.on_change = on_change
        self.state = machine.state()
        self.dropped = 0  # connections closed at once: too many pending
        self._pending: dict[str, int] = {}
        self._pending_total = 0
        self._conns: dict[int, _HostConn] = {}
        self._next_id = 0
        self._finished = trio.Event()
        self._idle = trio.Event()

    @property
    def table_id(self) -> bytes:
        return self.machine.table_id

    @property
    def address(self) -> tuple[str, int]:
        """Where joiners connect (as bound)."""
        return self.host, self.port

    @property
    def errors(self) -> list[str]:
        """Why connections were refused or closed (the latest ``MAX_ERRORS``)."""
        return self.machine.errors

    @property
    def pending(self) -> int:
        """Lobby connections not seated yet."""
        return self._pending_total

    def start(self) -> None:
        """Start with the seats taken now (at least ``min_seats``, else
        :class:`NotEnoughPlayers`); if a seat leaves meanwhile the host starts
        again with the rest, as long as there are ``min_seats`` (fewer, or a
        removal, call the start off: see :attr:`start_requested`)."""
        self._execute(self.machine.request_start(trio.current_time()))

    @property
    def start_requested(self) -> bool:
        """The host asked to start and that still stands (a removal, or a
        seat lost below ``min_seats``, calls it off)."""
        return self.machine.start_requested

    def remove(self, fingerprint: str) -> bool:
        """Remove the seated player holding ``fingerprint`` before the start
        (it is told why; the later seats move up; a start the host asked
        for is called off). False: nobody seated holds it (it left
        meanwhile) or the table has started."""
        effects = self.machine.remove(fingerprint, trio.current_time())
        self._execute(effects)
        return bool(effects)

    def set_watching(self, n: int) -> None:
        """The spectators watching now (from the host's watch port): every
        seated joiner is told, while the lobby runs."""
        self._execute(self.machine.set_watching(n))

    # ---------------------------------------------------------------- effects

    def _execute(self, effects: list[HostEffect]) -> None:
        for effect in effects:
            if isinstance(effect, Send):
                conn = self._conns.get(effect.conn)
                if conn is not None:
                    conn.send(encode_payload(effect.msg))
            elif isinstance(effect, Close):
                conn = self._conns.get(effect.conn)
                if conn is not None:
                    conn.close()
            elif isinstance(effect, Changed):
                self.state = effect.state
                if self.on_change is not None:
                    self.on_change(effect.state)
            elif isinstance(effect, Finished):
                self._finished.set()

    def _record(self, text: str) -> None:
        log.info("lobby: %s", text)
        self.machine.errors.append(text)
        del self.machine.errors[:-MAX_ERRORS]

    # ---------------------------------------------------------------- connections

    def _release(self, conn: _HostConn) -> None:
        if conn.pending:
            conn.pending = False
            self._pending_total -= 1
            self._pending[conn.host] -= 1
            if not self._pending[conn.host]:
                del self._pending[conn.host]

    async def _serve(self, stream: trio.SocketStream) -> None:
        host, port = _peer(stream)
        blocked = self.machine.answers(host, trio.current_time())
        if blocked is not None:  # too many wrong table codes: not answered for a while
            self.dropped += 1
            log.debug("lobby: %s:%d: %s; closed", host, port, blocked)
            await trio.aclose_forcefully(stream)
            return
        if self._pending.get(host, 0) >= PENDING_PER_HOST or self._pending_total >= PENDING_TOTAL:
            # counted, not kept one by one: a flood must not flood the log or memory
            self.dropped += 1
            log.debug("lobby: %s:%d: too many lobby connections at once; closed", host, port)
            await trio.aclose_forcefully(stream)
            return
        self._pending[host] = self._pending.get(host, 0) + 1
        self._pending_total += 1
        self._next_id += 1
        conn = _HostConn(self._next_id, stream, host, f"{host}:{port}")
        deadline = trio.current_time() + self.machine.request_timeout
        try:
            await self._run(conn, deadline)
        finally:
            self._release(conn)
            self._conns.pop(conn.id, None)
            if not self._conns:
                self._idle.set()
            self._execute(self.machine.disconnected(conn.id, trio.current_time()))
            await trio.aclose_forcefully(stream)

    async def _run(self, conn: _HostConn, deadline: float) -> None:
        shake = Handshake(
            self.machine.identity,
            _lobby_table(self.machine.identity, self.machine.version),
            self.port,
            lobby=True,
        )
        timeout = max(0.0, min(HANDSHAKE_TIMEOUT, deadline - trio.current_time()))
        try:
            with trio.fail_after(timeout):
                await conn.stream.send_all(encode_frame(shake.hello()))
                while not shake.done:
                    msg = await self._next_payload(conn)
                    if msg is None:
                        raise HandshakeError("connection closed during the lobby handshake")
                    reply = shake.receive(decode_message(msg))
                    if reply is not None:
                        await conn.stream.send_all(encode_frame(reply))
        except trio.TooSlowError:
            self._record(f"{conn.label}: no lobby handshake within {timeout:.1f} s; closed")
            return
        except (WireError, OSError, trio.BrokenResourceError) as exc:
            self._record(f"{conn.label}: lobby handshake failed: {exc}")
            return
        assert shake.peer_key is not None
        conn.channel = shake.channel
        conn.decoder.limit = JOINER_FRAME + SEAL_OVERHEAD
        conn.label = f"{shake.peer_key.fingerprint} at {conn.label}"
        self._conns[conn.id] = conn
        self._idle = trio.Event()
        local = _peer(conn.stream, local=True)[0]
        async with trio.open_nursery() as nursery:
            conn.scope = nursery.cancel_scope
            nursery.start_soon(self._writer, conn, nursery.cancel_scope)
            self._execute(
                self.machine.connected(
                    conn.id, shake.peer_key, conn.host, local, deadline, trio.current_time()
                )
            )
            await self._reader(conn)
            if not conn.closing:
                nursery.cancel_scope.cancel()

    async def _next_payload(self, conn: _HostConn) -> bytes | None:
        while True:
            payload = conn.decoder.next_frame()
            if payload is not None:
                return conn.channel.open(payload) if conn.channel is not None else payload
            data = await conn.stream.receive_some(READ_CHUNK)
            if not data:
                return None
            conn.decoder.feed(data)

    async def _reader(self, conn: _HostConn) -> None:
        while True:
            try:
                payload = await self._next_payload(conn)
            except WireError as exc:
                self._execute(self.machine.fail(conn.id, str(exc), trio.current_time()))
                if conn.closing:
                    await trio.sleep_forever()  # the writer sends the refusal, then ends us
                return
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if payload is None:
                return
            self._execute(self.machine.receive(conn.id, payload, trio.current_time()))
            if self.machine.is_seated(conn.id):
                self._release(conn)

    async def _writer(self, conn: _HostConn, scope: trio.CancelScope) -> None:
        assert conn.channel is not None
        try:
            async for payload in conn.outbox_recv:
                if payload is None:
                    break
                with trio.move_on_after(CLOSE_GRACE if conn.closing else math.inf) as sending:
                    await conn.stream.send_all(frame_of(conn.channel.seal(payload)))
                if sending.cancelled_caught:
                    break
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        scope.cancel()

    async def _ticker(self) -> None:
        while True:
            await trio.sleep(TICK)
            self._execute(self.machine.tick(trio.current_time()))


async def host_lobby(
    identity: Identity,
    settings: Mapping[str, Any],
    seats: int,
    *,
    node_port: int,
    host: str = "127.0.0.1",
    port: int = 0,
    nickname: str = "host",
    address: str | None = None,
    min_seats: int | None = None,
    table_id: bytes | None = None,
    on_change: Callable[[LobbyState], None] | None = None,
    request_timeout: float = REQUEST_TIMEOUT,
    agree_timeout: float = AGREE_TIMEOUT,
    code: str | None = None,
    watch: tuple[int, int] | None = None,
    task_status: trio.TaskStatus[LobbyHost] = trio.TASK_STATUS_IGNORED,
) -> SeatedTable:
    """Host a lobby on ``host:port`` until every seat agreed to the table.

    ``settings``: the opaque game settings (a msgpack-able map with text
    keys); ``seats``: 2 to 64, the host being seat 0; ``node_port``: where the
    host's game node will listen; ``address``: the host's address as written
    into the table (default: ``host``, or if that is a wildcard the address
    seat 1 reached us at). ``min_seats`` (default 2) is the least
    :meth:`LobbyHost.start` starts with; a full table starts on its own.
    ``task_status`` gets the :class:`LobbyHost` once listening (its ``port``,
    ``start()``); ``on_change`` is called with every new :class:`LobbyState`.
    ``code``: a private table's code (:func:`p2p.lobby.table_code.new_code`):
    only joiners who prove they know it see the table. ``watch``: (the
    watch port, at most N spectators), said in every ``lobby`` (protocol.md
    §4.1, §8). Returns the host's
    :class:`SeatedTable` (seat 0); cancel to close the lobby (the joiners get
    :class:`HostLeft`)."""
    if address is None and host not in ("", "0.0.0.0", "::"):
        address = host  # bound to one address: that is where the table reaches us
    machine = LobbyHostMachine(
        identity,
        settings,
        seats,
        node_port=node_port,
        nickname=nickname,
        address=address,
        min_seats=min_seats,
        table_id=table_id,
        request_timeout=request_timeout,
        agree_timeout=agree_timeout,
        code=code,
        watch=watch,
    )
    try:
        listeners = await trio.open_tcp_listeners(port, host=host or None)
    except OSError as exc:
        raise LobbyError(f"cannot open the lobby on {host}:{port}: {exc.strerror or exc}") from exc
    lobby = LobbyHost(machine, listeners, on_change)
    accepting = trio.CancelScope()  # entered by _accept; cancelled at the start
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_accept, lobby, listeners, nursery, accepting, name="lobby listener")
        nursery.start_soon(lobby._ticker)
        task_status.started(lobby)
        await lobby._finished.wait()
        accepting.cancel()
        with trio.move_on_after(CLOSE_GRACE):
            while lobby._conns:  # let the start frames leave before closing
                await lobby._idle.wait()
        nursery.cancel_scope.cancel()
    assert machine.result is not None
    return machine.result


async def _accept(
    lobby: LobbyHost,
    listeners: list[trio.SocketListener],
    nursery: trio.Nursery,
    scope: trio.CancelScope,
) -> None:
    with scope:
        try:
            await trio.serve_listeners(lobby._serve, listeners, handler_nursery=nursery)
        finally:
            for listener in listeners:
                await trio.aclose_forcefully(listener)


# --------------------------------------------------------------------- trio: joiner


async def join_lobby(
    identity: Identity,
    host: str,
    port: int,
    *,
    nickname: str,
    expect_settings: Mapping[str, Any] | None,
    node_port: int,
    expect_table: bytes | None = None,
    expect_host: str | None = None,
    on_change: Callable[[LobbyState], None] | None = None,
    version: int = PROTOCOL_VERSION,
    refuse_table: Callable[[bytes], str | None] | None = None,
    code: str | None = None,
) -> SeatedTable:
    """Take a seat at the lobby on ``host:port`` and wait for the start.

    ``expect_settings``: the settings you agree to (None: whatever the host
    shows; its digest is still bound into the request and checked against the
    table). ``node_port``: where your game node will listen. ``expect_table``
    / ``expect_host``: the advertised table id and host fingerprint, if known
    (a lobby that is not that one is :class:`WrongHost`). Returns the table
    every seat agreed to; raises a :class:`LobbyError` subclass a person can
    act on (``HostUnreachable``, ``TableFull``, ``NicknameTaken``, ...).
    ``refuse_table(table_id)``: why this seat must not take a seat at that
    table id (e.g. it already holds a table with that id), or None. After our
    agreement the host must start the table within ``START_TIMEOUT``.
    ``code``: the table code of a private table (``WrongCode`` if the host
    refuses it, ``WrongHost`` if the host does not know it)."""
    machine = LobbyJoinerMachine(
        identity,
        identity.public,  # replaced by the host's key after the handshake
        nickname=nickname,
        node_port=node_port,
        expect_settings=expect_settings,
        expect_table=expect_table,
        version=version,
        refuse_table=refuse_table,
        code=code,
    )
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        with trio.fail_after(CONNECT_TIMEOUT):
            stream = await trio.open_tcp_stream(host, port)
    except trio.TooSlowError:
        raise HostUnreachable(f"no answer from {where} within {CONNECT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise HostUnreachable(f"cannot reach a lobby at {where}: {exc.strerror or exc}") from None
    decoder = FrameDecoder(HANDSHAKE_FRAME)
    channel: Channel | None = None

    async def next_payload() -> bytes:
        while True:
            payload = decoder.next_frame()
            if payload is not None:
                return channel.open(payload) if channel is not None else payload
            data = await stream.receive_some(1 << 16)
            if not data:
                raise HostLeft(f"the host at {where} closed the lobby")
            decoder.feed(data)

    try:
        try:
            shake = Handshake(identity, _lobby_table(identity, version), 0, lobby=True)
            with trio.fail_after(HANDSHAKE_TIMEOUT):
                await stream.send_all(encode_frame(shake.hello()))
                while not shake.done:
                    msg = decode_message(await next_payload())
                    if msg["k"] == "hello" and msg["v"] != version:
                        raise VersionMismatch(
                            f"the lobby at {where} speaks protocol version {msg['v']}, "
                            f"this program {version}: both players need the same nodealer"
                        )
                    reply = shake.receive(msg)
                    if reply is not None:
                        await stream.send_all(encode_frame(reply))
        except trio.TooSlowError:
            raise HostUnreachable(f"no lobby handshake with {where} within 5 s") from None
        except HostLeft:
            raise HostUnreachable(
                f"{where} closed the connection during the lobby handshake (not a nodealer "
                "lobby, or too many connections at once: try again)"
            ) from None
        except WireError as exc:
            raise HostUnreachable(f"the lobby handshake with {where} failed: {exc}") from None
        assert shake.peer_key is not None and shake.channel is not None
        if expect_host is not None and shake.peer_key.fingerprint != expect_host:
            raise WrongHost(
                f"the lobby at {where} is hosted by {shake.peer_key.fingerprint}, "
                f"not the advertised {expect_host}: nothing was joined"
            )
        machine.host_key = shake.peer_key
        channel = shake.channel
        decoder.limit = MAX_FRAME + SEAL_OVERHEAD
        shown: LobbyState | None = None
        while machine.result is None:
            limit = {"agreed": START_TIMEOUT, "seated": math.inf, "done": math.inf}
            with trio.move_on_after(limit.get(machine.stage, REPLY_TIMEOUT)) as waiting:
                payload = await next_payload()
            if waiting.cancelled_caught:
                if machine.stage == "agreed":
                    raise HostLeft(
                        f"the host at {where} did not start the table within "
                        f"{START_TIMEOUT:g} s of your agreement"
                    )
                raise HostUnreachable(f"the lobby at {where} stopped answering")
            for reply in machine.receive(payload):
                await stream.send_all(frame_of(channel.seal(encode_payload(reply))))
            if on_change is not None and machine.state is not None and machine.state != shown:
                shown = machine.state
                on_change(shown)
        return machine.result
    except LobbyError as exc:
        if exc.reply is not None and channel is not None:
            with trio.move_on_after(1.0):
                try:
                    await stream.send_all(frame_of(channel.seal(encode_payload(exc.reply))))
                except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
        raise
    except WireError as exc:
        raise BadHostMessage(f"the host at {where} sent a bad frame: {exc}") from exc
    except (OSError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
        raise HostLeft(f"lost the connection to the lobby at {where}: {exc}") from exc
    finally:
        await trio.aclose_forcefully(stream)
