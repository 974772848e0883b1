"""The lobby (p2p/lobby.py): real TCP on 127.0.0.1 only, plus the sans-I/O rules."""

from __future__ import annotations

import copy
import socket
from contextlib import AsyncExitStack
from functools import partial
from typing import Any

import pytest
import trio

from p2p.envelope import TableSpec
from p2p.handshake import Channel, Handshake, HandshakeError
from p2p.identity import Identity
from p2p.lobby import (
    AlreadySeated,
    BadHostMessage,
    BadSpec,
    HostLeft,
    HostUnreachable,
    LobbyHost,
    LobbyHostMachine,
    LobbyJoinerMachine,
    LobbyState,
    NotEnoughPlayers,
    Phase,
    Refused,
    SeatedTable,
    SettingsChanged,
    SettingsMismatch,
    TableFull,
    VersionMismatch,
    WrongHost,
    canonical_settings,
    host_lobby,
    join_lobby,
    settings_digest,
)
from p2p.lobby.machines import Close, Send
from p2p.lobby.messages import (
    LOBBY_ID,
    PENDING_PER_HOST,
    decode_lobby_message,
    lobby_message,
    nickname_problem,
    request_message,
)
from p2p.node import open_node
from p2p.wire import (
    MAX_FRAME,
    PROTOCOL_VERSION,
    SEAL_OVERHEAD,
    FrameDecoder,
    SchemaError,
    decode_message,
    encode_frame,
    encode_payload,
    frame_of,
)

LOCAL = "127.0.0.1"
SETTINGS = {
    "game": "bluff",
    "seats": 4,
    "config": None,
    "proven": True,
    "name": "Alice's Bluff table",
}


async def wait_until(predicate, timeout: float = 5.0) -> None:
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(0.01)


async def _run_host(out: dict, *args: Any, task_status=trio.TASK_STATUS_IGNORED, **kw: Any):
    out[0] = await host_lobby(*args, task_status=task_status, **kw)


async def _start_host(nursery: trio.Nursery, out: dict, seats: int, **kw: Any) -> LobbyHost:
    identity = kw.pop("identity", None) or Identity.generate()
    settings = kw.pop("settings", SETTINGS)
    kw.setdefault("node_port", 40000)
    kw.setdefault("nickname", "Alice")
    return await nursery.start(partial(_run_host, out, identity, settings, seats, **kw))


async def _run_join(
    out: dict,
    key: Any,
    port: int,
    nickname: str,
    *,
    identity: Identity | None = None,
    node_port: int = 41000,
    **kw: Any,
) -> None:
    """Join and put the SeatedTable (or the LobbyError) in ``out[key]``."""
    kw.setdefault("expect_settings", SETTINGS)
    identity = identity or Identity.generate()
    try:
        out[key] = await join_lobby(
            identity, LOCAL, port, nickname=nickname, node_port=node_port, **kw
        )
    except Exception as exc:  # the test looks at it
        out[key] = exc


async def _join(port: int, nickname: str, **kw: Any) -> SeatedTable:
    kw.setdefault("expect_settings", SETTINGS)
    kw.setdefault("node_port", 41000)
    identity = kw.pop("identity", None) or Identity.generate()
    with trio.fail_after(5):
        return await join_lobby(identity, LOCAL, port, nickname=nickname, **kw)


