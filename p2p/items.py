"""What a :class:`p2p.node.Node` hands its session: entries of the ordered
log (:class:`LogItem`) and, on the rare cut-back of entries already handed
over, a :class:`Rewound` notice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p2p.envelope import Entry


@dataclass(frozen=True)
class LogItem:
    """One entry of the ordered log, as the session consumes it."""

    seq: int
    term: int
    author: int
    counter: int
    body: Any
    hash: bytes = b""
    """the entry's chain hash (empty where the node does not say it)"""

    def __str__(self) -> str:
        return f"#{self.seq} seat {self.author} event #{self.counter}: {self.body!r}"


@dataclass(frozen=True)
class Rewound:
    """The log was cut back to ``seq`` (a failover dropped entries no majority
    held, or a proven equivocator's branch lost): re-read from ``seq + 1``.
    Never on v3 tables (a session gets only final entries, never cut)."""

    seq: int


def item_of(entry: Entry, chain_hash: bytes = b"") -> LogItem:
    """The session's view of an entry (its body decoded)."""
    ev = entry.event
    return LogItem(entry.seq, entry.term, ev.author, ev.counter, ev.decoded_body(), chain_hash)
