"""What a table session tells its player: :class:`Update` (news, as it
happens), :class:`Snapshot` (the table as last fed) and
:class:`SessionResult` (how the table ended for this peer), :class:`PeerResult`
(one peer of a bot table and its result)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.cards import Card
from engines.core import Outcome
from mental_poker.errors import Verdict

from .absence import Abandoned
from .replay import Fault


@dataclass(frozen=True)
class Update:
    """Something happened at the table, for the player to see.

    ``kind``: ``setup``, ``event`` (an engine event, player or derived),
    ``progress`` (a deal's passes under way, the final audit: what a person
    waits for),
    ``stale`` (a body overtaken by another, dropped), ``fault`` (a cheat,
    game stopped), ``rewound``, ``over`` (the outcome), ``done`` (audit),
    ``dropped`` / ``back`` (this peer lost its connection to another seat,
    or has it again: :func:`table.peer_news.watch_peers`), ``waiting``
    (v3: who the table waits for, or that a seat is back,
    :mod:`table.absence`)."""

    kind: str
    text: str
    seq: int | None = None

    def __str__(self) -> str:
        return f"[{self.kind}] {self.text}"


@dataclass
class SessionResult:
    """How the table ended for this peer."""

    outcome: Outcome | None
    faults: list[Fault]
    audit: Verdict
    entries: int
    stale: int = 0
    missing_finals: list[int] = field(default_factory=list)
    abandoned: Abandoned | None = None
    """(v3) the game ended abandoned: who left, owing what (not a fault)"""
    timings: dict[str, float] = field(default_factory=dict)
    """when things happened at this peer, for benchmarks: ``*_t`` wall
    clock (``time.time``), ``*_cpu`` this process's CPU seconds, at
    ``start`` (run), ``move`` (the first player move fed), ``over`` (the
    game over), ``audit`` (the audit began) and ``done``; ``deals``"""

    @property
    def clean(self) -> bool:
        return (
            self.outcome is not None
            and not self.faults
            and self.audit.ok
            and not self.missing_finals
            and self.abandoned is None
            and not self.outcome.cheaters
        )

    def __str__(self) -> str:
        if self.clean:
            return f"clean: {self.outcome}"
        parts = [f"cheating: {f}" for f in self.faults]
        if self.abandoned is not None:
            parts += [f"abandoned: {line}" for line in self.abandoned.lines()]
            gone = set(self.abandoned.seats)
            missing = [s for s in self.missing_finals if s not in gone]
        else:
            missing = self.missing_finals
        parts += [f"seat {s} has not made its final reveal" for s in missing]
        if not self.audit.ok:
            parts.append(f"audit: {self.audit}")
        if self.outcome is not None:
            parts.append(f"outcome: {self.outcome}")
        return "; ".join(parts) or "unfinished"


@dataclass(frozen=True)
class Snapshot:
    """What the player's side may read while the loop works in a thread:
    the table after ``count`` table bodies, the engine state, this seat's
    view and the faces it knows (deck position -> card)."""

    count: int
    state: Any
    view: dict[str, Any] | None
    known: dict[int, Card] = field(default_factory=dict)


@dataclass
class PeerResult:
    """One peer of :func:`~table.bot_table.play_bot_table`: who it was and how it ended."""

    seat: int
    fingerprint: str
    home: Path | None
    log_path: Path
    result: SessionResult


__all__ = ["PeerResult", "SessionResult", "Snapshot", "Update"]
