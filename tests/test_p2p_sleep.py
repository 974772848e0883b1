"""A seat whose process is stopped (a laptop's lid shut: SIGSTOP, then
SIGCONT) is back at the table within 5 s of waking (measured: under 0.1 s):
the others closed its silent connections after about two beat intervals and
keep redialling it; on waking it finds them closed, dials again and catches
up. A guard that closing silent connections costs a sleeper nothing. A real
subprocess (tests/p2p_peer.py) and two in-process peers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from p2p.envelope import TableSpec
from p2p.identity import Identity
from tests.p2p_mesh import mesh, wait_until

ROOT = Path(__file__).resolve().parent.parent
SLEEP, BACK_WITHIN = 10.0, 5.0


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP/SIGCONT (POSIX)")
async def test_a_stopped_seat_is_back_within_5_s_of_waking(tmp_path) -> None:
    ids = [Identity.generate() for _ in range(2)]
    child_home = tmp_path / "child"
    child_key = Identity.load_or_create(child_home).public
    table = TableSpec(b"sleep-table", (*[i.public for i in ids], child_key))
    table_file = tmp_path / "table.json"
    spec = {"table": table.table_id.hex(), "seats": [k.raw.hex() for k in table.seats]}
    table_file.write_text(json.dumps({**spec, "timeout": 3.0}))
    async with mesh(ids, table, tmp_path, timeout=3.0) as nodes:
        host, port = nodes[0].listen_address
        env = {**os.environ, "NODEALER_HOME": str(child_home), "PYTHONPATH": str(ROOT)}
        # the child signs 1 event, then waits for a log of 3 and says DONE
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.p2p_peer", str(table_file), f"{host}:{port}", "1", "3"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

        async def line(word: str, timeout: float) -> float:
            """When the child says ``word`` (trio's clock)."""
            assert child.stdout is not None
            with trio.fail_after(timeout):
                while True:
                    text = await trio.to_thread.run_sync(child.stdout.readline)
                    assert text, f"the child exited before {word}"
                    if text.split()[:1] == [word]:
                        return trio.current_time()

        try:
            await line("LISTEN", 60)
            await wait_until(lambda: all(n.head == 1 for n in nodes), timeout=30)
            await wait_until(lambda: all(2 in n.connected for n in nodes), timeout=30)
            child.send_signal(signal.SIGSTOP)  # the lid shuts
            # the others notice the silence and close (the kernel would not)
            await wait_until(lambda: all(2 not in n.connected for n in nodes), timeout=8)
            for node in nodes:
                await node.submit({"while asleep": node.seat})
            await trio.sleep(SLEEP)
            child.send_signal(signal.SIGCONT)  # it wakes
            woke = trio.current_time()
            done = await line("DONE", 60)
            await wait_until(lambda: all(2 in n.connected for n in nodes), timeout=30)
        finally:
            if child.poll() is None:
                child.send_signal(signal.SIGCONT)
                child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout):
                if stream is not None:
                    stream.close()
    print(f"back {done - woke:.2f} s after waking")
    assert done - woke <= BACK_WITHIN, done - woke
