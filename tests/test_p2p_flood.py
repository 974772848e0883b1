"""Real nodes against a seat that floods, stalls or lies about addresses:
memory stays bounded, a stuck connection ends, nobody is redirected."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import msgpack
import pytest
import trio

import p2p.connection
import p2p.node
from p2p.envelope import Entry, Event, EventError, Head, TableSpec
from p2p.handshake import HandshakeError
from p2p.identity import Identity
from p2p.wire import MAX_BODY, WireError, message
from tests.p2p_mesh import RawPeer, make_table, mesh, wait_until
from tests.test_p2p_crash import PARENT_EVENTS, Child


@pytest.mark.trio
async def test_a_peer_that_asks_for_everything_and_never_reads_is_dropped(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(p2p.connection, "MAX_QUEUED", 2 << 20)
    ids, table = make_table(3)
    async with mesh(ids, table, tmp_path, seats=[0, 1]) as nodes:
        for k in range(40):
            await nodes[k % 2].submit({"k": k, "pad": "x" * 20_000})
        target = nodes[1]
        await wait_until(lambda: target.head == 40)
        raw = await RawPeer.connect(target)
        await raw.handshake(ids[2], table)
        await wait_until(lambda: 2 in target.connected)
        for _ in range(10):  # each asks for ~0.8 MB; it never reads a byte
            try:
                await raw.send(message("fetch", **{"from": 1, "n": 4096}))
            except trio.BrokenResourceError:
                break  # already dropped
        peak = 0

        def gone() -> bool:
            nonlocal peak
            conn = target._conns.get(2)
            peak = max(peak, conn.queued if conn is not None else 0)
            return 2 not in target.connected

        await wait_until(gone, timeout=10)
        assert peak <= 2 << 20
        await raw.aclose()
        # the honest pair goes on
        await nodes[0].submit("after")
        await wait_until(lambda: all(x.head == 41 for x in nodes))


@pytest.mark.trio
async def test_an_address_that_answers_as_another_seat_is_refused(tmp_path) -> None:
    ids, table = make_table(4)
    async with mesh(ids, table, tmp_path, seats=[0, 2]) as nodes:
        target, other = nodes
        original = target._conns[2]
        raw = await RawPeer.connect(target)
        await raw.handshake(ids[3], table)
        # seat 3 says seat 1 listens where seat 2 actually does
        lie = [{"seat": 1, "host": "127.0.0.1", "port": other.listen_port}]
        await raw.send(message("addrs", peers=lie))
        await wait_until(
            lambda: any(
                isinstance(e.error, HandshakeError) and "not seat 1" in str(e.error)
                for e in target.errors
            )
        )
        await trio.sleep(1.5)
        assert target._conns[2] is original  # seat 2's connection was never replaced
        assert 1 not in target.addresses  # and nobody dials the lie again
        # a known address is never overwritten by hearsay
        await raw.send(message("addrs", peers=[{"seat": 2, "host": "10.9.9.9", "port": 9}]))
        await trio.sleep(0.2)
        assert target.addresses[2] == ("127.0.0.1", other.listen_port)
        await raw.aclose()


@pytest.mark.trio
async def test_a_body_too_big_for_the_wire_is_refused_by_submit(tmp_path) -> None:
    ids, table = make_table(2)
    async with mesh(ids, table, tmp_path) as nodes:
        for node in nodes:
            with pytest.raises(ValueError, match="at most"):
                await node.submit("x" * MAX_BODY)
            assert node.log.own_pending == []
        await nodes[1].submit({"ok": 1})
        await wait_until(lambda: all(x.head == 1 for x in nodes))
        assert not any(x.errors for x in nodes)
        assert msgpack.unpackb(nodes[0].chain[0].event.body) == {"ok": 1}


@pytest.mark.trio
async def test_dialling_an_address_that_never_answers_gives_up_in_time(tmp_path) -> None:
    import socket

    ids, table = make_table(2)
    sink = socket.socket()
    sink.bind(("127.0.0.1", 0))
    sink.listen(0)  # one connection fills the queue; later SYNs go unanswered
    port = sink.getsockname()[1]
    first = socket.create_connection(("127.0.0.1", port))
    try:
        async with mesh(ids, table, tmp_path, seats=[0]) as (node,):
            with trio.fail_after(p2p.node.HANDSHAKE_TIMEOUT + 3):
                with pytest.raises(OSError):
                    await node.connect("127.0.0.1", port)
    finally:
        first.close()
        sink.close()


def _nonsense(rng, table, me, node) -> dict:
    """A schema-valid message signed (where signed) by seat ``me``."""
    kind = rng.choice(["entry", "ack", "beat", "vote", "newterm", "fetch", "submit", "proof"])
    seq = rng.randint(0, node.head + 3)
    h = rng.choice([*node.log.hashes, bytes(32)])
    term = rng.choice([0, 1, 2, me, me + table.n, 2**32 - 1])
    if kind == "fetch":
        return message("fetch", **{"from": max(seq, 1), "n": rng.randint(1, 4096)})
    if kind in ("ack", "beat", "vote", "newterm"):
        head = Head.create(table, node_ids[me], kind, term, seq, rng.randint(0, 3), h)
        msg = head.to_wire()
        if kind == "newterm":
            msg["votes"] = []
        return msg
    ev = Event.create(table, node_ids[me], me, rng.randint(0, 3), msgpack.packb(rng.random()))
    if kind == "submit":
        return {"k": "submit", "ev": ev.to_wire()}
    entry = Entry.create(table, node_ids[me], max(seq, 1), me + table.n * rng.randint(0, 2), h, ev)
    if kind == "entry":
        return {"k": "entry", "e": entry.to_wire()}
    other = Entry.create(table, node_ids[me], entry.seq, entry.term, h, ev)
    return {"k": "proof", "a": entry.to_wire(), "b": other.to_wire()}


node_ids: list = []


@pytest.mark.trio
async def test_a_seat_sending_signed_nonsense_never_breaks_the_others(tmp_path) -> None:
    rng = random.Random(7)
    ids, table = make_table(4)
    node_ids[:] = ids
    async with mesh(ids, table, tmp_path, seats=[0, 1, 2]) as nodes:

        async def chaos() -> None:
            for _ in range(30):
                target = rng.choice(nodes)
                raw = await RawPeer.connect(target)
                try:
                    await raw.handshake(ids[3], table)
                    for _ in range(rng.randint(1, 15)):
                        await raw.send(_nonsense(rng, table, 3, target))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # dropped for it, as it should be
                await raw.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(chaos)
            for k in range(30):
                await nodes[k % 3].submit({"k": k})
                await trio.sleep(0.01)
        await wait_until(lambda: len({x.head for x in nodes}) == 1 and nodes[0].head >= 30)
        await wait_until(lambda: all(x.chain == nodes[0].chain for x in nodes))
        honest = [msgpack.unpackb(e.event.body) for e in nodes[0].chain if e.event.author != 3]
        assert sorted(b["k"] for b in honest) == list(range(30))
        for node in nodes:
            for error in node.errors:
                assert isinstance(error.error, (WireError, EventError)), error
        assert all(len(x.connected) >= 2 for x in nodes)


@pytest.mark.trio
async def test_connections_that_never_say_hello_cannot_pile_up(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(p2p.node, "HANDSHAKE_TIMEOUT", 1.5)
    ids, table = make_table(2)
    async with mesh(ids, table, tmp_path, seats=[0]) as (node,):
        silent = [await RawPeer.connect(node) for _ in range(p2p.node.PENDING_PER_HOST)]
        await wait_until(lambda: node._pending_total == p2p.node.PENDING_PER_HOST, 1.0)
        # one too many from this host: that host's oldest handshake is closed
        # at once (well before the 1.5 s handshake timeout), not the newcomer
        extra = await RawPeer.connect(node)
        with trio.fail_after(1.0):
            assert await silent[0].closed_by_peer(timeout=1.0)
        assert node._pending_total <= p2p.node.PENDING_PER_HOST + 1
        for raw in [*silent[1:], extra]:  # the rest are cut off by the handshake timeout
            with trio.fail_after(p2p.node.HANDSHAKE_TIMEOUT + 2):
                assert await raw.closed_by_peer(timeout=p2p.node.HANDSHAKE_TIMEOUT + 2)
            await raw.aclose()
        await silent[0].aclose()
        honest = await RawPeer.connect(node)
        await honest.handshake(ids[1], table)
        await wait_until(lambda: 1 in node.connected)
        await honest.aclose()


@pytest.mark.trio
async def test_a_seat_gets_through_when_strangers_hold_every_handshake_slot(tmp_path) -> None:
    """(third review, A5c) strangers on several addresses hold every
    handshake slot (PENDING_TOTAL) and never say hello: a seat that lost its
    link still gets through at once, the oldest stranger's slot giving way."""
    ids, table = make_table(2)
    per_host, total = p2p.node.PENDING_PER_HOST, p2p.node.PENDING_TOTAL
    async with mesh(ids, table, tmp_path, seats=[0]) as (node,):
        target = node.listen_address
        strangers = []
        for k in range(total):
            sock = trio.socket.socket()
            try:
                await sock.bind((f"127.0.0.{2 + k // per_host}", 0))
            except OSError:
                pytest.skip("needs 127.0.0.2… on the loopback (Linux)")
            await sock.connect(target)
            strangers.append(trio.SocketStream(sock))
        await wait_until(lambda: node._pending_total == total, 2.0)
        honest = await RawPeer.connect(node)
        with trio.fail_after(3):  # not after a stranger's handshake timeout (5 s)
            await honest.handshake(ids[1], table)
            await wait_until(lambda: 1 in node.connected)
        assert node._pending_total <= total
        await honest.aclose()
        for stream in strangers:
            await stream.aclose()


