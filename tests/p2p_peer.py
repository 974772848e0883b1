"""A peer in its own process, for the crash test (tests/test_p2p_crash.py).

    NODEALER_HOME=DIR python -m tests.p2p_peer TABLE.json HOST:PORT|- EVENTS TOTAL

Loads (or creates) the identity in NODEALER_HOME, prints ``LOADED <head>
<hash>`` for the log it found on disk and ``LISTEN <port>``, connects to
HOST:PORT (with ``-``: only to the peers its store remembers), submits
its events ``{"seat": s, "i": counter}`` until its counter reaches EVENTS
(continuing where a previous run stopped; events signed before a crash are
resubmitted by the log itself), waits for the log
to hold TOTAL entries, prints ``DONE <head> <hash>`` and keeps running until
stdin closes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

from p2p.envelope import TableSpec
from p2p.identity import Identity, PeerKey, config_dir
from p2p.node import open_node


def _say(*words: object) -> None:
    print(*words, flush=True)


async def main(table_file: str, address: str, events: int, total: int) -> None:
    spec = json.loads(Path(table_file).read_text())
    table = TableSpec(
        bytes.fromhex(spec["table"]), tuple(PeerKey(bytes.fromhex(k)) for k in spec["seats"])
    )
    identity = Identity.load_or_create(config_dir())
    async with open_node(identity, table, timeout=spec.get("timeout", 2.0)) as node:
        _say("LOADED", node.head, node.log.head_hash.hex())
        _say("LISTEN", node.listen_port)
        with trio.fail_after(20):
            while not node.connected:
                if address != "-":
                    host, port = address.rsplit(":", 1)
                    try:
                        await node.connect(host, int(port))
                    except OSError:
                        pass
                await trio.sleep(0.05)
        while (counter := node.log.next_own_counter) < events:
            await node.submit({"seat": node.seat, "i": counter})
            await trio.sleep(0.002)
        await node.wait_for_head(total)
        _say("DONE", node.head, node.log.head_hash.hex())
        await trio.to_thread.run_sync(sys.stdin.read)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
