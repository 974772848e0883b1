"""Log latency and throughput: 9 peers on 127.0.0.1, each its own process.

    python bench/latency.py [--peers 9] [--paced 40] [--burst 120] [--interval 0.09]
                            [--version 2|3] [--compare ROUNDS] [--trace]

Each peer is a real node (own NODEALER_HOME, own key, real TCP, fsync on an
actual disk). Two phases:

* paced: every peer submits ``--paced`` events, one every ``--interval``
  seconds, staggered by seat (about 100 events/s in all with the defaults).
  Latency of an event = the moment the last peer applied it minus the moment
  its author called ``submit`` (which includes the author's outbox fsync).
  CLOCK_MONOTONIC is system-wide, so times from different processes compare.
* burst: every peer then submits ``--burst`` events back to back; events/s =
  all burst events / (last apply anywhere - first burst submit).

"Applied" is what ``node.entries()`` yields: on a v2 table every entry the
peer holds, on a v3 table (the default) only *final* entries, acknowledged
by every seat (protocol.md §3.5), so v3 latency includes every peer's fsync
and one more hop for the acks. ``--compare ROUNDS`` runs v2 and v3 tables
side by side, alternating (v2, v3, then v3, v2, ...), and reports each
version's median p50 over the rounds and the ratio.

``--trace`` (one table): each peer process wraps its node's and log
machine's methods to note when each step of a move happened (submit read at
the sequencer, entry appended, read, fsynced, acks read, final) and the
bench prints the median time of each step since the author's submit, for
moves by the sequencer and by the other seats, and the fsyncs' times.

Prints p50/p99 latency and events/s; the last line is one JSON object with
``p50_ms``, ``p99_ms``, ``events_per_s``. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# ---------------------------------------------------------------- one peer


async def run_peer(args: argparse.Namespace) -> None:
    import trio

    from p2p.envelope import TableSpec
    from p2p.identity import Identity, PeerKey, config_dir
    from p2p.node import LogItem, open_node

    spec = json.loads(Path(args.table).read_text())
    table = TableSpec(
        bytes.fromhex(spec["table"]),
        tuple(PeerKey(bytes.fromhex(k)) for k in spec["seats"]),
        spec.get("v", 3),
    )
    n = table.n
    identity = Identity.load_or_create(config_dir())
    trace = _install_trace() if args.trace else None
    applied: dict[tuple[int, int], int] = {}
    seqs: dict[tuple[int, int], int] = {}
    submitted: dict[int, int] = {}
    sent: dict[int, int] = {}  # when submit() returned (outbox fsynced, sent)

    async def read_line() -> str:
        return await trio.to_thread.run_sync(sys.stdin.readline)

    async with open_node(identity, table, timeout=5.0) as node:
        print("LISTEN", node.listen_port, flush=True)
        host, port = (await read_line()).split()
        if node.seat != 0:
            await node.connect(host, int(port))
        with trio.fail_after(30):
            while len(node.connected) < n - 1:
                await trio.sleep(0.01)
        print("READY", flush=True)
        await read_line()  # GO
        paced_total = n * args.paced
        total = paced_total + n * args.burst

        async def consume() -> None:
            async for item in node.entries():
                assert isinstance(item, LogItem)
                applied[(item.body["s"], item.body["i"])] = time.monotonic_ns()
                seqs[(item.body["s"], item.body["i"])] = item.seq
                if len(applied) >= total:
                    return

        cpu0 = time.process_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(consume)
            start = trio.current_time() + 0.2
            for i in range(args.paced):
                await trio.sleep_until(start + (i + node.seat / n) * args.interval)
                submitted[i] = time.monotonic_ns()
                await node.submit({"s": node.seat, "i": i})
                sent[i] = time.monotonic_ns()
            await node.wait_for_head(paced_total)
            paced_cpu = time.process_time() - cpu0
            for i in range(args.paced, args.paced + args.burst):
                submitted[i] = time.monotonic_ns()
                await node.submit({"s": node.seat, "i": i})
        result = {
            "seat": node.seat,
            "submitted": submitted,
            "sent": sent,
            "applied": [[s, i, t] for (s, i), t in applied.items()],
            "seqs": [[s, i, q] for (s, i), q in seqs.items()],
            "paced_cpu": paced_cpu,
        }
        if trace is not None:
            result["trace"] = trace
        print("RESULT", json.dumps(result), flush=True)
        await read_line()  # wait for the parent to collect everyone


def _install_trace() -> dict[str, list]:
    """``--trace``: wrap the node and its log machine in this peer process to
    note (CLOCK_MONOTONIC ns) each step of a move: its submit arriving, its
    entry appended, fsyncs, the durable head rising, acks arriving, the final
    mark rising. Only this bench's peers are patched."""
    from p2p.log import LogMachine
    from p2p.node import Node
    from p2p.store import Store

    trace: dict[str, list] = {"submit_in": [], "append": [], "fsync": [], "durable": []}
    trace.update({"ack_in": [], "final": [], "entry_in": [], "syscall": []})
    now = time.monotonic_ns

    on_submit, append, flushed = LogMachine._on_submit, LogMachine._append, LogMachine.flushed
    on_ack, update_final = LogMachine._on_ack, LogMachine._update_final
    sync_store, store_fsync = Node._sync_store, Store.fsync
    on_entry = LogMachine._on_entry

    def _on_submit(self, src, event, t):
        trace["submit_in"].append([event.author, event.counter, src, now()])
        return on_submit(self, src, event, t)

    def _on_entry(self, src, entry, t):
        trace["entry_in"].append([entry.seq, src, now()])
        return on_entry(self, src, entry, t)

    def _append(self, entry, h, trusted=False):
        if not trusted:
            trace["append"].append([entry.seq, now()])
        return append(self, entry, h, trusted)

    def _flushed(self, seq, seq_hash, truncations=None):
        before = self._durable
        out = flushed(self, seq, seq_hash, truncations)
        if self._durable > before:
            trace["durable"].append([self._durable, now()])
        return out

    def _on_ack(self, src, head, t):
        trace["ack_in"].append([src, head.seq, now()])
        return on_ack(self, src, head, t)

    def _update_final(self):
        before = self.final
        out = update_final(self)
        if self.final > before:
            trace["final"].append([self.final, now()])
        return out

    async def _sync_store(self, *files):
        start = now()
        await sync_store(self, *files)
        trace["fsync"].append([start, now()])

    def fsync(fds):
        start = now()
        store_fsync(fds)
        trace["syscall"].append([start, now()])

    LogMachine._on_submit, LogMachine._append, LogMachine.flushed = _on_submit, _append, _flushed
    LogMachine._on_ack, LogMachine._update_final = _on_ack, _update_final
    LogMachine._on_entry, Node._sync_store = _on_entry, _sync_store
    Store.fsync = staticmethod(fsync)
    return trace


