"""(v3) What a body's author had seen: the ``seen`` field (protocol.md §6
*Races*).

A table body's ``at`` says how many table bodies its author had seen, not
which. A log file forged with one key (the sequencer re-signs one of its
own bodies as another legal one, same counter, and re-chains the log) then
shows an honest seat's next body after bodies it never saw, where it may be
refused (fifth review of v3, #1). So a v3 session adds ``seen``: the first
:data:`SEEN_BYTES` bytes of the chain hash of the entry that brought the
table to ``at`` bodies (the setup's entry for ``at`` 0). The chain hash
commits to every entry up to there: a body whose ``seen`` differs from the
log's was signed for another log, and it is judged as a body whose ``at``
lies beyond the count is (:meth:`~table.machine.Table._beyond`): as if
signed now, and if that refuses it the table stops naming nobody (unless
its author sequenced it too).

A session stamps ``seen`` only where it knows the hash (final entries: a
body signed on tentative ones, which a failover may still cut, carries
none); a body without it is judged as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SEEN_BYTES = 16
"""How much of the chain hash ``seen`` carries (collisions cost 2**64 work)."""

_UNKNOWN = bytes(SEEN_BYTES)


class SeenHashes:
    """The ``seen`` value of every table body count so far, packed in one
    buffer (16 bytes a body: a table keeps them all, a 20-round game holds
    about 11,000)."""

    __slots__ = ("_packed",)

    def __init__(self) -> None:
        self._packed = bytearray()

    def saw(self, chain_hash: bytes) -> None:
        """The entry that brought the table to the next count had this chain
        hash (empty: not known)."""
        value = chain_hash[:SEEN_BYTES]
        self._packed += value if len(value) == SEEN_BYTES else _UNKNOWN

    def at(self, count: Any) -> bytes | None:
        """``seen`` for a body signed after ``count`` table bodies (None: not
        known here)."""
        if type(count) is not int or not 0 <= count < len(self._packed) // SEEN_BYTES:
            return None
        value = bytes(self._packed[count * SEEN_BYTES : (count + 1) * SEEN_BYTES])
        return None if value == _UNKNOWN else value


def take_seen(body: Any) -> tuple[Any, Any]:
    """The body without its ``seen`` field, and that field (None: none)."""
    if not isinstance(body, Mapping) or "seen" not in body:
        return body, None
    return {k: v for k, v in body.items() if k != "seen"}, body["seen"]


def seen_problem(seen: Any) -> str | None:
    """Why a ``seen`` field is malformed (None: it is well formed)."""
    if type(seen) is not bytes or len(seen) != SEEN_BYTES:
        return f"a body's 'seen' is {SEEN_BYTES} bytes of a chain hash"
    return None


__all__ = ["SEEN_BYTES", "SeenHashes", "seen_problem", "take_seen"]
