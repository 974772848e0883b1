"""Joint random draws at a table: commit, then open (protocol.md §6
*Commitments*, *Derived system events*).

Theory of operation
-------------------
An engine asks for a value nobody chooses with a
:class:`~engines.core.RandomDraw` request (the Bluff or Bomb game's random
starter). Every seat commits to 32 random bytes of its own (``commit``:
a digest), then, once every seat has committed, opens them (``open``); the
value is SHA-512 over the purpose and every seat's bytes in seat order,
mod the request's bound. No seat can choose it: each committed before it
saw any other seat's bytes. A commitment or opening whose draw was pending
at the body's ``at`` but no longer is (a timer ended what it was for) raced
the timer: stale, nobody named (§6 *Races*).

:class:`Draws` is the public record a :class:`~table.machine.Table` keeps;
:func:`draw_body` makes a seat's next body for a draw from its values.
Everything here is pure except :func:`draw_body`'s fresh bytes.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.core import RandomDraw, RandomValue, Request
from mental_poker.errors import Verdict

COMMIT_LABEL = b"nodealer/v1/draw-commit"
DRAW_LABEL = b"nodealer/v1/draw"
MAX_PURPOSE = 64


def commit_digest(purpose: str, occurrence: int, seat: int, value: bytes) -> bytes:
    """``SHA-256(lp(label) ‖ lp(purpose) ‖ lp(u64 occurrence) ‖ lp(u8 seat) ‖
    lp(value))`` (§6 *Commitments*)."""
    h = hashlib.sha256()
    for item in (
        COMMIT_LABEL,
        purpose.encode(),
        occurrence.to_bytes(8, "big"),
        bytes([seat]),
        value,
    ):
        h.update(len(item).to_bytes(4, "big") + item)
    return h.digest()


@dataclass
class Draw:
    """One occurrence of a draw: the seats' commitments and openings."""

    commits: dict[int, bytes] = field(default_factory=dict)
    opens: dict[int, bytes] = field(default_factory=dict)


class Draws:
    """Every draw of one table, by (purpose, occurrence)."""

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self.draws: dict[tuple[str, int], Draw] = {}
        self.count: dict[str, int] = {}
        """purpose -> occurrences drawn so far"""

    def key(self, purpose: str) -> tuple[str, int]:
        """The occurrence of ``purpose`` now being drawn."""
        return (purpose, self.count.get(purpose, 0))

    def get(self, purpose: str) -> Draw:
        return self.draws.get(self.key(purpose), Draw())

    def owed(self, seat: int, request: RandomDraw) -> str | None:
        """What ``seat`` owes this draw: ``commit``, ``open`` or nothing."""
        draw = self.get(request.purpose)
        if seat not in draw.commits:
            return "commit"
        if len(draw.commits) == self.seats and seat not in draw.opens:
            return "open"
        return None

    def feed(
        self,
        author: int,
        body: Mapping[str, Any],
        pending: tuple[Request, ...],
        pending_then: Callable[[], tuple[Request, ...] | None],
        stale: Callable[[int, str], Verdict],
    ) -> Verdict:
        """Judge a ``commit`` or ``open`` body. ``pending``: the requests
        now; ``pending_then``: those after the body's ``at`` (None: ``at`` is
        now or names no point of the table); ``stale`` records a stale body."""
        kind = body["t"]
        item = "digest" if kind == "commit" else "value"
        if set(body) - {"at"} != {"t", "purpose", item}:
            return Verdict.cheat(author, f"{kind} body: expected t, purpose, {item} (and at)")
        purpose, data = body["purpose"], body[item]
        what = "commit" if kind == "commit" else "opening"
        if not _asked(purpose, pending):
            if _asked(purpose, pending_then() or ()):  # a timer overtook it
                return stale(author, f"{what} for {purpose!r:.40} (too late)")
            return Verdict.cheat(author, f"{what} for no pending random draw")
        key = self.key(purpose)
        if kind == "commit":
            if not isinstance(data, bytes) or len(data) != 32:
                return Verdict.cheat(author, "commit digest must be 32 bytes")
            draw = self.draws.setdefault(key, Draw())
            if author in draw.commits:
                return Verdict.cheat(author, "second commitment to one draw")
            draw.commits[author] = data
            return Verdict.good()
        draw = self.draws.get(key, Draw())
        if len(draw.commits) < self.seats:
            return Verdict.cheat(author, "opened before every seat committed")
        if author in draw.opens:
            return Verdict.cheat(author, "second opening of one draw")
        if not isinstance(data, bytes) or len(data) != 32:
            return Verdict.cheat(author, "draw value must be 32 bytes")
        if commit_digest(key[0], key[1], author, data) != draw.commits[author]:
            return Verdict.cheat(author, "opening does not match its commitment")
        draw.opens[author] = data
        return Verdict.good()

    def answer(self, request: RandomDraw) -> RandomValue | None:
        """The drawn value once every seat opened (None: not yet)."""
        key = self.key(request.purpose)
        draw = self.draws.get(key)
        if draw is None or len(draw.opens) < self.seats:
            return None
        h = hashlib.sha512(DRAW_LABEL + request.purpose.encode())
        for seat in range(self.seats):
            h.update(draw.opens[seat])
        self.count[request.purpose] = key[1] + 1
        return RandomValue(request.purpose, int.from_bytes(h.digest(), "big") % request.bound)


def _asked(purpose: Any, pending: tuple[Request, ...]) -> bool:
    if not isinstance(purpose, str) or len(purpose) > MAX_PURPOSE:
        return False
    return any(isinstance(r, RandomDraw) and r.purpose == purpose for r in pending)


def draw_body(
    draws: Draws, seat: int, values: dict[tuple[str, int], bytes], request: RandomDraw, at: int
) -> dict[str, Any] | None:
    """``seat``'s next body for the draw ``request``: its commitment (to
    fresh bytes kept in ``values``, which the session saves before signing)
    or its opening; None if it owes neither."""
    owed = draws.owed(seat, request)
    key = draws.key(request.purpose)
    if owed == "commit":
        value = values.setdefault(key, secrets.token_bytes(32))
        digest = commit_digest(key[0], key[1], seat, value)
        return {"t": "commit", "purpose": request.purpose, "digest": digest, "at": at}
    if owed == "open":
        return {"t": "open", "purpose": request.purpose, "value": values[key], "at": at}
    return None


__all__ = ["Draw", "Draws", "commit_digest", "draw_body"]
