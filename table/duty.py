"""What a seat owes the table: a :class:`Duty` (public, computed by every
peer and the verifier from the log alone, protocol.md §6), and the ``deal``
body that carries a mental-poker message to the log (:func:`deal_body`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engines.core import Request
from mental_poker.messages import Message

DUTY_KINDS = ("pass", "keys", "relock", "handover", "commit", "open", "claim", "final", "move")


@dataclass(frozen=True)
class Duty:
    """A body one seat owes the table now. Public: every peer (and the
    verifier) computes every seat's duties from the log alone, so a seat
    that keeps the table waiting can be named (``overdue``, protocol.md §6).

    ``kind``: ``pass`` (its shuffle or lock pass of ``deal``), ``keys`` (its
    keys for ``positions`` of ``deal``), ``relock`` / ``handover`` (one
    position of ``deal``), ``commit`` / ``open`` (a joint random draw,
    ``request``), ``claim`` (an identity claim, ``request``), ``final`` (its
    final reveal of ``deal``), ``move`` (a player event its peer owes
    without asking the player, ``what``: :meth:`Game.owed`, e.g. a Mao
    author's verdict; made by the player, not by :class:`Seat`)."""

    kind: str
    deal: int | None = None
    positions: tuple[int, ...] = ()
    request: Request | None = None
    what: str = ""

    def units(self) -> tuple[Any, ...]:
        """The duty split into the units the overdue clock times one by one
        (keys: one per position; a draw: its purpose and step)."""
        if self.kind == "keys":
            return tuple(("keys", self.deal, p) for p in self.positions)
        request = getattr(self.request, "purpose", None), getattr(self.request, "seat", None)
        return ((self.kind, self.deal, self.positions, request, self.what),)

    def __str__(self) -> str:
        where = "" if self.deal is None else f" of deal {self.deal}"
        if self.kind == "pass":
            return f"its shuffle or lock pass{where}"
        if self.kind == "keys":
            return f"its keys for positions {list(self.positions)}{where}"
        if self.kind in ("relock", "handover"):
            return f"its {self.kind} of position {self.positions[0]}{where}"
        if self.kind in ("commit", "open"):
            purpose = getattr(self.request, "purpose", "?")
            return f"its {'commitment' if self.kind == 'commit' else 'opening'} for {purpose!r}"
        if self.kind == "claim":
            return f"its identity claim ({self.request})"
        if self.kind == "move":
            return self.what
        return f"its final reveal{where}"


def deal_body(number: int, message: Message, at: int | None = None) -> dict[str, Any]:
    """A ``deal`` body; ``at`` (how many bodies its author had seen) for the
    messages a timer may overtake (relock, handover, identity claim)."""
    body: dict[str, Any] = {"t": "deal", "deal": number, "msg": message.to_wire()}
    if at is not None:
        body["at"] = at
    return body


__all__ = ["DUTY_KINDS", "Duty", "deal_body"]
