"""Benchmark: ``nodealer verify`` on whole saved logs, against its op floor.

    python bench/verify.py [--repeat 3] [--logs DIR] [--mao-rounds 20]

Generates two real logs (``play_bot_table``: separate peers, real TCP on
127.0.0.1, proven deals): a 6-peer Mao game of 20 rounds and a 9-peer
Bomb game, into a temporary folder (``--logs DIR`` keeps them there and
reuses them on the next run). Then times :func:`table.verify.verify_log`
on each (both cores: the default worker threads) and counts what it does:
the group operations (``mental_poker.group.count_ops``) and the Ed25519
signature checks (two per entry: the author's and the sequencer's). The
*op floor* is those counts × the raw cost of each operation measured in
this run (plain loop, one thread, PyNaCl called directly), sampled right
next to each timed run so that load from other processes hits both alike.
``overhead_vs_op_floor`` = verify time ÷ floor (below 1 means the two cores
more than pay for the Python around the operations).

The last line is one JSON object: ``mao_s``, ``bomb_s``,
``overhead_vs_op_floor`` (the larger of the two logs') and more.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from bench.shuffle import raw_costs
from mental_poker import group
from p2p.identity import Identity
from table.session import play_bot_table
from table.verify import Report, verify_log

LOGS = {"mao": ("mao", 6, 20), "bomb": ("bomb", 9, None)}


def _load() -> float | None:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def signature_cost(n: int = 1000) -> float:
    """Seconds per Ed25519 signature check (``PeerKey.verify``), one thread."""
    key = Identity.generate()
    message = bytes(300)
    signature = key.sign(message)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            key.public.verify(signature, message)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def make_log(name: str, folder: Path) -> Path:
    game, seats, rounds = LOGS[name]
    path = folder / f"{name}-{seats}p{'' if rounds is None else f'-{rounds}r'}.log"
    if path.exists():
        return path
    home = Path(tempfile.mkdtemp(prefix=f"nodealer-bench-verify-{name}-"))
    try:
        t0 = time.perf_counter()
        peers = trio.run(
            lambda: play_bot_table(game, seats, home, seed=1, time_scale=0.01, rounds=rounds)
        )
        mine = peers[0]
        assert mine.result.clean, mine.result
        shutil.copyfile(mine.log_path, path)
        print(f"  made {path.name}: {seats} peers, {time.perf_counter() - t0:.1f} s")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return path


def counted(path: Path) -> tuple[Report, Counter[str]]:
    with group.count_ops() as ops:
        report = verify_log(path)
    counts = Counter(ops)
    counts["sig"] = 2 * report.entries
    return report, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--logs", type=Path, default=None, help="keep (and reuse) the logs here")
    parser.add_argument("--mao-rounds", type=int, default=20)
    args = parser.parse_args(argv)
    LOGS["mao"] = ("mao", 6, args.mao_rounds)
    folder = args.logs or Path(tempfile.mkdtemp(prefix="nodealer-bench-verify-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"{group.workers()} worker threads; load average: {_load()}")
    summary: dict[str, Any] = {"cores": group.workers()}
    try:
        paths = {name: make_log(name, folder) for name in LOGS}
        overheads = []
        for name, path in paths.items():
            report, ops = counted(path)
            assert report.exit_code == 0, report.lines()
            times, floors, serials = [], [], []
            for _ in range(args.repeat):
                raw = dict(raw_costs(300), sig=signature_cost(300))
                t0 = time.perf_counter()
                verify_log(path)
                times.append(time.perf_counter() - t0)
                floors.append(sum(ops[k] * raw[k] for k in ops))
            cores = group.workers()
            group.set_workers(1)
            try:
                for _ in range(max(1, args.repeat // 2)):
                    t0 = time.perf_counter()
                    verify_log(path)
                    serials.append(time.perf_counter() - t0)
            finally:
                group.set_workers(cores)
            took, floor = statistics.median(times), statistics.median(floors)
            overhead = statistics.median(t / f for t, f in zip(times, floors, strict=True))
            overheads.append(overhead)
            counts = " ".join(f"{k}={ops[k]}" for k in sorted(ops))
            print(
                f"  {name}: {report.entries} entries, {report.counts.get('deals')} deals: "
                f"{took:6.2f} s on {cores} threads ({statistics.median(serials):6.2f} s on 1); "
                f"op floor {floor:6.2f} s (x{overhead:.2f}); ops {counts}"
            )
            summary[f"{name}_s"] = round(took, 3)
            summary[f"{name}_1thread_s"] = round(statistics.median(serials), 3)
            summary[f"{name}_floor_s"] = round(floor, 3)
            summary[f"{name}_overhead"] = round(overhead, 3)
            summary[f"{name}_entries"] = report.entries
        summary["overhead_vs_op_floor"] = round(max(overheads), 3)
    finally:
        if args.logs is None:
            shutil.rmtree(folder, ignore_errors=True)
    summary["load_average_1min"] = _load()
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
