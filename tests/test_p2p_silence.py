"""A seat whose link goes silent (a pulled cable, a Wi-Fi drop: nothing is
closed, nothing arrives) is noticed, its connections are closed and
redialled, and once the link is back it is on the table again within 5 s
whatever the outage's length (issue 27, item 3). The outage is a
fault-injecting relay on 127.0.0.1 (tests/fault_relay.py) that black-holes
every connection of one seat both ways, then heals at TCP's pace."""

from __future__ import annotations

import pytest
import trio

from p2p.keepalive import keep_alive
from p2p.node import PING, Node
from p2p.wire import decode_message
from tests.fault_relay import FaultyNet, next_retransmission
from tests.p2p_mesh import make_table, mesh, wait_until

BACK_WITHIN = 5.0  # the target: on the table again this long after the heal


def test_retransmissions_back_off_like_tcp() -> None:
    # the relay's model of a lost segment: 0.2 s, then doubling
    assert next_retransmission(0.0, 0.1, 0.2) == pytest.approx(0.2)
    assert next_retransmission(0.0, 7.0, 0.2) == pytest.approx(12.6)
    assert next_retransmission(10.0, 70.0, 0.2) == pytest.approx(10 + 102.2)


def test_the_ping_is_an_empty_addrs() -> None:
    # no new message: every peer of this protocol version accepts it as is
    assert decode_message(PING) == {"k": "addrs", "peers": []}


async def _cut_and_heal(tmp_path, outage: float, cut: int) -> float:
    """A 3-seat mesh at the default timeout, all through relays; seat
    ``cut`` is black-holed for ``outage`` seconds while the others go on and
    it signs an event; returns how long after the heal every seat held every
    event."""
    ids, table = make_table(3)
    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        async with mesh(ids, table, tmp_path, timeout=3.0, node_class=net.node_class()) as nodes:
            for node in nodes:
                await node.submit({"before": node.seat})
            await wait_until(lambda: all(n.head == 3 for n in nodes), timeout=20)
            others = [n for n in nodes if n.seat != cut]
            away = nodes[cut]
            net.cut(cut)
            cut_at = trio.current_time()
            # the others notice the silence within about two beat intervals
            # (not the kernel's minutes): they close and redial
            await wait_until(lambda: all(cut not in n.connected for n in others), timeout=6)
            await wait_until(lambda: not away.connected, timeout=6)
            await trio.sleep_until(cut_at + outage / 2)
            await away.submit({"during": cut})  # owed while away: queued at the seat
            for node in others:
                await node.submit({"during": node.seat})
            await trio.sleep_until(cut_at + outage)
            assert not away.connected  # the cut held: nothing went through
            net.heal(cut)
            healed = trio.current_time()
            await wait_until(lambda: all(n.head == 6 for n in nodes) and _same(nodes), timeout=60)
            back = trio.current_time() - healed
            bodies = [item.body for item in [*await _items(nodes[0])]]
            assert {"during": cut} in bodies
        relays.cancel_scope.cancel()
    return back


def _same(nodes: list[Node]) -> bool:
    return len({n.log.head_hash for n in nodes}) == 1


async def _items(node: Node) -> list:
    out = []
    async for item in node.entries():
        out.append(item)
        if item.seq == node.head:
            return out
    return out


@pytest.mark.trio
async def test_a_follower_cut_for_7_s_is_back_within_5_s(tmp_path) -> None:
    # 7 s: the kernel alone would next retransmit ~12.6 s after the first
    # loss, some 5.6 s after the heal; the node redials instead
    back = await _cut_and_heal(tmp_path, outage=7.0, cut=2)
    assert back <= BACK_WITHIN


@pytest.mark.slow
@pytest.mark.trio
async def test_the_sequencer_cut_for_20_s_is_back_within_5_s(tmp_path) -> None:
    # the others elect a new sequencer meanwhile; the old one comes back as
    # a follower (kernel alone: next retransmission ~25 s after the loss)
    back = await _cut_and_heal(tmp_path, outage=20.0, cut=0)
    assert back <= BACK_WITHIN


@pytest.mark.trio
async def test_a_quiet_healthy_link_is_kept(tmp_path) -> None:
    # nothing to say for many silence allowances: the pings keep the
    # connections, none is closed and redialled
    ids, table = make_table(3)
    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        async with mesh(ids, table, tmp_path, timeout=1.0, node_class=net.node_class()) as nodes:
            opened = net.opened
            await trio.sleep(5 * nodes[0].silence)
            assert all(len(n.connected) == 2 for n in nodes)
            assert net.opened == opened  # no connection was redialled
        relays.cancel_scope.cancel()


@pytest.mark.trio
async def test_connections_get_tcp_keepalive(tmp_path) -> None:
    import socket

    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    stream = await trio.open_tcp_stream("127.0.0.1", listener.socket.getsockname()[1])
    keep_alive(stream)
    sock = stream.socket
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
    if hasattr(socket, "TCP_USER_TIMEOUT"):
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) > 0
    await stream.aclose()
    await listener.aclose()
