"""One seat of a networked table in its own process, for the session crash test.

    NODEALER_HOME=DIR python -m tests.session_peer TABLE.json HOST:PORT|-

TABLE.json: ``{"table": hex, "seats": [hex key, ...], "game": name,
"proven": bool, "seed": int, "time_scale": float}``. Loads (or creates) the
identity in NODEALER_HOME, prints ``LOADED <head>`` (entries found on disk)
and ``LISTEN <port>``, connects to HOST:PORT (``-``: only to the peers its
store remembers), plays its seat with a sensible bot, printing ``UPDATE
<kind> <seq>`` as the game goes, then ``DONE <outcome or fault>``; it waits
until every peer acknowledged its whole log and keeps running until stdin
closes.
"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path

import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity, PeerKey, config_dir
from p2p.node import open_node
from p2p.session import TableSession


def _say(*words: object) -> None:
    print(*words, flush=True)


async def main(table_file: str, address: str) -> None:
    spec = json.loads(Path(table_file).read_text())
    table = TableSpec(
        bytes.fromhex(spec["table"]), tuple(PeerKey(bytes.fromhex(k)) for k in spec["seats"])
    )
    identity = Identity.load_or_create(config_dir())
    async with open_node(identity, table, timeout=2.0) as node:
        _say("LOADED", node.head)
        _say("LISTEN", node.listen_port)
        if address != "-":
            host, port = address.rsplit(":", 1)
            with trio.fail_after(20):
                while not node.connected:
                    try:
                        await node.connect(host, int(port))
                    except OSError:
                        await trio.sleep(0.05)
        bot = sensible_bots(spec["game"], table.n, spec["seed"], salt_source=secrets.token_bytes)
        session = TableSession(
            node,
            game=spec["game"],
            proven=spec["proven"],
            player=bot[node.seat],
            time_scale=spec["time_scale"],
            on_update=lambda u: _say("UPDATE", u.kind, u.seq),
        )
        result = await session.run()
        _say("DONE", json.dumps({"clean": result.clean, "text": str(result)}))
        await session.wait_for_peers(timeout=30)
        await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], sys.argv[2])
