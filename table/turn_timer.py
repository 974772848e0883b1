"""(v3) The turn timer: a person's seat that sits idle on its turn is moved
for by its own peer, with the game's sensible bot (issue 27 point 7).

Theory of operation
-------------------
A table may set a turn time (``--turn-time S``, the setup entry's optional
``turn_time``, protocol.md §7.1; v2 logs have none). It is a courtesy of a
seat to the others, not a rule of the table: nothing on the wire says when a
turn began, so no seat can be judged for it. A person's seat *owes a move*
when it may make a kind of move no other seat may make now (its turn,
:func:`table.pace.own_kinds`; a Mao rule author's duties excepted: they are
the person's :class:`~engines.mao_author.RuleAuthor`'s, never a bot's). Its
own clock starts when the seat first sees it owes, and starts again when
the kinds it owes change or one of its own moves reaches the log. When the
seat has owed for ``turn_time × time_scale`` seconds of its own clock (plus
any time its screen held the timers, as with the game's timers), the seat's
peer asks the game's sensible bot — found through the game registry
(:func:`engines.core.bots_of`; an engine never imports its bots) — for a
move, once per table state, and signs it as the seat like any move, marked
``auto: true`` (§6). The table accepts the mark only on v3 tables and keeps
which events it marked (``Table.auto_moves``); the game never sees it. Every
screen's story tells such a move with "(auto)".

Only a person's seat runs the timer (``person``): a bot already plays. The
host's session writes the table's ``turn_time`` into the setup, whoever plays
seat 0.

:class:`TurnClock` is a mixin of :class:`~table.session.TableSession`: it
reads the session's ``replay``, ``me``, ``time_scale``, ``held_seconds`` and
signs through its ``_publish``.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import trio

from engines.core import EngineError, Event, bots_of

from .machine import Table
from .pace import AUTHOR_KINDS, owes_move
from .seat import Seat

MAX_TURN_TIME = 3600
"""The longest turn time a setup may say (seconds)."""


AUTO = " (auto)"
"""The mark at the end of an event's line (:class:`~table.session.Update`)
for a move made by a turn timer; screens tell it in their language."""


def event_text(table: Table, index: int) -> str:
    """The line of ``table.events[index]``, marked :data:`AUTO` if a turn
    timer made it."""
    text = str(table.events[index])
    return text + AUTO if index in table.auto_moves else text


class TurnTimer:
    """One person's seat's turn clock (see the module docstring); times are
    :func:`time.monotonic` seconds, so a screen may read :meth:`seconds_left`
    from any thread."""

    def __init__(self, me: int, seconds: float) -> None:
        self.me, self.seconds = me, seconds
        self._key: tuple[frozenset[str], int] | None = None
        self._start = 0.0
        self._held_then = 0.0
        self._asked: int | None = None  # the table (body count) the bot was asked about
        self._nothing: int | None = None  # ... and had no move for: no countdown there
        self._bot: Any = None
        self.deadline: float | None = None
        """when the seat's idle turn runs out (None: it owes no move)"""

    def look(self, table: Table, held: float) -> float | None:
        """The deadline of the turn the seat owes now (None: it owes none);
        ``held``: the seconds the screen has held the timers so far."""
        owed = owes_move(table, self.me)
        if not owed or self._nothing == table.count:
            self._key = self.deadline = None
            return None
        key = (owed, self._last_own(table))
        if key != self._key:
            self._key, self._start, self._held_then = key, time.monotonic(), held
        self.deadline = self._start + self.seconds + (held - self._held_then)
        return self.deadline

    def seconds_left(self) -> float | None:
        """Seconds before the seat's move is made for it (None: no turn owed)."""
        deadline = self.deadline
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def _last_own(self, table: Table) -> int:
        for index in range(len(table.events) - 1, -1, -1):
            if table.events[index].author == self.me:
                return index
        return -1

    def choose(self, table: Table, known: dict[int, Any]) -> Event | None:
        """The game's sensible bot's move for the seat now (None: none, or the
        bot was asked about this table already). Runs in a worker thread."""
        if self._asked == table.count:
            return None
        self._asked = table.count
        if self._bot is None:
            make = bots_of(table.setup.game)  # KeyError: a game without bots
            seed = secrets.randbelow(2**31)  # the bot's choices, never the deal
            self._bot = make(table.setup.seats, seed, secrets.token_bytes)[self.me]
        event = self._bot.act(table.game, table.state, self.me, known)
        if event is not None and self._fits(table, event):
            return event
        self._nothing = table.count  # the person's move alone, until the table changes
        return None

    def _fits(self, table: Table, event: Event) -> bool:
        if event.SYSTEM or event.author != self.me or event.KIND in AUTHOR_KINDS:
            return False
        try:
            table.game.apply(table.state, event)
        except EngineError:
            return False
        return True


