"""Cheating seats, to show a table what nodealer catches (``nodealer play
--cheat KIND``) and to test that it does: each is an honest
:class:`~table.session.TableSession` that tampers with one kind of body
just before signing it. The honest seats refuse the body (or the audit
names the seat), name the cheater and its fingerprint, and ``nodealer
verify`` names the same seat from the saved log.

Kinds (the name is what ``--cheat`` takes):

* ``wrong-key`` — a made-up key in its first key reveal (§1.4 step 4);
* ``duplicate-card`` — its first shuffle pass repeats a card and replaces
  another (with a proof made for that deck, when proven; §1.6);
* ``lock-key`` — its lock pass of deal 0 sets up reading another seat's
  card (the fair-dealing review's attack: ``locked[i] = s·X[j]``; §1.7);
* ``identity-claim`` — a Bomb identity proof about another card than the
  one asked for (K12; §6 *Identity claims*);
* ``move-for-another`` — signs a move as if it were another seat's;
* ``timer`` — times out a timer it may not: on v2 logs though it is not the
  sequencer, on v3 with a word dated before the timer started (§6, §7.2);
* ``keep-final`` — never makes its final reveal (v3: the game ends
  abandoned naming it as having left; v2 logs: named ``overdue``);
* ``forged-signature``, ``replayed-event``, ``equivocate`` — the sequencer
  (seat 0) signs an entry holding a move another seat never signed, a
  move a second time, or two entries for one place (table/sequencer_cheats.py;
  proven against it, protocol.md §3.5);
* ``false-verdict`` — as the author of a Mao secret rule, posts a verdict
  its rule does not give (M28; caught when the rule is revealed, M29/M40:
  it needs to win a round first, so it may never get the chance).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from engines.core import Timer
from mental_poker.messages import LockPass
from mental_poker.proofs import prove_lock, prove_shuffle

from .cheat_kind import Cheat
from .duty import deal_body
from .sequencer_cheats import SEQUENCER_CHEATS
from .session import TableSession
from .timers import V3


class _Once(TableSession):
    cheated = False

    def tamper(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The body to sign instead (None: sign nothing), or ``body``."""
        return body

    async def _publish(self, body: dict[str, Any]) -> None:
        out = body if self.cheated else self.tamper(body)
        if out is not body:
            self.cheated = True
        if out is not None:
            await super()._publish(out)


def _is(body: dict[str, Any], kind: str) -> bool:
    return body["t"] == "deal" and body["msg"]["type"] == kind


class WrongKey(_Once):
    def tamper(self, body: dict[str, Any]) -> dict[str, Any] | None:
        if not _is(body, "keys") or not body["msg"]["keys"]:
            return body
        group = self.table.deals[body["deal"]].group if self.table is not None else None
        if group is None:
            return body
        body = copy.deepcopy(body)
        body["msg"]["keys"][0][1] = group.encode_scalar(group.random_scalar())
        return body


class DuplicateCard(_Once):
    def tamper(self, body: dict[str, Any]) -> dict[str, Any] | None:
        if not _is(body, "shuffle") or self.seat is None or self.table is None:
            return body
        number = body["deal"]
        deal = self.table.deals[number]
        secrets = self.seat.secrets[number]
        xs = deal.expected_input()
        s, perm, mul = secrets.shuffle_key, secrets.permutation, deal.group.mul
        out = [mul(s, xs[perm[i]]) for i in range(len(xs))]
        out[1] = out[0]  # one card twice, another gone
        msg = copy.deepcopy(body["msg"])
        msg["deck"] = out
        if deal.setup.proven:
            ctx = deal.setup.context.at("shuffle", self.me)
            msg["proof"] = prove_shuffle(ctx, xs, out, msg["gamma"], s, perm).to_wire()
        return {**body, "msg": msg}


class LockKey(_Once):
    def tamper(self, body: dict[str, Any]) -> dict[str, Any] | None:
        if not _is(body, "lock") or body["deal"] != 0 or self.seat is None or self.table is None:
            return body
        deal = self.table.deals[0]
        secrets = self.seat.secrets[0]
        xs = deal.expected_input()
        s, mul = secrets.shuffle_key, deal.group.mul
        i, j = self.me, (self.me + 1) % self.node.table.n  # its own card, the next seat's
        locked = [mul(k, x) for k, x in zip(secrets.lock_keys, xs, strict=True)]
        locked[i] = mul(s, xs[j])
        stripped = [mul(deal.group.inverse(s), x) for x in locked]
        proof = None
        if deal.setup.proven:
            keys = list(secrets.lock_keys)
            keys[i] = s  # the only key it knows for that locked point
            ctx = deal.setup.context.at("lock", self.me)
            proof = prove_lock(ctx, xs, locked, stripped, s, keys)
        return deal_body(0, LockPass(self.me, tuple(stripped), proof, tuple(locked)))


