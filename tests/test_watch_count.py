"""The watch port's count request (p2p/watch.py, protocol.md §8): a seat
asks how many watch without being a spectator; a malformed request gets a
one-line refusal and changes nothing; requests are rate-limited; a
spectator is still served after the request window."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import msgpack
import pytest
import trio

from p2p.watch import (
    ASK_BURST,
    ASK_RATE,
    FRAME,
    PROTOCOL_VERSION,
    Budget,
    Frames,
    Spectator,
    WatchError,
    WatchServer,
    ask_count,
    count_answer,
    frame,
)

TABLE = b"t" * 16


async def _exchange(address: tuple[str, int], sent: bytes) -> dict:
    """Send ``sent`` at once, read the port's one answer until it closes."""
    stream = await trio.open_tcp_stream(*address)
    got = b""
    async with stream:
        await stream.send_all(sent)
        with trio.fail_after(10):
            while True:
                data = await stream.receive_some(65536)
                if not data:
                    break
                got += data
    records = Frames().feed(got)
    assert len(records) == 1, records  # one answer, then closed
    return records[0]


def _framed_raw(payload: bytes) -> bytes:
    return FRAME.pack(len(payload), zlib.crc32(payload)) + payload


MALFORMED = {
    "garbage": b"\xff" * 40,
    "a bad CRC-32": FRAME.pack(3, 0) + msgpack.packb({"t": 1}),
    "not msgpack": _framed_raw(b"\xc1\xc1"),
    "another kind": frame({"t": "submit", "v": PROTOCOL_VERSION}),
    "an extra field": frame({"t": "count", "v": PROTOCOL_VERSION, "table": TABLE}),
    "too long": frame({"t": "count", "v": PROTOCOL_VERSION, "x": "y" * 300}),
    "a huge length": struct.pack(">II", 1 << 30, 0),
    "two records": frame({"t": "count", "v": PROTOCOL_VERSION}) * 2,
    "a half record": frame({"t": "count", "v": PROTOCOL_VERSION})[:-2],
}


@pytest.mark.trio
async def test_a_malformed_count_request_is_refused_in_one_line(tmp_path: Path) -> None:
    server = WatchServer(TABLE, tmp_path / "log", max_spectators=4)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        assert server.address is not None
        for what, sent in MALFORMED.items():
            await trio.sleep(1 / ASK_RATE)  # within the rate limit: refused for what it is
            answer = await _exchange(server.address, sent)
            assert answer["t"] == "refused", what
            reason = answer["reason"]
            assert isinstance(reason, str) and reason and "\n" not in reason, what
        await trio.sleep(1 / ASK_RATE)
        answer = await _exchange(server.address, frame({"t": "count", "v": 99}))
        assert answer["t"] == "refused" and "version 99" in answer["reason"]
        # nothing changed: no spectator counted, none dropped, the count still answered
        stats = server.stats
        assert (stats.watching, stats.served, stats.dropped_talking) == (0, 0, 0)
        assert stats.count_refused == len(MALFORMED) + 1 and stats.counted == 0
        heard = await ask_count(*server.address, table=TABLE)
        assert (heard.table, heard.watching, heard.max) == (TABLE, 0, 4)
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_the_count_follows_the_spectators_and_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "log").write_bytes(frame({"t": "table", "v": PROTOCOL_VERSION, "table": TABLE}))
    server = WatchServer(TABLE, tmp_path / "log", max_spectators=4)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        assert server.address is not None
        assert (await ask_count(*server.address)).watching == 0
        spectator = Spectator(*server.address, table=TABLE)
        hello = await spectator.connect()  # served after the window, as before
        assert (hello.watching, hello.max) == (1, 4)
        assert (await ask_count(*server.address, table=TABLE)).watching == 1
        assert server.stats.served == 1  # the requests were never spectators
        with pytest.raises(WatchError, match="another table"):
            await ask_count(*server.address, table=b"u" * 16)
        await spectator.aclose()
        with trio.fail_after(10):
            while server.stats.watching:
                await trio.sleep(0.05)
        assert (await ask_count(*server.address)).watching == 0
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_count_requests_are_rate_limited(tmp_path: Path) -> None:
    server = WatchServer(TABLE, tmp_path / "log", max_spectators=4)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        assert server.address is not None
        refused = 0
        for _ in range(ASK_BURST + 8):  # far faster than 3 a second
            try:
                await ask_count(*server.address)
            except WatchError as exc:
                assert "too many count requests" in str(exc)
                refused += 1
        assert refused >= 1 and server.stats.count_refused == refused
        assert server.stats.watching == 0
        nursery.cancel_scope.cancel()


