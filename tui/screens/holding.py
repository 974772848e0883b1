"""Holding the table's timers while a person cannot play (issue 26).

Game timers (Mao's 10 seconds, M23; the Bomb game's detonation window,
K16) are table events: only the sequencer times one out, and it says so in
the log. Under ``nodealer play`` the person's own seat is the sequencer and
every other seat is a bot of that same program, so the person's screen may
stop the clock while the person reads the help, types a required phrase or
reads the round-over banner: nobody else is waiting on a clock that means
anything to them. The app says so with ``TIMERS_WAIT = True``.

At a LAN table (``host``/``join``) no app says so and nothing is held: one
person's help screen must not stop everyone's clock (and only the host's
could). There the screen keeps counting down where the person can see it.
"""

from __future__ import annotations

import time
from typing import Any


class TimerHold:
    """The reasons a screen holds the table's timers now (``help``,
    ``typing``, ``banner``, …); any reason holds them, the last one released
    lets them run on. :meth:`held_seconds` says how long they were held in
    all, so a countdown on the screen stops with them."""

    def __init__(self, screen: Any) -> None:
        self.screen = screen
        self.reasons: set[str] = set()
        self._total = 0.0
        self._since: float | None = None

    def allowed(self) -> bool:
        """Whether this table's timers wait for this person (``nodealer play``)."""
        try:
            return bool(getattr(self.screen.app, "TIMERS_WAIT", False))
        except Exception:  # no app yet
            return False

    def hold(self, reason: str) -> None:
        if not self.allowed():
            return
        self.reasons.add(reason)
        self._tell(True)

    def release(self, reason: str) -> None:
        if reason not in self.reasons:
            return
        self.reasons.discard(reason)
        if not self.reasons:
            self._tell(False)

    @property
    def holding(self) -> bool:
        return bool(self.reasons)

    def held_seconds(self) -> float:
        since = self._since
        return self._total + (0.0 if since is None else time.monotonic() - since)

    def _tell(self, held: bool) -> None:
        if held and self._since is None:
            self._since = time.monotonic()
        elif not held and self._since is not None:
            self._total += time.monotonic() - self._since
            self._since = None
        session = getattr(self.screen.app, "session", None)
        hold = getattr(session, "hold_timers", None)
        if hold is not None:
            hold(held)  # plain bookkeeping, no trio call: safe from the screen's side
