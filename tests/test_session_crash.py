"""A peer SIGKILLed in the middle of a networked game (a real subprocess) is
restarted with the same home: it reloads its deal secrets and the log from
disk, replays the game, rejoins and plays on; the game ends clean on every
peer and every saved log verifies to the same outcome."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import Node
from p2p.session import SessionResult, TableSession
from p2p.store import table_dir
from p2p.verify import verify_log

ROOT = Path(__file__).resolve().parent.parent
GAME, SEATS, SEED, SCALE = "bluff", 3, 4, 0.02


class Child:
    """tests/session_peer.py in a subprocess, its stdout read line by line."""

    def __init__(self, home: Path, table_file: Path, address: tuple[str, int] | None) -> None:
        env = {**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT)}
        where = "-" if address is None else f"{address[0]}:{address[1]}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.session_peer", str(table_file), where],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []

    async def expect(self, word: str, timeout: float = 60.0) -> str:
        with trio.fail_after(timeout):
            while True:
                line = await trio.to_thread.run_sync(
                    self.proc.stdout.readline, abandon_on_cancel=True
                )
                if not line:
                    raise AssertionError(f"child exited before {word}: {self.lines[-5:]}")
                self.lines.append(line)
                if line.split(maxsplit=1)[0] == word:
                    return line.split(maxsplit=1)[1].strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            stream.close()


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.parametrize("child_seat", [2, 0], ids=["follower", "host-and-sequencer"])
async def test_killed_peer_restarts_and_the_game_ends_clean(tmp_path, child_seat: int) -> None:
    """Seat 2: a follower. Seat 0: the host and sequencer of term 0 - the
    others elect a new sequencer while it is down, entries it alone held are
    cut back (the sessions rebuild their tables), and it rejoins as follower."""
    mine = [s for s in range(SEATS) if s != child_seat]  # seats played in this process
    ids = {s: Identity.load_or_create(tmp_path / f"peer{s}") for s in mine}
    child_home = tmp_path / "child"
    keys = {s: i.public for s, i in ids.items()}
    keys[child_seat] = Identity.load_or_create(child_home).public
    spec = TableSpec(secrets.token_bytes(16), tuple(keys[s] for s in range(SEATS)))
    table_file = tmp_path / "table.json"
    table_file.write_text(
        json.dumps(
            {
                "table": spec.table_id.hex(),
                "seats": [k.raw.hex() for k in spec.seats],
                "game": GAME,
                "proven": False,
                "seed": SEED,
                "time_scale": SCALE,
            }
        )
    )
    bots = sensible_bots(GAME, SEATS, SEED)
    nodes = [
        Node(ids[s], spec, home=tmp_path / f"peer{s}", host="127.0.0.1", timeout=2.0) for s in mine
    ]
    sessions = [
        TableSession(node, game=GAME, proven=False, player=bots[s], time_scale=SCALE)
        for s, node in zip(mine, nodes, strict=True)
    ]
    results: list[SessionResult] = []
    child: Child | None = None
    try:
        async with trio.open_nursery() as nursery:
            for node in nodes:
                await nursery.start(node.run)
            await nodes[1].connect(*nodes[0].listen_address)
            child = Child(child_home, table_file, nodes[0].listen_address)
            assert await child.expect("LOADED") == "0"

            async def play(session: TableSession) -> None:
                results.append(await session.run())

            async with trio.open_nursery() as games:
                for session in sessions:
                    games.start_soon(play, session)
                # kill the child in the middle of play, once it has made moves
                with trio.fail_after(60):
                    while True:
                        await child.expect("UPDATE")
                        table = sessions[0].table
                        if table is not None and table.count >= 30:
                            break
                child.proc.kill()  # SIGKILL
                child.proc.wait()
                killed_at = sessions[0].replay.items[-1].seq
                assert sessions[0].outcome is None, "killed before the game ended"
                child.stop()
                if child_seat == 0:  # the others fail over to a new sequencer
                    with trio.fail_after(30):
                        while not any(node.is_sequencer for node in nodes):
                            await trio.sleep(0.05)
                # restarted with the same home and no address: it redials
                # the peers its store remembers and continues the same game
                child = Child(child_home, table_file, None)
                assert int(await child.expect("LOADED")) >= 1
                done = json.loads(await child.expect("DONE", timeout=90))
            nursery.cancel_scope.cancel()
    finally:
        if child is not None:
            child.stop()
        for node in nodes:
            node.store.close()
    assert len(results) == 2 and all(r.clean for r in results), results
    assert done["clean"], done
    outcome = str(results[0].outcome)
    assert str(results[1].outcome) == outcome and outcome in done["text"]
    assert results[0].entries > killed_at, "the game went on after the kill"
    if child_seat == 0:
        assert all(node.log.term > 0 for node in nodes), "a failover happened"
    logs = [nodes[0].store.log_path, nodes[1].store.log_path]
    logs.append(table_dir(spec.table_id, child_home) / "log")
    for log in logs:
        report = verify_log(log)
        assert report.exit_code == 0, report.lines()
        assert str(report.outcome) == outcome
