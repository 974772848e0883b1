"""One seat's side of a deal: its secrets (:class:`DealSecrets`, persisted
before anything made from them is published) and the ``make_*`` functions
that turn them into its messages (passes, key reveals, relocks, handovers,
identity claims, the final reveal)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import msgpack

from .context import Context
from .deal import DealTable
from .errors import (
    DecodeError,
    ProtocolError,
)
from .group import (
    Rng,
    base_mul,
    decode_scalar,
    encode_scalar,
    inverse,
    is_valid_point,
    mul,
    pmap,
    random_permutation,
    random_scalar,
)
from .messages import (
    MAX_SEATS,
    Complaint,
    DealSetup,
    FinalReveal,
    Handover,
    IdentityClaim,
    KeyReveal,
    LockPass,
    Relock,
    ShufflePass,
    _int,
)
from .proofs import (
    prove_handover,
    prove_lock,
    prove_member,
    prove_shuffle,
)

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

    @classmethod
    def generate(cls, setup: DealSetup, seat: int, rng: Rng | None = None) -> DealSecrets:
        _int(seat, 0, setup.seats - 1, "seat")
        n = setup.size
        return cls(
            setup.context.table_id,
            setup.context.deal,
            seat,
            random_scalar(rng),
            random_permutation(n, rng),
            tuple(random_scalar(rng) for _ in range(n)),
        )

    def keys_for(self, position: int) -> list[int]:
        """Every key of this seat over a position (lock key, then relocks)."""
        if not isinstance(position, int) or not 0 <= position < len(self.lock_keys):
            raise ProtocolError(f"no position {position!r} in this deal")
        return [self.lock_keys[position], *(k for p, k in self.relock_keys if p == position)]

    def with_relock(self, position: int, key: int) -> DealSecrets:
        return replace(self, relock_keys=(*self.relock_keys, (position, key)))

    def to_bytes(self) -> bytes:
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
            },
            use_bin_type=True,
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> DealSecrets:
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
        if not isinstance(obj, dict) or set(obj) != keys:
            raise DecodeError("deal secrets: unknown layout")
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
        ctx = Context(obj["table"], _int(obj["deal"], 0, 2**63 - 1, "deal"))
        return cls(
            ctx.table_id,
            ctx.deal,
            _int(obj["seat"], 0, MAX_SEATS - 1, "seat"),
            decode_scalar(obj["shuffle_key"], nonzero=True),
            tuple(perm),
            tuple(decode_scalar(k, nonzero=True) for k in locks),
            tuple(relock_pairs),
        )

    def check_belongs(self, setup: DealSetup) -> None:
        if (self.table_id, self.deal) != (setup.context.table_id, setup.context.deal):
            raise ProtocolError("these secrets belong to another table or deal")
        if len(self.lock_keys) != setup.size:
            raise ProtocolError("these secrets are for a deck of another size")


# ---------------------------------------------------------------- making messages


def make_shuffle(
    setup: DealSetup, secrets: DealSecrets, deck_in: Sequence[bytes], rng: Rng | None = None
) -> ShufflePass:
    """This seat's shuffle pass over ``deck_in`` (``DealTable.expected_input``)."""
    secrets.check_belongs(setup)
    s, perm = secrets.shuffle_key, secrets.permutation
    out = tuple(pmap(lambda i: mul(s, deck_in[perm[i]]), range(setup.size)))
    gamma = base_mul(s)
    proof = None
    if setup.proven:
        ctx = setup.context.at("shuffle", secrets.seat)
        proof = prove_shuffle(ctx, deck_in, out, gamma, s, perm, rng)
    return ShufflePass(secrets.seat, out, gamma, proof)


def make_lock(
    setup: DealSetup, secrets: DealSecrets, deck_in: Sequence[bytes], rng: Rng | None = None
) -> LockPass:
    """This seat's lock pass: lock each position, then strip the shuffle key
    (the stripped deck is the next seat's input), and prove both: the lock
    keys are known, the key stripped is the one that shuffled."""
    secrets.check_belongs(setup)
    keys = secrets.lock_keys
    locked = tuple(pmap(lambda i: mul(keys[i], deck_in[i]), range(setup.size)))
    s_inv = inverse(secrets.shuffle_key)
    stripped = tuple(pmap(lambda x: mul(s_inv, x), locked))
    proof = None
    if setup.proven:
        ctx = setup.context.at("lock", secrets.seat)
        proof = prove_lock(ctx, deck_in, locked, stripped, secrets.shuffle_key, keys, rng)
    return LockPass(secrets.seat, stripped, proof, locked)