# ---------------------------------------------------------------- the parent


def _expect(proc: subprocess.Popen, word: str) -> list[str]:
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"a peer exited before {word}: see its stderr")
        parts = line.split(maxsplit=1)
        if parts and parts[0] == word:
            return parts[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=int, default=9)
    parser.add_argument("--paced", type=int, default=40, help="paced events per peer")
    parser.add_argument("--burst", type=int, default=120, help="burst events per peer")
    parser.add_argument("--interval", type=float, default=0.09, help="seconds between paced events")
    parser.add_argument("--version", type=int, default=3, choices=(2, 3), help="table version")
    parser.add_argument("--compare", type=int, metavar="ROUNDS", help="v2 against v3, alternating")
    parser.add_argument(
        "--trace", action="store_true", help="time each step of a paced move (one table)"
    )
    parser.add_argument("--peer", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer is not None:
        import trio

        trio.run(run_peer, args)
        return

    if args.compare:
        compare(args)
        return
    results = run_table(args, args.version)
    report(args, results)
    if args.trace:
        report_trace(args, results)


def _first(pairs: list[tuple[int, int]], seq: int) -> int | None:
    """The first time (of (mark, time) pairs in time order) a mark reached ``seq``."""
    return next((t for mark, t in pairs if mark >= seq), None)


def report_trace(args: argparse.Namespace, results: list[dict]) -> None:
    """Where a paced move's time goes: the median over paced moves of each
    step's time since the author called submit, for moves authored by the
    sequencer (seat 0) and by the other seats."""
    seq_of = {(s, i): q for r in results for s, i, q in r["seqs"]}
    by_seat = {r["seat"]: r for r in results}
    steps: dict[str, dict[str, list[float]]] = {"sequencer": {}, "follower": {}}

    def note(kind: str, step: str, t: int | None, t0: int) -> None:
        if t is not None:
            steps[kind].setdefault(step, []).append((t - t0) / 1e6)

    for r in results:
        author = r["seat"]
        kind = "sequencer" if author == 0 else "follower"
        for i, t0 in r["submitted"].items():
            i = int(i)
            if i >= args.paced or (author, i) not in seq_of:
                continue
            q = seq_of[(author, i)]
            note(kind, "a. outbox fsynced, sent", r["sent"].get(str(i)), t0)
            seq0 = by_seat[0]["trace"]
            arrived = [t for a, c, src, t in seq0["submit_in"] if (a, c) == (author, i)]
            note(kind, "b. submit at sequencer", min(arrived, default=None), t0)
            note(kind, "c. sequenced (appended at seat 0)", _first(seq0["append"], q), t0)
            for seat, peer in sorted(by_seat.items()):
                tr = peer["trace"]
                if seat != 0:
                    got = [t for sq, src, t in tr["entry_in"] if sq == q]
                    note(kind, f"d. entry in at seat {seat}", min(got, default=None), t0)
                    added = _first(tr["append"], q)
                    note(kind, f"d2. appended at seat {seat}", added, t0)
                    if added is not None:
                        sync = [(a, b) for a, b in tr["syscall"] if a >= added]
                        if sync:
                            note(kind, f"d3. fsync begins at seat {seat}", min(sync)[0], t0)
                            note(kind, f"d4. fsync ends at seat {seat}", min(sync)[1], t0)
                note(kind, f"e. durable at seat {seat}", _first(tr["durable"], q), t0)
                note(kind, f"f. final at seat {seat}", _first(tr["final"], q), t0)
                needed = [_first(tr["durable"], q)]
                for src in sorted(by_seat):
                    if src != seat:
                        acks = [(sq, t) for s_, sq, t in tr["ack_in"] if s_ == src]
                        needed.append(_first(acks, q))
                        note(kind, f"g. ack of seat {src} in at seat {seat}", needed[-1], t0)
                final = _first(tr["final"], q)
                if final is not None and None not in needed:
                    note(kind, f"i. final - last ack in, seat {seat}", final - max(needed) + t0, t0)
                applied = [t for s, i_, t in peer["applied"] if (s, i_) == (author, i)]
                note(kind, f"h. applied at seat {seat}", min(applied, default=None), t0)
    for kind, found in steps.items():
        print(f"moves authored by the {kind}: median ms since submit (n = number of moves)")
        for step in sorted(found):
            values = found[step]
            print(f"  {step:40s} {statistics.median(values):7.2f}  (n={len(values)})")
    for name in ("fsync", "syscall"):
        ms = sorted((e - s) / 1e6 for r in results for s, e in r["trace"][name])
        what = "each _sync_store call" if name == "fsync" else "the fsync syscalls alone"
        print(f"{what}: p50 {ms[len(ms) // 2]:.2f} ms, p90 {ms[len(ms) * 9 // 10]:.2f} ms")


def compare(args: argparse.Namespace) -> None:
    figures: dict[int, list[dict]] = {2: [], 3: []}
    for r in range(args.compare):
        for version in (2, 3) if r % 2 == 0 else (3, 2):
            print(f"round {r + 1}, v{version}:")
            figures[version].append(report(args, run_table(args, version)))
    med = {
        v: {k: statistics.median(f[k] for f in figures[v]) for k in figures[v][0]} for v in figures
    }
    for v in (2, 3):
        p50s = ", ".join(f"{f['p50_ms']:.2f}" for f in figures[v])
        print(
            f"v{v}: p50 per round {p50s} ms; median p50 {med[v]['p50_ms']:.2f} ms, "
            f"p99 {med[v]['p99_ms']:.2f} ms, {med[v]['events_per_s']:.0f} events/s"
        )
    ratio = med[3]["p50_ms"] / med[2]["p50_ms"]
    print(f"v3/v2 median p50: {ratio:.2f}x")
    print(json.dumps({"v2": med[2], "v3": med[3], "p50_ratio": round(ratio, 3)}))


def run_table(args: argparse.Namespace, version: int) -> list[dict]:
    from p2p.identity import Identity

    with tempfile.TemporaryDirectory(prefix="nodealer-bench-") as tmp:
        homes = [Path(tmp) / f"peer{i}" for i in range(args.peers)]
        keys = [Identity.load_or_create(h).public.raw.hex() for h in homes]
        table_file = Path(tmp) / "table.json"
        table_file.write_text(
            json.dumps({"table": os.urandom(16).hex(), "seats": keys, "v": version})
        )
        procs = []
        for i, home in enumerate(homes):
            env = {**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT)}
            cmd = [sys.executable, __file__, "--peer", str(i), "--table", str(table_file)]
            cmd += ["--paced", str(args.paced), "--burst", str(args.burst)]
            cmd += ["--interval", str(args.interval)] + (["--trace"] if args.trace else [])
            procs.append(
                subprocess.Popen(
                    cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
                )
            )
        try:
            ports = [int(_expect(p, "LISTEN")[0]) for p in procs]
            for p in procs:
                p.stdin.write(f"127.0.0.1 {ports[0]}\n")
                p.stdin.flush()
            for p in procs:
                _expect(p, "READY")
            for p in procs:
                p.stdin.write("GO\n")
                p.stdin.flush()
            results = [json.loads(_expect(p, "RESULT")[0]) for p in procs]
            for p in procs:
                p.stdin.write("BYE\n")
                p.stdin.flush()
        finally:
            for p in procs:
                if p.poll() is None:
                    p.terminate()
                p.wait()
    return results


