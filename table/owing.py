"""What every seat's duties read of a table at one point, found once.

After every body the table works out what each seat owes (protocol.md §6,
*Who owes what*), for the overdue clock: for a 6-seat table, six times the
same questions about the same table (which deals are in their passes, which
seats still hold a key over a position, what the engine says each seat
owes). :class:`Look` answers each once per body and remembers it for the
other seats; it is thrown away as soon as anything is fed.
"""

from __future__ import annotations

from typing import Any

PASSES = ("shuffle", "lock")


class Look:
    """One table at one point (``table``: a :class:`~table.machine.Table`)."""

    __slots__ = ("_finals", "_holders", "_owed", "_passes", "table")

    def __init__(self, table: Any) -> None:
        self.table = table
        self._owed: dict[int, str] | None = None
        self._holders: dict[int, frozenset[int] | None] = {}
        self._passes: list[tuple[int, int]] | None = None
        self._finals: list[tuple[int, list[int]]] | None = None

    def owed(self) -> dict[int, str]:
        """The engine's ``owed``: seat -> the move it owes."""
        if self._owed is None:
            self._owed = self.table.game.owed(self.table.state)
        return self._owed

    def holders(self, position: int) -> frozenset[int] | None:
        """Seats whose key over this engine position is still secret (None:
        not in a deal yet, or its deal not dealt)."""
        if position in self._holders:
            return self._holders[position]
        found = None
        where = self.table.where.get(position)
        if where is not None:
            deal = self.table.deals[where[0]]
            if deal.dealt:
                found = frozenset(layer.seat for layer in deal.outstanding(where[1]))
        self._holders[position] = found
        return found

    def passes(self) -> list[tuple[int, int]]:
        """(deal number, seat whose pass is next) of every deal in its passes."""
        if self._passes is None:
            table = self.table
            deals = table.deals
            start = table.passing_from
            while start < len(deals) and deals[start].phase not in PASSES:
                start += 1  # out of its passes for good (dealt or failed)
            table.passing_from = start
            self._passes = [
                (number, deals[number].next_seat)
                for number in range(start, len(deals))
                if deals[number].phase in PASSES
            ]
        return self._passes

    def finals(self) -> list[tuple[int, list[int]]]:
        """(deal number, seats that still owe its final reveal) of every
        dealt deal."""
        if self._finals is None:
            self._finals = [
                (number, deal.missing_final())
                for number, deal in enumerate(self.table.deals)
                if deal.dealt
            ]
        return self._finals


__all__ = ["Look"]