class TurnClock:
    """The turn timer of a :class:`~table.session.TableSession` (a mixin)."""

    replay: Any
    me: int
    time_scale: float
    person: bool = False
    """a person plays this seat (a screen): the turn timer may move for it"""
    turn_time: int | None = None
    """the host's (seat 0's) turn time, written into the setup"""
    turn_agreed: bool = False
    """``turn_time`` is what this seat agreed to in the lobby: a setup that
    says another is refused (a host cannot make a table move for its
    people behind their backs)"""
    _turn: TurnTimer | None = None

    def held_seconds(self) -> float:  # pragma: no cover - the session's (table.clock)
        raise NotImplementedError

    async def _publish(self, body: dict[str, Any]) -> None:  # pragma: no cover - the session's
        raise NotImplementedError

    def _turn_time_differs(self, setup: Any) -> str | None:
        """Why the setup's turn timer is not the one this seat agreed to."""
        if not self.turn_agreed or setup.turn_time == self.turn_time:
            return None
        said = "none" if setup.turn_time is None else f"{setup.turn_time} s"
        agreed = "none" if self.turn_time is None else f"{self.turn_time} s"
        return f"the host set up a turn timer of {said}, but this seat agreed to {agreed}"

    def _turn_timer(self) -> TurnTimer | None:
        table = self.replay.table
        if not self.person or table is None or self.replay.stopped:
            if self._turn is not None:
                self._turn.deadline = None  # a stopped game counts nothing down
            return None
        seconds = table.setup.turn_time
        if seconds is None or table.setup.version < 3:
            return None
        if self._turn is None:
            self._turn = TurnTimer(self.me, seconds * self.time_scale)
        return self._turn

    def turn_seconds_left(self) -> float | None:
        """Seconds before this person's seat's move is made for it (None: no
        turn timer runs); for the screen's countdown."""
        timer = self._turn if self.person else None
        return None if timer is None else timer.seconds_left()

    def _turn_wake(self, now: float) -> float | None:
        """When the loop must look again for the turn timer (trio time)."""
        timer = self._turn_timer()
        table = self.replay.table
        if timer is None or table is None:
            return None
        due = timer.look(table, self.held_seconds())
        if due is None:
            return None
        return now + max(0.0, due - time.monotonic())

    async def _auto_move(self, table: Table, seat: Seat) -> bool:
        """Sign the bot's move for an idle person's seat once its turn time
        has run out; True if a move went out."""
        timer = self._turn_timer()
        if timer is None:
            return False
        due = timer.look(table, self.held_seconds())
        if due is None or due > time.monotonic():
            return False
        event = await trio.to_thread.run_sync(timer.choose, table, seat.knowledge())
        if event is None:
            return False
        await self._publish({**seat.move_body(event, at=table.count), "auto": True})
        return True


__all__ = [
    "AUTHOR_KINDS",
    "AUTO",
    "MAX_TURN_TIME",
    "TurnClock",
    "TurnTimer",
    "event_text",
    "owes_move",
]
