"""A peer's connection drops mid-game and comes back (issue 12): the other
seats' sessions say so (``dropped``, then ``back``, naming the seat and its
fingerprint), once each, and the game goes on to a clean end. Three real
peers on 127.0.0.1; the third is cancelled mid-game (its node and session
gone, sockets closed) and started again from its store."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import trio

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import Node
from table.session import SessionResult, TableSession, Update
from tui.story import update_line

LOCAL, SEATS, SCALE = "127.0.0.1", 3, 0.02


@pytest.mark.trio
async def test_the_other_seats_see_a_peer_drop_and_come_back(tmp_path: Path) -> None:
    ids = [Identity.generate() for _ in range(SEATS)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))
    seen: dict[int, list[Update]] = {s: [] for s in range(SEATS)}
    events = {s: 0 for s in range(SEATS)}

    def on_update(seat: int):
        def got(update: Update) -> None:
            seen[seat].append(update)
            events[seat] += update.kind == "event"

        return got

    async def until(done, what: str, seconds: float = 30) -> None:
        with trio.move_on_after(seconds):
            while not done():
                await trio.sleep(0.02)
            return
        pytest.fail(f"timed out waiting for {what}")

    def session(seat: int) -> tuple[Node, TableSession]:
        node = Node(ids[seat], spec, home=tmp_path / f"p{seat}", host=LOCAL, timeout=2.0)
        bot = sensible_bots("bluff", SEATS, 7, salt_source=secrets.token_bytes)[seat]
        return node, TableSession(
            node, game="bluff", proven=False, player=bot, time_scale=SCALE,
            on_update=on_update(seat),
        )  # fmt: skip

    def peer_news(seat: int) -> list[tuple[str, str]]:
        return [(u.kind, u.text) for u in seen[seat] if u.kind in ("dropped", "back")]

    results: dict[int, SessionResult] = {}
    closed = {s: trio.Event() for s in range(SEATS)}
    played = [session(s) for s in range(SEATS)]

    async def play(
        seat: int, node: Node, table: TableSession, *, task_status=trio.TASK_STATUS_IGNORED
    ) -> None:
        with trio.CancelScope() as scope:
            try:
                async with trio.open_nursery() as inner:
                    await inner.start(node.run)
                    task_status.started(scope)
                    results[seat] = await table.run()
                    await table.wait_for_peers(timeout=5.0)
                    inner.cancel_scope.cancel()
            finally:
                node.store.close()
                closed[seat].set()

    async with trio.open_nursery() as nursery:
        scopes = [await nursery.start(play, s, *played[s]) for s in range(SEATS)]
        for node, _ in played[1:]:
            await node.connect(*played[0][0].listen_address)
        await until(lambda: events[0] >= 6, "a few moves")
        # moves go through seat 0: seat 1 may reach seat 2 later (by gossip)
        await until(lambda: all(2 in played[s][0].connected for s in (0, 1)), "a full mesh")
        await trio.sleep(0.1)  # the watchers see it
        assert not any(peer_news(s) for s in range(SEATS))  # connecting is no news
        scopes[2].cancel()  # seat 2 is gone mid-game
        await until(lambda: all(peer_news(s) for s in (0, 1)), "the drop to be seen")
        name = f"seat 2 ({ids[2].public.fingerprint})"
        for s in (0, 1):
            assert peer_news(s) == [("dropped", f"lost the connection to {name}")]
        assert "断线" in update_line("dropped", peer_news(0)[0][1], "zh")
        with trio.fail_after(10):
            await closed[2].wait()  # one process (here: one node) per seat's store
        again = session(2)
        nursery.start_soon(play, 2, *again)
        await until(lambda: all(len(peer_news(s)) == 2 for s in (0, 1)), "it to come back", 60)
        for s in (0, 1):
            assert peer_news(s)[1] == ("back", f"connected again to {name}")
        await until(lambda: len(results) == SEATS, "the game to end", 180)
    for seat in range(SEATS):
        assert results[seat].clean, (seat, str(results[seat]))
        assert len(peer_news(seat)) == (2 if seat < 2 else 0)  # peers going home is no news


@pytest.mark.parametrize(
    ("lang", "dropped", "back"),
    [
        ("en", "[dropped] lost the connection to seat 2 (K3QF-7ZPA-M2XD-4RTY)",
         "[back] connected again to seat 2 (K3QF-7ZPA-M2XD-4RTY)"),
        ("zh", "[断线] 与座位2（K3QF-7ZPA-M2XD-4RTY）的连接断了",
         "[重连] 与座位2（K3QF-7ZPA-M2XD-4RTY）又连上了"),
    ],
)  # fmt: skip
def test_headless_host_and_join_print_a_drop_and_its_return(
    capsys: pytest.CaptureFixture[str], lang: str, dropped: str, back: str
) -> None:
    """``nodealer host``/``join --headless`` print what the session says,
    in the chosen language (stdout; the deal's progress goes to stderr)."""
    from argparse import Namespace

    from tui.lan import _update_printer

    show = _update_printer(Namespace(quiet=True, lang=lang))
    show(Update("dropped", "lost the connection to seat 2 (K3QF-7ZPA-M2XD-4RTY)"))
    show(Update("back", "connected again to seat 2 (K3QF-7ZPA-M2XD-4RTY)"))
    show(Update("progress", "deal 0: seat 1 locks (proofs: 2 checked + 2 own of 6)"))
    out = capsys.readouterr()
    assert out.out.splitlines() == [dropped, back]  # said even with --quiet
    assert out.err == ""  # --quiet: no progress lines


def _watcher(node: _Connections) -> TableSession:
    watcher = object.__new__(TableSession)  # only the watcher's own state
    watcher.node, watcher.peer_grace, watcher.absent_grace = node, 2.0, 10.0  # type: ignore[assignment]
    watcher._may_leave, watcher.updates, watcher.on_update = frozenset(), [], None
    watcher._read_back = True
    return watcher


class _Connections:
    """What a session reads of its node's connections (``connected``,
    ``connections_moved``, ``peer_name``), moved by the test."""

    def __init__(self, seats: int = 3) -> None:
        self.connected: set[int] = set()
        self.connections_moved = trio.Event()
        self.table = SimpleNamespace(n=seats)
        self.seat = 0
        self.ever_connected: set[int] = set()

    def now(self, *seats: int) -> None:
        self.connected = set(seats)
        self.ever_connected |= self.connected
        moved, self.connections_moved = self.connections_moved, trio.Event()
        moved.set()

    def peer_name(self, seat: int) -> str:
        return f"seat {seat} (FP{seat})"


@pytest.mark.trio
async def test_a_flap_or_a_seat_going_home_is_no_news(autojump_clock: object) -> None:
    """A connection back within the grace (2 s), even a hundred times over,
    says nothing; one gone longer says dropped, then back; a seat that
    leaves once the game is over owing nothing says nothing."""
    node = _Connections()
    watcher = _watcher(node)

    def news() -> list[str]:
        return [str(u) for u in watcher.updates]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher._watch_peers)
        node.now(1, 2)
        await trio.sleep(1)
        for _ in range(100):  # seat 2 keeps reconnecting
            node.now(1)
            await trio.sleep(0.01)
            node.now(1, 2)
            await trio.sleep(0.01)
        await trio.sleep(5)
        assert news() == []
        node.now(1)  # seat 2 gone for good
        await trio.sleep(1.9)
        assert news() == []
        await trio.sleep(0.2)
        assert news() == ["[dropped] lost the connection to seat 2 (FP2)"]
        await trio.sleep(30)
        node.now(1, 2)
        await trio.sleep(0.1)
        assert news()[1:] == ["[back] connected again to seat 2 (FP2)"]
        watcher._may_leave = frozenset({1, 2})  # the game is over, nothing owed
        node.now()
        await trio.sleep(10)
        assert len(news()) == 2
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_seat_that_never_connects_is_news(autojump_clock: object) -> None:
    """A seat never connected to is said after the absent grace (10 s from
    the start: the deal would otherwise wait on it with nothing said), and
    its arrival after that; a seat arriving within the grace is no news."""
    node = _Connections(4)
    watcher = _watcher(node)

    def news() -> list[str]:
        return [str(u) for u in watcher.updates]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher._watch_peers)
        await trio.sleep(3)
        node.now(1)  # seat 1 comes within the grace; 2 and 3 do not
        await trio.sleep(6.9)
        assert news() == []
        await trio.sleep(0.2)
        assert news() == ["[dropped] no connection to seat 2 (FP2) yet",
                          "[dropped] no connection to seat 3 (FP3) yet"]  # fmt: skip
        node.now(1, 2)
        await trio.sleep(0.1)
        assert news()[2:] == ["[back] connected to seat 2 (FP2)"]
        node.now(1)  # and now it is gone: the usual grace
        await trio.sleep(2.1)
        assert news()[3:] == ["[dropped] lost the connection to seat 2 (FP2)"]
        watcher._may_leave = frozenset({3})  # the game is over, seat 3 owes nothing
        await trio.sleep(30)
        assert len(news()) == 4
        nursery.cancel_scope.cancel()


