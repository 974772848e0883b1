"""This seat's clock at a table: when it signs that a timer ran out
(protocol.md §7.2; the table's rule is :mod:`table.timers`).

Theory of operation
-------------------
Nothing on the wire says when a timer started: each peer times a pending
timer from the moment it first saw it pending (the body that made it
pending reached this peer), ``seconds × time_scale`` of its own clock.

* **v2 logs** — only the sequencer of the current term times a timer out:
  a ``timer`` body carrying its term.
* **v3** — every seat signs its own word ``{t: "timer", purpose, at}``
  once per pending timer, when the timer ran out on its own clock; the
  table fires the timer on the majority's words. An honest seat does not
  sign while it holds another seat's signed event that the log lacks and
  that the timer would make stale (a Detonate the sequencer sits on): the
  sequencer must sequence it first, or be voted out for censoring it.
  ``timer_lead`` (``nodealer play``: every other seat a bot of the same
  person) makes this seat sign only once the lead seat's word is in the
  log, so the person's screen alone holds the clock (issue 26).

:class:`TimerClock` is a mixin of :class:`~table.session.TableSession`: it
reads the session's ``replay``, ``node``, ``me``, ``time_scale`` and signs
through its ``_publish``.
"""

from __future__ import annotations

import time
from copy import deepcopy
from typing import Any

import trio

from engines.core import EngineError, Timer, TimerExpired

from .machine import Table
from .timers import V3

QUIET = ("timer", "overdue", "abandon", "refuse")
"""Body kinds no timer makes stale: holding one does not hold a timer word."""


class TimerClock:
    """Times the pending timers on this peer's clock and signs them out
    (mixed into :class:`~table.session.TableSession`)."""

    replay: Any
    node: Any
    me: int
    time_scale: float
    timer_lead: int | None = None

    def _init_clock(self) -> None:
        self._timer_seen: dict[tuple[str, int], tuple[float, float]] = {}  # (start, held then)
        self._held_total = 0.0  # seconds timers were held, closed holds (hold_timers)
        self._held_since: float | None = None  # time.monotonic() the open hold began

    async def _publish(self, body: dict[str, Any]) -> None:  # pragma: no cover - the session's
        raise NotImplementedError

    def _pending_timers(self, table: Table) -> list[tuple[Timer, int]]:
        out = []
        for request in table.pending():
            if isinstance(request, Timer):
                since = table.timers.started(request.purpose)
                if since is not None:
                    out.append((request, since))
        return out

    def _timer_deadlines(self) -> dict[tuple[str, int], float]:
        """When each pending timer runs out, by this peer's clock."""
        table = self.replay.table
        if table is None or table.over or self.replay.stopped:
            return {}
        now, held = trio.current_time(), self.held_seconds()
        out, seen = {}, {}
        for timer, since in self._pending_timers(table):
            key = (timer.purpose, since)
            seen[key] = start, held_then = self._timer_seen.get(key, (now, held))
            out[key] = start + timer.seconds * self.time_scale + (held - held_then)
        self._timer_seen = seen
        return out

    def hold_timers(self, held: bool) -> None:
        """Hold (True) or release (False) the timers this peer times out.

        Nothing on the wire says when a timer started: a hold adds its
        length to every pending timer, as if the clock had stopped.
        ``nodealer play`` (every other seat a bot of this process that
        follows seat 0's word, ``timer_lead``) holds them while its person
        reads the help or types a required phrase; a LAN table never does,
        so that no person can stop the others' clock."""
        if held and self._held_since is None:
            self._held_since = time.monotonic()
        elif not held and self._held_since is not None:
            self._held_total += time.monotonic() - self._held_since
            self._held_since = None

    def held_seconds(self) -> float:
        """How long this peer's timers have been held in all (see :meth:`hold_timers`)."""
        since = self._held_since
        return self._held_total + (0.0 if since is None else time.monotonic() - since)

    def _signs_timers(self) -> bool:
        """Whether this peer may time a timer out now (v2: the sequencer)."""
        table = self.replay.table
        return table is not None and (table.setup.version >= V3 or self.node.is_sequencer)

    async def _time_out_timer(self, table: Table) -> bool:
        if not self._signs_timers():
            return False
        now = trio.current_time()
        for (purpose, _), due in sorted(self._timer_deadlines().items(), key=lambda kv: kv[1]):
            if due > now:
                continue
            if table.setup.version < V3:  # v2 logs: the sequencer's timer, with its term
                body = {"t": "timer", "purpose": purpose, "term": self.node.term, "at": table.count}
                await self._publish(body)
                return True
            signed = table.timers.signed(purpose)
            lead = self.timer_lead
            if self.me in signed or (lead not in (None, self.me) and lead not in signed):
                continue
            if self._holds_overtaken(table, purpose):
                continue  # the sequencer must sequence what we hold first
            await self._publish({"t": "timer", "purpose": purpose, "at": table.count})
            return True
        return False

    def _holds_overtaken(self, table: Table, purpose: str) -> bool:
        """Whether this peer holds a signed event (another seat's, or its
        own), not yet in the log it acts on, that timing ``purpose`` out
        would make stale."""
        held_events = getattr(self.node, "held_events", None)  # v3 nodes (p2p, issue 28)
        if held_events is None:
            return False
        try:
            after = table.game.apply(table.state, TimerExpired(purpose))
        except EngineError:
            return False
        log = getattr(self.node, "log", self.node)  # a Node, or its log machine alone
        own = list(getattr(log, "own_pending", ()))  # (v3) ours too: a
        # Detonate of ours the sequencer sits on is no reason to close the race
        for seat in range(table.setup.seats):
            for event in own if seat == self.me else held_events(seat):
                if _overtaken(table, after, event):
                    return True
        return False

    def _timer_wake(self, now: float) -> float | None:
        """When the loop must look at the timers again (None: no timer)."""
        deadlines = self._timer_deadlines()
        if not deadlines:
            return None
        if not self._signs_timers():
            return now + 0.25  # a failover may make us the sequencer (v2)
        # one due but not signed yet (held back, or waiting for the lead):
        # new entries wake the loop; look again now and then all the same
        return min(max(due, now + 0.5) if due <= now else due for due in deadlines.values())


