"""A moment of a saved game: ``nodealer replay LOG --at N`` and the replay's
search for a seat's moves.

A moment is named three ways, and each form says which it means:

* ``42`` — the move number shown on screen (the replay's and the web
  page's ``#turn=42``);
* ``body:317`` — table body 317 (protocol.md §6 numbers them from 0 after
  the setup): the table as it stood once that body was applied, i.e. the
  last move it or an earlier body made (the first move if none did yet);
* ``entry:319`` — log entry #319, as ``nodealer verify`` names a fault
  (entry 1 is the setup, so entry N is table body N - 2).

>>> from tui.replay import Step
>>> steps = [Step(1, "a", 4, 0), Step(2, "b", 9, None), Step(3, "c", 9, 1)]
>>> moment(steps, "2"), moment(steps, "body:8"), moment(steps, "entry:11")
(1, 0, 2)
>>> moment(steps, "4")
Traceback (most recent call last):
...
tui.moments.BadMoment: no move 4: this game has moves 1 to 3
>>> moment(steps, "body:12", bodies=12)
Traceback (most recent call last):
...
tui.moments.BadMoment: no body 12: this log's body numbers go from 0 to 11
>>> next_move_of(steps, 0, 1), next_move_of(steps, 2, 0)
(2, 0)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .replay import Step

_FORM = re.compile(r"^(?:(body|entry):)?(-?\d+)$")
FORMS = "a move number (42), body:N (a table body) or entry:N (a log entry)"


class BadMoment(ValueError):
    """An ``--at`` that names no moment of this game (the message says why)."""


def moment(steps: Sequence[Step], at: str, bodies: int | None = None) -> int:
    """The index in ``steps`` of the moment ``at`` names (see the module);
    ``bodies``: how many table bodies the log holds (a body past them is
    refused)."""
    found = _FORM.match(at.strip())
    if found is None:
        raise BadMoment(f"--at {at!r:.40}: expected {FORMS}")
    kind, number = found.group(1), int(found.group(2))
    if not steps:
        raise BadMoment("this game has no moves to jump to")
    if kind is None:
        if not 1 <= number <= len(steps):
            raise BadMoment(f"no move {number}: this game has moves 1 to {len(steps)}")
        return number - 1
    body = number if kind == "body" else number - 2
    first = 0 if kind == "body" else 2
    if body < 0 or (bodies is not None and body >= bodies):
        last = "" if bodies is None else f" to {bodies - 1 + first}"
        raise BadMoment(f"no {kind} {number}: this log's {kind} numbers go from {first}{last}")
    index = 0
    for i, step in enumerate(steps):
        if step.body is not None and step.body <= body:
            index = i
    return index


def next_move_of(steps: Sequence[Step], at: int, seat: int, back: bool = False) -> int | None:
    """The index of ``seat``'s next move after ``at`` (its previous one with
    ``back``), wrapping around; None if the seat made no move."""
    count = len(steps)
    for k in range(1, count + 1):
        i = (at - k if back else at + k) % count
        if steps[i].seat == seat:
            return i
    return None


def seat_named(who: str, names: Sequence[str]) -> int | None:
    """The seat ``who`` names: its number (``2``, ``seat 2``, ``座位2``) or
    the start of its name, ignoring case; None if none or several match.

    >>> seat_named("seat 1", ["ann", "bob"]), seat_named("B", ["ann", "bob"])
    (1, 1)
    """
    text = who.strip().lower()
    number = re.fullmatch(r"(?:seat|座位)?\s*(\d+)", text)
    if number is not None:
        seat = int(number.group(1))
        return seat if seat < len(names) else None
    matches = [s for s, name in enumerate(names) if text and name.lower().startswith(text)]
    return matches[0] if len(matches) == 1 else None