def test_a_seat_never_there_and_its_arrival_read_in_both_languages() -> None:
    fp = "K3QF-7ZPA-M2XD-4RTY"
    assert update_line("dropped", f"no connection to seat 2 ({fp}) yet", "zh") == (
        f"[断线] 还没有与座位2（{fp}）连上"
    )
    arrived = update_line("back", f"connected to seat 2 ({fp})", "zh")
    assert arrived == f"[重连] 与座位2（{fp}）连上了"
    assert update_line("dropped", f"no connection to seat 2 ({fp}) yet") == (
        f"[dropped] no connection to seat 2 ({fp}) yet"
    )
    # a line not in those forms is shown as it came
    assert update_line("back", f"no connection to seat 2 ({fp})", "zh") == (
        f"[重连] no connection to seat 2 ({fp})"
    )


@pytest.mark.trio
async def test_an_absent_seat_waits_for_the_stored_log_and_a_missed_visit_counts(
    autojump_clock: object,
) -> None:
    """Review of the absent news: a restarted seat says nothing of an absent
    seat before its stored log is read back (the seat may have gone home
    after the game); a connection that came and went before the watcher
    looked counts as seen (its loss is news, not its absence)."""
    node = _Connections(3)
    watcher = _watcher(node)
    watcher._read_back = False
    node.ever_connected = {1}  # seat 1 was there and went before the watcher started

    def news() -> list[str]:
        return [str(u) for u in watcher.updates]

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher._watch_peers)
        await trio.sleep(20)  # still reading the log back: nothing is news
        assert news() == []
        watcher._may_leave = frozenset({2})  # read back: the game is over, seat 2 owes nothing
        watcher._read_back = True
        await trio.sleep(0.6)
        assert news() == ["[dropped] lost the connection to seat 1 (FP1)"]  # seen, so "lost"
        watcher._may_leave = frozenset()  # the log was cut back before the end: seat 2 is news
        await trio.sleep(2.1)
        assert news()[1:] == ["[dropped] no connection to seat 2 (FP2) yet"]
        await trio.sleep(60)
        assert len(news()) == 2
        nursery.cancel_scope.cancel()


