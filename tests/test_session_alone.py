"""Nothing waits forever (issue 27, item 6): a seat that holds the complete
log of a finished game, with a body of its own that no sequencer will ever
take (every other seat has gone home), ends with what it holds - here a
clean result - instead of waiting for ever. Two real peers on 127.0.0.1
play Bluff to the end and leave; one comes back alone, having signed one
more body."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import Node
from table.session import TableSession

LOCAL, SEATS, SCALE = "127.0.0.1", 2, 0.02


@pytest.mark.trio
async def test_a_seat_alone_with_a_finished_log_ends(tmp_path: Path) -> None:
    ids = [Identity.generate() for _ in range(SEATS)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))

    def session(seat: int, node: Node, **options) -> TableSession:
        bot = sensible_bots("bluff", SEATS, 3, salt_source=secrets.token_bytes)[seat]
        return TableSession(
            node, game="bluff", proven=False, player=bot, time_scale=SCALE, **options
        )

    first: dict[int, object] = {}
    listening = trio.Event()
    port: list[int] = []

    async def play(seat: int) -> None:
        node = Node(ids[seat], spec, home=tmp_path / f"p{seat}", host=LOCAL, timeout=2.0)
        try:
            async with trio.open_nursery() as inner:
                await inner.start(node.run)
                if seat == 0:
                    port.append(node.listen_port)
                    listening.set()
                else:
                    await listening.wait()
                    await node.connect(LOCAL, port[0])
                table = session(seat, node)
                first[seat] = await table.run()
                await table.wait_for_peers(timeout=10.0)
                inner.cancel_scope.cancel()
        finally:
            node.store.close()

    async with trio.open_nursery() as nursery:
        for seat in range(SEATS):
            nursery.start_soon(play, seat)
    assert all(result.clean for result in first.values()), first

    # seat 1 comes back alone, with one more body signed that nobody sequences
    node = Node(ids[1], spec, home=tmp_path / "p1", host=LOCAL, timeout=2.0)
    try:
        async with trio.open_nursery() as inner:
            await inner.start(node.run)
            head = node.head
            await node.submit({"t": "overdue", "seat": 0, "at": 0})
            table = session(1, node, final_wait=1.0)
            with trio.fail_after(30):  # before: it waited for ever
                result = await table.run()
            inner.cancel_scope.cancel()
    finally:
        node.store.close()
    assert node.head == head  # the body was never sequenced
    assert result.clean, result
    assert result.entries == head