class RawJoiner:
    """A hand-driven lobby client: the real lobby handshake, then any message."""

    def __init__(self, stream: trio.SocketStream, identity: Identity) -> None:
        self.stream = stream
        self.identity = identity
        self.decoder = FrameDecoder(MAX_FRAME + SEAL_OVERHEAD)
        self.channel: Channel | None = None

    @classmethod
    async def open(cls, port: int, identity: Identity | None = None) -> RawJoiner:
        raw = cls(await trio.open_tcp_stream(LOCAL, port), identity or Identity.generate())
        shake = Handshake(raw.identity, TableSpec(LOBBY_ID, (raw.identity.public,)), lobby=True)
        await raw.stream.send_all(encode_frame(shake.hello()))
        while not shake.done:
            payload = await raw._payload()
            assert payload is not None, "the host closed during the handshake"
            reply = shake.receive(decode_message(payload))
            if reply is not None:
                await raw.stream.send_all(encode_frame(reply))
        raw.channel = shake.channel
        return raw

    async def _payload(self) -> bytes | None:
        while True:
            payload = self.decoder.next_frame()
            if payload is not None:
                return self.channel.open(payload) if self.channel else payload
            try:
                data = await self.stream.receive_some(1 << 16)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            if not data:
                return None
            self.decoder.feed(data)

    async def receive(self) -> dict[str, Any] | None:
        with trio.fail_after(5):
            payload = await self._payload()
        return None if payload is None else decode_lobby_message(payload)

    async def send(self, msg: dict[str, Any]) -> None:
        await self.send_payload(encode_payload(msg))

    async def send_payload(self, payload: bytes) -> None:
        assert self.channel is not None
        await self.stream.send_all(frame_of(self.channel.seal(payload)))

    async def request(self, nick: str = "raw", port: int = 41000, **over: Any) -> dict | None:
        """Read the offer, send a request (fields overridable), return the answer."""
        offer = await self.receive()
        assert offer is not None and offer["k"] == "lobby"
        signer = over.pop("signer", self.identity)
        fields = {
            "table_id": offer["table"],
            "digest": settings_digest(offer["settings"]),
            "nick": nick,
            "port": port,
            **over,
        }
        await self.send(request_message(signer, **fields))
        return await self.receive()

    async def refused_and_closed(self, answer: dict | None, code: str) -> str:
        """``answer`` is a refusal with ``code``, and the host closes afterwards."""
        assert answer is not None and answer["k"] == "refused", answer
        assert answer["code"] == code, answer
        assert await self.receive() is None
        return answer["text"]

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind((LOCAL, 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _same_table(tables: list[SeatedTable]) -> None:
    """Every seat holds the same verified table; one seat each (any order given)."""
    tables = sorted(tables, key=lambda t: t.seat)
    first = tables[0]
    for seat, t in enumerate(tables):
        t.verify()
        assert t.seat == seat
        assert (t.table, t.addresses, t.nicknames, t.settings, t.digest) == (
            first.table,
            first.addresses,
            first.nicknames,
            first.settings,
            first.digest,
        )
        assert (t.spec_signature, t.agreements) == (first.spec_signature, first.agreements)


# --------------------------------------------------------------------- whole lobbies


@pytest.mark.trio
async def test_a_host_and_three_joiners_end_with_one_agreed_table() -> None:
    host_id, ids = Identity.generate(), [Identity.generate() for _ in range(3)]
    out: dict = {}
    seen: list[LobbyState] = []
    shown: list[LobbyState] = []
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(
            nursery, out, 4, identity=host_id, node_port=40000, on_change=seen.append
        )
        assert lobby.port > 0 and lobby.state.taken == 1 and lobby.state.phase is Phase.OPEN
        for i, (ident, nick) in enumerate(zip(ids, ["Bob", "Carol", "Dave"], strict=True), 1):
            nursery.start_soon(
                partial(
                    _run_join,
                    out,
                    i,
                    lobby.port,
                    nick,
                    identity=ident,
                    node_port=40000 + i,
                    # Carol takes whatever the host shows (its digest is still bound)
                    expect_settings=None if nick == "Carol" else SETTINGS,
                    on_change=shown.append if nick == "Dave" else None,
                )
            )
            await wait_until(lambda i=i: lobby.state.taken == i + 1)
    tables = [out[i] for i in range(4)]
    _same_table(tables)
    table = tables[0]
    assert table.table.seats == (host_id.public, *(i.public for i in ids))
    assert table.addresses == tuple((LOCAL, 40000 + s) for s in range(4))
    assert table.nicknames == ("Alice", "Bob", "Carol", "Dave")
    assert table.settings == SETTINGS and table.digest == settings_digest(SETTINGS)
    assert table.table_id == lobby.table_id and len(table.table_id) == 16
    assert tables[2].peers() == {0: (LOCAL, 40000), 1: (LOCAL, 40001), 3: (LOCAL, 40003)}
    assert tables[3].own_address == (LOCAL, 40003)
    assert [s.taken for s in seen if s.phase is Phase.OPEN] == [2, 3, 4]
    assert [s.phase for s in seen[-2:]] == [Phase.AGREEING, Phase.STARTED]
    assert [p.nickname for p in shown[-1].players] == ["Alice", "Bob", "Carol", "Dave"]
    assert shown[-1].phase is Phase.STARTED
    assert not lobby.errors


@pytest.mark.trio
async def test_the_seated_table_is_enough_to_run_the_game_nodes(tmp_path) -> None:
    ids = [Identity.generate() for _ in range(3)]
    ports = _free_ports(3)
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 3, identity=ids[0], node_port=ports[0])
        for i in (1, 2):
            nursery.start_soon(
                partial(_run_join, out, i, lobby.port, f"p{i}", identity=ids[i], node_port=ports[i])
            )
            await wait_until(lambda i=i: lobby.state.taken == i + 1)
    tables = [out[i] for i in range(3)]
    _same_table(tables)
    async with AsyncExitStack() as stack:
        nodes = []
        for t in tables:
            host, port = t.own_address
            node = await stack.enter_async_context(
                open_node(ids[t.seat], t.table, home=tmp_path / f"p{t.seat}", host=host, port=port)
            )
            nodes.append(node)
        for node, t in zip(nodes, tables, strict=True):
            for seat, (host, port) in t.peers().items():
                node.add_address(seat, host, port)
        await wait_until(lambda: all(len(n.connected) == 2 for n in nodes), timeout=10)
        await nodes[2].submit({"hello": "table"})
        await wait_until(lambda: all(n.head == 1 for n in nodes), timeout=10)


@pytest.mark.trio
async def test_a_joiner_that_leaves_before_the_start_releases_its_seat() -> None:
    out: dict = {}
    carol_saw: list[LobbyState] = []

    def nicks() -> list[str]:
        return [p.nickname for p in lobby.state.players]

    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 4)
        bob = await RawJoiner.open(lobby.port)
        answer = await bob.request("Bob", 41001)
        assert answer is not None and [p["nick"] for p in answer["players"]] == ["Alice", "Bob"]
        nursery.start_soon(
            partial(
                _run_join,
                out,
                "carol",
                lobby.port,
                "Carol",
                node_port=41002,
                on_change=carol_saw.append,
            )
        )
        await wait_until(lambda: lobby.state.taken == 3)
        # Bob leaves while the lobby is open: Carol moves up from seat 2 to seat 1
        await bob.aclose()
        await wait_until(lambda: nicks() == ["Alice", "Carol"])
        await wait_until(lambda: [p.nickname for p in carol_saw[-1].players] == nicks())
        # Dave sits down, then leaves after the (full) table's spec went out
        dave = await RawJoiner.open(lobby.port)
        assert (await dave.request("Dave", 41003) or {}).get("k") == "lobby"
        nursery.start_soon(partial(_run_join, out, "eve", lobby.port, "Eve", node_port=41004))
        assert (await dave.receive() or {}).get("k") == "lobby"  # Eve sat down
        assert (await dave.receive() or {}).get("k") == "spec"
        await dave.aclose()  # before agreeing: the spec is void, Eve moves up
        await wait_until(lambda: nicks() == ["Alice", "Carol", "Eve"])
        assert lobby.state.phase is Phase.OPEN
        # Bob's nickname is free again
        nursery.start_soon(partial(_run_join, out, "bob2", lobby.port, "Bob", node_port=41005))
    assert out[0].nicknames == ("Alice", "Carol", "Eve", "Bob")
    _same_table([out[0], out["carol"], out["eve"], out["bob2"]])
    assert out["carol"].seat == 1 and out["eve"].seat == 2 and out["bob2"].seat == 3
    assert out[0].addresses[1:] == ((LOCAL, 41002), (LOCAL, 41004), (LOCAL, 41005))
    carol_seats = [p.seat for st in carol_saw for p in st.players if p.nickname == "Carol"]
    assert carol_seats[0] == 2 and carol_seats[-1] == 1  # she moved up


