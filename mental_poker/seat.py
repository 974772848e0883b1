"""One seat's side of a deal: the ``make_*`` functions that turn its secrets
(:class:`~mental_poker.keys.DealSecrets`, persisted before anything made
from them is published; re-exported here) into its messages (passes, key
reveals, relocks, handovers, identity claims, the final reveal), in the
deal's group."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .deal import DealTable
from .errors import ProtocolError
from .keys import DealSecrets
from .messages import (
    Complaint,
    DealSetup,
    FinalReveal,
    Handover,
    IdentityClaim,
    KeyReveal,
    LockPass,
    Relock,
    ShufflePass,
)
from .parallel import pmap
from .proofs import (
    prove_handover,
    prove_lock,
    prove_member,
    prove_shuffle,
)
from .rand import Rng

__all__ = [
    "DealSecrets",
    "make_complaint",
    "make_final_reveal",
    "make_handover",
    "make_identity_claim",
    "make_key_reveal",
    "make_lock",
    "make_relock",
    "make_shuffle",
]


# ---------------------------------------------------------------- making messages


def make_shuffle(
    setup: DealSetup, secrets: DealSecrets, deck_in: Sequence[bytes], rng: Rng | None = None
) -> ShufflePass:
    """This seat's shuffle pass over ``deck_in`` (``DealTable.expected_input``)."""
    secrets.check_belongs(setup)
    g = setup.context.group
    mul, s, perm = g.mul, secrets.shuffle_key, secrets.permutation
    out = tuple(pmap(lambda i: mul(s, deck_in[perm[i]]), range(setup.size)))
    gamma = g.base_mul(s)
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
    g = setup.context.group
    mul, keys = g.mul, secrets.lock_keys
    locked = tuple(pmap(lambda i: mul(keys[i], deck_in[i]), range(setup.size)))
    s_inv = g.inverse(secrets.shuffle_key)
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
    valid = pmap(table.group.is_valid_point, deck)
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
    mul = secrets.group.mul
    for p in positions:
        removed = [] if table is None else table.removed_layers(p, secrets.seat)
        for k in secrets.keys_for(p):
            if not any(mul(k, layer.before) == layer.after for layer in removed):
                pairs.append((p, k))
    return KeyReveal(secrets.seat, tuple(pairs), secrets.group)


def make_final_reveal(secrets: DealSecrets) -> FinalReveal:
    keys = tuple((p, k) for p in range(len(secrets.lock_keys)) for k in secrets.keys_for(p))
    return FinalReveal(secrets.seat, secrets.shuffle_key, keys, secrets.group)


def make_relock(
    table: DealTable, secrets: DealSecrets, position: int, rng: Rng | None = None
) -> tuple[Relock, DealSecrets]:
    """Take a hidden card over (Bluff pile pick-up): a fresh key over the
    position's current value. Persist the returned secrets, publish the
    Relock, then the previous holder makes its :func:`make_handover`."""
    key = table.group.random_scalar(rng)
    point = table.group.mul(key, table.ciphertext(position))
    return Relock(secrets.seat, position, point), secrets.with_relock(position, key)


def make_handover(
    table: DealTable, secrets: DealSecrets, position: int, rng: Rng | None = None
) -> Handover:
    """Hand a hidden card over after the new holder's relock: take this
    seat's key off the position's current value, with a proof, without
    revealing the key (it comes out in the final reveal)."""
    secrets.check_belongs(table.setup)
    g = table.group
    layer = table.own_layer(position, secrets.seat)
    keys = secrets.keys_for(position)
    key = next((k for k in keys if g.mul(k, layer.before) == layer.after), None)
    if key is None:
        raise ProtocolError(f"own secrets do not open position {position}")
    current = table.ciphertext(position)
    point = g.mul(g.inverse(key), current)
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
    mul = table.group.mul
    key = next(k for k in secrets.keys_for(position) if mul(k, layer.before) == layer.after)
    pts = [(m, table.setup.deck.point(m)) for m in members_t]
    ctx = table.setup.context.at("identity", secrets.seat)
    proof = prove_member(
        ctx, pts, layer.before, layer.after, table.peeled(position), key, card, rng
    )
    return IdentityClaim(secrets.seat, position, members_t, proof)
