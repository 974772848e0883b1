"""(v3) The turn timer (issue 27 point 7, table/turn_timer.py): the setup's
``turn_time``, the ``auto`` mark of a move (accepted on v3 tables only, ignored
by the game) and a person's idle seat moved for by its own peer."""

from __future__ import annotations

import secrets

import pytest
import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.store import read_log
from table.bot_table import play_bot_table
from table.local import LocalTable
from table.machine import Table, TableSetup
from table.replay import SetupError, parse_setup, setup_body
from table.turn_timer import AUTO, TurnTimer, event_text, owes_move
from table.verify import verify_log


def _first_move(version: int) -> tuple[Table, Table, int, dict]:
    """Two copies of a 3-seat unproven Bluff table of ``version`` just before
    its first player move, and that move (author, body) as a bot signs it."""
    setup = TableSetup(b"turn-%d" % version, "bluff", 3, proven=False, version=version)
    local = LocalTable(setup, sensible_bots("bluff", 3, 2), seed=2)
    moves: list[tuple[int, dict]] = []
    local.on_body = lambda a, b: moves.append((a, b)) if b["t"] == "move" else None
    while not moves:
        local.step()
    author, body = moves[0]
    tables = Table(setup), Table(setup)
    for table in tables:
        for a, b in local.log[:-1]:
            assert table.feed(a, b).ok
    return *tables, author, body


def test_auto_move_is_accepted_on_v3_and_marked_not_played_differently() -> None:
    table, plain, author, body = _first_move(3)
    assert plain.feed(author, body).ok
    verdict = table.feed(author, {**body, "auto": True})
    assert verdict.ok, verdict
    index = len(table.events) - 1
    while str(table.events[index]) != str(plain.events[len(table.events) - 1]):
        index -= 1  # derived events may follow the move
    assert table.auto_moves == {index}
    assert table.game.encode(table.state) == plain.game.encode(plain.state), "the game ignores it"
    assert event_text(table, index).endswith(AUTO)
    assert not event_text(plain, index).endswith(AUTO)


def test_auto_move_is_refused_on_v2_logs_and_auto_false_on_v3() -> None:
    table, _, author, body = _first_move(2)
    before = table.game.encode(table.state)
    verdict = table.feed(author, {**body, "auto": True})
    assert not verdict.ok and verdict.seat == author and "expected t, event" in verdict.reason
    assert table.game.encode(table.state) == before and not table.auto_moves
    table, _, author, body = _first_move(3)
    before = table.game.encode(table.state)
    verdict = table.feed(author, {**body, "auto": False})
    assert not verdict.ok and verdict.seat == author and "auto is true" in verdict.reason
    assert table.game.encode(table.state) == before


def _spec(version: int) -> TableSpec:
    keys = tuple(Identity.generate().public for _ in range(3))
    return TableSpec(secrets.token_bytes(16), keys, version)


def test_setup_turn_time_is_v3_only_and_bounded() -> None:
    assert parse_setup(_spec(3), setup_body("bluff", 3, turn_time=20)).turn_time == 20
    assert parse_setup(_spec(3), setup_body("bluff", 3)).turn_time is None
    assert "turn_time" not in setup_body("bluff", 3)  # tables without one: as before
    with pytest.raises(SetupError, match="expected t, game"):
        parse_setup(_spec(2), setup_body("bluff", 3, turn_time=20))
    for bad in (0, 3601, 2.5, True, "20"):
        with pytest.raises(SetupError, match="turn_time is 1"):
            parse_setup(_spec(3), {**setup_body("bluff", 3), "turn_time": bad})