@pytest.mark.trio
async def test_a_seat_gets_through_when_a_stranger_on_its_address_holds_its_slots(
    tmp_path,
) -> None:
    """(fourth review, A4b) a stranger on the seat's own address (a NAT, a
    shared machine) holds every handshake slot of that host: the seat's
    handshake still gets through, that host's oldest giving way."""
    ids, table = make_table(2)
    async with mesh(ids, table, tmp_path, seats=[0]) as (node,):
        strangers = [await RawPeer.connect(node) for _ in range(p2p.node.PENDING_PER_HOST)]
        await wait_until(lambda: node._pending_total == p2p.node.PENDING_PER_HOST, 2.0)
        honest = await RawPeer.connect(node)
        with trio.fail_after(3):
            await honest.handshake(ids[1], table)
            await wait_until(lambda: 1 in node.connected)
        await honest.aclose()
        for raw in strangers:
            await raw.aclose()


def _peak_rss(pid: int) -> int:
    """Peak resident set of a process, in bytes (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


FLOOD_ADDRESSES = 40
FLOOD_PER_ADDRESS = 16
FLOOD_BOUND = 24 << 20  # what the flood may add to the peer's peak memory


async def _flood_from(
    host: str, target: tuple[str, int], stop: trio.Event, sent: list[int]
) -> None:
    """Connections from ``host`` that announce a 1 MiB frame before any
    handshake and send as much of it as they can, reconnecting when cut."""

    async def one() -> None:
        while not stop.is_set():
            sock = trio.socket.socket()
            try:
                await sock.bind((host, 0))
                await sock.connect(target)
                stream = trio.SocketStream(sock)
                await stream.send_all(struct.pack(">I", 1 << 20))
                for _ in range(16):
                    await stream.send_all(b"\0" * (1 << 16))
                    sent[0] += 1 << 16
                await stop.wait()  # hold it open, buffered, until the end
            except (OSError, trio.BrokenResourceError):
                await trio.sleep(0.01)  # cut: come again
            finally:
                sock.close()

    async with trio.open_nursery() as nursery:
        for _ in range(FLOOD_PER_ADDRESS):
            nursery.start_soon(one)


@pytest.mark.trio
@pytest.mark.slow
async def test_strangers_flooding_handshakes_cannot_blow_up_a_peers_memory(tmp_path) -> None:
    """Issue 10: 40 loopback addresses × 16 connections, each announcing a
    1 MiB frame before any handshake, against a peer in its own process:
    its peak memory stays within FLOOD_BOUND of what it used before, its
    stderr holds a handful of lines, not one per connection, and the table
    goes on to the end."""
    ids = [Identity.generate() for _ in range(3)]
    child_home = tmp_path / "child"
    child_key = Identity.load_or_create(child_home).public
    table = TableSpec(b"flood-table", (*[i.public for i in ids], child_key))
    table_file = tmp_path / "table.json"
    table_file.write_text(
        json.dumps({"table": table.table_id.hex(), "seats": [k.raw.hex() for k in table.seats]})
    )
    async with mesh(ids, table, tmp_path, timeout=2.0) as nodes:
        child = Child(child_home, table_file, nodes[0].listen_address, stderr=True)
        try:
            port = int((await child.expect("LISTEN"))[0])
            await wait_until(lambda: 3 in nodes[0].connected, timeout=20)
            before = _peak_rss(child.proc.pid)
            started = trio.current_time()
            stop, sent = trio.Event(), [0]
            async with trio.open_nursery() as nursery:
                for k in range(FLOOD_ADDRESSES):
                    host = f"127.0.{1 + k // 200}.{10 + k % 200}"
                    nursery.start_soon(_flood_from, host, ("127.0.0.1", port), stop, sent)
                for k in range(PARENT_EVENTS):
                    await nodes[k % 3].submit({"k": k})
                    await trio.sleep(0.01)
                await child.expect("DONE", timeout=120)
                peak = _peak_rss(child.proc.pid)
                stop.set()
            elapsed = trio.current_time() - started
            print(
                f"flood: {sent[0] >> 20} MiB sent; peer peak {peak >> 20} MiB "
                f"(before {before >> 20} MiB)"
            )
            assert peak - before < FLOOD_BOUND, (before, peak)
        finally:
            child.stop()
        # at most WARN_BURST lines and one summary per window, however many
        # connections were refused (thousands)
        lines = child.stderr_lines()
        windows = elapsed / p2p.node.WARN_WINDOW + 2
        assert len(lines) <= windows * (p2p.node.WARN_BURST + 1), (elapsed, lines[:10])
