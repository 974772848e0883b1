"""Away is not cheating (issue 27 points 1, 2, 5; protocol v3, protocol.md
§6 *Away*), at real tables of peers on 127.0.0.1:

* a seat whose process is stopped (SIGSTOP: a laptop's lid shut) 40 s while
  it owes a body is shown as away on the other screens, comes back, and the
  game ends clean for everyone, every log verifying clean;
* a seat gone past the table's patience (its link black-holed by the relay
  of tests/fault_relay.py) ends the game ABANDONED, naming only the leaver,
  with the present seats' final reveals audited; the bodies it signed
  before it saw the stop are sequenced after it and named by nobody;
* a majority of the present seats pressing "stop waiting" ends it long
  before the table's patience (the last present seat follows the vote).

On main before v3 each of these named the away seat CHEATING ("kept the
table waiting"). Clocks are scaled (``time_scale``: patience, timers)."""

from __future__ import annotations

import json
import secrets
import signal
from pathlib import Path

import pytest
import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import Node
from p2p.store import scan_log
from table.names import SeatNames
from table.pace import owes_move
from table.replay import Replay
from table.session import SessionResult, TableSession
from table.verify import EXIT_ABANDONED, verify_log
from tests.fault_relay import FaultyNet
from tests.test_session_crash import Child
from tui.story import update_line

LOCAL = "127.0.0.1"


async def until(done, what: str, seconds: float = 60, why=lambda: "") -> None:
    with trio.move_on_after(seconds):
        while not done():
            await trio.sleep(0.02)
        return
    pytest.fail(f"timed out waiting for {what} {why()}")


def _log(home: Path) -> Path:
    (log,) = (home / "tables").glob("*/log")
    return log


# ---------------------------------------------------------------- asleep, back