@pytest.mark.trio
async def test_the_host_starts_with_fewer_seats_but_not_below_the_minimum() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 6, min_seats=3)
        assert lobby.state.min_seats == 3
        with pytest.raises(NotEnoughPlayers, match="1 of the 3"):
            lobby.start()
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Bob"))
        await wait_until(lambda: lobby.state.taken == 2)
        with pytest.raises(NotEnoughPlayers, match="2 of the 3"):
            lobby.start()
        nursery.start_soon(partial(_run_join, out, 2, lobby.port, "Carol", node_port=41002))
        await wait_until(lambda: lobby.state.taken == 3)
        lobby.start()
        # a latecomer finds the table starting or started
        late: dict = {}
        await _run_join(late, 0, lobby.port, "Zed")
    # too late: the lobby is gone, or refuses (the table is starting / started)
    assert isinstance(late[0], HostUnreachable | HostLeft) or (
        isinstance(late[0], Refused) and late[0].code == "closed"
    ), late[0]
    _same_table([out[0], out[1], out[2]])
    assert out[0].n == 3 and out[0].nicknames == ("Alice", "Bob", "Carol")


# --------------------------------------------------------------------- refusals and abuse


@pytest.mark.trio
async def test_a_request_with_a_bad_signature_is_refused() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 2)
        raw = await RawJoiner.open(lobby.port)
        answer = await raw.request("Mallory", signer=Identity.generate())
        text = await raw.refused_and_closed(answer, "signature")
        assert "not signed by the key of this connection" in text
        # a signature over another port (the request altered on the way)
        raw = await RawJoiner.open(lobby.port)
        offer = await raw.receive()
        assert offer is not None
        good = request_message(
            raw.identity, offer["table"], settings_digest(SETTINGS), "Mallory", 41000
        )
        await raw.send({**good, "port": 41999})
        await raw.refused_and_closed(await raw.receive(), "signature")
        assert lobby.state.taken == 1
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Bob"))
    assert out[1].nicknames == ("Alice", "Bob")
    assert sum("refused (signature)" in e for e in lobby.errors) == 2