def test_turn_timer_counts_from_the_turn_and_chooses_a_legal_move() -> None:
    setup = TableSetup(b"turn-owes", "bluff", 3, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 3, 2), seed=2)
    while not any(owes_move(local.table, s) for s in range(3)):
        local.step()
    table = local.table
    (author,) = [s for s in range(3) if owes_move(table, s)]
    assert owes_move(table, author) == {"play"}  # B6: its turn to play
    timer = TurnTimer(author, 5.0)
    due = timer.look(table, held=0.0)
    assert due is not None and 4.0 < (timer.seconds_left() or 0) <= 5.0
    assert timer.look(table, held=2.0) == pytest.approx(due + 2.0)  # a screen's hold
    other = next(s for s in range(3) if not owes_move(table, s))
    idle = TurnTimer(other, 5.0)
    assert idle.look(table, 0.0) is None and idle.seconds_left() is None
    event = timer.choose(table, {})
    assert event is not None and event.author == author
    table.game.apply(table.state, event)  # legal now
    assert timer.choose(table, {}) is None, "asked once per table"


@pytest.mark.trio
@pytest.mark.slow
async def test_idle_person_is_moved_for_by_its_turn_timer(tmp_path) -> None:
    """Seat 0 is a person who never presses a key: every move of seat 0 is
    its own peer's auto move (marked auto in the log), the game ends clean
    and the log verifies clean."""
    left: list[float] = []
    sessions = {}

    def got(seat: int, session) -> None:
        sessions[seat] = session
        if seat == 0:
            session.person, session.turn_time = True, 20  # 20 s × 0.05: 1 s

    async def watch() -> None:
        while True:
            session = sessions.get(0)
            if session is not None:
                value = session.turn_seconds_left()
                if value is not None:
                    left.append(value)
            await trio.sleep(0.1)

    with trio.fail_after(240):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            peers = await play_bot_table(
                "bluff",
                3,
                tmp_path,
                proven=False,
                seed=4,
                time_scale=0.05,
                person=0,
                on_session=got,
                processes=0,
            )
            nursery.cancel_scope.cancel()
    for peer in peers:
        assert peer.result.clean, peer.result
    entries = read_log(peers[0].log_path).entries
    bodies = [(e.event.author, e.event.decoded_body()) for e in entries]
    assert bodies[0][1].get("turn_time") == 20
    mine = [b for a, b in bodies if a == 0 and b.get("t") == "move"]
    others = [b for a, b in bodies if a != 0 and b.get("t") == "move"]
    assert mine and all(b.get("auto") is True for b in mine)
    assert others and not any("auto" in b for b in others), "bots play: no turn timer"
    assert left and max(left) <= 1.0 + 0.05
    report = verify_log(peers[1].log_path)
    assert report.exit_code == 0, report.lines()
    table = sessions[0].table
    assert table is not None and table.auto_moves
    assert all(table.events[i].author == 0 for i in table.auto_moves)
    told = [u.text for u in sessions[1].updates if u.kind == "event" and u.text.endswith(AUTO)]
    assert told, "the other seats' news marks the auto moves"
    # nodealer replay tells them so too, in both languages
    from tui.replay import load

    for lang, mark in (("en", " (auto)"), ("zh", "（自动）")):
        steps, _ = load(peers[1].log_path, lang)
        marked = [s for s in steps if mark in s.text]
        assert marked and all(s.seat == 0 for s in marked), [s.text for s in steps][:12]
        assert len(marked) == len(table.auto_moves)


def test_a_seat_refuses_a_setup_with_another_turn_timer_than_agreed() -> None:
    from table.turn_timer import TurnClock

    setup = parse_setup(_spec(3), setup_body("bluff", 3, turn_time=1))
    seat = TurnClock()
    assert seat._turn_time_differs(setup) is None, "no lobby agreement: no opinion (bots)"
    seat.turn_time, seat.turn_agreed = 30, True
    said = seat._turn_time_differs(setup)
    assert said == "the host set up a turn timer of 1 s, but this seat agreed to 30 s"
    seat.turn_time = None
    assert "agreed to none" in (seat._turn_time_differs(setup) or "")
    seat.turn_time = 1
    assert seat._turn_time_differs(setup) is None


