"""The long absences of issue 27 ("Done when"), reproduced without root on
127.0.0.1: a seat's link cut 60 s, and a seat that quits (SIGTERM of its own
``nodealer join`` process) and runs the same ``nodealer join --connect
HOST:PORT`` again after 45 s and after 3 minutes. Each time the game ends
clean for every seat (exit 0 / a clean result, the same head on every log,
``verify`` clean) and the returning seat's first body is in the table's log
within 5 s of the heal, or of the rejoined command saying it goes back
(measured, asserted; printed with ``-s``).

* The cut: three in-process seats, every connection through the
  fault-injecting relay of tests/fault_relay.py (the seat's traffic
  black-holed both ways, nothing closed; healed at TCP's pace), cut while
  it owes the table a body.
* The quit: three ``python -m tui.cli host/join --headless`` processes; the
  host's log file is read as it grows (the table replayed from it) to quit
  once the seat owes a body and to time its first body after the rejoin;
  past the commands' duty wait (30 s) the others print that they wait for
  it, then that it is back.

Two runs of each (:func:`_cases`):

* marked ``long``: the absences at their real lengths with the table's
  clocks at their real lengths (``time_scale`` 1: patience 600 s, duty
  wait 30 s, node timeout 3 s). Not in the default run (pyproject's
  ``addopts`` deselect ``long``): ``pytest -m long`` runs them (about six
  minutes);
* marked ``slow`` (run by CI): the same with the table's clocks scaled
  down together with the absence (cut 8 s, quit 6 s and 24 s; x 0.133).
  The quit's ``nodealer`` commands scale what ``--time-scale`` scales
  (timers, patience); their duty wait (30 s) and node timeout (3 s) have
  no option and stay."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.store import StoreError, read_log, scan_log
from table.replay import Replay
from table.seating import NODE_TIMEOUT, free_port
from table.session import DUTY_WAIT, SessionResult, TableSession
from table.verify import EXIT_ABANDONED, verify_log
from tests.fault_relay import FaultyNet

ROOT = Path(__file__).resolve().parent.parent
LOCAL, SEATS, GONE = "127.0.0.1", 3, 2
BACK_WITHIN = 5.0  # seconds from the heal or the way back to the seat's first body


@dataclass(frozen=True)
class Clocks:
    """The table's clocks: ``scale`` times their real lengths (the game's
    timers and patience through ``time_scale``, the duty wait and the node
    timeout directly)."""

    scale: float

    @property
    def duty_wait(self) -> float:
        return DUTY_WAIT * self.scale

    @property
    def node_timeout(self) -> float:
        # beats every timeout / 4: on a loaded 2-core machine not below 1 s
        return max(NODE_TIMEOUT * self.scale, 1.0)


REAL = Clocks(1.0)
SCALED = Clocks(0.133)  # 60 s -> 8 s, 45 s -> 6 s, 3 min -> 24 s


def _cases(real: float) -> list:
    """The absence at its real length (marked ``long``, and ``slow`` so that
    ``-m "not slow"`` leaves it out too) and scaled down (``slow``)."""
    scaled = round(real * SCALED.scale)
    return [
        pytest.param(real, REAL, id=f"real-{real:g}s", marks=[pytest.mark.long, pytest.mark.slow]),
        pytest.param(scaled, SCALED, id=f"scaled-{scaled:g}s", marks=pytest.mark.slow),
    ]


def _same_heads(logs: list[Path]) -> tuple[int, bytes]:
    heads = set()
    for path in logs:
        saved = read_log(path)
        assert saved.problem is None, (path, saved.problem)
        last = saved.entries[-1]
        heads.add((last.seq, last.hash(saved.table)))
    assert len(heads) == 1, f"different heads: {heads}"
    return heads.pop()


def _verified_clean(logs: list[Path]) -> None:
    outcomes = set()
    for path in logs:
        report = verify_log(path)
        assert report.exit_code == 0, report.lines()
        outcomes.add(str(report.outcome))
    assert len(outcomes) == 1, outcomes


# ---------------------------------------------------------------- the cut


async def _cut_while_owing(net: FaultyNet, nodes: list, host: TableSession, until) -> None:
    """Cut seat GONE off while it owes the table a body. A body it sent
    just before the cut can still land (it was on the wire, or a peer held
    it): then it owes nothing and the cut tests nothing, so let it back and
    cut it again the next time it owes (a full CI run met this once)."""
    for _ in range(10):
        await until(lambda: GONE in host.table.owing(), f"seat {GONE} owing a body")
        net.cut(GONE)
        await trio.sleep(0.3)  # what was on its way lands
        held = any(node.held_events(GONE) for node in nodes[:GONE])
        if GONE in host.table.owing() and not held:
            return
        net.heal(GONE)
        await until(lambda: GONE not in host.table.owing(), f"seat {GONE} to answer")
    pytest.fail(f"seat {GONE} never stayed owing when cut off")


@pytest.mark.trio
@pytest.mark.parametrize(("outage", "clocks"), _cases(60.0))
async def test_a_seat_cut_off_comes_back_and_the_game_ends_clean(
    tmp_path: Path, outage: float, clocks: Clocks
) -> None:
    ids = [Identity.generate() for _ in range(SEATS)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))
    results: dict[int, SessionResult] = {}
    bots = sensible_bots("bluff", SEATS, 7, salt_source=secrets.token_bytes)
    unsaid: list[str] = []  # a present seat not saying it waits for the cut one

    async def until(done, what: str, seconds: float = 120) -> None:
        with trio.move_on_after(seconds):
            while not done():
                await trio.sleep(0.02)
            return
        pytest.fail(f"timed out waiting for {what}")

    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        routed = net.node_class()
        nodes = [
            routed(ids[s], spec, home=tmp_path / f"p{s}", host=LOCAL, timeout=clocks.node_timeout)
            for s in range(SEATS)
        ]
        sessions = [
            TableSession(
                nodes[s],
                game="bluff",
                proven=False,
                player=bots[s],
                time_scale=clocks.scale,
                duty_wait=clocks.duty_wait,
            )
            for s in range(SEATS)
        ]

        async def play(s: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
            try:
                async with trio.open_nursery() as inner:
                    await inner.start(nodes[s].run)
                    task_status.started()
                    results[s] = await sessions[s].run()
                    await sessions[s].wait_for_peers(timeout=30.0)
                    inner.cancel_scope.cancel()
            finally:
                nodes[s].store.close()

        def first_body_after(seq: int) -> int | None:
            log = nodes[0].log
            for at in range(seq + 1, log.head + 1):
                if log.entry(at).event.author == GONE:
                    return at
            return None

        async with trio.open_nursery() as table:
            for s in range(SEATS):
                await table.start(play, s)
            for node in nodes[1:]:
                await node.connect(*nodes[0].listen_address)
            await until(lambda: all(len(n.connected) == SEATS - 1 for n in nodes), "a full mesh")
            host = sessions[0]
            await until(lambda: host.table is not None and len(host.table.events) > 8, "play")
            await _cut_while_owing(net, nodes, host, until)
            cut_at, head = trio.current_time(), nodes[0].head
            await trio.sleep(outage)
            # the table waited for it, knowing it away: no fault, no end
            assert not nodes[GONE].connected, "the cut held"
            assert first_body_after(head) is None, "nothing of the cut seat got through"
            assert len(results) == 0, "the game ended while a seat was cut off"
            for s in (0, 1):
                assert not sessions[s].faults and sessions[s].replay.abandoned is None
                node, seen = nodes[s], sessions[s].table
                if [a.seat for a in sessions[s].waiting()] != [GONE]:  # asserted at the end
                    unsaid.append(
                        f"seat {s} waits for {sessions[s].waiting()}; its table owes "
                        f"{seen.owing()} at {seen.count}; final {node.final}, head {node.head}, "
                        f"acked {[node.acked(t) for t in range(SEATS)]}, tentative "
                        f"{[(i.seq, i.author) for i in node.tentative()]}"
                    )
            net.heal(GONE)
            healed = trio.current_time()
            await until(lambda: first_body_after(head) is not None, "its first body", 60)
            first = trio.current_time() - healed
            await until(lambda: len(results) == SEATS, "the game to end", 300)
            ended = trio.current_time() - cut_at
        relays.cancel_scope.cancel()

    print(
        f"cut {outage:g} s (clocks x{clocks.scale:g}): first body {first:.2f} s after the "
        f"heal; the game ended {ended:.1f} s after the cut"
    )
    assert first <= BACK_WITHIN, f"its first body came {first:.2f} s after the heal"
    for s in range(SEATS):
        assert results[s].clean, (s, str(results[s]))
    logs = [n.store.log_path for n in nodes]
    _same_heads(logs)
    _verified_clean(logs)
    # the others said they waited for it (fails when it was cut off owing
    # only acknowledgements: the xfail below)
    assert not unsaid, unsaid


@pytest.mark.trio
@pytest.mark.slow
async def test_a_seat_cut_off_before_it_acknowledged_its_own_body_is_away_then_left(
    tmp_path: Path,
) -> None:
    """A seat cut off when it owes the table no body, only its
    acknowledgement: here its own owed body was just sequenced (it may as
    well be another seat's). On a v3 table an entry is final once every
    seat acknowledged it and sessions act on final entries only, so the
    table cannot go on without the seat; the others say they wait for it
    (it owes its acknowledgement: table/waiting.py ``_owing_acks``) and,
    past the patience, end the game abandoned naming it alone, the log
    saying it owed its acknowledgement. (Before that rule the tests above
    hit this at real clocks in 3 of 4 cuts and 3 of 5 quits, and in 9 of 24
    scaled cuts.) Here the moment is waited for, the cut made at once."""
    clocks = Clocks(0.02)  # patience 12 s, duty wait 1 s
    ids = [Identity.generate() for _ in range(SEATS)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))
    bots = sensible_bots("bluff", SEATS, 7, salt_source=secrets.token_bytes)
    waited: list[int] = []
    finished: set[int] = set()
    missed = False
    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        routed = net.node_class()
        nodes = [
            routed(ids[s], spec, home=tmp_path / f"p{s}", host=LOCAL, timeout=clocks.node_timeout)
            for s in range(SEATS)
        ]
        sessions = [
            TableSession(
                nodes[s],
                game="bluff",
                proven=False,
                player=bots[s],
                time_scale=clocks.scale,
                duty_wait=clocks.duty_wait,
            )
            for s in range(SEATS)
        ]

        async def play(s: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
            try:
                async with trio.open_nursery() as inner:
                    await inner.start(nodes[s].run)
                    task_status.started()
                    await sessions[s].run()
                    finished.add(s)
                    inner.cancel_scope.cancel()
            finally:
                nodes[s].store.close()

        def unacknowledged() -> bool:
            """Seat GONE owes a body at the final point, and that body is
            sequenced past it (its acknowledgement not yet in)."""
            table, node = sessions[0].table, nodes[0]
            return (
                table is not None
                and len(table.events) > 8
                and GONE in table.owing()
                and any(item.author == GONE for item in node.tentative())
            )

        async with trio.open_nursery() as table:
            for s in range(SEATS):
                await table.start(play, s)
            for node in nodes[1:]:
                await node.connect(*nodes[0].listen_address)
            with trio.fail_after(120):
                while not unacknowledged():
                    await trio.sleep(0)
            net.cut(GONE)
            await trio.sleep(0.5)
            missed = not unacknowledged()
            with trio.move_on_after(clocks.duty_wait + 10):
                while GONE not in [a.seat for a in sessions[0].waiting()]:
                    await trio.sleep(0.05)
            waited = [a.seat for a in sessions[0].waiting()]
            # past the patience (12 s) the present seats end it abandoned
            with trio.move_on_after(60 if waited == [GONE] and not missed else 0):
                while not {0, 1} <= finished:  # abandoned, the final reveals in
                    await trio.sleep(0.05)
            ended = [sessions[s].replay.abandoned for s in (0, 1)]
            net.heal(GONE)
            table.cancel_scope.cancel()
        relays.cancel_scope.cancel()
    if missed:
        pytest.skip("the seat's acknowledgement got out before the cut")
    assert waited == [GONE], f"nobody said they wait for seat {GONE}: {waited}"
    for s, abandoned in enumerate(ended):
        assert abandoned is not None and abandoned.seats == (GONE,), (s, abandoned)
        assert "acknowledgement" in abandoned.owed[0], abandoned.owed
    for s in (0, 1):
        report = verify_log(nodes[s].store.log_path)
        assert report.exit_code == EXIT_ABANDONED, report
        assert report.abandoned is not None and report.abandoned.seats == (GONE,)


# ---------------------------------------------------------------- quit and rejoin


class Command:
    """One ``python -m tui.cli`` command in its own process and home, its
    output in ``home/NAME.txt``."""

    def __init__(self, home: Path, name: str, *args: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.home, self.args = home, args
        self.out = (home / f"{name}.txt").open("w+")
        env = {**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT)}
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui.cli", *args],
            env=env,
            cwd=ROOT,
            stdout=self.out,
            stderr=subprocess.STDOUT,
        )

    def text(self) -> str:
        if not self.out.closed:
            self.out.flush()
        return Path(self.out.name).read_text()

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"still running after {timeout:g} s: {self.text()[-2000:]}"
            ) from None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()

    def log(self) -> Path:
        (log,) = self.home.glob("tables/*/log")
        return log


class LogReader:
    """The host's log file as its process writes it: the public table
    replayed from it, and who signed each entry."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.authors: list[int] = []
        self.replay: Replay | None = None
        self.owed = False  # seat GONE owed a body at an entry read, a few moves in

    def read(self) -> None:
        found = list(self.home.glob("tables/*/log"))
        if not found:
            return
        try:
            index = scan_log(found[0])
            if index is None:
                return
            if len(index.offsets) < len(self.authors):  # entries cut back: read again
                self.authors, self.replay = [], None
            if self.replay is None:
                self.replay = Replay(index.table)
            for position in range(len(self.authors) + 1, len(index.offsets) + 1):
                entry = index.entry(found[0], position)
                self.replay.feed(
                    entry.seq, entry.term, entry.event.author, entry.event.decoded_body()
                )
                self.authors.append(entry.event.author)
                table = self.replay.table
                if table is not None and len(table.events) > 4 and GONE in table.owing():
                    self.owed = True  # at some entry read: the game is short at real speed
        except StoreError:
            return  # the file changed while it was read: next time

    def owing(self) -> dict[int, int]:
        table = None if self.replay is None else self.replay.table
        return {} if table is None else table.owing()

    def count(self, seat: int) -> int:
        return self.authors.count(seat)


def _poll(done, what: str, seconds: float, *procs: Command) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        for command in procs:
            if command.proc.poll() is not None:
                raise AssertionError(
                    f"{command.args[0]} exited ({command.proc.returncode}) before {what}: "
                    f"{command.text()[-2000:]}"
                )
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="a quit by SIGTERM, exit 143 (POSIX)")
@pytest.mark.parametrize(
    ("away", "clocks"),
    # the 3-minute quit scaled (24 s) only under -m long too (CI time)
    [
        *_cases(45.0),
        *(pytest.param(*p.values, marks=pytest.mark.long, id=p.id) for p in _cases(180.0)),
    ],
)
def test_a_seat_that_quits_and_joins_again_is_back_and_the_game_ends_clean(
    tmp_path: Path, away: float, clocks: Clocks
) -> None:
    """The seat's own process gets SIGTERM (a player's quit: exit 143, log
    kept) as soon as the host's log shows it owing a body a few moves in
    (a whole game at real speed takes seconds); ``away`` seconds later the player
    types the same ``nodealer join --connect HOST:PORT`` (the host's lobby,
    closed since the game began): it goes back to the table it holds.

    Its first body is timed from the moment the new process says it goes
    back (it has started and read its home): the seconds before that are the
    interpreter's start and imports, which a loaded machine stretches many
    times over (measured here at load 12 on 2 cores: 3.5 s of wall clock for
    0.4 s of CPU); both figures are printed."""
    common = ["--interface", LOCAL, "--headless", "--time-scale", f"{clocks.scale:g}"]
    lobby = free_port(LOCAL)
    procs: list[Command] = []
    try:
        host = Command(
            tmp_path / "host",
            "host",
            "host",
            "bluff",
            "--players",
            str(SEATS),
            "--port",
            str(lobby),
            "--no-advertise",
            "--nickname",
            "Alice",
            "--unproven",
            *common,
        )
        procs.append(host)
        _poll(lambda: "lobby open" in host.text(), "the lobby", 60, host)
        joining = ["join", "--connect", f"{LOCAL}:{lobby}", *common]
        for s in (1, 2):  # one at a time: p2 takes seat 2
            procs.append(Command(tmp_path / f"p{s}", "join", *joining, "--nickname", f"p{s}"))
            _poll(lambda s=s: f"{s}: p{s} (" in host.text(), f"p{s} seated", 60, *procs)
        quitter = procs[GONE]
        watch = LogReader(host.home)

        def owing() -> bool:
            watch.read()
            return watch.owed

        _poll(owing, f"seat {GONE} owing a body", 120, *procs)
        seat = watch.replay.spec.seat_of(Identity.load_or_create(quitter.home).public)
        assert seat == GONE, seat
        quitter.proc.send_signal(signal.SIGTERM)  # the player quits
        assert quitter.wait(30) == 128 + signal.SIGTERM, quitter.text()[-2000:]
        assert "stopped by SIGTERM" in quitter.text(), quitter.text()[-2000:]
        quit_at = time.monotonic()
        time.sleep(1.0)
        watch.read()  # what it owes now that its last bodies are in
        owes_at_quit = GONE in watch.owing()
        time.sleep(max(0.0, away - 3.0))
        watch.read()
        before, head = watch.count(GONE), len(watch.authors)
        time.sleep(2.0)
        watch.read()
        assert len(watch.authors) == head, "the table waits for the seat that left"
        assert host.proc.poll() is None and procs[1].proc.poll() is None, "the others wait"
        # the same command again, from the shell's history
        again = Command(quitter.home, "again", *joining, "--nickname", "p2")
        procs.append(again)
        playing = [host, procs[1], again]

        said: list[float] = []  # when it said it goes back

        def back() -> bool:
            if not said and "going back to" in again.text():
                said.append(time.monotonic())
            watch.read()
            return watch.count(GONE) > before

        _poll(back, "its first body", 60, *playing)
        came = time.monotonic()
        assert said, "it went back to the table it holds"
        started, first = said[0] - again.started, came - said[0]
        codes = [command.wait(300) for command in playing]
        ended = time.monotonic() - quit_at
    finally:
        for command in procs:
            command.stop()
    print(
        f"quit {away:g} s (clocks x{clocks.scale:g}): first body {first:.2f} s after it said "
        f"it goes back ({started + first:.2f} s after the command, {started:.2f} s of them "
        f"starting); the game ended {ended:.1f} s after the quit"
    )
    outs = [command.text() for command in (host, procs[1], again)]
    assert codes == [0, 0, 0], [out[-2000:] for out in outs]
    assert "going back to" in outs[2] and "cannot reach" not in outs[2], outs[2][-2000:]
    assert all("CHEATING" not in out and "verify: clean" in out for out in outs), outs
    assert first <= BACK_WITHIN, f"its first body came {first:.2f} s after it went back"
    logs = [host.log(), procs[1].log(), again.log()]
    _same_heads(logs)
    _verified_clean(logs)
    if away > DUTY_WAIT + 5:  # the commands' duty wait (not scaled): away, then back
        # (fails when it quit owing only acknowledgements, owes_at_quit False:
        # the xfail above)
        for out in outs[:2]:
            said = "[waiting] waiting for p2 (seat 2), away" in out
            assert said, f"owed a body after it quit: {owes_at_quit}; {out[-3000:]}"
            assert "[waiting] p2 (seat 2) is back: the game goes on" in out, out[-3000:]