@pytest.mark.trio
async def test_a_request_for_other_settings_is_refused_and_a_joiner_refuses_them() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 2)
        raw = await RawJoiner.open(lobby.port)
        answer = await raw.request(digest=settings_digest({**SETTINGS, "proven": False}))
        assert "other settings" in await raw.refused_and_closed(answer, "settings")
        with pytest.raises(SettingsMismatch, match="not the ones you expect"):
            await _join(lobby.port, "Bob", expect_settings={**SETTINGS, "game": "mao"})
        # another table id or protocol version in the request
        raw = await RawJoiner.open(lobby.port)
        await raw.refused_and_closed(await raw.request(table_id=b"another table"), "table")
        raw = await RawJoiner.open(lobby.port)
        await raw.refused_and_closed(await raw.request(version=PROTOCOL_VERSION + 1), "version")
        assert lobby.state.taken == 1
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Bob"))
    assert out[1].seat == 1
    assert any("you agreed to other settings" in e for e in lobby.errors)


@pytest.mark.trio
async def test_a_seated_key_is_refused_and_a_taken_nickname_is_numbered() -> None:
    out: dict = {}
    bob = Identity.generate()
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 3)
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Bob", identity=bob))
        await wait_until(lambda: lobby.state.taken == 2)
        # the same key on a second connection: the host refuses it...
        raw = await RawJoiner.open(lobby.port, bob)
        offer = await raw.receive()
        assert offer is not None
        digest = settings_digest(SETTINGS)
        await raw.send(request_message(bob, offer["table"], digest, "Bobby", 41009))
        assert "already holds a seat" in await raw.refused_and_closed(await raw.receive(), "seated")
        # ... and join_lobby sees it already in the offer
        with pytest.raises(AlreadySeated, match="already holds seat 1"):
            await _join(lobby.port, "Bobby", identity=bob)
        # an unusable nickname is refused
        raw = await RawJoiner.open(lobby.port)
        assert "control" in await raw.refused_and_closed(await raw.request("a\x1bb"), "nickname")
        assert lobby.state.taken == 2
        # a taken one (case and width do not matter) is seated with a number
        nursery.start_soon(partial(_run_join, out, 2, lobby.port, "ｂｏｂ"))
    assert out[0].nicknames == ("Alice", "Bob", "ｂｏｂ 2") and out[1].table == out[0].table
    assert out[2].nicknames == out[0].nicknames and out[2].seat == 2