@pytest.mark.slow
def test_nodealer_host_turn_time_reaches_every_seat(tmp_path) -> None:
    """``nodealer host --turn-time 20`` (headless: bots play, so nothing is
    auto): the lobby's settings carry it, the joiner agrees to it, the
    setup says it, the game is clean and no move is marked auto."""
    from tests.test_lan import assert_one_clean_game, host, join

    hosting = host(tmp_path, "bluff", 2, "--unproven", "--turn-time", "20")
    joiner = join(tmp_path, "p1", hosting.port)  # type: ignore[attr-defined]
    assert_one_clean_game([hosting, joiner])
    for proc in (hosting, joiner):
        report = verify_log(proc.log())
        assert report.setup is not None and report.setup.turn_time == 20
        bodies = [e.event.decoded_body() for e in read_log(proc.log()).entries]
        assert not any(b.get("auto") for b in bodies if isinstance(b, dict))
    assert "turn timer 20 s" in hosting.text()  # the settings it offers


def test_doctests() -> None:
    import doctest

    import tui.turn_clock

    assert doctest.testmod(tui.turn_clock).failed == 0


def test_in_mao_the_seat_whose_turn_it_is_owes_its_play() -> None:
    """M23: every seat may play at any time (out of turn is a penalty), so
    the turn is the state's: that seat owes its play, the others nothing;
    the bot's move for it is a legal one of that seat, never a rule author's."""
    from engines.core import to_data
    from engines.mao_events import MaoConfig

    config = to_data(MaoConfig(hand_size=3))
    setup = TableSetup(b"turn-mao", "mao", 3, config=config, proven=False)
    local = LocalTable(setup, sensible_bots("mao", 3, 1), seed=1)
    while not any(owes_move(local.table, s) for s in range(3)):
        local.step()
    table = local.table
    turn = table.state.turn
    assert owes_move(table, turn) == {"play"}
    assert not any(owes_move(table, s) for s in range(3) if s != turn)
    timer = TurnTimer(turn, 5.0)
    event = timer.choose(table, local.seats[turn].knowledge())
    assert event is not None and event.author == turn and event.KIND in ("play", "draw", "say")
    table.game.apply(table.state, event)


def test_no_countdown_stays_at_zero_when_the_bot_has_no_move() -> None:
    setup = TableSetup(b"turn-none", "bluff", 3, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 3, 2), seed=2)
    while not any(owes_move(local.table, s) for s in range(3)):
        local.step()
    table = local.table
    (author,) = [s for s in range(3) if owes_move(table, s)]

    class Waits:
        def act(self, game: object, state: object, seat: int, known: dict) -> None:
            return None

    timer = TurnTimer(author, 0.0)
    timer._bot = Waits()
    assert timer.look(table, 0.0) is not None and timer.seconds_left() == 0.0
    assert timer.choose(table, {}) is None
    assert timer.look(table, 0.0) is None and timer.seconds_left() is None


def test_the_countdown_runs_for_a_person_on_v3_only_and_stops_with_the_game() -> None:
    from types import SimpleNamespace

    from table.turn_timer import TurnClock

    for version, person, counts in ((3, True, True), (3, False, False), (2, True, False)):
        setup = TableSetup(b"turn-clock", "bluff", 3, proven=False, version=version, turn_time=5)
        local = LocalTable(setup, sensible_bots("bluff", 3, 2), seed=2)
        while not any(owes_move(local.table, s) for s in range(3)):
            local.step()
        clock = TurnClock()
        clock.me = next(s for s in range(3) if owes_move(local.table, s))
        clock.person, clock.time_scale = person, 1.0
        clock.replay = SimpleNamespace(table=local.table, stopped=False)
        clock.held_seconds = lambda: 0.0  # type: ignore[method-assign]
        assert (clock._turn_wake(100.0) is not None) is counts
        left = clock.turn_seconds_left()
        assert (left is not None and 4.0 < left <= 5.0) if counts else left is None
        clock.replay.stopped = True  # a fault, or (v3) an abandoned end
        assert clock._turn_wake(100.0) is None and clock.turn_seconds_left() is None