def make_complaint(table: DealTable, seat: int) -> Complaint:
    """What a seat sends instead of its pass when :func:`make_shuffle` or
    :func:`make_lock` raised InvalidPoint: a complaint about the first
    invalid point of its input."""
    if table.phase not in ("shuffle", "lock") or table.next_seat != seat:
        raise ProtocolError(f"it is not seat {seat}'s pass")
    deck = table.expected_input()
    valid = pmap(is_valid_point, deck)
    if all(valid):
        raise ProtocolError("every point of the input deck is valid: nothing to complain about")
    return Complaint(seat, valid.index(False))


def make_key_reveal(
    secrets: DealSecrets, positions: Iterable[int], table: DealTable | None = None
) -> KeyReveal:
    """Reveal every key this seat holds over these positions; with the
    deal's ``table``, never the key of a layer it handed over (removed: that
    key stays secret until the final reveal, §1.4)."""
    pairs = []
    for p in positions:
        removed = [] if table is None else table.removed_layers(p, secrets.seat)
        for k in secrets.keys_for(p):
            if not any(mul(k, layer.before) == layer.after for layer in removed):
                pairs.append((p, k))
    return KeyReveal(secrets.seat, tuple(pairs))


def make_final_reveal(secrets: DealSecrets) -> FinalReveal:
    keys = tuple((p, k) for p in range(len(secrets.lock_keys)) for k in secrets.keys_for(p))
    return FinalReveal(secrets.seat, secrets.shuffle_key, keys)


def make_relock(
    table: DealTable, secrets: DealSecrets, position: int, rng: Rng | None = None
) -> tuple[Relock, DealSecrets]:
    """Take a hidden card over (Bluff pile pick-up): a fresh key over the
    position's current value. Persist the returned secrets, publish the
    Relock, then the previous holder makes its :func:`make_handover`."""
    key = random_scalar(rng)
    point = mul(key, table.ciphertext(position))
    return Relock(secrets.seat, position, point), secrets.with_relock(position, key)


def make_handover(
    table: DealTable, secrets: DealSecrets, position: int, rng: Rng | None = None
) -> Handover:
    """Hand a hidden card over after the new holder's relock: take this
    seat's key off the position's current value, with a proof, without
    revealing the key (it comes out in the final reveal)."""
    secrets.check_belongs(table.setup)
    layer = table.own_layer(position, secrets.seat)
    key = next((k for k in secrets.keys_for(position) if mul(k, layer.before) == layer.after), None)
    if key is None:
        raise ProtocolError(f"own secrets do not open position {position}")
    current = table.ciphertext(position)
    point = mul(inverse(key), current)
    ctx = table.setup.context.at("handover", secrets.seat)
    proof = prove_handover(ctx, layer.before, layer.after, point, current, key, rng)
    return Handover(secrets.seat, position, point, proof)


def make_identity_claim(
    table: DealTable,
    secrets: DealSecrets,
    position: int,
    members: Iterable[int],
    rng: Rng | None = None,
) -> IdentityClaim:
    """Prove that this seat's card at ``position`` is one of ``members``
    (Bomb K12 A). Use :meth:`DealTable.complement` for K12 B. Raises
    ProtocolError if the card is not a member: a true claim only."""
    members_t = tuple(sorted(set(members)))
    card = table.decrypt(position, secrets.seat, secrets)
    if card not in members_t:
        raise ProtocolError(f"card at position {position} is not in the claimed set")
    layer = table.sole_layer(position, secrets.seat)
    key = next(k for k in secrets.keys_for(position) if mul(k, layer.before) == layer.after)
    pts = [(m, table.setup.deck.point(m)) for m in members_t]
    ctx = table.setup.context.at("identity", secrets.seat)
    proof = prove_member(
        ctx, pts, layer.before, layer.after, table.peeled(position), key, card, rng
    )
    return IdentityClaim(secrets.seat, position, members_t, proof)