@pytest.mark.trio
async def test_the_hosts_nickname_counts_as_taken() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 2, nickname="player")
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Player"))
    assert out[0].nicknames == ("player", "Player 2") == out[1].nicknames


@pytest.mark.trio
async def test_a_full_table_refuses_and_a_silent_seat_is_dropped() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 2, agree_timeout=0.5)
        lazy = await RawJoiner.open(lobby.port)
        answer = await lazy.request("Lazy")
        assert answer is not None and answer["k"] == "lobby"
        spec = await lazy.receive()  # full: the spec comes, Lazy never agrees
        assert spec is not None and spec["k"] == "spec"
        with pytest.raises(TableFull, match="all 2 seats"):
            await _join(lobby.port, "Bob")
        raw = await RawJoiner.open(lobby.port)  # a request anyway: refused by the host
        offer = await raw.receive()
        assert offer is not None
        await raw.send(
            request_message(raw.identity, offer["table"], settings_digest(SETTINGS), "X", 41000)
        )
        await raw.refused_and_closed(await raw.receive(), "full")
        # Lazy is dropped after agree_timeout; the seat is free again
        assert "did not agree" in await lazy.refused_and_closed(await lazy.receive(), "timeout")
        await wait_until(lambda: lobby.state.taken == 1)
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Bob"))
    assert out[0].nicknames == ("Alice", "Bob")


@pytest.mark.trio
async def test_malformed_messages_close_only_that_connection() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 3)
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Bob"))
        await wait_until(lambda: lobby.state.taken == 2)
        bad_payloads = [
            b"\xc1",  # not msgpack
            encode_payload({"k": "request", "v": 1}),  # missing fields
            encode_payload({"k": "agree", "round": True, "s": b"s" * 64}),  # bool as int
            encode_payload({"k": "hello"}),  # a table message kind
            encode_payload(lobby_message("agree", round=7, s=b"s" * 64)),  # out of turn
        ]
        for payload in bad_payloads:
            raw = await RawJoiner.open(lobby.port)
            assert (await raw.receive() or {}).get("k") == "lobby"
            await raw.send_payload(payload)
            await raw.refused_and_closed(await raw.receive(), "protocol")
        # a frame over the limit, and a frame that is not sealed
        raw = await RawJoiner.open(lobby.port)
        assert (await raw.receive() or {}).get("k") == "lobby"
        await raw.stream.send_all((2000).to_bytes(4, "big"))
        await raw.refused_and_closed(await raw.receive(), "protocol")
        raw = await RawJoiner.open(lobby.port)
        assert (await raw.receive() or {}).get("k") == "lobby"
        await raw.stream.send_all(
            frame_of(encode_payload(lobby_message("agree", round=1, s=b"s" * 64)))
        )
        await raw.refused_and_closed(await raw.receive(), "protocol")
        # a seated player that misbehaves loses its seat, nobody else does
        seated = await RawJoiner.open(lobby.port)
        assert (await seated.request("Eve"))["k"] == "lobby"  # type: ignore[index]
        assert lobby.state.taken == 3
        # (full: a spec went out) - Eve answers with a request instead of agree
        assert (await seated.receive() or {}).get("k") == "spec"
        await seated.send(request_message(seated.identity, lobby.table_id, b"d" * 32, "E", 1))
        await seated.refused_and_closed(await seated.receive(), "protocol")
        await wait_until(lambda: lobby.state.taken == 2)
        nursery.start_soon(partial(_run_join, out, 2, lobby.port, "Carol"))
    _same_table([out[0], out[1], out[2]])
    assert sum("(protocol)" in e for e in lobby.errors) == len(bad_payloads) + 3