def _overtaken(table: Table, after: Any, event: Any) -> bool:
    """Would ``event`` (a held signed event) be stale once the timer fired?
    A move: when the engine takes it now and not after the timer. Any
    other body (a relock, handover, claim, commitment, opening the timer
    may end the need for): when a copy of the table accepts it now (neither
    refused nor stale), to be safe (it is in the log within a moment on an
    honest table); a body the table would refuse or drop holds nothing.
    ``event`` is one of :meth:`Node.held_events`: it can enter the chain
    now (a decoy far ahead of its author's next counter never gets here)."""
    try:
        body = event.decoded_body()
    except Exception:  # not ours to judge: the table names a bad body
        return False  # (a peer never crashes on what another sends)
    if not isinstance(body, dict) or body.get("t") in QUIET:
        return False
    if body.get("t") != "move":
        return _accepted_now(table, event.author, body)
    try:
        move = table.game.decode_event(body.get("event"))
        table.game.apply(table.state, move)
    except Exception:  # malformed, or not legal now either: the timer changes nothing
        return False
    try:
        table.game.apply(after, move)
    except Exception:
        return True
    return False


def _accepted_now(table: Table, author: int, body: dict[str, Any]) -> bool:
    """Would ``table`` take ``body`` by ``author`` now (judged on a copy)?"""
    ahead = deepcopy(table)
    stale = len(ahead.stale)
    try:
        verdict = ahead.feed(author, body)
    except Exception:  # an author not at the table, or a body no rule could judge
        return False
    return verdict.ok and len(ahead.stale) == stale


__all__ = ["TimerClock"]
