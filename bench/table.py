"""Benchmark: a whole table of separate peer processes on this machine.

    python bench/table.py [--repeat 2] [--sizes 4,9] [--game bomb] [--versions 3,2]

The Bomb game (by default) with 4 and with 9 peers, each peer its own
process (``python -m table.bot_process``: its own identity, store, node and
session), a real TCP mesh on 127.0.0.1, proven deals: every proof is checked
by every peer. The peers start, dial seat 0 and wait until the mesh is
complete; then the parent says ``go`` and the host (seat 0) signs the setup:
that is the start of the table. Every peer plays a sensible bot to the end
of the game, makes its final reveals and audits every deal.

Per table size it prints
- ``deal``: wall time from the start of the table to the first player move
  in the host's log (the shuffle, lock and dealing of the first deal, every
  proof checked by every peer, all the peers sharing this machine's cores);
- ``peer cpu``: the CPU seconds each peer's process spent over that time
  (what a player waits for at a LAN party, one machine each): the busiest;
- ``audit``: wall time of the end-of-game audit at each peer (every deal of
  the game re-checked from the revealed keys), median and max, and its CPU
  seconds; ``end``: from game over to the audit's end (the final reveals
  going round and being checked, then the audit);
- the game's length and number of deals (the reshuffles);
- right after each table, side by side (this machine's speed changes from
  minute to minute under other guests' load, so every table is priced at
  the speed it had): the *op floor*, the group operations one peer performs
  for the passes of one deal (its own proofs made, every other seat's
  verified), counted in this process and priced at the CPU cost of each
  operation measured then; and *bare*, the CPU seconds those passes take in
  this process, the same proof code with no network, no log and no session.
  No scheduling can make a peer's CPU less than the floor, nor, with every
  peer on this machine, the deal shorter than the peers' floors over the
  cores; the busiest peer's CPU over each is printed.

Both protocol versions run side by side in one run (``--versions``, by
default ``3,2``: in each repeat and size, a v3 table then a v2 one, so load
from other processes hits them alike): v3 tables deal over secp256k1, v2
over edwards25519 (protocol.md §1.1).

The last line is one JSON object: ``deal_4p_s``, ``deal_9p_s``,
``peer_cpu_9p_s``, ``audit_9p_s`` (medians over the repeats), the floors
``peer_cpu_floor_9p_s``, ``deal_floor_9p_s``, ``peer_cpu_bare_9p_s``, the
ratios ``peer_cpu_over_floor_9p`` and ``peer_cpu_over_bare_9p`` and more,
for the first version of ``--versions`` (the new group); the same keys with
``_v2`` appended for version 2, and ``new_vs_old_peer_cpu_9p`` (the
median over repeats of v3's busiest peer CPU over v2's, same repeat).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from mental_poker.groups import group_for
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.wire import PROTOCOL_VERSION
from table.bot_process import PeerPlan, PeerProcess, workers_for
from table.bot_table import PeerResult


def _load() -> float | None:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


async def one_table(
    game: str,
    seats: int,
    home: Path,
    seed: int,
    time_scale: float,
    workers: int | None,
    version: int = PROTOCOL_VERSION,
    proven: bool = True,
) -> dict:
    import secrets

    homes = [home / f"peer{s}" for s in range(seats)]
    identities = [Identity.load_or_create(h) for h in homes]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in identities), version)
    results: dict[int, PeerResult] = {}

    def plan(seat: int, connect: tuple[str, int] | None) -> PeerPlan:
        return PeerPlan(
            PeerPlan.pack(spec),
            (seat,),
            (str(homes[seat]),),
            game,
            proven=proven,
            seed=seed,
            time_scale=time_scale,
            final_wait=60.0,
            duty_wait=60.0,
            connect=connect,
            wait_go=True,
            workers=workers_for(seats) if workers is None else workers,
        )

    def got(peer: PeerResult) -> None:
        results[peer.seat] = peer

    async with trio.open_nursery() as nursery:
        host = PeerProcess(plan(0, None), on_result=got)
        await nursery.start(host.run)
        await host.listening.wait()
        address = ("127.0.0.1", host.ports[0])
        children = [host]
        for seat in range(1, seats):
            child = PeerProcess(plan(seat, address), on_result=got)
            children.append(await nursery.start(child.run))
        for child in children:
            await child.ready.wait()
        go = time.time()
        for child in children:
            await child.go()
        while len(results) < seats:
            await trio.sleep(0.05)
        for child in children:
            await child.stop()
    peers = [results[s] for s in range(seats)]
    for peer in peers:
        assert peer.result.clean, f"seat {peer.seat}: {peer.result}"
    t = [p.result.timings for p in peers]
    return {
        "deal": t[0]["move_t"] - go,
        "peer_cpu": max(x["move_cpu"] - x["start_cpu"] for x in t),
        "peer_cpu_median": statistics.median(x["move_cpu"] - x["start_cpu"] for x in t),
        "audit": statistics.median(x["done_t"] - x["audit_t"] for x in t),
        "audit_max": max(x["done_t"] - x["audit_t"] for x in t),
        "audit_cpu": max(x["done_cpu"] - x["audit_cpu"] for x in t),
        "end": statistics.median(x["done_t"] - x["over_t"] for x in t),
        "game": t[0]["done_t"] - go,
        "deals": t[0]["deals"],
        "entries": peers[0].result.entries,
    }


def cpu_costs(version: int, n: int = 300) -> dict[str, float]:
    """CPU seconds per group operation of this version's group (this
    thread's CPU time, best of 3: the peers' CPU figures are CPU time too,
    and load from other processes does not inflate it as it does a
    wall-clock loop)."""
    from bench.shuffle import raw_costs
    from mental_poker.groups import group_for

    return raw_costs(n, clock=time.thread_time, g=group_for(version))


def op_floor(game: str, seats: int, version: int) -> tuple[Counter[str], int, float]:
    """The group operations one peer performs for the passes of one deal of
    ``game`` at ``seats`` seats (its own shuffle and lock made and proven,
    every other seat's proofs verified, as a session does), counted in this
    process: with the raw cost of each operation, what no scheduling can
    beat. Also the deck size n, and the CPU seconds that peer's part took
    here (*bare*: the same proof code in one process, with no network, no
    log, no session)."""
    from mental_poker import group
    from mental_poker.context import Context
    from mental_poker.deal import DealTable
    from mental_poker.deck import Deck
    from mental_poker.messages import DealSetup
    from mental_poker.seat import DealSecrets, make_lock, make_shuffle
    from table.machine import TableSetup

    table = TableSetup(b"op-floor", game, seats, version=version)
    cards = [c.index for c in table.engine().deck(table.decoded_config())]
    context = Context(b"op-floor", 0, group=table.group)
    setup = DealSetup(context, seats, Deck.of(cards, table.group), True)
    secrets = [DealSecrets.generate(setup, s) for s in range(seats)]
    mine = DealTable(setup, own_seat=0)
    ops: Counter[str] = Counter()
    cpu = 0.0
    for make in (make_shuffle, make_lock):
        for seat in range(seats):
            if seat == 0:
                with group.count_ops() as counted:
                    t0 = time.process_time()
                    message = make(setup, secrets[seat], mine.expected_input())
                    cpu += time.process_time() - t0
                ops.update(counted)
            else:
                message = make(setup, secrets[seat], mine.expected_input())
            with group.count_ops() as counted:
                t0 = time.process_time()
                assert mine.feed(message)
                cpu += time.process_time() - t0
            ops.update(counted)
    return ops, len(cards), cpu


def side_by_side(game: str, seats: int, workers: int, version: int) -> dict[str, Any]:
    """Right after a table: the raw cost of each operation and one peer's
    bare passes (with the peers' group threads), so that each table's
    figures are priced at the speed this machine had for it."""
    from mental_poker import group

    raw = cpu_costs(version)
    previous = group.workers()
    group.set_workers(workers)
    try:
        ops, cards, bare = op_floor(game, seats, version)
    finally:
        group.set_workers(previous)
    return {
        "floor": sum(ops[k] * raw[k] for k in ops),
        "bare": bare,
        "ops": ops,
        "cards": cards,
        "raw": raw,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sizes", default="4,9")
    parser.add_argument("--game", default="bomb")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-scale", type=float, default=0.02)
    parser.add_argument(
        "--versions",
        default=f"{PROTOCOL_VERSION},2",
        help="protocol versions side by side (the first: the headline keys; others: _vN keys)",
    )
    parser.add_argument(
        "--unproven",
        action="store_true",
        help="unproven deals (where the time goes: the log's rounds without the proofs)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="group threads per peer process (default: the cores divided among the peers)",
    )
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    versions = [int(x) for x in args.versions.split(",")]
    kind = "unproven" if args.unproven else "proven"
    print(f"{args.game}, {kind} deals, one process per peer; load average: {_load()}")
    runs: dict[tuple[int, int], list[dict[str, Any]]] = {
        (v, n): [] for v in versions for n in sizes
    }
    ops_seen: dict[tuple[int, int], tuple[Counter[str], int]] = {}
    for r in range(args.repeat):
        for n in sizes:
            for v in versions if r % 2 == 0 else versions[::-1]:
                with tempfile.TemporaryDirectory(prefix="nodealer-bench-table-") as tmp:
                    seed = args.seed + r
                    figures = trio.run(
                        one_table,
                        args.game,
                        n,
                        Path(tmp),
                        seed,
                        args.time_scale,
                        args.workers,
                        v,
                        not args.unproven,
                    )
                workers = workers_for(n) if args.workers is None else args.workers
                side = side_by_side(args.game, n, workers, v)
                figures["floor"] = side["floor"]
                figures["bare"] = side["bare"]
                figures["var_us"] = side["raw"]["var"] * 1e6
                figures["over_floor"] = figures["peer_cpu"] / side["floor"]
                figures["over_bare"] = figures["peer_cpu"] / side["bare"]
                ops_seen[v, n] = (side["ops"], side["cards"])
                runs[v, n].append(figures)
                print(
                    f"  v{v} ({group_for(v).name}), {n} peers: deal {figures['deal']:6.2f} s, "
                    f"busiest peer cpu {figures['peer_cpu']:5.2f} s (median "
                    f"{figures['peer_cpu_median']:5.2f}), audit {figures['audit']:5.2f} s (max "
                    f"{figures['audit_max']:5.2f}, cpu {figures['audit_cpu']:5.2f}), end "
                    f"{figures['end']:5.2f} s; game {figures['game']:5.1f} s, "
                    f"{figures['deals']:.0f} deals, {figures['entries']} entries; load {_load()}\n"
                    f"    right after it: one peer's passes bare (one process, no network) "
                    f"{figures['bare']:5.2f} CPU s, op floor {figures['floor']:5.2f} "
                    f"(var {figures['var_us']:.0f} µs): busiest peer = "
                    f"{figures['over_bare']:.2f} x bare = {figures['over_floor']:.2f} x floor"
                )
    summary: dict[str, Any] = {"game": args.game, "versions": versions}
    cores = os.cpu_count() or 1
    for v in versions:
        tag = "" if v == versions[0] else f"_v{v}"
        for n in sizes:
            got = runs[v, n]
            med = {k: statistics.median(f[k] for f in got) for k in got[0]}
            summary[f"deal_{n}p_s{tag}"] = round(med["deal"], 3)
            summary[f"peer_cpu_{n}p_s{tag}"] = round(med["peer_cpu"], 3)
            summary[f"audit_{n}p_s{tag}"] = round(med["audit"], 3)
            summary[f"audit_cpu_{n}p_s{tag}"] = round(med["audit_cpu"], 3)
            summary[f"end_{n}p_s{tag}"] = round(med["end"], 3)
            summary[f"deals_{n}p{tag}"] = med["deals"]
            ops, cards = ops_seen[v, n]
            counts = " ".join(f"{k}={ops[k]}" for k in sorted(ops))
            print(
                f"  v{v} op floor, {n} peers, n = {cards}: one peer's passes of one deal "
                f"{counts} = {med['floor']:.2f} CPU s at raw cost (var {med['var_us']:.0f} µs);"
                f" the whole table on {cores} cores >= {n * med['floor'] / cores:.2f} s"
            )
            summary[f"peer_cpu_floor_{n}p_s{tag}"] = round(med["floor"], 3)
            summary[f"peer_cpu_bare_{n}p_s{tag}"] = round(med["bare"], 3)
            summary[f"peer_cpu_over_floor_{n}p{tag}"] = round(med["over_floor"], 3)
            summary[f"peer_cpu_over_bare_{n}p{tag}"] = round(med["over_bare"], 3)
            summary[f"deal_floor_{n}p_s{tag}"] = round(n * med["floor"] / cores, 3)
            summary[f"peer_var_mults_{n}p{tag}"] = ops["var"]
            summary[f"var_mult_us_{n}p{tag}"] = round(med["var_us"], 1)
    if len(versions) > 1:
        new, old = versions[0], versions[1]
        for n in sizes:
            pairs = zip(runs[new, n], runs[old, n], strict=True)
            ratio = statistics.median(a["peer_cpu"] / b["peer_cpu"] for a, b in pairs)
            summary[f"new_vs_old_peer_cpu_{n}p"] = round(ratio, 3)
            pairs = zip(runs[new, n], runs[old, n], strict=True)
            summary[f"new_vs_old_deal_{n}p"] = round(
                statistics.median(a["deal"] / b["deal"] for a, b in pairs), 3
            )
    summary["load_average_1min"] = _load()
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
