"""One peer playing one game at one table, on top of a running :class:`~p2p.node.Node`.

Theory of operation
-------------------
The node gives every peer the same ordered, signed log; the session turns it
into a game. It is the only place where the network, the table machine and a
player meet, and it adds no rules of its own: everything it decides is a
body it signs into the log, judged by every peer (and later the verifier)
with the same pure :class:`~table.replay.Replay`.

*Setup.* The host (seat 0) makes the table's first body the setup (game,
engine config, proven deals; protocol.md §7.1). Every peer builds its
:class:`~table.machine.Table` from that entry; a setup that does not fit the
table (seat count, unknown game, a different game than the peer expected)
stops the session with a fault.

*The loop.* One nursery holds two tasks: a reader that passes
``node.entries()`` (entries and :class:`~p2p.node.Rewound` notices) into a
memory channel, and the loop that owns the table. The loop takes whatever
entries have arrived, feeds them in one worker thread (proof checks are
heavy), then acts - but only when it has consumed the whole log it holds and
none of its own bodies are still on their way into the log. That one rule
keeps every duty from being sent twice (the table only changes once the body
is back in the log) and makes a restart safe: the node resubmits whatever we
signed before a crash, and we wait for it. To act is, in order:

1. its duties (:meth:`~table.seat.Seat.duties`: shuffle and lock passes, keys,
   relocks, identity claims, commitments, final reveals), computed in a worker
   thread; the seat's secrets (deal keys, draw values) are written to the
   node's secret store, fsynced, *before* any body made from them is signed;
2. a pending timer whose seconds (times ``time_scale``) have passed since
   this peer saw it start: its ``timer`` word (v3; on v2 logs only as the
   sequencer, carrying the term; :mod:`table.clock`, §7.2);
3. the player: a bot (``act``) here, or a person through
   :meth:`TableSession.submit_move`. Moves carry ``at`` (how many table bodies
   the author had seen), so a move overtaken by another seat's is dropped as
   stale instead of blamed.

*Restart.* Secrets come back from the node's store; the log is replayed from
entry 1 (the table is deterministic), then play goes on where it stopped.
The player's part (a Mao author's rules) goes back to the player; a person's
seat has none until its screen hands one over (:meth:`TableSession.
adopt_player`), so the session keeps that part and gives it then.

*Rewind.* When the node cuts entries back (a failover dropped entries no
majority held), the table is rebuilt from the kept entries. Our own cut
events are resubmitted by the node itself (its outbox), so the session sends
nothing again; it only waits for them, as after a restart.

*Away* (v3, :mod:`table.absence`). Every seat's duties are public
(:meth:`~table.machine.Table.duties`). Another seat that has owed a body for
``duty_wait`` seconds without a break is *away*: reported (``waiting``) and
readable (:meth:`TableSession.waiting`), never a fault. Past the table's
patience (or a person's :meth:`TableSession.stop_waiting`, or a majority of
the present seats' vote) the session signs ``abandon``; once every present
seat has, the game ends abandoned (final reveals only). (v2 logs: the
session signed ``overdue`` instead, and a majority named the seat.)

*Faults.* A refused body is a :class:`~table.replay.Fault` naming the seat. The
session reports it (``on_update``), stops playing - no moves, no timers, no
further crypto work - but still makes its final reveal of every dealt deal so
the audit can run. It finishes once it has made its own final reveals and
every other seat's are in (after an abandoned end: every present seat's) -
or, with a seat refusing its own, once the log has not moved for
``final_wait`` seconds ((v3) at least the table's patience: the seat has
then left the game abandoned; v2 logs: it was named) - audits every deal
and returns a :class:`SessionResult`. The session's side of absence lives
in :mod:`table.waiting`; its reports in :mod:`table.reports`; a table of bot
peers in :mod:`table.bot_table`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

import msgpack
import trio

from engines.bots import Bot
from engines.core import EngineError, Event, Outcome
from mental_poker.errors import MentalPokerError, Verdict
from mental_poker.groups import group_for
from mental_poker.seat import DealSecrets
from p2p.envelope import EventError
from p2p.node import LogItem, Node, Rewound

from .absence import Away, audit_present
from .clock import TimerClock
from .machine import Table, TableSetup
from .pace import Pace, Pacer, people_kinds, takes_turn
from .peer_news import watch_peers
from .progress import deal_line
from .replay import Fault, Replay, setup_body
from .reports import SessionResult, Snapshot, Update
from .seat import Seat
from .turn_timer import TurnClock, event_text
from .waiting import AwayWatch, NotWaiting

log = logging.getLogger("nodealer.table")

SECRETS_NAME = "table-seat"
FINAL_WAIT = 30.0
DUTY_WAIT = 30.0
PEER_GRACE = 2.0  # seconds a connection may be gone before it is news (a flap is not)
ABSENT_GRACE = 10.0  # seconds from the start a seat may take to connect before it is news


class SessionError(Exception):
    """The session cannot do what was asked (clear message for the player)."""


class MoveRefused(SessionError):
    """A move the player may not make now; nothing was sent."""


class TableMovedOn(MoveRefused):
    """The table changed after the person chose a move; nothing was sent."""


class SharedFeed:
    """One public table for several seats played in one process (the bots of
    a child process, :mod:`table.bot_process`): their nodes hold the same
    log, so the first session to get an entry feeds it - every proof checked
    once per process instead of once per seat - and the others only check
    that their own log says the same. Sessions take turns (``lock``), so the
    table never changes under a session that reads it. A session whose log
    is cut back (a rewind) leaves the feed and goes on with its own copy."""

    def __init__(self) -> None:
        self.replay: Replay | None = None
        self.lock = trio.Lock()
        self._audit: tuple[int, Verdict] | None = None

    def audit(self) -> Verdict:
        """The audit of the shared table, run once per log length."""
        assert self.replay is not None
        if self._audit is None or self._audit[0] != self.replay.fed:
            self._audit = (self.replay.fed, self.replay.audit())
        return self._audit[1]


class TableSession(TimerClock, TurnClock):
    """One seat's play at one table (see the module docstring).

    ``game``/``config``/``proven``: the host (seat 0) sets the table up with
    them; another seat may pass ``game`` to refuse a table of another game.
    ``player``: a bot that plays this seat, or None when a person plays it
    through :meth:`submit_move` (reading :attr:`snapshot`). ``time_scale``:
    real seconds per game second on this peer's clock (:mod:`table.clock`).
    ``on_update``: called on the trio thread with every :class:`Update`; it
    must neither block nor raise. ``final_wait``: once the game is over and
    our own final reveals are made, how long the log may stand still before
    a seat that never makes its own is named.
    ``shared``: a :class:`SharedFeed` this session feeds together with the
    other seats of this process. ``pace``: a bot seat waits for the people
    at the table (:mod:`table.pace`); None: it moves as soon as it may."""

    def __init__(
        self,
        node: Node,
        *,
        game: str | None = None,
        config: Any = None,
        proven: bool = True,
        player: Bot | None = None,
        time_scale: float = 1.0,
        on_update: Callable[[Update], None] | None = None,
        final_wait: float = FINAL_WAIT,
        duty_wait: float = DUTY_WAIT,
        shared: SharedFeed | None = None,
        pace: Pace | None = None,
        patience: int | None = None,
    ) -> None:
        me = node.table.seat_of(node.identity.public)
        if me is None:
            raise SessionError(f"{node.fingerprint} holds no seat at {node.table}")
        if me == 0 and game is None:
            raise SessionError("the host (seat 0) must say which game the table plays")
        if not time_scale > 0:
            raise SessionError("time_scale must be positive")
        self.node = node
        self.me = me
        self.game_name, self.config, self.proven = game, config, proven
        self.player = player
        self.time_scale = time_scale
        self.on_update = on_update
        self.final_wait = final_wait
        self.duty_wait = duty_wait
        self.patience = patience  # (v3) the host writes it into the setup (seconds)
        self._away = AwayWatch(node, me, duty_wait, time_scale)  # table/waiting.py
        # (v3) a session gets final entries only, never cut: nothing to
        # rewind, so its replay keeps no entries (issue 24: memory bounded
        # by the table) unless seats of this process share it
        rewinds = node.table.version < 3 or shared is not None
        self.replay = Replay(node.table, keep=rewinds)
        self._pacer = None if pace is None else Pacer(pace)
        self._shared = shared
        if shared is not None:
            if shared.replay is None:
                shared.replay = self.replay
            self.replay = shared.replay
        self.seat: Seat | None = None
        self.updates: list[Update] = []
        self._snapshot = Snapshot(0, None, None)
        self._shown = 0  # engine events already reported
        self._faults_shown = 0
        self._stale_shown = 0
        self._over_shown = False
        self._own_fed = 0  # our own entries fed (they carry counters 0, 1, ...)
        self._init_clock()  # table.clock: this seat's timers
        self._last_progress = 0.0  # when the log last brought us anything
        self._finals_sent: set[int] = set()
        self._refusing: str | None = None  # why we refuse the host's setup
        self._last_progress_text: str | None = None
        self._deal_shown: int | None = None  # the deal whose passes progress last showed
        self._may_leave: frozenset[int] = frozenset()  # seats whose going is no news
        self.peer_grace = PEER_GRACE
        self.absent_grace = ABSENT_GRACE
        self._read_back = False  # the log this peer held is fed (set on trio's side)
        self._refused = False
        self._secrets_blob: bytes | None = None
        self._restored: tuple[dict[int, DealSecrets], dict[tuple[str, int], bytes]] | None = None
        self._player_secrets: bytes | None = None  # the player's part, as last saved or restored
        self.result: SessionResult | None = None
        self.timings: dict[str, float] = {}

    # ---------------------------------------------------------------- for the player

    @property
    def table(self) -> Table | None:
        return self.replay.table

    @property
    def view(self) -> dict[str, Any] | None:
        """This seat's view of the game (only what it may know), once set up."""
        return self._snapshot.view

    @property
    def snapshot(self) -> Snapshot:
        """The table as last fed: state, view and known faces, consistent."""
        return self._snapshot

    @property
    def faults(self) -> list[Fault]:
        return list(self.replay.faults)

    @property
    def outcome(self) -> Outcome | None:
        return self.replay.outcome()

    def legal_kinds(self) -> frozenset[str]:
        """Kinds of move this seat may make now (empty once stopped)."""
        table, state = self.replay.table, self._snapshot.state
        if table is None or state is None or self.replay.stopped:
            return frozenset()
        return table.game.legal_kinds(state, self.me)

    async def submit_move(self, event: Event, *, seen: int | None = None) -> None:
        """Sign and send a move of this seat (raises :class:`MoveRefused`).
        ``seen``: the table (its body count) the person chose the move on;
        refused (:class:`TableMovedOn`) if the table has moved on since."""
        table, snap = self.replay.table, self._snapshot
        if table is None or snap.state is None:
            raise MoveRefused("the game has not been set up yet")
        if seen is not None and seen != snap.count:
            raise TableMovedOn("the table moved on before your move went out: look again")
        if self.replay.abandoned is not None:
            raise MoveRefused("the game ended: a seat left the table")
        if self.replay.stopped:
            raise MoveRefused("the game was stopped: a seat cheated")
        if event.SYSTEM or event.author != self.me:
            raise MoveRefused(f"seat {self.me} cannot make {event}")
        if self.node.next_own_counter > self._own_fed:
            raise MoveRefused("your last move is still on its way to the table")
        try:
            table.game.apply(snap.state, event)
        except EngineError as exc:
            raise MoveRefused(str(exc)) from None
        seat = self.seat
        if seat is None:
            raise MoveRefused("the game has not been set up yet")
        await self.node.submit(self._stamped(seat.move_body(event, at=snap.count)))

    # ---------------------------------------------------------------- running

    def _mark(self, what: str) -> None:
        if f"{what}_t" not in self.timings:
            self.timings[f"{what}_t"] = time.time()
            self.timings[f"{what}_cpu"] = time.process_time()

    async def run(self) -> SessionResult:
        """Play until the game is over (or stopped) and audited."""
        self._mark("start")
        self._restore_secrets()
        if self.me == 0 and self.node.next_own_counter == 0 and self.node.head == 0:
            assert self.game_name is not None
            v3 = self.node.table.version >= 3
            patience = self.patience if v3 else None
            turn_time = self.turn_time if v3 else None  # table.turn_timer
            body = setup_body(
                self.game_name, self.node.table.n, self.config, self.proven, patience, turn_time
            )
            await self.node.submit(body)
        send, receive = trio.open_memory_channel[LogItem | Rewound](math.inf)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._read_log, send)
            nursery.start_soon(self._watch_peers)
            result = await self._loop(receive)
            nursery.cancel_scope.cancel()
        return result

    async def _read_log(self, send: trio.MemorySendChannel[LogItem | Rewound]) -> None:
        async for item in self.node.entries():
            send.send_nowait(item)

    async def _watch_peers(self) -> None:
        """Say when this peer loses its connection to another seat, and
        when it has it again (:func:`table.peer_news.watch_peers`)."""
        await watch_peers(self)

    async def _loop(self, receive: trio.MemoryReceiveChannel[LogItem | Rewound]) -> SessionResult:
        while True:
            batch: list[LogItem | Rewound] = []
            with trio.move_on_at(self._wake_at()):
                batch.append(await receive.receive())
            while True:
                try:
                    batch.append(receive.receive_nowait())
                except trio.WouldBlock:
                    break
            shared = self._shared
            async with shared.lock if shared is not None else nullcontext():
                result = await self._step(batch)
            if result is not None:
                return result

    async def _step(self, batch: list[LogItem | Rewound]) -> SessionResult | None:
        if batch:
            updates = await trio.to_thread.run_sync(self._feed_batch, batch)
            self._report(updates)
            self._last_progress = trio.current_time()
        # once caught up, whoever may leave is known (_feed_batch set it): news may start
        self._read_back = self._read_back or self._caught_up()
        self._report(self._away.look(self.replay))
        if self._finished():
            self._report([Update("progress", "auditing every deal from the revealed keys")])
            self._mark("audit")
            result = await trio.to_thread.run_sync(self._finish)
            self._mark("done")
            table = self.replay.table
            self.timings["deals"] = 0 if table is None else len(table.deals)
            result.timings = dict(self.timings)
            self.result = result
            self._report([Update("done", str(result))])
            return result
        await self._act()
        return None

    # ---------------------------------------------------------------- feeding (worker thread)

    def _feed_batch(self, batch: list[LogItem | Rewound]) -> list[Update]:
        updates: list[Update] = []
        for item in batch:
            if isinstance(item, Rewound):
                self._leave_shared()
                self._rewind(item.seq)
                updates.append(Update("rewound", f"log cut back to #{item.seq}", item.seq))
                continue
            self._feed_item(item)
            if item.author == self.me:
                self._own_fed += 1
            table = self.replay.table
            if table is not None and table.refusal is not None and table.refusal[0] == self.me:
                self._refused = True  # our refusal is already in the log (a restart)
            if self.seat is None and self.replay.table is not None:
                self._start_seat()
                setup = self.replay.setup
                assert setup is not None
                mode = "proven" if setup.proven else "unproven"
                text = f"{setup.game}, {setup.seats} seats, {mode} deals"
                updates.append(Update("setup", text, item.seq))
            updates.extend(self._news(item.seq))
            table = self.replay.table
            if table is not None and "move_t" not in self.timings:
                if any(not event.SYSTEM for event in table.events):
                    self._mark("move")
            if table is not None and table.over:
                self._mark("over")
        table = self.replay.table
        if table is not None and (table.over or self.replay.stopped):
            owing = set(self.replay.finals_missing())
            self._may_leave = frozenset(s for s in range(table.setup.seats) if s not in owing)
        self._refresh_snapshot()
        return updates

    def _feed_item(self, item: LogItem) -> None:
        replay = self.replay
        if self._shared is None or len(replay.items) < item.seq:
            replay.feed(item.seq, item.term, item.author, item.body, item.hash)
            return
        fed = replay.items[item.seq - 1]  # another seat of this process fed it
        if (fed.term, fed.author, fed.body) != (item.term, item.author, item.body):
            # our log differs (it is about to be cut back): go on alone
            self._leave_shared(item.seq - 1)
            self.replay.feed(item.seq, item.term, item.author, item.body, item.hash)

    def _leave_shared(self, keep: int | None = None) -> None:
        """Go on with a replay of our own (the first ``keep`` entries of the
        shared one, all of them by default)."""
        if self._shared is None:
            return
        self._shared = None
        items = self.replay.items if keep is None else self.replay.items[:keep]
        private = Replay(self.node.table)
        private.items = list(items)
        private.rewind(len(items))
        self.replay = private
        if private.table is not None:
            self._start_seat()
        else:
            self.seat = None

    def _start_seat(self) -> None:
        table = self.replay.table
        assert table is not None
        differs = self._setup_differs(table.setup)
        if differs is not None and self._refusing is None:
            # not our table: say so in the log (a `refuse` body) before
            # anything else, so that nobody waits for us, then stop
            found = Fault(0, self.replay.name(0), differs, 1)
            self.replay.faults.append(found)
            self._refusing = differs
        self._away.start(table)
        old = self.seat
        self.seat = Seat(table, self.me)
        if old is not None:
            self.seat.secrets, self.seat.draw_values = old.secrets, old.draw_values
        elif self._restored is not None:
            self.seat.secrets, self.seat.draw_values = self._restored
            self._restored = None

    def _setup_differs(self, setup: TableSetup) -> str | None:
        """Why the host's setup is not the table this seat agreed to play
        (protocol.md §7.1), if it is not: another game, another config (when
        this seat named its game) or proofs switched on or off."""
        if self.game_name is not None and setup.game != self.game_name:
            return f"the host set up {setup.game}, not {self.game_name}"
        if self._turn_time_differs(setup) is not None:  # table.turn_timer
            return self._turn_time_differs(setup)
        if setup.proven != self.proven:
            said = "proven" if self.proven else "unproven"
            got = "proven" if setup.proven else "unproven"
            return f"the host set up {got} deals, but this seat agreed to {said} ones"
        if self.game_name is not None:
            agreed = replace(setup, config=self.config, proven=self.proven)
            try:
                same = agreed.decoded_config() == setup.decoded_config()
            except (EngineError, ValueError, TypeError):
                same = False
            if not same:
                return (
                    f"the host set up {setup.game} with config {setup.config!r:.80}, "
                    f"but this seat agreed to {self.config!r:.80}"
                )
        return None

    def _rewind(self, seq: int) -> None:
        self.replay.rewind(seq)
        self._may_leave = frozenset()  # _feed_batch sets it again if the game is still over
        self._deal_shown = None
        self._own_fed = sum(1 for item in self.replay.items if item.author == self.me)
        table = self.replay.table
        self._over_shown = table is not None and table.over
        self._shown = len(table.events) if table is not None else 0
        self._faults_shown = min(self._faults_shown, len(self.replay.faults))
        self._stale_shown = len(table.stale) if table is not None else 0
        if table is not None:
            self._start_seat()
        else:
            self._restored = (
                None
                if self.seat is None
                else (
                    self.seat.secrets,
                    self.seat.draw_values,
                )
            )
            self.seat = None

    def _progress(self) -> list[str]:
        """Where the deals are (:mod:`table.progress`: which seat is working
        on which pass, how many proofs this peer has checked of how many):
        the deal last shown, once it is dealt (its final count), then the
        deal under way, if any."""
        table = self.replay.table
        if table is None:
            return []
        lines: list[str] = []
        shown = self._deal_shown
        if shown is not None and shown < len(table.deals) and table.deals[shown].dealt:
            line = deal_line(shown, table.deals[shown], self.me)
            if line is not None:
                lines.append(line)
            self._deal_shown = None
        for number, deal in enumerate(table.deals):
            if deal.phase in ("shuffle", "lock"):
                line = deal_line(number, deal, self.me)
                if line is not None:
                    lines.append(line)
                    self._deal_shown = number
                break
        return lines

    def _news(self, seq: int) -> list[Update]:
        out: list[Update] = []
        table = self.replay.table
        for progress in self._progress():
            if progress != self._last_progress_text:
                self._last_progress_text = progress
                out.append(Update("progress", progress, seq))
        if table is not None:
            events = range(self._shown, len(table.events))  # marked (auto): table.turn_timer
            out.extend(Update("event", event_text(table, i), seq) for i in events)
            self._shown = len(table.events)
            for author, _, what in table.stale[self._stale_shown :]:
                out.append(Update("stale", f"seat {author}: {what}", seq))
            self._stale_shown = len(table.stale)
        for found in self.replay.faults[self._faults_shown :]:
            out.append(Update("fault", f"{found}; the game is stopped", found.seq))
        self._faults_shown = len(self.replay.faults)
        outcome = self.replay.outcome()
        if outcome is not None and not self._over_shown:
            out.append(Update("over", str(outcome), seq))
            self._over_shown = True
        return out

    def _refresh_snapshot(self) -> None:
        table, seat = self.replay.table, self.seat
        if table is None or seat is None:
            self._snapshot = Snapshot(0, None, None)
            return
        known = seat.knowledge()
        view = table.game.view(table.state, self.me, known)
        self._snapshot = Snapshot(table.count, table.state, view, known)

    # ---------------------------------------------------------------- acting

    def _caught_up(self) -> bool:
        return self.replay.fed >= self.node.head and (
            self.node.next_own_counter <= self._own_fed
        )

    async def _act(self) -> None:
        if self._refusing is not None:
            if not self._refused:
                await self._publish({"t": "refuse", "reason": self._refusing[:300]})
                self._refused = True
                self.replay.broken = True  # we play nothing at this table
            return
        table, seat = self.replay.table, self.seat
        if table is None or seat is None or self.replay.broken:
            return
        if not self._caught_up():
            if self.replay.fed >= self.node.final:  # (v3) the rest is tentative: table/waiting.py
                body = self._away.body_ahead(self.replay, self._own_fed)
                if body is not None:
                    await self._publish(body)
            return
        stopped = self.replay.stopped
        duties = await trio.to_thread.run_sync(seat.duties, stopped)
        if table.over or stopped:
            # a final reveal goes out once per deal: one the table refused
            # stays refused (and named), it is not sent again and again
            finals = [b for b in duties if b["t"] == "deal" and b["msg"]["type"] == "final"]
            again = {b["deal"] for b in finals} & self._finals_sent
            duties = [b for b in duties if not (b in finals and b["deal"] in again)]
            self._finals_sent.update(b["deal"] for b in finals)
        if duties:
            await self._save_secrets()
            for body in duties:
                await self._publish(body)
            return
        absence = None if self.replay.broken else self._away.body(table, stopped)
        if absence is not None:  # an abandon (v3), an overdue (v2 logs): table/waiting.py
            await self._publish(absence)
            return
        if table.over or stopped:
            return
        if await self._time_out_timer(table):
            return
        if await self._auto_move(table, seat):  # (v3) an idle person's turn: table.turn_timer
            return
        if self.player is not None:
            if self._pacer is not None:
                event = await self._paced_move(table, seat, self._pacer)
            else:
                event = await trio.to_thread.run_sync(self._ask_player, table, seat)
            if event is not None:
                # what the player must still know after a crash (a Mao
                # author's rule and salt) is on disk before the move is signed
                await self._save_secrets()
                await self._publish(seat.move_body(event, at=table.count))

    def _ask_player(self, table: Table, seat: Seat) -> Event | None:
        assert self.player is not None
        return self.player.act(table.game, table.state, self.me, seat.knowledge())

    async def _paced_move(self, table: Table, seat: Seat, pacer: Pacer) -> Event | None:
        """The bot's move once the pace lets it be made (:mod:`table.pace`):
        asked once per table, held until a person could have read the table."""
        game, state, seats = table.game, table.state, table.setup.seats
        people = pacer.pace.people
        if pacer.look(table.count, trio.current_time(), people_kinds(game, state, seats, people)):

            def ask() -> tuple[Event | None, bool]:
                event = self._ask_player(table, seat)
                taking = event is not None and takes_turn(game, state, seats, people, event)
                return event, taking

            event, taking = await trio.to_thread.run_sync(ask)
            timers = self._timer_deadlines().values()
            pacer.hold(event, takes_turn=taking, timer=min(timers, default=None))
        return pacer.ready(trio.current_time())

    async def _publish(self, body: dict[str, Any]) -> None:
        """Sign one body into the log (a hook: tests make cheating peers here)."""
        await self.node.submit(self._stamped(body))

    def _stamped(self, body: dict[str, Any]) -> dict[str, Any]:
        """(v3) ``body`` with ``seen``, what this seat had seen at its
        ``at`` (:mod:`table.seen`), where this peer knows it (final entries)."""
        table = self.replay.table
        if table is None or self.node.table.version < 3 or "seen" in body:
            return body
        seen = table.seen.at(body.get("at"))
        return body if seen is None else {**body, "seen": seen}

    # ---------------------------------------------------------------- away (table/waiting.py)

    def waiting(self) -> list[Away]:
        """(v3) the seats the table waits for now, with how long they have
        been away by this peer's clock (for screens: "waiting for bob …")."""
        return self._away.waiting()

    def stop_waiting(self, seat: int) -> None:
        """(v3) a person's "stop waiting for <seat>": this peer signs an
        ``abandon`` (why "vote") naming it at its next look (within a
        second). Raises :class:`SessionError` if the table is not waiting
        for that seat."""
        try:
            self._away.stop_waiting(seat)
        except NotWaiting as exc:
            raise SessionError(str(exc)) from None

    def _wake_at(self) -> float:
        """When the loop must look again even if no entry arrives."""
        now = trio.current_time()
        wake = now + 1.0
        if not self._caught_up():
            return wake  # entries are on their way: they wake us
        timers = self._timer_wake(now)  # table.clock
        if timers is not None:
            wake = min(wake, timers)
        held = None if self._pacer is None else self._pacer.wake_at()
        if held is not None:
            wake = min(wake, held)
        turn = self._turn_wake(now)  # table.turn_timer
        if turn is not None:
            wake = min(wake, turn)
        table = self.replay.table
        due = None if table is None else self._away.next_due(table)
        if due is not None:
            wake = min(wake, due)
        if table is not None and (table.over or self.replay.stopped):
            wake = min(wake, self._last_progress + self._end_wait())
        return max(wake, now + 0.005)

    # ---------------------------------------------------------------- secrets

    def _player_bytes(self) -> bytes | None:
        """What the player must still know after a crash (a Mao author's
        rules and salts): its own export; without one (no player yet, or one
        with nothing to export) what this seat last saved or restored for it,
        so that saving the deal secrets never drops it."""
        export = getattr(self.player, "export_secrets", None)
        mine = export() if export is not None else None
        return self._player_secrets if mine is None else mine

    def _secrets_bytes(self) -> bytes:
        assert self.seat is not None
        deals = sorted(self.seat.secrets_bytes().items())
        draws = sorted([p, o, v] for (p, o), v in self.seat.draw_values.items())
        body = {"v": 1, "deals": deals, "draws": draws, "player": self._player_bytes()}
        return msgpack.packb(body, use_bin_type=True)

    async def _save_secrets(self) -> None:
        player = self._player_bytes()
        blob = self._secrets_bytes()
        if blob != self._secrets_blob:
            await self.node.put_secret(SECRETS_NAME, blob)
            self._secrets_blob = blob
        self._player_secrets = player

    def adopt_player(self, player: Bot) -> None:
        """Have ``player`` play this seat from now on: a person's screen hands
        over what answers the seat's duties (a Mao rule author's verdicts and
        reveals, :class:`~engines.mao_author.RuleAuthor`). It first takes
        back what this seat saved for its player (``import_secrets``), so
        that after a crash it judges and reveals the rules written before."""
        restore = getattr(player, "import_secrets", None)
        if self._player_secrets is not None and restore is not None:
            try:
                restore(self._player_secrets)
            except ValueError as exc:
                raise SessionError(f"this peer's saved player secrets are damaged: {exc}") from exc
        self.player = player

    def _restore_secrets(self) -> None:
        blob = self.node.get_secret(SECRETS_NAME)
        if blob is None:
            return
        try:
            data = msgpack.unpackb(blob, raw=False, strict_map_key=True)
            group = group_for(self.node.table.version)
            deals = {int(n): DealSecrets.from_bytes(b, group) for n, b in data["deals"]}
            draws = {(str(p), int(o)): bytes(v) for p, o, v in data["draws"]}
            player = data.get("player")
            player = None if player is None else bytes(player)
            restore = getattr(self.player, "import_secrets", None)
            if player is not None and restore is not None:
                restore(player)
        except (ValueError, TypeError, KeyError, MentalPokerError, msgpack.UnpackException) as exc:
            raise SessionError(f"this peer's saved table secrets are damaged: {exc}") from exc
        self._restored = (deals, draws)
        self._player_secrets = player  # kept for a player adopted later (adopt_player)
        self._secrets_blob = blob

    # ---------------------------------------------------------------- the end

    def _finished(self) -> bool:
        replay, table = self.replay, self.replay.table
        if self._refusing is not None and not self._refused:
            return False  # our refusal goes into the log first
        if replay.broken:
            return True
        if table is None or not (table.over or replay.stopped):
            return False
        still = trio.current_time() - self._last_progress
        if not self._caught_up():
            # bodies of ours still wait for a sequencer, but the other seats
            # have gone home (too few are left to elect one): nobody will
            # ever sequence them, so end with the log this seat holds
            # (nothing waits forever)
            return still >= self.final_wait and len(self.node.connected) < self.node.table.n // 2
        owed = [
            number
            for number, deal in enumerate(table.deals)
            if deal.dealt and self.me in deal.missing_final() and number not in self._finals_sent
        ]
        if owed:
            return False  # our own final reveals first (one refused is not sent again)
        # a deal still in its passes when the game ended is void (§6): only
        # the final reveals of dealt deals are waited for
        gone = () if replay.abandoned is None else replay.abandoned.seats
        if not [s for s in replay.finals_missing() if s not in gone]:
            return True  # (v3) a leaver's final reveals are not waited for
        # a seat still owes its final reveal: wait while the table moves
        # ((v3) at least the table's patience: the present seats end it first)
        return still >= self._end_wait()

    def _end_wait(self) -> float:
        return self._away.end_wait(self.final_wait)

    def _finish(self) -> SessionResult:
        replay = self.replay
        missing = replay.finals_missing()
        ended = replay.abandoned
        if ended is not None and replay.table is not None:
            # (v3) the leavers' keys are not all out: what the present seats revealed is checked
            present_missing = set(missing) - set(ended.seats)
            audit = Verdict.good() if present_missing else audit_present(replay.table, ended.seats)
        elif missing or replay.table is None:
            audit = Verdict.good()
        elif self._shared is not None:
            audit = self._shared.audit()
        else:
            audit = replay.audit()
        table = replay.table
        return SessionResult(
            outcome=replay.outcome(),
            faults=[*replay.faults, *self._proven_sequencers()],
            audit=audit,
            entries=replay.fed,
            stale=len(table.stale) if table is not None else 0,
            missing_finals=missing,
            abandoned=ended,
        )

    def _proven_sequencers(self) -> list[Fault]:
        """Seats this peer holds a proof against (protocol.md §3.5: an
        equivocation, a forged or a replayed event signed as sequencer)."""
        spec, out = self.node.table, []
        for proof in self.node.proofs:
            try:
                culprit = proof.verify(spec)
            except EventError:  # kept only when it verifies; never blame on a bad one
                continue
            found = Fault(culprit, spec.seats[culprit].fingerprint, proof.what(spec), proof.seq)
            if found not in out and found not in self.replay.faults:
                out.append(found)
        return out

    def _report(self, updates: list[Update]) -> None:
        for update in updates:
            self.updates.append(update)
            if self.on_update is not None:
                try:
                    self.on_update(update)
                except Exception:  # the screen's bug: the table and the news go on
                    log.exception("showing an update (%s)", update.kind)

    async def wait_for_peers(self, timeout: float = 10.0) -> bool:
        """Wait until every other seat acknowledged our whole log (so closing
        this node loses nobody an entry); False on timeout."""
        with trio.move_on_after(timeout):
            while not self.node.acknowledged_by_all():
                await trio.sleep(0.05)
            return True
        return False


__all__ = [
    "MoveRefused",
    "SessionError",
    "SessionResult",
    "SharedFeed",
    "Snapshot",
    "TableMovedOn",
    "TableSession",
    "Update",
]