@pytest.mark.trio
async def test_a_flood_of_silent_connections_is_closed_and_the_table_still_starts() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 4, request_timeout=1.0)
        nursery.start_soon(partial(_run_join, out, 1, lobby.port, "Bob"))
        nursery.start_soon(partial(_run_join, out, 2, lobby.port, "Carol"))
        await wait_until(lambda: lobby.state.taken == 3)
        flood = [await trio.open_tcp_stream(LOCAL, lobby.port) for _ in range(200)]
        await wait_until(lambda: lobby.dropped + lobby.pending == 200)
        assert lobby.pending == PENDING_PER_HOST  # all from one address
        assert lobby.dropped == 200 - PENDING_PER_HOST

        async def eof(stream: trio.SocketStream) -> None:
            with trio.fail_after(5):
                while True:
                    # the host's hello may come first (those that got a slot)
                    try:
                        if not await stream.receive_some(4096):
                            return
                    except trio.BrokenResourceError:
                        return

        async with trio.open_nursery() as readers:
            for stream in flood:
                readers.start_soon(eof, stream)
        assert lobby.pending == 0
        # one who finished the handshake but never asks for a seat is dropped too
        raw = await RawJoiner.open(lobby.port)
        assert (await raw.receive() or {}).get("k") == "lobby"
        await raw.refused_and_closed(await raw.receive(), "timeout")
        nursery.start_soon(partial(_run_join, out, 3, lobby.port, "Dave"))
        for stream in flood:
            await trio.aclose_forcefully(stream)
    _same_table([out[i] for i in range(4)])
    assert sum("no lobby handshake within" in e for e in lobby.errors) == PENDING_PER_HOST
    assert any("no seat request within" in e for e in lobby.errors)


@pytest.mark.trio
async def test_a_host_that_changes_the_settings_after_agreement_is_refused() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 3)
        nursery.start_soon(partial(_run_join, out, "bob", lobby.port, "Bob"))
        await wait_until(lambda: lobby.state.taken == 2)
        # a host that swaps the settings behind the seated players' backs
        machine = lobby.machine
        machine.settings = {**SETTINGS, "proven": False}
        machine.digest = settings_digest(machine.settings)
        lobby.start()
        await wait_until(lambda: "bob" in out)
        await wait_until(lambda: lobby.state.taken == 1)
        nursery.cancel_scope.cancel()
    assert isinstance(out["bob"], SettingsChanged)
    assert "changed the settings after you agreed" in str(out["bob"])
    assert any("left: the table's settings are not the ones I agreed" in e for e in lobby.errors)


@pytest.mark.trio
async def test_join_errors_a_person_can_act_on() -> None:
    port = _free_ports(1)[0]  # nothing listens there
    with pytest.raises(HostUnreachable, match="cannot reach a lobby"):
        await _join(port, "Bob")
    out: dict = {}
    async with trio.open_nursery() as outer:
        async with trio.open_nursery() as inner:
            lobby = await _start_host(inner, out, 3)
            outer.start_soon(partial(_run_join, out, 1, lobby.port, "Bob"))
            await wait_until(lambda: lobby.state.taken == 2)
            with pytest.raises(
                VersionMismatch,
                match=f"speaks protocol version {PROTOCOL_VERSION}, "
                f"this program {PROTOCOL_VERSION + 1}",
            ):
                await _join(lobby.port, "Old", version=PROTOCOL_VERSION + 1)
            with pytest.raises(WrongHost, match="not the advertised AAAA-AAAA-AAAA-AAAA"):
                await _join(lobby.port, "Carol", expect_host="AAAA-AAAA-AAAA-AAAA")
            with pytest.raises(WrongHost, match="not the advertised 0101"):
                await _join(lobby.port, "Carol", expect_table=b"\x01" * 16)
            with pytest.raises(ValueError, match="nickname"):
                await _join(lobby.port, " Carol")
            inner.cancel_scope.cancel()  # the host closes its lobby before the start
    assert isinstance(out[1], HostLeft) and "closed the lobby" in str(out[1])
    # something that is not a lobby at all
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, trio.aclose_forcefully, 0, host=LOCAL)
        )
        with pytest.raises(HostUnreachable, match="not a nodealer lobby"):
            await _join(listeners[0].socket.getsockname()[1], "Bob")
        nursery.cancel_scope.cancel()


# --------------------------------------------------------------------- sans-I/O


