"""Benchmark: memory and time of a seat and of ``nodealer verify`` as a game grows.

    python bench/verify.py [--rounds 5,10,20] [--cache DIR]
                           [--baseline-python-path /work/main] [--floor]

For each size (6-seat Mao, ``--rounds`` rounds each) it plays a real game
(``play_bot_table``: separate peers, real TCP on 127.0.0.1, proven deals;
seat 0 in the playing process, the other five in bot child processes),
cached under ``--cache`` (default: a folder in the temp dir, kept between
runs: the 20-round game takes minutes). Each code tree (this one and, with
``--baseline-python-path``, another checkout, e.g. main) plays its own games
so that *its* seat is measured; every log is then verified by every tree,
each run in a fresh process:

* ``seat_mb``: peak RSS (VmHWM) of the playing process: seat 0, its node and
  the table's driver; ``bots_mb``: the larger bot child (three seats on one
  shared table);
* ``verify_s``, ``verify_mb``: wall time and peak RSS of ``verify_log`` on
  the log (``ru_maxrss`` from ``wait4``, imports included: the larger of the
  verify process and its read-ahead process, ``table/precheck.py``);
  ``verify_cpu_s``: both processes' CPU; ``verify_own_mb`` /
  ``verify_helper_mb``, ``verify_helper_cpu_s``: each process apart (their
  RSS counts the shared libraries twice);
* per MB of log: peak RSS ÷ log size, and the *slope* between two sizes
  (ΔRSS ÷ Δlog): near 0 when memory is bounded by the table, not the game.

``--floor`` also times ``verify_log`` against its op floor as before (the
group operations and signature checks it does × their raw cost here).

The last line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEATS = 6

# Run in a child with PYTHONPATH (and cwd) set to the tree under test.
PLAY = r"""
import json, resource, shutil, sys, tempfile, time
from pathlib import Path
import trio
from table.bot_table import play_bot_table

def hwm():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

rounds, out = int(sys.argv[1]), Path(sys.argv[2])
home = Path(tempfile.mkdtemp(prefix="nodealer-bench-memory-"))
try:
    start = hwm()
    t0 = time.perf_counter()
    peers = trio.run(lambda: play_bot_table(
        "mao", SEATS, home, seed=1, time_scale=0.01, rounds=rounds))
    took = time.perf_counter() - t0
    mine = peers[0]
    assert mine.result.clean, str(mine.result)
    shutil.copyfile(mine.log_path, out)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"play_s": took, "seat_mb": hwm(), "start_mb": start,
                      "bots_mb": children, "log_bytes": out.stat().st_size}))
finally:
    shutil.rmtree(home, ignore_errors=True)
""".replace("SEATS", str(SEATS))

VERIFY = r"""
import json, resource, sys, time
from pathlib import Path
from table.verify import verify_log
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
report = verify_log(Path(sys.argv[1]))
took = time.perf_counter() - t0
own = resource.getrusage(resource.RUSAGE_SELF)
helper = resource.getrusage(resource.RUSAGE_CHILDREN)  # the read-ahead process, if any
print(json.dumps({"verify_s": took, "exit": report.exit_code, "entries": report.entries,
                  "counts": report.counts, "faults": [str(f) for f in report.faults],
                  "problem": report.problem, "import_mb": start,
                  "own_mb": own.ru_maxrss / 1024, "own_cpu_s": own.ru_utime + own.ru_stime,
                  "helper_mb": helper.ru_maxrss / 1024,
                  "helper_cpu_s": helper.ru_utime + helper.ru_stime}))
