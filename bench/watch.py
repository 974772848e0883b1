"""Benchmark: what spectators cost a table (the watch service, protocol.md §8).

    python bench/watch.py [--repeat 3] [--spectators 0,8] [--game bluff] [--proven]

A 3-seat table of real peers on 127.0.0.1 (every seat in this process, so
that the watch service shares the seats' event loop), seat 0 serving its log
on a watch port; N spectators connect as soon as the port opens (the setup, before the
first deal) and read (and
check and replay) every record to the end, in one child process (as the
room's screens would be other machines). Per N it prints the game's wall
time and time per log entry (median of the repeats), the bytes the watch
port sent and how long after the game's end every spectator had been sent
the whole log. Last line JSON."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p.watch import Spectator, WatchServer
from table.bot_table import play_bot_table
from tui.watch_feed import WatchFeed


async def spectate(where: Path, n: int) -> None:
    """The child, started (and its imports done) before the table: once the
    file ``where`` names the port, ``n`` spectators, each checking and
    replaying every record."""
    while not where.is_file() or not where.read_text().endswith("\n"):
        await trio.sleep(0.005)
    host, port = where.read_text().split()

    async def watch() -> None:
        spectator = Spectator(host, int(port))
        await spectator.connect()
        feed = WatchFeed(None)
        async for batch in spectator.batches():
            for record in batch:
                feed.feed(record)

    async with trio.open_nursery() as nursery:
        for _ in range(n):
            nursery.start_soon(watch)


async def one(game: str, spectators: int, proven: bool, home: Path) -> dict[str, float]:
    servers: list[WatchServer] = []
    out: dict[str, float] = {}
    async with trio.open_nursery() as nursery:

        where = home / "port"
        if spectators:
            nursery.start_soon(partial(trio.run_process, [sys.executable, __file__,
                               "--spectate", f"{where}:{spectators}"]))  # fmt: skip
            await trio.sleep(3)  # its imports done before the table starts

        async def serve(server: WatchServer) -> None:
            await nursery.start(server.run)
            where.write_text(f"{server.address[0]} {server.address[1]}\n")

        def on_session(seat: int, session: object) -> None:
            if seat == 0:
                node = session.node  # type: ignore[attr-defined]
                server = WatchServer(node.table.table_id, node.store.log_path,
                                     max_spectators=max(spectators, 1))  # fmt: skip
                servers.append(server)
                nursery.start_soon(serve, server)

        start = time.perf_counter()
        peers = await play_bot_table(game, 3, home, proven=proven, seed=1, processes=0,
                                     on_session=on_session)  # fmt: skip
        out["game_s"] = time.perf_counter() - start
        ended = time.perf_counter()
        await servers[0].drain(30)
        out["caught_up_s"] = time.perf_counter() - ended
        out["entries"] = peers[0].result.entries
        out["ms_per_entry"] = 1000 * out["game_s"] / out["entries"]
        out["bytes_sent"] = servers[0].stats.bytes_sent
        nursery.cancel_scope.cancel()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spectators", default="0,8")
    parser.add_argument("--game", default="bluff")
    parser.add_argument("--proven", action="store_true")
    parser.add_argument("--spectate", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spectate is not None:
        where, n = args.spectate.rsplit(":", 1)
        trio.run(spectate, Path(where), int(n))
        return
    results = {}
    for n in (int(x) for x in args.spectators.split(",")):
        runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as home:
                runs.append(trio.run(one, args.game, n, args.proven, Path(home)))
        row = {
            "game_s_median": round(statistics.median(r["game_s"] for r in runs), 2),
            "game_s_runs": [round(r["game_s"], 2) for r in runs],
            "ms_per_entry_median": round(statistics.median(r["ms_per_entry"] for r in runs), 2),
            "entries_median": statistics.median(r["entries"] for r in runs),
            "bytes_sent_median": statistics.median(r["bytes_sent"] for r in runs),
            "caught_up_s_max": round(max(r["caught_up_s"] for r in runs), 3),
        }
        results[n] = row
        print(f"{n} spectators: game {row['game_s_median']} s (runs {row['game_s_runs']}), "
              f"{row['ms_per_entry_median']} ms per entry, "
              f"{row['entries_median']:.0f} entries, {row['bytes_sent_median']:.0f} bytes sent, "
              f"last spectator whole {row['caught_up_s_max']} s after the end")  # fmt: skip
    print(json.dumps({"bench": "watch", "game": args.game, "proven": args.proven,
                      "results": results}))  # fmt: skip


if __name__ == "__main__":
    main()
