"""Time and races at a table: when a pending timer runs out, and when a
body that reached the log late is *stale* rather than a cheat (protocol.md
§6 *Races*, §7.2).

Theory of operation
-------------------
Time enters a game only through ``timer`` bodies: a pending
:class:`~engines.core.Timer` request is answered by
:class:`~engines.core.TimerExpired` when the table says so. Who may say so
is the protocol version's rule:

* **v2 logs** — only the sequencer of the entry's term (seat ``term mod
  n``) times a timer out, on its own clock. A timer from another seat names
  it, unless its ``term`` field says a failover carried it out of a term its
  author led (stale). The sequencer alone decides when time runs out.
* **v3** — every seat signs its own *word* ``{t: "timer", purpose, at}``
  when the timer ran out on its own clock; the timer fires at the body that
  brings the word of the ⌊n/2⌋+1-th distinct seat for that pending timer
  (the earlier words are kept, counted, never stale). No lone seat, the
  sequencer included, can end a timer early or late while a majority of the
  seats is honest; an honest seat signs no word while it holds another
  seat's event the log lacks (:mod:`table.clock`), so the sequencer cannot
  front-run a move with a timer either.

Every ``timer`` body says ``at``: how many table bodies its author had seen.
A word counts for the timer pending now when that timer has been pending
since body ``at`` or earlier; a word for a timer that was pending at ``at``
but has since fired, stopped or restarted is stale (nobody named: it raced
the end); a word for a timer that was not pending at ``at`` names its
author (it claims to have seen what was never there).

*Races* (the same ``at``): a ``move`` the engine refuses now but would
accept in the state after ``at`` bodies was overtaken, and is stale; so are
the crypto bodies a timer may overtake (relocks, handovers, identity claims,
commitments and openings of a draw that was pending at ``at``). The helpers
below judge that from the table's history alone, so every peer and the
verifier agree.

Everything here is pure; :class:`~table.machine.Table` holds a
:class:`TimerBook` and calls :func:`feed_timer` for every ``timer`` body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from engines.core import EngineError, Event, Request, Timer, TimerExpired
from mental_poker.errors import Verdict

V3 = 3
"""The first protocol version whose timers take the word of a majority."""


class TimedTable(Protocol):
    """What the timer rules read from a :class:`~table.machine.Table`."""

    count: int
    timers: TimerBook

    def pending(self) -> tuple[Request, ...]: ...

    def pending_at(self, at: int) -> tuple[Request, ...]: ...

    def _seen(self, body: Mapping[str, Any]) -> int | None: ...

    def _apply(self, event: Event) -> None: ...

    def _stale(self, author: int, what: str) -> Verdict: ...


class TimerBook:
    """The pending timers of one table: since which body each has been
    pending and (v3) which seats have signed that it ran out."""

    def __init__(self, seats: int, version: int) -> None:
        self.seats = seats
        self.version = version
        self.since: dict[str, int] = {}
        self.words: dict[str, set[int]] = {}
        """purpose -> seats whose word counts for the timer pending now (v3)"""

    @property
    def by_majority(self) -> bool:
        """v3: a timer fires on the word of more than half of the seats."""
        return self.version >= V3

    @property
    def quorum(self) -> int:
        """Words that fire a timer: ⌊n/2⌋+1 on v3, the sequencer's one on v2."""
        return self.seats // 2 + 1 if self.by_majority else 1

    def note(self, pending: tuple[Request, ...], count: int) -> None:
        """After every body: remember since when each pending timer has been
        pending; the words for a timer that stopped lapse with it."""
        live = {r.purpose for r in pending if isinstance(r, Timer)}
        self.since = {p: k for p, k in self.since.items() if p in live}
        self.words = {p: w for p, w in self.words.items() if p in live}
        for purpose in live:
            self.since.setdefault(purpose, count)

    def started(self, purpose: str) -> int | None:
        """The body number since which ``purpose`` has been pending (None:
        not pending); a word for it must have seen that body (``at``)."""
        return self.since.get(purpose)

    def signed(self, purpose: str) -> frozenset[int]:
        """Seats whose word counts for the pending timer ``purpose`` (v3)."""
        return frozenset(self.words.get(purpose, ()))


def feed_timer(
    table: TimedTable, author: int, body: Mapping[str, Any], term: int | None
) -> Verdict:
    """Judge one ``timer`` body by ``author`` in an entry of ``term``."""
    book = table.timers
    purpose, issued = body.get("purpose"), body.get("term")
    if set(body) - {"at", "term"} != {"t", "purpose"} or not isinstance(purpose, str):
        return Verdict.cheat(author, "timer body: expected t, purpose (and at, term)")
    if issued is not None and (type(issued) is not int or issued < 0):
        return Verdict.cheat(author, "timer body: term must be a whole number")
    seats = book.seats
    if not book.by_majority and term is not None and author != term % seats:
        # v2: only the sequencer of the entry's term times a timer out
        if issued is not None and issued < term and issued % seats == author:
            # its author was the sequencer when it timed out; a failover
            # moved the body into a later term
            return table._stale(author, f"timer {purpose!r:.40} issued in term {issued}")
        return Verdict.cheat(
            author,
            f"timer {purpose!r:.40} from seat {author}, but only the sequencer of "
            f"term {term} (seat {term % seats}) times out timers",
        )
    at = table._seen(body)
    if at is None:
        return Verdict.cheat(author, f"timer body: 'at' must be 0…{table.count}")
    since = book.since.get(purpose)
    if since is not None and at >= since:
        if book.by_majority:
            words = book.words.setdefault(purpose, set())
            if author in words:
                return table._stale(author, f"a second word for timer {purpose!r:.40}")
            words.add(author)
            if len(words) < book.quorum:
                return Verdict.good()  # kept: it counts when the majority is in
        try:
            table._apply(TimerExpired(purpose))
        except EngineError as exc:
            return Verdict.cheat(author, f"timer {purpose!r:.40} refused: {exc}")
        if book.by_majority:  # fired: a word for it again must have seen this
            book.since.pop(purpose)
            book.words.pop(purpose, None)
        return Verdict.good()
    if at < table.count and any(
        isinstance(r, Timer) and r.purpose == purpose for r in table.pending_at(at)
    ):
        why = "it had fired or stopped" if book.by_majority else "it stopped before it ran out"
        return table._stale(author, f"timer {purpose!r:.40} ({why})")
    if since is not None:  # pending now, not at the point its author says it saw
        return Verdict.cheat(
            author, f"timer {purpose!r:.40} ran out at table body {at}, before it started ({since})"
        )
    return Verdict.cheat(author, f"no pending timer {purpose!r:.40}")


def seen_at(body: Mapping[str, Any], count: int) -> int | None:
    """A body's ``at`` (default: ``count``, all bodies so far), None if it
    names no point of the table its author could have seen."""
    at = body.get("at", count)
    if type(at) is int and 0 <= at <= count:
        return at
    return None


__all__ = ["V3", "TimedTable", "TimerBook", "feed_timer", "seen_at"]