def test_a_budget_refills_at_its_rate() -> None:
    budget = Budget(2, 1.0, now=0.0)
    assert budget.take(0.0) and budget.take(0.0) and not budget.take(0.0)
    assert not budget.take(0.5) and budget.take(1.6) and not budget.take(1.6)


def test_count_answer_refuses_what_is_not_a_request() -> None:
    for record in (None, [], {"t": "count"}, {"t": "watch", "v": 2}, {"t": "count", "v": "2"}):
        answer = count_answer(record, TABLE, 1, 4)
        assert answer["t"] == "refused" and "\n" not in answer["reason"], record
    assert count_answer({"t": "count", "v": PROTOCOL_VERSION}, TABLE, 1, 4) == {
        "t": "count", "v": PROTOCOL_VERSION, "table": TABLE, "watching": 1, "max": 4}  # fmt: skip


@pytest.mark.trio
async def test_a_seat_that_cannot_reach_the_port_hears_nothing(tmp_path: Path) -> None:
    """follow_count says None (the header shows the limit) while the host's
    watch port cannot be reached, and the count once it can."""
    from tests.terminal import free_port
    from tui.watch_serve import follow_count

    heard: list[int | None] = []
    port = free_port()  # nobody listens there
    with trio.move_on_after(1):
        await follow_count("127.0.0.1", port, TABLE, heard.append)
    assert heard == [None]
    server = WatchServer(TABLE, tmp_path / "log", host="127.0.0.1", port=0, max_spectators=4)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        assert server.address is not None
        with trio.move_on_after(5):
            await follow_count("127.0.0.1", server.address[1], TABLE, heard.append)
        nursery.cancel_scope.cancel()
    assert heard[1:] and set(heard[1:]) == {0}


@pytest.mark.trio
async def test_a_flood_of_silent_connections_is_bounded(tmp_path: Path) -> None:
    """(third review, A5) connections that never finish a request hold no
    more than OPEN_PER_ADDRESS descriptors per address (OPEN_SPARE in all):
    one more is closed at once, and another address is still answered."""
    import socket

    from p2p.watch import OPEN_PER_ADDRESS

    server = WatchServer(TABLE, tmp_path / "log", host="127.0.0.1", max_spectators=4)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        assert server.address is not None
        held = []
        for _ in range(OPEN_PER_ADDRESS):
            stream = await trio.open_tcp_stream(*server.address)
            await stream.send_all(b"\x00")  # the start of a request, never finished
            held.append(stream)
        with trio.fail_after(5):
            while server._open < OPEN_PER_ADDRESS:
                await trio.sleep(0.01)
        extra = await trio.open_tcp_stream(*server.address)
        with trio.fail_after(2):  # closed at once, not after the request's timeout
            assert await extra.receive_some(10) == b""
        await extra.aclose()
        assert server._open == OPEN_PER_ADDRESS
        # another source address (all of 127/8 is loopback on Linux) is answered
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            await sock.bind(("127.0.0.2", 0))
        except OSError:
            pytest.skip("no 127.0.0.2 on this system's loopback")
        await sock.connect(server.address)
        other = trio.SocketStream(sock)
        await other.send_all(frame({"t": "count", "v": PROTOCOL_VERSION}))
        got = b""
        with trio.fail_after(10):
            while data := await other.receive_some(65536):
                got += data
        await other.aclose()
        assert Frames().feed(got)[0]["t"] == "count"
        for stream in held:
            await stream.aclose()
        nursery.cancel_scope.cancel()
