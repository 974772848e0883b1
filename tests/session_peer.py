"""One seat of a networked table in its own process, for the session crash test.

    NODEALER_HOME=DIR python -m tests.session_peer TABLE.json HOST:PORT|-

TABLE.json: ``{"table": hex, "seats": [hex key, ...], "game": name,
"config": engine config data (optional), "proven": bool, "seed": int,
"time_scale": float}``. Loads (or creates) the
identity in NODEALER_HOME, prints ``LOADED <head>`` (entries found on disk)
and ``LISTEN <port>``, connects to HOST:PORT (``-``: only to the peers its
store remembers), plays its seat with a sensible bot, printing ``UPDATE
<kind> <seq>`` as the game goes, then ``DONE <outcome or fault>``; it waits
until every peer acknowledged its whole log and keeps running until stdin
closes.

With ``NODEALER_TEST_DIE`` naming a file of words (one per line: a deal
message type such as ``shuffle``, ``keys``, ``relock``, ``handover``,
``final``, or a move kind such as ``verdict``), the peer SIGKILLs itself
just before it would sign the first body of each kind, once per word (the
word is struck from the file first): a crash at an exact duty.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity, PeerKey, config_dir
from p2p.node import open_node
from table.session import TableSession


def _say(*words: object) -> None:
    print(*words, flush=True)


class DyingSession(TableSession):
    """Kills its own process before signing a body of a listed kind."""

    async def _publish(self, body: dict[str, Any]) -> None:
        path = os.environ.get("NODEALER_TEST_DIE")
        if path:
            kind = body.get("msg", {}).get("type") if body["t"] == "deal" else None
            kind = kind or (body.get("event") or {}).get("kind") or body["t"]
            words = Path(path).read_text().split()
            if kind in words:
                words.remove(kind)
                with open(path, "w") as f:
                    f.write("\n".join(words))
                    f.flush()
                    os.fsync(f.fileno())
                _say("DYING", kind)
                os.kill(os.getpid(), signal.SIGKILL)
        await super()._publish(body)


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
        session = DyingSession(
            node,
            game=spec["game"],
            config=spec.get("config"),
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