SLEEP_SCALE, SLEEP = 0.1, 40.0  # patience 600 s x 0.1 = 60 s > the 40 s asleep


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP/SIGCONT (POSIX)")
async def test_a_seat_asleep_40_s_while_owing_is_waited_for_and_the_game_ends_clean(
    tmp_path: Path,
) -> None:
    ids = [Identity.load_or_create(tmp_path / f"p{s}") for s in range(2)]
    child_home = tmp_path / "child"
    keys = [i.public for i in ids] + [Identity.load_or_create(child_home).public]
    spec = TableSpec(secrets.token_bytes(16), tuple(keys))
    table_file = tmp_path / "table.json"
    table_file.write_text(
        json.dumps(
            {
                "table": spec.table_id.hex(),
                "seats": [k.raw.hex() for k in spec.seats],
                "game": "bluff",
                "proven": False,
                "seed": 4,
                "time_scale": SLEEP_SCALE,
            }
        )
    )
    bots = sensible_bots("bluff", 3, 4, salt_source=secrets.token_bytes)
    nodes = [Node(ids[s], spec, home=tmp_path / f"p{s}", host=LOCAL, timeout=2.0) for s in (0, 1)]
    updates: list = []
    sessions = [
        TableSession(
            nodes[s],
            game="bluff",
            proven=False,
            player=bots[s],
            time_scale=SLEEP_SCALE,
            duty_wait=2.0,
            on_update=updates.append if s == 0 else None,
        )
        for s in (0, 1)
    ]
    results: dict[int, SessionResult] = {}
    child: Child | None = None

    async def play(s: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        try:
            async with trio.open_nursery() as inner:
                await inner.start(nodes[s].run)
                task_status.started()
                results[s] = await sessions[s].run()
                await sessions[s].wait_for_peers(timeout=20.0)
                inner.cancel_scope.cancel()
        finally:
            nodes[s].store.close()

    try:
        async with trio.open_nursery() as table:
            for s in (0, 1):
                await table.start(play, s)
            await nodes[1].connect(*nodes[0].listen_address)
            child = Child(child_home, table_file, nodes[0].listen_address)
            await child.expect("LISTEN")
            # the lid shuts while seat 2 owes the table a body
            host = sessions[0]
            # seat 2 at the table and playing (not stopped mid-join: its
            # own join deadline would then run out while it sleeps)
            await until(lambda: 2 in nodes[0].connected and 2 in nodes[1].connected, "seat 2", 60)
            await until(lambda: host.table is not None and len(host.table.events) > 8, "play", 120)
            # seat 2 owes by seat 0's final table, but under load its answer
            # may be on its way already when the lid shuts: then the table
            # waits only for its acknowledgement (not away: it owes no body);
            # wake it and try again at its next duty
            for _attempt in range(6):
                await until(lambda: 2 in host.table.owing(), "seat 2 owing a body", 120)
                child.proc.send_signal(signal.SIGSTOP)
                asleep = trio.current_time()
                with trio.move_on_after(20):
                    while [a.seat for a in sessions[0].waiting()] != [2]:
                        await trio.sleep(0.02)
                    break
                child.proc.send_signal(signal.SIGCONT)
                await until(lambda: 2 not in host.table.owing(), "seat 2's answer", 60)
            else:
                pytest.fail(
                    f"seat 2 never away: {host.table.owing()} {host.table.count} "
                    f"{updates[-5:]} {nodes[0].connected}"
                )
            waiting = [u for u in updates if u.kind == "waiting" and ", away " in u.text]
            assert waiting and waiting[0].text.startswith("waiting for seat 2, away 0:0")
            names = SeatNames(("ann", "bob", "carol"), me=0)
            for lang, said in (
                ("en", "[waiting] waiting for carol (seat 2), away 0:0"),
                ("zh", "[等待] 正在等 carol（座位2），已离开 0:0"),
            ):
                line = update_line("waiting", waiting[0].text, lang, names)
                assert line.startswith(said), line
            assert line.endswith("carol 回来后游戏继续")
            await trio.sleep(SLEEP - (trio.current_time() - asleep))
            # the table waited for seat 2 (it may owe by the entries past seat
            # 0's final point only: seat 2 asleep acknowledged none of them)
            (away,) = sessions[0].waiting()
            assert away.seat == 2, "the table waited for seat 2"
            assert away.seconds >= SLEEP - 4
            assert not sessions[0].faults and sessions[0].replay.abandoned is None
            child.proc.send_signal(signal.SIGCONT)  # it wakes
            done = await child.expect("DONE", 240)
            await until(lambda: len(results) == 2, "the game to end", 120)
            back = [u for u in updates if u.kind == "waiting" and "is back" in u.text]
            assert back and "the game goes on" in back[0].text
    finally:
        if child is not None:
            if child.proc.poll() is None:
                child.proc.send_signal(signal.SIGCONT)
            child.stop()
    assert json.loads(done)["clean"], done
    for s in (0, 1):
        assert results[s].clean, str(results[s])
    for home in (tmp_path / "p0", tmp_path / "p1", child_home):
        report = verify_log(_log(home))
        assert report.exit_code == 0, report.lines()


# ---------------------------------------------------------------- gone: patience, vote


async def _cut_table(
    tmp_path: Path,
    seats: int,
    gone: int,
    *,
    scale: float,
    patience: int,
    then,
    cut_when=None,
    bot_of=None,
) -> tuple[dict[int, SessionResult], list[TableSession], list[Node], FaultyNet]:
    """A table of ``seats`` in-process peers through the fault relay; seat
    ``gone`` is cut off once it owes a body (or once ``cut_when(table,
    nodes)`` says so; ``bot_of(seat, bot)`` may wrap a seat's bot); ``then(sessions,
    nodes, net)`` runs after that; the nodes stay up until it returns."""
    ids = [Identity.generate() for _ in range(seats)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))
    results: dict[int, SessionResult] = {}
    sessions: list[TableSession] = []
    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        routed = net.node_class()
        nodes = [
            routed(ids[s], spec, home=tmp_path / f"p{s}", host=LOCAL, timeout=2.0)
            for s in range(seats)
        ]
        bots = sensible_bots("bluff", seats, 6, salt_source=secrets.token_bytes)
        if bot_of is not None:
            bots = [bot_of(s, bot) for s, bot in enumerate(bots)]
        sessions = [
            TableSession(
                nodes[s],
                game="bluff",
                proven=False,
                player=bots[s],
                time_scale=scale,
                duty_wait=1.0,
                final_wait=3.0,
                patience=patience,
            )
            for s in range(seats)
        ]
        closing = trio.Event()

        async def play(s: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
            try:
                async with trio.open_nursery() as inner:
                    await inner.start(nodes[s].run)
                    task_status.started()
                    results[s] = await sessions[s].run()
                    await closing.wait()
                    inner.cancel_scope.cancel()
            finally:
                nodes[s].store.close()

        async with trio.open_nursery() as table:
            for s in range(seats):
                await table.start(play, s)
            for node in nodes[1:]:
                await node.connect(*nodes[0].listen_address)
            await until(lambda: all(len(n.connected) == seats - 1 for n in nodes), "a full mesh")
            host = sessions[0]
            if cut_when is None:
                await until(lambda: host.table is not None and len(host.table.events) > 8, "play")
                await until(lambda: gone in host.table.owing(), f"seat {gone} owing a body", 120)
            else:
                await until(lambda: cut_when(host.table, nodes), f"seat {gone} to be cut", 120)
            net.cut(gone)
            await then(sessions, nodes, net)
            closing.set()
        relays.cancel_scope.cancel()
    return results, sessions, nodes, net


def _assert_abandoned(log: Path, gone: int, why: str | None = None) -> None:
    report = verify_log(log)
    lines = report.lines()
    assert report.exit_code == EXIT_ABANDONED == 3, "\n".join(lines)
    assert report.verdict == "abandoned"
    assert not report.faults and not any(line.startswith("CHEATING") for line in lines), lines
    assert report.abandoned is not None and report.abandoned.seats == (gone,), lines
    assert why is None or report.abandoned.why == why
    assert [line for line in lines if line.startswith("ABANDONED: ")] == [
        f"ABANDONED: seat {gone} ({report.spec.seats[gone].fingerprint}) left the table: "
        + line.split(" left the table: ", 1)[1]
        for line in report.abandoned.lines()
    ]
    document = report.to_json()
    assert document["verdict"] == "abandoned" and document["exit"] == 3
    assert [left["seat"] for left in document["abandoned"]["left"]] == [gone]


@pytest.mark.trio
@pytest.mark.slow
async def test_a_seat_gone_past_patience_ends_it_abandoned_and_its_late_bodies_name_nobody(
    tmp_path: Path,
) -> None:
    gone, scale, patience = 2, 0.05, 100  # patience: 100 s x 0.05 = 5 s

    async def then(sessions, nodes, net) -> None:
        present = [s for s in sessions if s.me != gone]
        await until(lambda: all(s.result is not None for s in present), "the present seats", 120)
        # the leaver signed what it owed before it could see the stop: let
        # it through now, it is sequenced after the stop
        net.heal(gone)
        await until(lambda: sessions[gone].result is not None, "the leaver back", 120)
        await until(lambda: nodes[0].head >= nodes[gone].head, "its bodies sequenced", 30)

    results, _, nodes, _ = await _cut_table(
        tmp_path, 3, gone, scale=scale, patience=patience, then=then
    )
    for s in (0, 1):
        result = results[s]
        ended = result.abandoned
        assert ended is not None and ended.seats == (gone,) and ended.why == "patience", str(result)
        assert not result.faults and result.audit.ok and result.outcome is None, str(result)
        assert "abandoned: seat 2 left the table: it owed" in str(result)
    # every log, the leaver's own too, says the same: nobody cheated
    for s in range(3):
        _assert_abandoned(nodes[s].store.log_path, gone, "patience")
    replay = Replay(nodes[0].table)
    log = nodes[0].store.log_path
    after = []  # the leaver's bodies sequenced after the stop, final reveals aside
    for entry in scan_log(log).entries(log):
        body = entry.event.decoded_body()
        table = replay.table
        if table is not None and table.absence is not None and table.absence.ended is not None:
            final = body.get("t") == "deal" and body.get("msg", {}).get("type") == "final"
            if entry.event.author == gone and not final:
                after.append(body.get("t"))
        replay.feed(entry.seq, entry.term, entry.event.author, body)
    stop = replay.table.absence.ended.at  # the body that ended it abandoned
    late = [what for author, at, what in replay.table.stale if author == gone and at > stop]
    # what the leaver signed before it saw the stop (when it got to sign its
    # answer before the cut: it acts only on entries final at its side) is
    # sequenced after it: recorded, ignored, naming nobody
    assert len(late) >= len(after), (late, after)
    assert all("after the game stopped" in what for what in late), replay.table.stale
    assert not replay.faults
    # the present seats' final reveals are in: their passes were audited
    missing = replay.finals_missing()
    assert 0 not in missing and 1 not in missing


@pytest.mark.trio
@pytest.mark.slow
async def test_a_majority_saying_stop_waiting_ends_it_before_the_patience(tmp_path: Path) -> None:
    gone, scale = 3, 0.1  # the default patience: 600 s x 0.1 = 60 s

    async def then(sessions, nodes, net) -> None:
        for voter in (0, 1):
            await until(lambda v=voter: gone in [a.seat for a in sessions[v].waiting()], "away")
        start = trio.current_time()
        with pytest.raises(Exception, match="not waiting for seat 1"):
            sessions[0].stop_waiting(1)
        sessions[0].stop_waiting(gone)
        sessions[1].stop_waiting(gone)  # seat 2 follows the majority of 2 of 3
        await until(lambda: all(sessions[s].result is not None for s in (0, 1, 2)), "the end", 40)
        assert trio.current_time() - start < 30, "long before the table's patience"
        net.heal(gone)
        await until(lambda: sessions[gone].result is not None, "the leaver back", 120)

    results, _, nodes, _ = await _cut_table(tmp_path, 4, gone, scale=scale, patience=600, then=then)
    for s in (0, 1, 2):
        ended = results[s].abandoned
        assert ended is not None and ended.seats == (gone,) and ended.why == "vote"
        assert not results[s].faults
        _assert_abandoned(nodes[s].store.log_path, gone, "vote")


def _alone_on_its_turn(table, nodes) -> bool:
    """Every entry final at every peer, and only one seat may move (nothing
    is past the final point, nobody else could answer)."""
    if table is None or table.owing() or not all(n.final == n.head == nodes[0].head for n in nodes):
        return False
    return sum(1 for s in range(len(nodes)) if table.game.legal_kinds(table.state, s)) == 1


class _GoneOnItsTurn:
    """A bot that never plays the first card of a pile (its own turn, when no
    other seat may move): the person left the laptop there."""

    def __init__(self, bot) -> None:
        self.bot = bot

    def act(self, game, state, seat, known):
        others = [s for s in range(state.seats) if s != seat]
        if game.legal_kinds(state, seat) and not any(game.legal_kinds(state, s) for s in others):
            return None
        return self.bot.act(game, state, seat, known)


@pytest.mark.trio
@pytest.mark.slow
async def test_a_seat_gone_on_its_own_turn_is_waited_for_then_left(tmp_path: Path) -> None:
    """A seat cut off on its own turn, when nothing is past the final point
    and nobody else may move, owes no body and no acknowledgement: before,
    the table hung with no waiting line on any screen and no end (review of
    30e17a1, #7). It is away after duty_wait and left after the patience."""
    gone, scale, patience = 2, 0.05, 100  # patience: 100 s x 0.05 = 5 s

    async def then(sessions, nodes, net) -> None:
        present = [s for s in sessions if s.me != gone]
        await until(
            lambda: all(gone in [a.seat for a in s.waiting()] for s in present), "away", 30
        )
        await until(lambda: all(s.result is not None for s in present), "the present seats", 60)
        net.heal(gone)  # back, it learns it left
        await until(lambda: sessions[gone].result is not None, "the leaver back", 120)

    results, _, nodes, _ = await _cut_table(
        tmp_path, 3, gone, scale=scale, patience=patience, then=then,
        cut_when=lambda table, nodes: _alone_on_its_turn(table, nodes)
        and gone in {s for s in range(3) if owes_move(table, s)},
        bot_of=lambda s, bot: _GoneOnItsTurn(bot) if s == gone else bot,
    )  # fmt: skip
    for s in (0, 1):
        ended = results[s].abandoned
        assert ended is not None and ended.seats == (gone,) and ended.why == "patience"
        assert not results[s].faults, str(results[s])
        assert "it owed its move" in str(results[s]), str(results[s])
    for s in range(3):  # the leaver's own log too
        _assert_abandoned(nodes[s].store.log_path, gone, "patience")
