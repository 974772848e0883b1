"""A peer SIGKILLed in the middle of a networked game (a real subprocess) is
restarted with the same home: it reloads its secrets (deal keys, a Mao
author's rules) and the log from disk, replays the game, rejoins and plays
on; the game ends clean on every peer and every saved log verifies to the
same outcome. The soaks kill one seat 20 times in one game of each game."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from engines.bomb import BombConfig
from engines.bots import sensible_bots
from engines.core import Transfer, to_data
from engines.mao_events import MaoConfig
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import Node
from p2p.store import table_dir
from table.machine import Table
from table.session import SessionResult, TableSession
from table.verify import verify_log

ROOT = Path(__file__).resolve().parent.parent
SEATS, SCALE = 3, 0.02


class Child:
    """tests/session_peer.py in a subprocess, its stdout read line by line."""

    def __init__(
        self, home: Path, table_file: Path, address: tuple[str, int] | None, die: Path | None = None
    ) -> None:
        env = {**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT)}
        if die is not None:
            env["NODEALER_TEST_DIE"] = str(die)
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
            return (await self.expect_any(word))[1]

    async def expect_any(self, *words: str) -> tuple[str, str]:
        """The next line that starts with one of ``words``: (word, rest)."""
        while True:
            line = await trio.to_thread.run_sync(self.proc.stdout.readline, abandon_on_cancel=True)
            if not line:
                raise AssertionError(f"child exited before {words}: {self.lines[-5:]}")
            self.lines.append(line)
            word, _, rest = line.partition(" ")
            if word in words:
                return word, rest.strip()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            stream.close()


def _interesting(table: Table | None, seat: int) -> str | None:
    """What is going on at the table that a crash of ``seat`` should hit:
    it owes a Mao verdict, a deal is mid-pass, a transfer is pending, final
    reveals are under way (read from another thread's table: a torn read
    is just "not now")."""
    if table is None:
        return None
    try:
        if table.over:
            return "final reveals"
        if any(d.kind == "move" for d in table.duties(seat)):
            return "owes a verdict"
        if any(d.phase in ("shuffle", "lock") for d in table.deals):
            return "mid-deal"
        if any(isinstance(r, Transfer) for r in table.pending()):
            return "mid-transfer"
    except (RuntimeError, KeyError, IndexError):
        return None
    return None


CASES = {
    "bluff": (None, 4, ("shuffle", "lock", "keys", "relock", "handover", "final")),
    # shorter rounds (M1 hands of 3), so a few rounds and rules fit in a test
    "mao": (to_data(MaoConfig(hand_size=3)), 14, ("verdict", "shuffle", "keys", "final")),
    # K25: a game the bots cannot decide ends at the time limit
    "bomb": (to_data(BombConfig(time_limit=900)), 3, ("shuffle", "lock", "identity", "final")),
}
"""game -> config, bodies between kills, the duties the soak's child dies at
(just before signing the first body of each kind)"""


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "child_seat", "kills", "seed"),
    [
        ("bluff", 2, 1, 4),
        ("bluff", 0, 1, 4),
        ("bluff", 1, 20, 4),
        ("mao", 2, 20, 4),
        ("bomb", 1, 20, 4),
        ("bomb", 2, 20, 5),
    ],
    ids=[
        "bluff-follower",
        "bluff-host-and-sequencer",
        "bluff-soak",
        "mao-soak",
        "bomb-soak",
        "bomb-soak-2",
    ],
)
async def test_killed_peer_restarts_and_the_game_ends_clean(
    tmp_path, game: str, child_seat: int, kills: int, seed: int
) -> None:
    """The child seat is killed (SIGKILL) up to ``kills`` times, each time
    after the table moved on by a few bodies, preferably while something is
    going on (a Mao verdict it owes, a deal mid-pass, a transfer, the final
    reveals), and restarted with the same home: every time it reloads its
    secrets (deal keys, a Mao author's rules and salts) and the log and plays
    on. Seat 0 is the host and sequencer of term 0: the others elect a new
    sequencer while it is down, entries it alone held are cut back (the
    sessions rebuild their tables), and it rejoins as a follower."""
    config, step, duties = CASES[game]
    die = tmp_path / "die"
    die.write_text("\n".join(duties) if kills > 1 else "")
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
                "game": game,
                "config": config,
                "proven": False,
                "seed": seed,
                "time_scale": SCALE,
            }
        )
    )
    bots = sensible_bots(game, SEATS, seed, salt_source=secrets.token_bytes)
    nodes = [
        Node(ids[s], spec, home=tmp_path / f"peer{s}", host="127.0.0.1", timeout=2.0) for s in mine
    ]
    sessions = [
        TableSession(node, game=game, config=config, proven=False, player=bots[s], time_scale=SCALE)
        for s, node in zip(mine, nodes, strict=True)
    ]
    results: list[SessionResult] = []
    child: Child | None = None
    survived: list[str] = []
    try:
        async with trio.open_nursery() as nursery:
            for node in nodes:
                await nursery.start(node.run)
            await nodes[1].connect(*nodes[0].listen_address)
            child = Child(child_home, table_file, nodes[0].listen_address, die)
            assert await child.expect("LOADED") == "0"

            async def play(session: TableSession) -> None:
                results.append(await session.run())

            async with trio.open_nursery() as games:
                for session in sessions:
                    games.start_soon(play, session)
                threshold = 2 * step
                done = None
                while done is None:
                    # kill the child once the table moved past the threshold,
                    # at an interesting moment if one comes within half a step
                    # (until `kills` kill points; it may also die at a duty)
                    with trio.fail_after(120):
                        while True:
                            word, rest = await child.expect_any("UPDATE", "DONE", "DYING")
                            if word == "DONE":
                                done = json.loads(rest)
                                break
                            table = sessions[0].table
                            count = table.count if table is not None else 0
                            if word == "DYING":  # it killed itself at a duty
                                what = f"before its {rest}"
                                break
                            if len(survived) >= kills or sessions[0].outcome is not None:
                                continue
                            what = _interesting(table, child_seat)
                            if count >= threshold and (what or count >= threshold + step // 2):
                                break
                    if done is not None:
                        break
                    child.proc.kill()  # SIGKILL
                    child.proc.wait()
                    if child.proc.returncode != -signal.SIGKILL:
                        raise AssertionError(f"the child ended on its own: {child.lines[-5:]}")
                    survived.append(what or f"body {count}")
                    child.stop()
                    if child_seat == 0:  # the others fail over to a new sequencer
                        with trio.fail_after(30):
                            while not any(node.is_sequencer for node in nodes):
                                await trio.sleep(0.05)
                    # restarted with the same home and no address: it redials
                    # the peers its store remembers and continues the same game
                    child = Child(child_home, table_file, None, die)
                    await child.expect("LOADED")
                    threshold = count + step
            nursery.cancel_scope.cancel()
    finally:
        if child is not None:
            child.stop()
        for node in nodes:
            node.store.close()
    print(f"{game}: {len(survived)} kill points survived: {survived}")
    assert survived, "the child was killed at least once"
    assert len(results) == 2 and all(r.clean for r in results), results
    assert done["clean"], done
    outcome = str(results[0].outcome)
    assert str(results[1].outcome) == outcome and outcome in done["text"]
    if child_seat == 0:
        assert all(node.log.term > 0 for node in nodes), "a failover happened"
    logs = [nodes[0].store.log_path, nodes[1].store.log_path]
    logs.append(table_dir(spec.table_id, child_home) / "log")
    for log in logs:
        report = verify_log(log)
        assert report.exit_code == 0, report.lines()
        assert str(report.outcome) == outcome
