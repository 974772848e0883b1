"""A peer SIGKILLed in the middle of a burst restarts from its disk, catches
up, and loses nothing it had acknowledged (a real subprocess, kill -9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
import trio

from p2p.envelope import TableSpec
from p2p.identity import Identity
from tests.p2p_mesh import mesh, same_chain, wait_until

ROOT = Path(__file__).resolve().parent.parent
CHILD_EVENTS = 150
PARENT_EVENTS = 240


class Child:
    """tests/p2p_peer.py in a subprocess, its stdout read line by line."""

    def __init__(
        self,
        home: Path,
        table_file: Path,
        address: tuple[str, int] | None,
        *,
        stderr: bool = False,
    ) -> None:
        env = {**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT)}
        total = CHILD_EVENTS + PARENT_EVENTS
        args = [sys.executable, "-m", "tests.p2p_peer", str(table_file)]
        where = "-" if address is None else f"{address[0]}:{address[1]}"
        args += [where, str(CHILD_EVENTS), str(total)]
        self.errors = (home.parent / f"{home.name}.stderr").open("w+") if stderr else None
        self.proc = subprocess.Popen(
            args,
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
        )

    def stderr_lines(self) -> list[str]:
        assert self.errors is not None
        self.errors.seek(0)
        return self.errors.read().splitlines()

    async def expect(self, word: str, timeout: float = 60.0) -> list[str]:
        with trio.fail_after(timeout):
            while True:
                line = await trio.to_thread.run_sync(self.proc.stdout.readline)
                if not line:
                    raise AssertionError(f"child exited before {word}")
                parts = line.split()
                if parts and parts[0] == word:
                    return parts[1:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            stream.close()


@pytest.mark.trio
@pytest.mark.slow
async def test_sigkilled_peer_restarts_catches_up_and_loses_nothing(tmp_path) -> None:
    ids = [Identity.generate() for _ in range(3)]
    child_home = tmp_path / "child"
    child_key = Identity.load_or_create(child_home).public
    table = TableSpec(b"crash-table", (*[i.public for i in ids], child_key))
    table_file = tmp_path / "table.json"
    table_file.write_text(
        json.dumps({"table": table.table_id.hex(), "seats": [k.raw.hex() for k in table.seats]})
    )
    async with mesh(ids, table, tmp_path, timeout=2.0) as nodes:
        child = Child(child_home, table_file, nodes[0].listen_address)
        try:
            await child.expect("LISTEN")

            def from_child() -> int:
                return sum(e.event.author == 3 for e in nodes[0].chain)

            killed = trio.Event()
            async with trio.open_nursery() as nursery:

                async def parent_burst() -> None:
                    for k in range(PARENT_EVENTS):
                        if k == PARENT_EVENTS // 2:
                            await killed.wait()  # the kill is mid-burst, the rest goes on
                        await nodes[k % 3].submit({"k": k})
                        await trio.sleep(0.004)

                nursery.start_soon(parent_burst)
                # mid-burst, once the child has acknowledged (fsynced) something
                await wait_until(
                    lambda: from_child() >= 40 and nodes[0].log.acks[3].seq >= 1, timeout=60
                )
                acked = nodes[0].log.acks[3]  # what the child had acknowledged (fsynced)
                child.proc.kill()  # SIGKILL, mid-burst
                child.proc.wait()
                killed.set()
                assert from_child() < CHILD_EVENTS
                killed_at = nodes[0].head
                child.stop()
                # restarted with no address: it redials the peers it remembers,
                # on the port they remember it by
                child = Child(child_home, table_file, None)
                head, head_hash = await child.expect("LOADED")
                assert int(head) >= acked.seq >= 1  # nothing acknowledged was lost
                assert nodes[0].log.hashes[int(head)].hex() == head_hash
            assert nodes[0].head > killed_at  # the table went on meanwhile
            done_head, done_hash = await child.expect("DONE", timeout=120)
            total = CHILD_EVENTS + PARENT_EVENTS
            await wait_until(lambda: all(x.head == total for x in nodes), timeout=60)
            assert int(done_head) == total and done_hash == nodes[0].log.head_hash.hex()
            assert same_chain(nodes)
            bodies = [msgpack.unpackb(e.event.body) for e in nodes[0].chain]
            mine = sorted(b["i"] for b in bodies if "seat" in b)
            assert mine == list(range(CHILD_EVENTS))  # each child event exactly once
            assert sorted(b["k"] for b in bodies if "k" in b) == list(range(PARENT_EVENTS))
            await wait_until(lambda: 3 in nodes[0].connected)
        finally:
            child.stop()