def report(args: argparse.Namespace, results: list[dict]) -> dict:
    last_apply: dict[tuple[int, int], int] = {}
    for r in results:
        for s, i, t in r["applied"]:
            last_apply[(s, i)] = max(last_apply.get((s, i), 0), t)
    submit = {(r["seat"], int(i)): t for r in results for i, t in r["submitted"].items()}
    paced = sorted((last_apply[k] - submit[k]) / 1e6 for k in submit if k[1] < args.paced)
    in_submit = sorted((t - r["submitted"][i]) / 1e6 for r in results for i, t in r["sent"].items())
    burst_keys = [k for k in submit if k[1] >= args.paced]
    first = min(submit[k] for k in burst_keys)
    last = max(last_apply[k] for k in burst_keys)
    events_per_s = len(burst_keys) / ((last - first) / 1e9)
    p50 = statistics.median(paced)
    p99 = paced[min(len(paced) - 1, round(0.99 * (len(paced) - 1)))]
    print(f"{args.peers} peers on 127.0.0.1, one process each, fsync on disk")
    print(
        f"paced ({len(paced)} events, ~{args.peers / args.interval:.0f}/s): "
        f"submit -> applied by every peer: p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
        f"max {paced[-1]:.2f} ms"
    )
    cpu = sum(r["paced_cpu"] for r in results) / len(paced) * 1e3
    print(f"  CPU of the peers in the paced phase, per event: {cpu:.2f} ms (all peers)")
    inside = statistics.median(in_submit)
    print(f"  of which inside submit() (outbox fsync, send): p50 {inside:.2f} ms")
    print(f"burst ({len(burst_keys)} events): {events_per_s:.0f} events/s")
    figures = {
        "p50_ms": round(p50, 3),
        "p99_ms": round(p99, 3),
        "events_per_s": round(events_per_s, 1),
    }
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    main()
