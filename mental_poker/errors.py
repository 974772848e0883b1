"""Typed errors and verdicts of the mental-poker layer.

Two kinds of failure exist and are kept apart:

* A value that cannot even be decoded (wrong type or length, a scalar that is
  not canonical, a single point that is not a valid prime-order group
  element) raises a :class:`DecodeError` subclass. Nothing was changed.
  Points of decks and proofs are validated later, by the multiplication that
  first uses them; the :class:`InvalidPoint` raised there carries the point
  so that the tracker can name the seat that sent it.
* A well-formed message that fails a check (a proof, a revealed key, a deck
  that decrypts to a non-card) is the author's fault; the deal tracker returns
  a :class:`Verdict` naming the responsible seat, and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


class MentalPokerError(Exception):
    """Base class of every error raised by ``mental_poker``."""


class DecodeError(MentalPokerError, ValueError):
    """Malformed input: wrong type, wrong length, unknown field."""


class InvalidPoint(DecodeError):
    """32 bytes that are not a canonical, prime-order, non-identity point.
    ``point``: the offending bytes when known (the deal tracker uses it to
    name the seat that sent them)."""

    def __init__(self, message: str, point: bytes | None = None) -> None:
        super().__init__(message)
        self.point = point


class NonCanonicalScalar(DecodeError):
    """A scalar encoding that is not 32 bytes little-endian below L."""


class ProofError(MentalPokerError):
    """A zero-knowledge proof (or a revealed key) does not verify."""


class NotDecryptable(MentalPokerError):
    """Some other seat still holds a key over this position."""


class ProtocolError(MentalPokerError):
    """A call that makes no sense in the current state of the deal
    (e.g. asking for a seat's shuffle before the previous seat's)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Outcome of a check. ``ok`` or the responsible ``seat`` and a reason.

    ``seat`` is None for a failure that cannot be pinned on anyone before the
    final key reveal (only possible in an unproven deal); the message that
    exposed it was itself correct and is applied.

    >>> str(Verdict.good())
    'ok'
    >>> str(Verdict.cheat(2, "strip proof fails"))
    'seat 2 cheated: strip proof fails'
    """

    ok: bool
    seat: int | None = None
    reason: str = ""

    @classmethod
    def good(cls) -> Verdict:
        return cls(True)

    @classmethod
    def cheat(cls, seat: int | None, reason: str) -> Verdict:
        return cls(False, seat, reason)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        if self.ok:
            return "ok"
        who = "unknown seat" if self.seat is None else f"seat {self.seat}"
        return f"{who} cheated: {self.reason}"


class CheatDetected(MentalPokerError):
    """Raised where a value (not a verdict) is expected, e.g. a decryption
    that yields a non-card; carries the :class:`Verdict`."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(str(verdict))
        self.verdict = verdict
