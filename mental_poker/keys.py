"""One seat's secrets for one deal (:class:`DealSecrets`): its shuffle key,
permutation, lock keys and relock keys, persisted before anything made from
them is published (protocol.md §1.9, "Local persistence"). The public
tracker (:mod:`mental_poker.deal`) reads them to decrypt a seat's own card;
the seat's messages are made from them by :mod:`mental_poker.seat`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import msgpack

from .context import Context
from .errors import DecodeError, ProtocolError
from .group import ED25519
from .group_api import Group
from .messages import MAX_SEATS, DealSetup, _int
from .rand import Rng, random_permutation

# ---------------------------------------------------------------- secrets


@dataclass(frozen=True)
class DealSecrets:
    """One seat's secrets for one deal: shuffle key, permutation (output
    position i holds input position ``permutation[i]``), one lock key per
    position, and the keys of its relock layers. Persist ``to_bytes()`` before
    publishing anything made from it; a crash then loses nothing."""

    table_id: bytes
    deal: int
    seat: int
    shuffle_key: int
    permutation: tuple[int, ...]
    lock_keys: tuple[int, ...]
    relock_keys: tuple[tuple[int, int], ...] = ()
    group: Group = field(default=ED25519, repr=False, compare=False)
    """The deal's group (how the keys are written)."""

    @classmethod
    def generate(cls, setup: DealSetup, seat: int, rng: Rng | None = None) -> DealSecrets:
        _int(seat, 0, setup.seats - 1, "seat")
        n = setup.size
        g = setup.context.group
        return cls(
            setup.context.table_id,
            setup.context.deal,
            seat,
            g.random_scalar(rng),
            random_permutation(n, rng),
            tuple(g.random_scalar(rng) for _ in range(n)),
            group=g,
        )

    def keys_for(self, position: int) -> list[int]:
        """Every key of this seat over a position (lock key, then relocks)."""
        if not isinstance(position, int) or not 0 <= position < len(self.lock_keys):
            raise ProtocolError(f"no position {position!r} in this deal")
        return [self.lock_keys[position], *(k for p, k in self.relock_keys if p == position)]

    def with_relock(self, position: int, key: int) -> DealSecrets:
        return replace(self, relock_keys=(*self.relock_keys, (position, key)))

    def to_bytes(self) -> bytes:
        encode_scalar = self.group.encode_scalar
        return msgpack.packb(
            {
                "v": 1,
                "table": self.table_id,
                "deal": self.deal,
                "seat": self.seat,
                "shuffle_key": encode_scalar(self.shuffle_key),
                "permutation": list(self.permutation),
                "lock_keys": [encode_scalar(k) for k in self.lock_keys],
                "relock_keys": [[p, encode_scalar(k)] for p, k in self.relock_keys],
                # edwards25519's files stay as they were (no field); any other
                # group is named, so a file is never read in the wrong group
                **({} if self.group is ED25519 else {"group": self.group.name}),
            },
            use_bin_type=True,
        )

    @classmethod
    def from_bytes(cls, data: bytes, group: Group = ED25519) -> DealSecrets:
        """The secrets :meth:`to_bytes` wrote, for a deal in ``group``."""
        decode_scalar = group.decode_scalar
        if not isinstance(data, bytes):
            raise DecodeError("deal secrets: bytes expected")
        try:
            obj = msgpack.unpackb(data, raw=False, strict_map_key=True)
        except (ValueError, TypeError, msgpack.UnpackException) as exc:
            raise DecodeError(f"deal secrets: not msgpack: {exc}") from exc
        keys = {
            "v",
            "table",
            "deal",
            "seat",
            "shuffle_key",
            "permutation",
            "lock_keys",
            "relock_keys",
        }
        if isinstance(obj, dict) and group is not ED25519:
            keys.add("group")
        if not isinstance(obj, dict) or set(obj) != keys:
            raise DecodeError("deal secrets: unknown layout")
        if obj.get("group", group.name) != group.name:
            raise DecodeError(f"deal secrets: written for another group than {group.name}")
        if type(obj["v"]) is not int or obj["v"] != 1:
            raise DecodeError("deal secrets: unknown layout version")
        perm, locks, relocks = obj["permutation"], obj["lock_keys"], obj["relock_keys"]
        if not all(isinstance(x, list) for x in (perm, locks, relocks)):
            raise DecodeError("deal secrets: lists expected")
        n = len(locks)
        if any(type(p) is not int for p in perm) or sorted(perm) != list(range(n)):
            raise DecodeError("deal secrets: permutation does not match the keys")
        relock_pairs = []
        for pair in relocks:
            if not isinstance(pair, list) or len(pair) != 2:
                raise DecodeError("deal secrets: relock keys are [position, key] pairs")
            relock_pairs.append(
                (_int(pair[0], 0, n - 1, "position"), decode_scalar(pair[1], nonzero=True))
            )
        ctx = Context(obj["table"], _int(obj["deal"], 0, 2**63 - 1, "deal"), group=group)
        return cls(
            ctx.table_id,
            ctx.deal,
            _int(obj["seat"], 0, MAX_SEATS - 1, "seat"),
            decode_scalar(obj["shuffle_key"], nonzero=True),
            tuple(perm),
            tuple(decode_scalar(k, nonzero=True) for k in locks),
            tuple(relock_pairs),
            group,
        )

    def check_belongs(self, setup: DealSetup) -> None:
        if self.group is not setup.context.group:
            raise ProtocolError("these secrets belong to a deal in another group")
        if (self.table_id, self.deal) != (setup.context.table_id, setup.context.deal):
            raise ProtocolError("these secrets belong to another table or deal")
        if len(self.lock_keys) != setup.size:
            raise ProtocolError("these secrets are for a deck of another size")