"""


def _load() -> float | None:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def run_in(tree: Path, code: str, *args: str) -> tuple[dict[str, Any], float]:
    """Run ``code`` with ``tree`` first on the path; its JSON line (with
    ``cpu_s``: that process's user + system time) and its peak RSS in MB
    (that process alone, ``wait4``)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    process = subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=tree, env=env, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    out = process.stdout.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{tree}: exit {process.returncode}\n{out}")
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # bytes / KiB
    result = json.loads(out.strip().splitlines()[-1])
    result["cpu_s"] = usage.ru_utime + usage.ru_stime
    return result, usage.ru_maxrss / scale


def play(tree: Path, label: str, rounds: int, cache: Path) -> dict[str, Any]:
    """One game played by ``tree`` (cached): its log and the seat figures."""
    log = cache / f"mao-{SEATS}p-{rounds}r-{label}.log"
    facts = log.with_suffix(".json")
    if log.exists() and facts.exists():
        return json.loads(facts.read_text()) | {"log": str(log)}
    print(f"  playing {rounds} rounds with {label} ({tree}) ...", flush=True)
    result, _ = run_in(tree, PLAY, str(rounds), str(log))
    facts.write_text(json.dumps(result))
    print(f"    {result['play_s']:.0f} s, log {result['log_bytes'] / 1e6:.2f} MB", flush=True)
    return result | {"log": str(log)}


def verify(tree: Path, log: str, repeat: int) -> dict[str, Any]:
    runs = [run_in(tree, VERIFY, log) for _ in range(repeat)]
    first = runs[0][0]
    assert first["exit"] == 0, first
    return {
        "verify_s": statistics.median(r["verify_s"] for r, _ in runs),
        "verify_cpu_s": statistics.median(r["cpu_s"] for r, _ in runs),
        "verify_mb": max(mb for _, mb in runs),
        "import_mb": first["import_mb"],
        # older trees print neither (no read-ahead process)
        "own_mb": max(r.get("own_mb", mb) for r, mb in runs),
        "helper_mb": max(r.get("helper_mb", 0.0) for r, _ in runs),
        "helper_cpu_s": statistics.median(r.get("helper_cpu_s", 0.0) for r, _ in runs),
        "verdict": (first["exit"], first["counts"], first["faults"], first["problem"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", default="5,10,20", help="sizes, comma separated")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "nodealer-bench-verify"
    )
    parser.add_argument("--baseline-python-path", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1, help="verify runs per log (median)")
    parser.add_argument("--floor", action="store_true", help="also the op-floor timing")
    args = parser.parse_args(argv)
    sizes = [int(r) for r in args.rounds.split(",")]
    args.cache.mkdir(parents=True, exist_ok=True)
    trees = {"new": ROOT}
    if args.baseline_python_path is not None:
        trees["old"] = args.baseline_python_path.resolve()
    print(f"load average: {_load()}; cache {args.cache}")
    summary: dict[str, Any] = {}
    games = {
        (label, r): play(tree, label, r, args.cache) for r in sizes for label, tree in trees.items()
    }
    for label in trees:
        for r in sizes:
            game = games[(label, r)]
            mb = game["log_bytes"] / 1e6
            summary[f"{label}_seat_mb_{r}r"] = round(game["seat_mb"], 1)
            summary[f"{label}_bots_mb_{r}r"] = round(game["bots_mb"], 1)
            summary[f"{label}_seat_mb_per_log_mb_{r}r"] = round(game["seat_mb"] / mb, 2)
            summary[f"{label}_log_mb_{r}r"] = round(mb, 2)
    verdicts: dict[str, Any] = {}
    for r in sizes:
        log = games[("new", r)]["log"]  # every tree verifies the same log
        mb = games[("new", r)]["log_bytes"] / 1e6
        for label, tree in trees.items():
            got = verify(tree, log, args.repeat)
            verdicts.setdefault(r, {})[label] = got["verdict"]
            summary[f"{label}_verify_s_{r}r"] = round(got["verify_s"], 2)
            summary[f"{label}_verify_cpu_s_{r}r"] = round(got["verify_cpu_s"], 2)
            summary[f"{label}_verify_mb_{r}r"] = round(got["verify_mb"], 1)
            summary[f"{label}_verify_mb_per_log_mb_{r}r"] = round(got["verify_mb"] / mb, 2)
            summary[f"{label}_import_mb"] = round(got["import_mb"], 1)
            summary[f"{label}_verify_own_mb_{r}r"] = round(got["own_mb"], 1)
            summary[f"{label}_verify_helper_mb_{r}r"] = round(got["helper_mb"], 1)
            summary[f"{label}_verify_helper_cpu_s_{r}r"] = round(got["helper_cpu_s"], 2)
        if len({json.dumps(v) for v in verdicts[r].values()}) > 1:
            print(f"  VERDICTS DIFFER at {r} rounds: {verdicts[r]}")
            summary[f"verdicts_differ_{r}r"] = True

    def slope(label: str, what: str, r0: int, r1: int, logs: str) -> float:
        d_log = games[(logs, r1)]["log_bytes"] / 1e6 - games[(logs, r0)]["log_bytes"] / 1e6
        d_mb = summary[f"{label}_{what}_{r1}r"] - summary[f"{label}_{what}_{r0}r"]
        return round(d_mb / d_log, 2) if d_log > 0 else float("nan")

    print(
        "rounds tree  its log MB  seat MB (/log MB)  bots MB | verify of the new log: "
        "s (CPU s), MB (/log MB)"
    )
    for r in sizes:
        for label in trees:
            k = f"{label}_{{}}_{r}r".format
            print(
                f"{r:>6} {label:>4}  {summary[k('log_mb')]:10.2f}  "
                f"{summary[k('seat_mb')]:7.1f} ({summary[k('seat_mb_per_log_mb')]:5.1f})"
                f"        {summary[k('bots_mb')]:7.1f}  {summary[k('verify_s')]:7.2f}"
                f" ({summary[k('verify_cpu_s')]:6.2f})  {summary[k('verify_mb')]:7.1f}"
                f" ({summary[k('verify_mb_per_log_mb')]:5.1f})"
                f"  [verify process {summary[k('verify_own_mb')]:.1f} MB, read-ahead process"
                f" {summary[k('verify_helper_mb')]:.1f} MB,"
                f" {summary[k('verify_helper_cpu_s')]:.2f} CPU s]"
            )
    for r0, r1 in itertools.pairwise(sizes):
        for label in trees:
            seat = slope(label, "seat_mb", r0, r1, label)
            ver = slope(label, "verify_mb", r0, r1, "new")
            summary[f"{label}_seat_slope_{r0}_{r1}r"] = seat
            summary[f"{label}_verify_slope_{r0}_{r1}r"] = ver
            print(f"  {label} {r0}->{r1} rounds: seat +{seat} MB, verify +{ver} MB per MB of log")
    if args.floor:
        summary.update(floor(Path(games[("new", sizes[-1])]["log"])))
    summary["load_average_1min"] = _load()
    print(json.dumps(summary))
    return 0


def floor(path: Path) -> dict[str, Any]:
    """``verify_log`` in this process alone (one worker: no read-ahead
    process, so that every operation is counted here) against its op floor:
    the group operations and Ed25519 checks it does × their raw cost,
    sampled next to each run so that load hits both alike."""
    sys.path.insert(0, str(ROOT))
    from collections import Counter

    from bench.shuffle import raw_costs
    from mental_poker import group
    from mental_poker.groups import group_for
    from p2p.identity import Identity
    from p2p.wire import PROTOCOL_VERSION
    from table.verify import verify_log

    group.set_workers(1)  # one process, no read-ahead process: its ops are all counted here
    key = Identity.generate()
    signature = key.sign(bytes(300))

    def signature_cost(n: int = 300) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            key.public.verify(signature, bytes(300))
        return (time.perf_counter() - t0) / n

    with group.count_ops() as ops:
        report = verify_log(path)
    counts = Counter(ops)
    counts["sig"] = 2 * report.entries
    version = report.spec.version if report.spec is not None else PROTOCOL_VERSION
    raw = dict(raw_costs(300, g=group_for(version)), sig=signature_cost())  # the log's group
    t0 = time.perf_counter()
    verify_log(path)
    took = time.perf_counter() - t0
    op_floor = sum(counts[k] * raw[k] for k in counts)
    print(f"  op floor {op_floor:.2f} s, verify {took:.2f} s (x{took / op_floor:.2f})")
    return {"floor_s": round(op_floor, 3), "overhead_vs_op_floor": round(took / op_floor, 3)}


if __name__ == "__main__":
    raise SystemExit(main())
