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

from engines.core import Deal, Prove, RandomDraw, Request, Reshuffle, Reveal, Transfer

from .duty import Duty

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


def all_duties(
    table: Any, stopped: bool, pending: tuple[Request, ...], look: Look
) -> list[list[Duty]]:
    """What each seat owes, in one sweep over the pending requests and
    their positions (not one per seat: this runs after every body)."""
    n = table.setup.seats
    out: list[list[Duty]] = [[] for _ in range(n)]
    over = table.over
    if not stopped and not over:
        # once the game is over only final reveals are owed (§6): a
        # reshuffle under way then is never dealt, its passes are void
        for number, nxt in look.passes():
            if 0 <= nxt < n:
                out[nxt].append(Duty("pass", number))
    if over or stopped:
        for number, missing in look.finals():
            for seat in sorted(set(missing)):
                if 0 <= seat < n:
                    out[seat].append(Duty("final", number))
        return out
    keys: list[dict[int, set[int]]] = [{} for _ in range(n)]
    dealt_to: list[set[int]] = [set() for _ in range(n)]  # positions an earlier deal gives
    for request in pending:
        if isinstance(request, Deal):
            _keys_owed(table, request.positions, keys, look, request.seat, None)
            if 0 <= request.seat < n:
                dealt_to[request.seat].update(request.positions)
        elif isinstance(request, Reveal | Reshuffle):
            # our key for a card still being dealt to us waits for that
            # deal: out early, the card would be everyone's and the deal
            # (answered first, in order) could never be answered
            _keys_owed(table, request.positions, keys, look, None, dealt_to)
        elif isinstance(request, Transfer):
            _transfer_owed(table, request, look, out)
        elif isinstance(request, RandomDraw):
            for seat in range(n):
                owed = table.draws.owed(seat, request)
                if owed is not None:
                    out[seat].append(Duty(owed, request=request))
        elif isinstance(request, Prove) and 0 <= request.seat < n:
            key = table.claim_key(request)
            if key is not None and key not in table.claims:
                out[request.seat].append(Duty("claim", key[1], (key[2],), request))
    moves = look.owed()
    for seat in range(n):
        out[seat].extend(
            Duty("keys", number, tuple(sorted(ps))) for number, ps in sorted(keys[seat].items())
        )
        owed = moves.get(seat)
        if owed is not None:
            out[seat].append(Duty("move", what=owed))
    return out


def _keys_owed(
    table: Any,
    positions: tuple[int, ...],
    keys: list[dict[int, set[int]]],
    look: Look,
    but: int | None,
    dealt_to: list[set[int]] | None,
) -> None:
    """Each holder of a key over ``positions`` owes it (not ``but``, the
    seat a deal gives the card to; not a seat that an earlier deal gives
    that very position, ``dealt_to``)."""
    n = len(keys)
    for position in positions:
        holders = look.holders(position)  # None: a reshuffle still has to make it
        if not holders:
            continue
        number, local = table.where[position]
        for seat in holders:
            if seat == but or not 0 <= seat < n:
                continue
            if dealt_to is not None and position in dealt_to[seat]:
                continue
            keys[seat].setdefault(number, set()).add(local)


def _transfer_owed(table: Any, request: Transfer, look: Look, out: list[list[Duty]]) -> None:
    n = len(out)
    for position in request.positions:
        holders = look.holders(position)
        if holders is None:
            continue
        number, local = table.where[position]
        if request.seat not in holders:
            if 0 <= request.seat < n:
                out[request.seat].append(Duty("relock", number, (local,)))
            continue
        for seat in sorted(holders):
            if seat != request.seat and 0 <= seat < n:
                out[seat].append(Duty("handover", number, (local,)))


__all__ = ["Look", "all_duties"]