def _fails_once(failure: Exception) -> Callable[[], None]:
    """A call that raises ``failure`` the first time, and nothing after."""
    left = [failure]

    def call() -> None:
        if left:
            raise left.pop()

    return call


@pytest.mark.trio
async def test_a_bug_in_the_news_does_not_take_the_table_down(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    node = _Connections(3)
    watcher = _watcher(node)
    fail = _fails_once(KeyError(1))

    def peer_name(seat: int) -> str:
        fail()
        return f"seat {seat} (FP{seat})"

    node.peer_name = peer_name  # type: ignore[method-assign]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher._watch_peers)
        await trio.sleep(12)  # the first news fails, logged; the next look says it
        assert [str(u) for u in watcher.updates] == [
            "[dropped] no connection to seat 1 (FP1) yet",
            "[dropped] no connection to seat 2 (FP2) yet",
        ]
        nursery.cancel_scope.cancel()
    assert "watching the connections" in caplog.text


@pytest.mark.trio
async def test_a_screen_that_fails_on_one_update_still_gets_the_next(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    """Review: an ``on_update`` that raised lost every later news for good."""
    node = _Connections(3)
    watcher = _watcher(node)
    shown: list[str] = []
    fail = _fails_once(RuntimeError("the screen is gone for a moment"))

    def on_update(update: Update) -> None:
        fail()
        shown.append(str(update))

    watcher.on_update = on_update
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher._watch_peers)
        await trio.sleep(30)
        node.now(1, 2)
        await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert shown == [
        "[dropped] no connection to seat 2 (FP2) yet",  # the first one failed on the screen
        "[back] connected to seat 1 (FP1)",
        "[back] connected to seat 2 (FP2)",
    ]
    assert len(watcher.updates) == 4 and "showing an update" in caplog.text


def test_a_rewound_log_takes_back_who_may_leave() -> None:
    """Review: a log cut back before the game's end kept every seat 'free
    to leave', so none was news again."""
    session = object.__new__(TableSession)
    session._may_leave = frozenset({1, 2})
    session.me, session.seat, session._faults_shown = 0, None, 0
    session.replay = SimpleNamespace(items=[], table=None, faults=[], rewind=lambda seq: None)  # type: ignore[assignment]
    session._rewind(3)
    assert session._may_leave == frozenset()
