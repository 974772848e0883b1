"""What one ``--cheat`` kind is (:class:`Cheat`): its name, the session
that plays it, the games it fits and the moment it needs. The kinds
themselves are in :mod:`table.cheats` (bodies a seat signs) and
:mod:`table.sequencer_cheats` (entries only the sequencer signs); both
build on this class, so neither imports the other's module for it."""

from __future__ import annotations

from dataclasses import dataclass

from .session import TableSession


@dataclass(frozen=True)
class Cheat:
    name: str
    session: type[TableSession]
    what: str
    games: tuple[str, ...] = ()  # empty: every game
    proven_only: bool = False
    seat: int = 1  # the seat that cheats (the sequencer's tricks need seat 0)
    chance: str = "a move to put into the log as the sequencer"
    """The moment the cheat needs (said when a game ended without it)."""

    def fits(self, game: str) -> bool:
        return not self.games or game in self.games


__all__ = ["Cheat"]