def test_settings_digest_is_canonical() -> None:
    a = {"b": [1, (2, 3)], "a": {"y": None, "x": b"\x00"}}
    b = {"a": {"x": b"\x00", "y": None}, "b": [1, [2, 3]]}
    assert canonical_settings(a) == canonical_settings(b)
    assert settings_digest(a) == settings_digest(b)
    assert settings_digest(a) != settings_digest({**a, "c": 1})
    assert settings_digest({"n": 1}) != settings_digest({"n": True})
    assert canonical_settings({"b": 1, "a": 2}) == b"\x82\xa1a\x02\xa1b\x01"
    for bad in ({1: "x"}, {"a": {b"k": 1}}, {"a": object()}, {"a": 1 << 70}, [1]):
        with pytest.raises(ValueError):
            canonical_settings(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at most"):
        canonical_settings({"big": "x" * 20000})


def test_nicknames() -> None:
    assert nickname_problem("Alice") is None and nickname_problem("Zoë 🂡") is None
    for bad in ("", "x" * 33, " a", "a ", "a\nb", "a\u200bb", 7):
        assert nickname_problem(bad) is not None


def test_a_lobby_handshake_is_never_a_table_handshake() -> None:
    x, y = Identity.generate(), Identity.generate()
    table = TableSpec(b"t", (x.public, y.public))
    for lobby_x in (True, False):
        a, b = Handshake(x, table, lobby=lobby_x), Handshake(y, table, lobby=not lobby_x)
        reply_b = b.receive(a.hello())
        reply_a = a.receive(b.hello())
        with pytest.raises(HandshakeError, match="possession"):
            a.receive(reply_b)
        with pytest.raises(HandshakeError, match="possession"):
            b.receive(reply_a)
    # two lobby sides: any key is admitted and both channels agree
    z = Identity.generate()
    a, b = Handshake(x, table, lobby=True), Handshake(z, table, lobby=True)
    reply_b, reply_a = b.receive(a.hello()), a.receive(b.hello())
    assert a.receive(reply_b) is None and b.receive(reply_a) is None
    assert a.peer_seat is None and a.peer_key == z.public
    assert a.channel is not None and b.channel is not None
    assert b.channel.open(a.channel.seal(b"x")) == b"x"


def _machines(seats: int = 2) -> tuple[LobbyHostMachine, LobbyJoinerMachine, list]:
    host_id, joiner_id = Identity.generate(), Identity.generate()
    host = LobbyHostMachine(host_id, SETTINGS, seats, node_port=40000, address=LOCAL)
    joiner = LobbyJoinerMachine(
        joiner_id, host_id.public, nickname="Bob", node_port=41000, expect_settings=SETTINGS
    )
    effects = host.connected(1, joiner_id.public, LOCAL, LOCAL, deadline=10.0)
    (offer,) = [e.msg for e in effects if isinstance(e, Send)]
    (request,) = joiner.receive(encode_payload(offer))
    effects = host.receive(1, encode_payload(request), now=0.0)
    return host, joiner, [e.msg for e in effects if isinstance(e, Send)]


def test_the_joiner_checks_every_spec_field() -> None:
    host, joiner, sent = _machines()
    lobby, spec = sent
    assert lobby["k"] == "lobby" and spec["k"] == "spec"
    assert joiner.receive(encode_payload(lobby)) == [] and joiner.seat == 1
    other = Identity.generate()
    tampered = [
        ({"digest": settings_digest({"game": "mao"})}, SettingsChanged, "changed the settings"),
        ({"table": b"other"}, BadSpec, "another version or table"),
        ({"s": b"s" * 64}, BadSpec, "not signed by the host"),
        ({"seats": spec["seats"][:1] * 2}, BadSpec, "seat 1 is not Bob"),
        ({"seats": [spec["seats"][0], {**spec["seats"][1], "port": 9}]}, BadSpec, "your port"),
        ({"seats": [spec["seats"][0], {**spec["seats"][1], "nick": "Bo"}]}, BadSpec, "not Bob"),
        (
            {"seats": [*spec["seats"], {**spec["seats"][1], "key": other.public.raw}]},
            BadSpec,
            "3 seats",
        ),
    ]
    for change, error, text in tampered:
        clone = copy.copy(joiner)
        with pytest.raises(error, match=text) as caught:
            clone.receive(encode_payload({**spec, **change}))
        assert caught.value.reply is not None and caught.value.reply["k"] == "refused"
    (agree,) = joiner.receive(encode_payload(spec))
    effects = host.receive(1, encode_payload(agree), now=0.0)
    (start,) = [e.msg for e in effects if isinstance(e, Send)]
    assert any(isinstance(e, Close) for e in effects) and host.result is not None
    # a start whose agreements do not verify is refused
    clone = copy.copy(joiner)
    with pytest.raises(BadSpec, match="did not agree"):
        clone.receive(encode_payload({**start, "agreements": start["agreements"][::-1]}))
    assert joiner.receive(encode_payload(start)) == []
    assert joiner.result is not None and joiner.result.table == host.result.table


def test_the_joiner_refuses_a_lobby_with_changed_settings_and_messages_out_of_turn() -> None:
    _, joiner, (lobby, _spec) = _machines()
    changed = {**lobby, "settings": {**SETTINGS, "proven": False}}
    with pytest.raises(SettingsChanged):
        joiner.receive(encode_payload(changed))
    _, joiner, (lobby, _spec) = _machines()
    with pytest.raises(BadHostMessage, match="out of turn"):
        joiner.receive(encode_payload(lobby_message("start", agreements=[b"s" * 64] * 2)))
    with pytest.raises(BadHostMessage, match="malformed"):
        joiner.receive(encode_payload({**lobby, "players": []}))
    p0, p1 = lobby["players"]
    swapped = [{**p0, "fp": p1["fp"]}, {**p1, "fp": p0["fp"]}]
    with pytest.raises(BadHostMessage, match="seat 0 is not the host"):
        joiner.receive(encode_payload({**lobby, "players": swapped}))
    with pytest.raises(SchemaError):
        decode_lobby_message(encode_payload({**lobby, "settings": {"a": {b"k": 1}}}))


def test_a_stale_agreement_is_ignored_and_the_host_machine_times_out_seats() -> None:
    host, joiner, (lobby,) = _machines(seats=3)  # not full yet: no spec
    joiner.receive(encode_payload(lobby))
    assert host.tick(100.0) == []  # seated players have no request deadline
    host.request_start(now=0.0)
    assert host.phase is Phase.AGREEING and host.spec is not None
    stale = lobby_message("agree", round=0, s=b"s" * 64)
    assert host.receive(1, encode_payload(stale), now=0.0) == []
    effects = host.tick(100.0)
    codes = [e.msg.get("code") for e in effects if isinstance(e, Send)]
    assert "timeout" in codes and host.taken == 1 and host.phase is Phase.OPEN


def test_a_joiner_agrees_to_one_spec_per_seat_list() -> None:
    """Review of issue 11: a host collected each joiner's agreement to two
    specs (other addresses for the other seats) and started each joiner with
    another table. A second spec without a new `lobby` is out of turn."""
    _, joiner, (lobby, spec) = _machines()
    joiner.receive(encode_payload(lobby))
    joiner.receive(encode_payload(spec))  # agreed
    other = {**spec, "round": spec["round"] + 1}
    with pytest.raises(BadHostMessage, match="out of turn"):
        joiner.receive(encode_payload(other))
    # after a new seat list (someone left) a new spec is fine again
    _, joiner, (lobby, spec) = _machines()
    joiner.receive(encode_payload(lobby))
    joiner.receive(encode_payload(spec))
    joiner.receive(encode_payload(lobby))
    assert joiner.stage == "seated"


def test_a_lobby_at_a_table_id_the_joiner_holds_is_refused() -> None:
    _, joiner, (lobby, _spec) = _machines()
    joiner.refuse_table = lambda table_id: "already held" if table_id == lobby["table"] else None
    with pytest.raises(WrongHost, match="already held") as caught:
        joiner.receive(encode_payload(lobby))
    assert caught.value.reply is not None and caught.value.reply["code"] == "table"


@pytest.mark.parametrize(
    "nick",
    [
        "аlice",  # Cyrillic а among Latin letters
        "alice\u034f",
        "\u3164",
        "\u2800",
        "e\u0301\u0301\u0301\u0301",
        "bob (K3QF-7ZPA-M2XD-4RTY)",
    ],
)
def test_look_alike_and_blank_nicknames_are_refused(nick: str) -> None:
    assert nickname_problem(nick) is not None


@pytest.mark.parametrize("nick", ["José", "李雷", "Σοφία", "Иван", "R2-D2"])
def test_real_names_are_fine(nick: str) -> None:
    assert nickname_problem(nick) is None
