"""One seat's private side of a table: its deal secrets, its random-draw
values and the faces it decrypted (:class:`Seat`).

The public side (:class:`table.machine.Table`) says which duties a seat owes
(``Table.duties``); a :class:`Seat` makes the bodies for them with its
secrets: its turn in a shuffle or lock pass, keys for a deal or a reveal, a
relock, a handover, an identity claim, a commitment, the final reveal
(protocol.md §1.5, §6). The session persists :meth:`Seat.secrets_bytes`
*before* publishing anything made from them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engines.cards import Card
from engines.core import Deal, Event, Prove, RandomDraw, Transfer
from mental_poker.deal import DealTable
from mental_poker.errors import InvalidPoint, MentalPokerError
from mental_poker.messages import Message
from mental_poker.seat import (
    DealSecrets,
    make_complaint,
    make_final_reveal,
    make_handover,
    make_identity_claim,
    make_key_reveal,
    make_lock,
    make_relock,
    make_shuffle,
)

from .draws import draw_body
from .duty import Duty, deal_body
from .machine import Table


class Seat:
    """One seat's private side: secrets, draw values, decrypted faces."""

    def __init__(self, table: Table, seat: int) -> None:
        self.seat = seat
        self.secrets: dict[int, DealSecrets] = {}
        self.draw_values: dict[tuple[str, int], bytes] = {}
        self.known: dict[int, Card] = {}
        self._table = table

    # ------------------------------------------------------------ knowledge
    def knowledge(self) -> dict[int, Card]:
        """Faces of the positions this seat alone (or everyone) can read,
        once dealt: a card whose deal or transfer is still pending is not yet
        the seat's to play (protocol.md §6)."""
        table = self._table
        self.known.update((p, Card(c)) for p, c in table.open_faces.items())
        dealing = {
            p for r in table.pending() if isinstance(r, Deal | Transfer) for p in r.positions
        }
        for position, (number, local) in table.where.items():
            deal = table.deals[number]
            if not deal.dealt or self.seat not in deal.readers(local) or position in dealing:
                self.known.pop(position, None)
                continue
            if position in self.known:
                continue
            public = deal.public_card(local)
            if public is not None:
                self.known[position] = Card(public)
            elif number in self.secrets:
                try:
                    card = deal.decrypt(local, self.seat, self.secrets[number])
                except MentalPokerError:
                    continue  # a cheat in an unproven deal: the audit names it
                self.known[position] = Card(card)
        return dict(self.known)

    # ------------------------------------------------------------ moves
    def move_body(self, event: Event, at: int | None = None) -> dict[str, Any]:
        """The ``move`` body for one of this seat's events; a card played face
        up (Mao M4) carries this seat's keys for it (§6)."""
        body: dict[str, Any] = {"t": "move", "event": event.to_data()}
        if at is not None:
            body["at"] = at
        for position, _ in event.shown()[:1]:
            if position not in self._table.where:
                continue
            number, local = self._table.where[position]
            deal = self._table.deals[number]
            if deal.dealt and deal.public_card(local) is None and number in self.secrets:
                body["keys"] = make_key_reveal(self.secrets[number], [local], deal).to_wire()
        return body

    # ------------------------------------------------------------ duties
    def duties(self, stopped: bool = False) -> list[dict[str, Any]]:
        """The bodies this seat owes the table now (empty: nothing to do):
        the public :meth:`Table.duties` of this seat, made with its secrets.
        ``stopped``: the game was stopped by a fault, so only the final
        reveals of the dealt deals are owed (for the audit)."""
        table = self._table
        out: list[dict[str, Any]] = []
        reveal: dict[int, set[int]] = {}
        for duty in table.duties(self.seat, stopped):
            number = duty.deal
            if duty.kind == "move":
                continue  # the player's (or its bot's) to make
            if duty.kind == "keys":
                assert number is not None
                reveal.setdefault(number, set()).update(duty.positions)
                continue
            body = self._make(duty)
            if body is not None:
                out.append(body)
        for number, locals_ in sorted(reveal.items()):
            reveal_keys = make_key_reveal(
                self.secrets[number], sorted(locals_), table.deals[number]
            )
            out.append(deal_body(number, reveal_keys))
        return out

    def _make(self, duty: Duty) -> dict[str, Any] | None:
        table, number = self._table, duty.deal
        if duty.kind == "pass":
            assert number is not None
            return self._pass_duty(number, table.deals[number])
        if duty.kind == "final":
            assert number is not None
            # (v3) a relock signed but sequenced after a stop was ignored:
            # its key is no layer's, so the final reveal leaves it out
            for local in sorted({p for p, _ in self.secrets[number].relock_keys}):
                self._published_relocks(number, table.deals[number], local)
            return deal_body(number, make_final_reveal(self.secrets[number]))
        if duty.kind == "relock":
            assert number is not None
            (local,) = duty.positions
            secrets = self._published_relocks(number, table.deals[number], local)
            relock, self.secrets[number] = make_relock(table.deals[number], secrets, local)
            return deal_body(number, relock, table.count)
        if duty.kind == "handover":
            # take our key off under the new holder's relock, with a proof,
            # never revealing it: a revealed key would open the card for
            # everyone (protocol.md §1.5 handover)
            assert number is not None
            (local,) = duty.positions
            handover = make_handover(table.deals[number], self.secrets[number], local)
            return deal_body(number, handover, table.count)
        if duty.kind in ("commit", "open"):
            assert isinstance(duty.request, RandomDraw)
            return draw_body(table.draws, self.seat, self.draw_values, duty.request, table.count)
        if duty.kind == "claim":
            assert isinstance(duty.request, Prove)
            return self._prove_duty(duty.request)
        raise AssertionError(f"unknown duty {duty.kind}")  # pragma: no cover

    def _pass_duty(self, number: int, deal: DealTable) -> dict[str, Any]:
        secrets = self.secrets.get(number)
        if secrets is None:
            secrets = self.secrets[number] = DealSecrets.generate(deal.setup, self.seat)
        make = make_shuffle if deal.phase == "shuffle" else make_lock
        message: Message
        try:
            message = make(deal.setup, secrets, deal.expected_input())
            deal.made_here(message)  # our own proof: not verified again when it comes back
        except InvalidPoint:
            # the previous seat's deck holds a point we cannot multiply:
            # a complaint instead of the pass names it (protocol.md §1.5)
            message = make_complaint(deal, self.seat)
        return deal_body(number, message)

    def _published_relocks(self, number: int, deal: DealTable, local: int) -> DealSecrets:
        """Our secrets without relock keys over ``local`` whose relock never
        reached the log (a crash after keeping the key, before signing the
        body): a new relock replaces them, so reveals hold only real layers."""
        secrets = self.secrets[number]
        mine = [layer for layer in deal.layers[local] if layer.seat == self.seat]
        keep = tuple(
            (p, k)
            for p, k in secrets.relock_keys
            if p != local or any(deal.group.mul(k, layer.before) == layer.after for layer in mine)
        )
        if keep != secrets.relock_keys:
            secrets = self.secrets[number] = replace(secrets, relock_keys=keep)
        return secrets

    def _prove_duty(self, request: Prove) -> dict[str, Any] | None:
        key = self._table.claim_key(request)
        assert key is not None
        _, number, local, members = key
        deal = self._table.deals[number]
        try:
            claim = make_identity_claim(deal, self.secrets[number], local, members)
        except MentalPokerError:
            # not true: an honest seat never proves a false claim (it owes
            # the claim all the same; the table names it once overdue)
            return None
        return deal_body(number, claim, self._table.count)

    def secrets_bytes(self) -> dict[int, bytes]:
        """What the session persists before publishing (crash safety)."""
        return {number: s.to_bytes() for number, s in self.secrets.items()}


__all__ = ["Seat"]
