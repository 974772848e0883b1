"""A host with no seat relays the handshake between two seats (a spoofed
address): the handshake may complete, but the relay can neither read nor
inject anything afterwards (the connection is bound to both ephemeral keys)."""

from __future__ import annotations

import pytest
import trio

from p2p.wire import MalformedFrame, encode_frame, message
from tests.p2p_mesh import RawPeer, make_table, wait_until


@pytest.mark.trio
async def test_a_relayed_handshake_gives_the_relay_nothing(tmp_path) -> None:
    from p2p.node import open_node

    ids, table = make_table(2)
    async with open_node(ids[0], table, home=tmp_path / "x") as x:
        async with open_node(ids[1], table, home=tmp_path / "y") as y:
            await x.submit({"secret": "x's first move"})
            await wait_until(lambda: x.head == 1)
            to_x, to_y = await RawPeer.connect(x), await RawPeer.connect(y)
            hello_x = await to_x.receive()
            await to_y.send(hello_x)  # "I am X" (X's own hello, X's nonce)
            hello_y = await to_y.receive()
            auth_y = await to_y.receive()
            await to_x.send(hello_y)  # "I am Y"
            auth_x = await to_x.receive()
            await to_x.send(auth_y)
            await to_y.send(auth_x)
            await wait_until(lambda: 1 in x.connected and 0 in y.connected)
            errors = len(x.errors)
            # the relay asks X for its log "as Y" and reads what comes back
            await to_x.send_raw(encode_frame(message("fetch", **{"from": 1, "n": 10})))
            seen = b""
            with trio.move_on_after(1.0):
                while True:
                    data = await to_x.stream.receive_some(1 << 16)
                    if not data:
                        break
                    seen += data
            assert b"x's first move" not in seen
            await wait_until(lambda: len(x.errors) > errors)
            assert isinstance(x.errors[-1].error, MalformedFrame)
            assert "authentic" in str(x.errors[-1].error)
            for raw in (to_x, to_y):
                await raw.aclose()