class IdentityClaim(_Once):
    def tamper(self, body: dict[str, Any]) -> dict[str, Any] | None:
        if not _is(body, "identity") or self.table is None:
            return body
        deal = self.table.deals[body["deal"]]
        own = body["msg"]["position"]
        other = next(
            (p for p in range(deal.setup.size) if p != own and deal.holder(p) == self.me), None
        )
        if other is None:
            return body
        body = copy.deepcopy(body)
        body["msg"]["position"] = other  # proves something about another card
        return body


class MoveForAnother(_Once):
    def tamper(self, body: dict[str, Any]) -> dict[str, Any] | None:
        if body["t"] != "move":
            return body
        body = copy.deepcopy(body)
        body["event"]["seat"] = (self.me + 1) % self.node.table.n
        return body


class FalseVerdict(_Once):
    def tamper(self, body: dict[str, Any]) -> dict[str, Any] | None:
        if body["t"] != "move" or body["event"].get("kind") != "verdict":
            return body
        body = copy.deepcopy(body)
        event = body["event"]
        if event["effects"]:  # the rule fired: say it did not
            event["effects"] = []
        else:  # it did not: make the next seat draw a card
            target = (self.me + 1) % self.node.table.n
            event["effects"] = [{"do": "draw", "target": target, "n": 1, "phrase": ""}]
        return body


class TimerNotSequencer(TableSession):
    """v2 logs: times a timer out though another seat is the sequencer.
    v3 (any seat signs its word, §7.2): signs that a timer ran out at a point
    of the log before it was started - a word no clock can give."""

    cheated = False

    async def _time_out_timer(self, table: Any) -> bool:
        if self.cheated or (table.setup.version < V3 and self.node.is_sequencer):
            return await super()._time_out_timer(table)
        for request in table.pending():
            if not isinstance(request, Timer):
                continue
            at = table.count
            if table.setup.version >= V3:
                since = table.timers.started(request.purpose)
                if not since or request in table.pending_at(since - 1):
                    continue
                at = since - 1  # the body before the timer started
            self.cheated = True
            await self._publish({"t": "timer", "purpose": request.purpose, "at": at})
            return True
        return await super()._time_out_timer(table) if table.setup.version >= V3 else False


class KeepFinal(TableSession):
    async def _publish(self, body: dict[str, Any]) -> None:
        if not _is(body, "final"):
            await super()._publish(body)


CHEATS = {
    c.name: c
    for c in (
        Cheat("wrong-key", WrongKey, "reveals a made-up key", chance="a key reveal of its own"),
        Cheat(
            "duplicate-card",
            DuplicateCard,
            "shuffles one card in twice",
            chance="a shuffle pass of its own",
        ),
        Cheat(
            "lock-key",
            LockKey,
            "locks another position's card to read it",
            chance="its lock pass of the first deal",
        ),
        Cheat(
            "identity-claim",
            IdentityClaim,
            "proves its play against another card",
            ("bomb",),
            chance="a proof about its identity card: it must play cards of kind A or B (K12) "
            "while holding another card",
        ),
        Cheat(
            "move-for-another",
            MoveForAnother,
            "signs a move for another seat",
            chance="a move of its own",
        ),
        Cheat(
            "timer",
            TimerNotSequencer,
            "times out a timer it may not (v2: not the sequencer; v3: before it started)",
            chance="a running timer (v2: while another seat is the sequencer)",
        ),
        Cheat(
            "keep-final",
            KeepFinal,
            "withholds its final reveal",
            chance="the final reveals at the end of the game",
        ),
        Cheat(
            "false-verdict",
            FalseVerdict,
            "posts a false verdict for its secret rule",
            ("mao",),
            chance="a verdict of its own secret rule: it must win a round to write one",
        ),
    )
}

CHEATS.update((c.name, c) for c in SEQUENCER_CHEATS)


def cheating_at(seat: int, cheat: Cheat) -> Callable[..., TableSession]:
    """A session factory: ``cheat`` plays ``seat``, honest sessions the rest."""

    def make(node: Any, **options: Any) -> TableSession:
        kind = cheat.session if node.seat == seat else TableSession
        return kind(node, **options)

    make.cheat = (seat, cheat.name)  # type: ignore[attr-defined]  # by name into a bot process
    return make


__all__ = ["CHEATS", "Cheat", "cheating_at"]
