"""Reconnect time after a link comes back: how long after the heal a seat
that was black-holed is on the table again.

    python bench/reconnect.py [--outages 5 20 60] [--seats 3] [--cut 2] [--without-watch]

A table of ``--seats`` real nodes on 127.0.0.1 (default timeout 3 s: beats
every 0.75 s), every connection through a fault-injecting relay
(tests/fault_relay.py): seat ``--cut`` (2: a follower; 0: the sequencer of
term 0) is black-holed both ways, nothing closed, for each outage in turn;
meanwhile every seat signs one event (the cut one's waits at the seat). The
relay heals at TCP's pace (a connection that lost segments resumes at its
next backed-off retransmission). Reported per outage, after the heal:

* ``connected``: the cut seat has a connection to every other seat again;
* ``on the table``: every seat holds the same log with every event, the one
  the cut seat signed while away included.

``--without-watch`` switches the node's watch on silent connections off
(what the kernel alone does: the old behaviour) for comparison. The last
line is one JSON object. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def one_outage(outage: float, seats: int, cut: int, home: Path) -> dict[str, float]:
    import trio

    from tests.fault_relay import FaultyNet
    from tests.p2p_mesh import make_table, mesh, wait_until

    ids, table = make_table(seats, table_id=b"bench-reconnect")
    out: dict[str, float] = {}
    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        async with mesh(ids, table, home, timeout=3.0, node_class=net.node_class()) as nodes:
            for node in nodes:
                await node.submit({"before": node.seat})
            await wait_until(lambda: all(n.head == seats for n in nodes), timeout=30)
            net.cut(cut)
            cut_at = trio.current_time()
            await trio.sleep(min(2.0, outage / 2))
            for node in nodes:
                await node.submit({"during": node.seat})
            await trio.sleep_until(cut_at + outage)
            net.heal(cut)
            healed = trio.current_time()
            away, others = nodes[cut], [n for n in nodes if n is not nodes[cut]]

            def connected() -> bool:
                return len(away.connected) == seats - 1 and all(cut in n.connected for n in others)

            def on_table() -> bool:
                heads = {(n.head, n.log.head_hash) for n in nodes}
                return len(heads) == 1 and nodes[0].head == 2 * seats

            while not (on_table() and "connected" in out):
                if "connected" not in out and connected():
                    out["connected"] = trio.current_time() - healed
                if trio.current_time() - healed > 300:
                    raise TimeoutError("not back within 300 s of the heal")
                await trio.sleep(0.01)
            out["on_table"] = trio.current_time() - healed
            out["term"] = max(n.term for n in nodes)
        relays.cancel_scope.cancel()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outages", type=float, nargs="+", default=[5.0, 20.0, 60.0])
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--cut", type=int, default=2, help="the seat black-holed")
    parser.add_argument("--without-watch", action="store_true", help="the kernel alone")
    args = parser.parse_args()

    import logging

    import trio

    from p2p.node import Node

    logging.basicConfig(level=logging.ERROR)
    if args.without_watch:
        Node._watch_connections = lambda self, now: None  # type: ignore[method-assign]
    results = {}
    for outage in args.outages:
        with tempfile.TemporaryDirectory(prefix="nodealer-reconnect-") as home:
            got = trio.run(one_outage, outage, args.seats, args.cut, Path(home))
        results[f"{outage:g}"] = got
        print(
            f"outage {outage:5.1f} s (seat {args.cut} of {args.seats}): connected again "
            f"{got['connected']:5.2f} s after the heal, on the table {got['on_table']:5.2f} s "
            f"after (term {got['term']:g})",
            flush=True,
        )
    print(json.dumps({"without_watch": args.without_watch, "after_heal_s": results}))


if __name__ == "__main__":
    main()
