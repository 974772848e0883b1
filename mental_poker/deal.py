"""One deal: shuffle pass, lock pass, then key reveals until the final audit.

Theory of operation
-------------------
A *deal* shuffles a public list of known cards (a full deck, two decks for Mao
M1, or the face-up discard pile being reshuffled, Bomb K9 / Mao M26) into
``n`` hidden *positions*. Nobody learns the order unless every seat colludes.

1. Shuffle pass, in seat order. Seat j takes the previous deck X (seat 0: the
   deck points), draws one shuffle key s and a secret permutation π, and
   publishes ``Y[i] = s·X[π(i)]``, ``Γ = s·G`` and a shuffle proof.
2. Lock pass, in seat order. Seat j takes the previous deck X, multiplies
   every position by an independent *lock key* (``L[i] = k[i]·X[i]``, the
   *locked* deck), then strips its shuffle key (``X′[i] = s⁻¹·L[i]``, no
   permutation; the *stripped* deck, passed on), with one lock proof that
   it knows every ``k[i]`` and that the key stripped is the one behind its
   Γ. After the last seat, position i holds
   ``F[i] = (Π_j k_j[i])·D[π(i)]``. Lock before strip, so that every
   published point but F still carries the last seat's shuffle key: the other
   way round, the last seat's stripped deck ``(Π_{j<N−1} k_j)·D`` was
   readable by everyone as soon as the others revealed their keys to deal
   that seat a card. The proof of the lock keys matters as much: a seat
   that could publish ``L[i] = s·X[j]`` (another position's input) would
   read card j from the others' key reveals for a card dealt to it at i.
3. Play. Every hidden value of a position is a stack of *layers*
   ``(seat, before, after)`` with ``after = key·before``: one lock layer per
   seat (before = that seat's input point, after = its locked point) plus
   one *relock* layer whenever a hidden card changes hands (Bluff pile
   pick-up: the new holder puts its own fresh key over the current value,
   then the old holder *hands over*: it takes its key off the value with a
   Chaum–Pedersen proof, never revealing it, since a revealed key would open
   every layer under the relock point to everyone). A revealed key is
   checked at once against its layer, so it needs no proof.

   * deal position i to seat s: every other seat reveals its keys for i;
   * show to everyone: the holder reveals too;
   * :meth:`DealTable.readers` says who can decrypt a position now,
     :meth:`DealTable.decrypt` does it for one seat with its own secrets.
   * identity claims (Bomb K12 A/B): the holder proves, with every other key
     for the position revealed, that the card is in a public set S.
4. Final reveal. At the end every seat reveals its shuffle key and all its
   keys; :meth:`DealTable.audit` then re-checks the whole deal without proofs
   and names any cheater. A shuffle key is never revealed earlier: with all
   of them, anyone could trace the permutations.

:class:`DealTable` is the public tracker (h11-style: it does not know which
seat "we" are; every peer and the offline verifier feed it the same messages
in log order). ``feed`` returns a :class:`Verdict` that depends on the
messages alone (never on what this peer decrypted privately), so every
tracker agrees. A verdict naming a seat rejects the message and changes
nothing. A verdict with no seat (possible only in an unproven deal) means
the message itself was correct and stays applied, but opening a position
exposed an earlier cheat (a non-card, or a card already read publicly);
the audit names its author. :class:`DealSecrets` is one seat's secret state; the
``make_*`` functions turn it into the seat's messages. Everything on the wire
is plain msgpack-able data (``to_wire``/``decode_message``); see protocol.md §1.

Heavy methods (``feed`` of a pass, ``audit``, the ``make_*`` of passes) are
plain blocking functions: call them with ``trio.to_thread.run_sync``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import msgpack

from .context import Context
from .deck import Deck, check_card_index
from .errors import (
    CheatDetected,
    DecodeError,
    InvalidPoint,
    MentalPokerError,
    NotDecryptable,
    ProtocolError,
    Verdict,
)
from .group import (
    IDENTITY,
    L,
    Rng,
    base_mul,
    decode_point,
    decode_scalar,
    encode_scalar,
    inverse,
    is_valid_point,
    mul,
    parse_points,
    pmap,
    random_permutation,
    random_scalar,
)
from .proofs import (
    HandoverProof,
    LockProof,
    MemberProof,
    ShuffleProof,
    prove_handover,
    prove_lock,
    prove_member,
    prove_shuffle,
    verify_handover,
    verify_lock,
    verify_member,
    verify_shuffle,
)

P = TypeVar("P")
MAX_SEATS = 16
MAX_MESSAGE_BYTES = 1 << 20
MAX_KEYS = MAX_MESSAGE_BYTES // 32
"""Bound on the (position, key) pairs of one message: what fits in a message
(each pair takes more than 32 bytes). Not tied to the deck size: every relock
(Bluff pick-up) adds a key, so a long game gives a seat many."""


def _int(value: object, lo: int, hi: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise DecodeError(f"{what} must be an int in {lo}..{hi}, not {value!r:.40}")
    return value


# ---------------------------------------------------------------- setup


@dataclass(frozen=True)
class DealSetup:
    """What every seat agrees on before a deal: the context (table id and
    deal number), the number of seats, the cards to shuffle (in this order:
    position i of the input is ``deck.cards[i]``) and whether the passes
    carry proofs."""

    context: Context
    seats: int
    deck: Deck
    proven: bool = True

    def __post_init__(self) -> None:
        _int(self.seats, 2, MAX_SEATS, "seats")
        if self.context.step or self.context.seat:
            raise DecodeError("a deal context has no step or seat")

    @property
    def size(self) -> int:
        return len(self.deck)

    def to_wire(self) -> dict:
        return {
            "table": self.context.table_id,
            "deal": self.context.deal,
            "seats": self.seats,
            "cards": list(self.deck.cards),
            "proven": self.proven,
        }

    @classmethod
    def from_wire(cls, obj: object) -> DealSetup:
        if not isinstance(obj, dict) or set(obj) != {"table", "deal", "seats", "cards", "proven"}:
            raise DecodeError("deal setup: expected table, deal, seats, cards, proven")
        if not isinstance(obj["cards"], list) or not isinstance(obj["proven"], bool):
            raise DecodeError("deal setup: cards is a list, proven a bool")
        ctx = Context(obj["table"], _int(obj["deal"], 0, 2**63 - 1, "deal"))
        return cls(ctx, obj["seats"], Deck.of(obj["cards"]), obj["proven"])


# ---------------------------------------------------------------- messages


def _keys(value: object, setup: DealSetup, what: str) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list | tuple) or len(value) > MAX_KEYS:
        raise DecodeError(f"{what}: expected a list of [position, key] pairs")
    out = []
    for pair in value:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise DecodeError(f"{what}: expected [position, key] pairs")
        out.append(
            (
                _int(pair[0], 0, setup.size - 1, "position"),
                decode_scalar(pair[1], nonzero=True),
            )
        )
    return tuple(out)


def _check_fields(obj: dict, keys: set[str], what: str) -> None:
    if set(obj) != keys:
        raise DecodeError(f"{what}: expected exactly the fields {sorted(keys)}")


@dataclass(frozen=True, slots=True)
class ShufflePass:
    seat: int
    deck: tuple[bytes, ...]
    gamma: bytes
    proof: ShuffleProof | None

    def to_wire(self) -> dict:
        return {
            "type": "shuffle",
            "seat": self.seat,
            "deck": list(self.deck),
            "gamma": self.gamma,
            "proof": None if self.proof is None else self.proof.to_wire(),
        }


@dataclass(frozen=True, slots=True)
class LockPass:
    seat: int
    stripped: tuple[bytes, ...]
    proof: LockProof | None
    locked: tuple[bytes, ...]

    def to_wire(self) -> dict:
        return {
            "type": "lock",
            "seat": self.seat,
            "stripped": list(self.stripped),
            "proof": None if self.proof is None else self.proof.to_wire(),
            "locked": list(self.locked),
        }


@dataclass(frozen=True, slots=True)
class KeyReveal:
    """``keys``: ``(position, key)`` pairs; each key opens one of the seat's
    layers at that position."""

    seat: int
    keys: tuple[tuple[int, int], ...]

    def to_wire(self) -> dict:
        return {
            "type": "keys",
            "seat": self.seat,
            "keys": [[p, encode_scalar(k)] for p, k in self.keys],
        }


@dataclass(frozen=True, slots=True)
class Relock:
    """The seat puts a fresh key over position's current value: ``point``."""

    seat: int
    position: int
    point: bytes

    def to_wire(self) -> dict:
        return {"type": "relock", "seat": self.seat, "position": self.position, "point": self.point}


@dataclass(frozen=True, slots=True)
class Handover:
    """The seat takes the key of its one closed layer off ``position``
    without revealing it: ``point = key⁻¹·current``, with a proof that it is
    that layer's key. How a hidden card changes hands once the new holder
    relocked: revealing the key instead would open every layer under the
    relock point to everyone."""

    seat: int
    position: int
    point: bytes
    proof: HandoverProof

    def to_wire(self) -> dict:
        return {
            "type": "handover",
            "seat": self.seat,
            "position": self.position,
            "point": self.point,
            "proof": self.proof.to_wire(),
        }


@dataclass(frozen=True, slots=True)
class IdentityClaim:
    """The holder of ``position`` proves its card is one of ``members``."""

    seat: int
    position: int
    members: tuple[int, ...]
    proof: MemberProof

    def to_wire(self) -> dict:
        return {
            "type": "identity",
            "seat": self.seat,
            "position": self.position,
            "members": list(self.members),
            "proof": self.proof.to_wire(),
        }


@dataclass(frozen=True, slots=True)
class FinalReveal:
    """End of game: the shuffle key and every key of the seat."""

    seat: int
    shuffle_key: int
    keys: tuple[tuple[int, int], ...]

    def to_wire(self) -> dict:
        return {
            "type": "final",
            "seat": self.seat,
            "shuffle_key": encode_scalar(self.shuffle_key),
            "keys": [[p, encode_scalar(k)] for p, k in self.keys],
        }


@dataclass(frozen=True, slots=True)
class Complaint:
    """Instead of its pass: the point at ``position`` of the deck this seat
    must transform (``DealTable.expected_input``) is not a valid point, so
    the seat cannot multiply it. Every tracker checks that one point and
    names either the point's first sender or, if the point is valid, the
    complainer. Either way the deal stops there."""

    seat: int
    position: int

    def to_wire(self) -> dict:
        return {"type": "complaint", "seat": self.seat, "position": self.position}


Message = (
    ShufflePass | LockPass | KeyReveal | Relock | Handover | IdentityClaim | FinalReveal | Complaint
)

_FIELDS = {
    "shuffle": {"type", "seat", "deck", "gamma", "proof"},
    "lock": {"type", "seat", "stripped", "proof", "locked"},
    "keys": {"type", "seat", "keys"},
    "relock": {"type", "seat", "position", "point"},
    "handover": {"type", "seat", "position", "point", "proof"},
    "identity": {"type", "seat", "position", "members", "proof"},
    "final": {"type", "seat", "shuffle_key", "keys"},
    "complaint": {"type", "seat", "position"},
}


def decode_message(obj: object, setup: DealSetup) -> Message:
    """Strictly decode one message of this deal from plain data (raises a
    :class:`DecodeError`). Every scalar is validated here, and so is every
    single point (Γ, a relock's, a handover's); the points of decks and of
    shuffle proofs are only parsed, and validated by the tracker before
    first use."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise DecodeError("not a mental-poker message (unknown or missing type)")
    _check_fields(obj, _FIELDS[kind], f"{kind} message")
    seat = _int(obj["seat"], 0, setup.seats - 1, "seat")
    n = setup.size
    if kind == "shuffle":
        proof = _optional_proof(obj["proof"], setup, lambda p: ShuffleProof.from_wire(p, n))
        return ShufflePass(
            seat, parse_points(obj["deck"], n, "deck"), decode_point(obj["gamma"]), proof
        )
    if kind == "lock":
        proof = _optional_proof(obj["proof"], setup, lambda p: LockProof.from_wire(p, n))
        stripped = parse_points(obj["stripped"], n, "stripped deck")
        return LockPass(seat, stripped, proof, parse_points(obj["locked"], n, "locked deck"))
    if kind == "keys":
        return KeyReveal(seat, _keys(obj["keys"], setup, "key reveal"))
    if kind == "relock":
        position = _int(obj["position"], 0, n - 1, "position")
        return Relock(seat, position, decode_point(obj["point"]))
    if kind == "handover":
        position = _int(obj["position"], 0, n - 1, "position")
        proof = HandoverProof.from_wire(obj["proof"])
        return Handover(seat, position, decode_point(obj["point"]), proof)
    if kind == "identity":
        position = _int(obj["position"], 0, n - 1, "position")
        members = obj["members"]
        if not isinstance(members, list) or not 1 <= len(members) <= n:
            raise DecodeError("identity claim: members is a non-empty list of card indices")
        members_t = tuple(check_card_index(m) for m in members)
        if list(members_t) != sorted(set(members_t)):
            raise DecodeError("identity claim: members must be ascending and distinct")
        proof = MemberProof.from_wire(obj["proof"], len(members_t))
        return IdentityClaim(seat, position, members_t, proof)
    if kind == "complaint":
        return Complaint(seat, _int(obj["position"], 0, n - 1, "position"))
    shuffle_key = decode_scalar(obj["shuffle_key"], nonzero=True)
    return FinalReveal(seat, shuffle_key, _keys(obj["keys"], setup, "final reveal"))


def _optional_proof(value: object, setup: DealSetup, decode: Callable[[object], P]) -> P | None:
    if setup.proven:
        if value is None:
            raise DecodeError("this deal is proven: the proof is missing")
        return decode(value)
    if value is not None:
        raise DecodeError("this deal is unproven: no proof expected")
    return None


def encode_message(message: Message) -> bytes:
    """msgpack bytes of ``message.to_wire()`` (bin for bytes, fields in order)."""
    return msgpack.packb(message.to_wire(), use_bin_type=True)


def decode_message_bytes(data: bytes, setup: DealSetup) -> Message:
    """Decode msgpack bytes strictly (size limit, no trailing data)."""
    if not isinstance(data, bytes) or len(data) > MAX_MESSAGE_BYTES:
        raise DecodeError("message too large or not bytes")
    try:
        obj = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise DecodeError(f"not msgpack: {exc}") from exc
    return decode_message(obj, setup)


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


# ---------------------------------------------------------------- the tracker


@dataclass(slots=True)
class Layer:
    """``after = key·before``. ``removed``: taken off the current value by a
    handover (its key stays secret until the final reveal)."""

    seat: int
    before: bytes
    after: bytes
    key: int | None = None
    removed: bool = False


@dataclass
class _Handover:
    seat: int
    position: int
    layer: Layer
    before: bytes
    after: bytes


@dataclass
class _Claim:
    seat: int
    position: int
    members: tuple[int, ...]


@dataclass
class DealTable:
    """Public tracker of one deal. Feed it every message in log order.

    It does not know which seat "we" are unless told: ``own_seat`` is a
    performance option for a caller that feeds its own passes straight from
    :func:`make_shuffle`/:func:`make_lock` (their proofs are not re-verified;
    every other check still applies, and received messages are always
    checked). The table machine, observers and the offline verifier never
    set it: they check everything, so verdicts never depend on who runs the
    tracker."""

    setup: DealSetup
    own_seat: int | None = None
    phase: str = "shuffle"
    next_seat: int = 0
    shuffles: list[ShufflePass] = field(default_factory=list)
    locks: list[LockPass] = field(default_factory=list)
    layers: list[list[Layer]] = field(default_factory=list)
    current: list[bytes] = field(default_factory=list)
    public: dict[int, int] = field(default_factory=dict)
    known: dict[int, int] = field(default_factory=dict)
    shuffle_keys: dict[int, int] = field(default_factory=dict)
    claims: list[_Claim] = field(default_factory=list)
    handovers: list[_Handover] = field(default_factory=list)
    authors: dict[bytes, int] = field(default_factory=dict)
    """The seat that first sent each point of an accepted message: points
    of decks are validated on first use, and an invalid one names it."""

    # ------------------------------------------------------------ queries

    def expected_input(self) -> tuple[bytes, ...]:
        """The deck the next seat must transform in the current pass."""
        if self.phase == "shuffle":
            return self.shuffles[-1].deck if self.shuffles else self.setup.deck.points
        if self.phase == "lock":
            return self.locks[-1].stripped if self.locks else self.shuffles[-1].deck
        raise ProtocolError("both passes are over")

    @property
    def dealt(self) -> bool:
        """Both passes are done: positions can be revealed."""
        return self.phase == "play"

    def ciphertext(self, position: int) -> bytes:
        self._require_play(position)
        return self.current[position]

    def outstanding(self, position: int) -> list[Layer]:
        """Layers of this position whose key is still secret."""
        self._require_play(position)
        return [layer for layer in self.layers[position] if layer.key is None and not layer.removed]

    def readers(self, position: int) -> frozenset[int]:
        """Seats that can decrypt this position now: every seat when all
        keys are out, the holder when only its keys are missing, else none."""
        seats = {layer.seat for layer in self.outstanding(position)}
        if not seats:
            return frozenset(range(self.setup.seats))
        return frozenset(seats) if len(seats) == 1 else frozenset()

    def holder(self, position: int) -> int | None:
        """The one seat whose keys are missing, if exactly one."""
        seats = {layer.seat for layer in self.outstanding(position)}
        return next(iter(seats)) if len(seats) == 1 else None

    def public_card(self, position: int) -> int | None:
        """The card at a position every seat can read, once read."""
        return self.public.get(position)

    def sole_layer(self, position: int, seat: int) -> Layer:
        """The only outstanding layer of a position, which must be ``seat``'s."""
        out = self.outstanding(position)
        if len(out) != 1 or out[0].seat != seat:
            raise NotDecryptable(f"position {position}: seat {seat} is not the only key holder")
        return out[0]

    def removed_layers(self, position: int, seat: int) -> list[Layer]:
        """``seat``'s layers of a position that a handover took off."""
        self._require_play(position)
        return [layer for layer in self.layers[position] if layer.seat == seat and layer.removed]

    def own_layer(self, position: int, seat: int) -> Layer:
        """The one outstanding layer of ``seat`` at a position (what a
        handover takes off)."""
        mine = [layer for layer in self.outstanding(position) if layer.seat == seat]
        if len(mine) != 1:
            raise NotDecryptable(f"position {position}: seat {seat} holds no single closed layer")
        return mine[0]

    def peeled(self, position: int) -> bytes:
        """The position's value with every revealed key removed."""
        self._require_play(position)
        product = 1
        for layer in self.layers[position]:
            if layer.key is not None and not layer.removed:
                product = product * layer.key % L
        return mul(inverse(product), self.current[position])

    def complement(self, excluded: Iterable[int]) -> tuple[int, ...]:
        """The deal's cards not in ``excluded`` (the set for Bomb K12 B)."""
        drop = set(excluded)
        return tuple(sorted(c for c in self.setup.deck.cards if c not in drop))

    def missing_final(self) -> list[int]:
        """Seats that have not made their final reveal."""
        return [s for s in range(self.setup.seats) if s not in self.shuffle_keys]

    def decrypt(self, position: int, seat: int, secrets: DealSecrets) -> int:
        """The card at ``position`` for ``seat``, using its own keys for the
        layers still secret. NotDecryptable if another seat's key is missing;
        CheatDetected if the value is not an unused card of the deal."""
        out = self.outstanding(position)
        if secrets.seat != seat:
            raise ProtocolError(f"these are seat {secrets.seat}'s secrets, not seat {seat}'s")
        secrets.check_belongs(self.setup)
        if any(layer.seat != seat for layer in out):
            raise NotDecryptable(f"position {position} still needs another seat's key")
        own = secrets.keys_for(position)
        product = 1
        for layer in self.layers[position]:
            if layer.removed:
                continue
            key = layer.key
            if key is None:
                key = next((k for k in own if mul(k, layer.before) == layer.after), None)
                if key is None:
                    raise ProtocolError(f"own secrets do not open position {position}")
            product = product * key % L
        card = self._read(position, mul(inverse(product), self.current[position]), private=True)
        self.known[position] = card
        return card

    # ------------------------------------------------------------ feeding

    def feed(self, message: Message) -> Verdict:
        """Check and apply one message. A verdict naming a seat rejects the
        message and changes nothing; a verdict with no seat (unproven deal
        only) keeps the correct message applied and flags the deal as broken
        (see the module docstring)."""
        try:
            handler = {
                ShufflePass: self._feed_shuffle,
                LockPass: self._feed_lock,
                KeyReveal: self._feed_keys,
                Relock: self._feed_relock,
                Handover: self._feed_handover,
                IdentityClaim: self._feed_identity,
                FinalReveal: self._feed_final,
                Complaint: self._feed_complaint,
            }[type(message)]
        except KeyError:
            raise DecodeError(f"not a mental-poker message: {message!r:.60}") from None
        if not 0 <= message.seat < self.setup.seats:
            return Verdict.cheat(None, f"no seat {message.seat} at this table")
        try:
            return handler(message)
        except CheatDetected as exc:
            return exc.verdict
        except InvalidPoint as exc:
            return self._invalid(exc, message.seat)
        except MentalPokerError as exc:
            return Verdict.cheat(message.seat, str(exc))

    def _invalid(self, exc: InvalidPoint, default: int | None) -> Verdict:
        """An invalid point met on first use names the seat that sent it
        (``default``: the point came with the message being checked)."""
        seat = self.authors.get(exc.point, default) if exc.point is not None else default
        return Verdict.cheat(seat, f"sent a point that is not valid: {exc}")

    def _sent(self, seat: int, points: Iterable[bytes]) -> None:
        for point in points:
            self.authors.setdefault(point, seat)

    def _turn(self, phase: str, seat: int) -> None:
        if self.phase != phase or seat != self.next_seat:
            raise CheatDetected(
                Verdict.cheat(
                    seat,
                    f"{phase} pass out of turn (expected {self.phase} of seat {self.next_seat})",
                )
            )

    def _check_distinct(self, seat: int, deck: Sequence[bytes], what: str) -> None:
        if len(set(deck)) != len(deck):
            raise CheatDetected(Verdict.cheat(seat, f"{what} holds the same point twice"))
        if IDENTITY in deck:  # decoding refuses it; this guards direct callers
            raise CheatDetected(Verdict.cheat(seat, f"{what} holds the identity"))

    def _feed_shuffle(self, msg: ShufflePass) -> Verdict:
        self._turn("shuffle", msg.seat)
        self._check_distinct(msg.seat, msg.deck, "shuffled deck")
        if len(msg.deck) != self.setup.size or (msg.proof is None) == self.setup.proven:
            return Verdict.cheat(msg.seat, "shuffle pass does not match the deal setup")
        if msg.gamma == IDENTITY:
            return Verdict.cheat(msg.seat, "Γ is the identity")
        if msg.proof is not None and msg.seat != self.own_seat:
            ctx = self.setup.context.at("shuffle", msg.seat)
            verify_shuffle(ctx, self.expected_input(), msg.deck, msg.gamma, msg.proof)
        self.shuffles.append(msg)
        self._sent(msg.seat, (*msg.deck, msg.gamma))
        self._advance("lock")
        return Verdict.good()

    def _feed_lock(self, msg: LockPass) -> Verdict:
        self._turn("lock", msg.seat)
        n = self.setup.size
        if (
            len(msg.stripped) != n
            or len(msg.locked) != n
            or (msg.proof is None) == self.setup.proven
        ):
            return Verdict.cheat(msg.seat, "lock pass does not match the deal setup")
        self._check_distinct(msg.seat, msg.stripped, "stripped deck")
        self._check_distinct(msg.seat, msg.locked, "locked deck")
        if msg.proof is not None and msg.seat != self.own_seat:
            ctx = self.setup.context.at("lock", msg.seat)
            gamma = self.shuffles[msg.seat].gamma
            verify_lock(ctx, self.expected_input(), msg.locked, msg.stripped, gamma, msg.proof)
        if not self.setup.proven and msg.seat == self.setup.seats - 1 and msg.seat != self.own_seat:
            # The last stripped deck is what every later step multiplies
            # (reads, relocks, handovers). In a proven deal the lock proof
            # has already checked it; here it is checked at once, so that
            # an honest seat never meets an invalid point after the passes.
            valid = pmap(is_valid_point, msg.stripped)
            if not all(valid):
                i = valid.index(False)
                seat = self.authors.get(msg.stripped[i], msg.seat)  # its first sender
                return Verdict.cheat(seat, f"point {i} of the last stripped deck is not valid")
        self.locks.append(msg)
        self._sent(msg.seat, (*msg.stripped, *msg.locked))
        self._advance("play")
        if self.phase == "play":
            inputs = [self.shuffles[-1].deck, *(lock.stripped for lock in self.locks[:-1])]
            self.layers = [
                [
                    Layer(lock.seat, deck_in[i], lock.locked[i])
                    for lock, deck_in in zip(self.locks, inputs, strict=True)
                ]
                for i in range(n)
            ]
            self.current = list(self.locks[-1].stripped)
        return Verdict.good()

    def _advance(self, next_phase: str) -> None:
        self.next_seat += 1
        if self.next_seat == self.setup.seats:
            self.phase, self.next_seat = next_phase, 0

    def _match_keys(
        self, seat: int, keys: Sequence[tuple[int, int]], final: bool = False
    ) -> list[tuple[tuple[int, int], Layer]]:
        """Each distinct (position, key) pair with the layer it opens (checked
        in parallel), or CheatDetected. A key opens one layer only, so more
        distinct pairs than the seat has layers is refused before any work.
        A layer a handover removed opens only in the ``final`` reveal: its
        key, out earlier, would let everyone read the card from the values
        under it, though another seat now holds it."""
        self._require_play()
        unique = list(dict.fromkeys(keys))
        owned = sum(layer.seat == seat for stack in self.layers for layer in stack)
        if len(unique) > owned:
            raise CheatDetected(
                Verdict.cheat(seat, f"{len(unique)} keys revealed for {owned} layers")
            )

        def find(pair: tuple[int, int]) -> Layer | InvalidPoint | None:
            """The seat's oldest layer at the position that the key opens;
            a layer over an invalid point opens with no key (protocol.md
            §1.1): if none opens, the first such point, else None."""
            position, key = pair
            invalid = None
            for layer in self.layers[position]:
                if layer.seat != seat or (layer.removed and not final):
                    continue
                if layer.key is not None:
                    if layer.key == key:
                        return layer
                    continue
                try:
                    if mul(key, layer.before) == layer.after:
                        return layer
                except InvalidPoint as exc:
                    invalid = invalid or exc
            return invalid

        found = pmap(find, unique)
        for (position, _), layer in zip(unique, found, strict=True):  # in message order
            if isinstance(layer, InvalidPoint):
                raise layer
            if layer is None:
                raise CheatDetected(
                    Verdict.cheat(
                        seat, f"revealed key for position {position} does not open its layer"
                    )
                )
        return list(zip(unique, found, strict=True))  # type: ignore[arg-type]

    def shown_card(self, message: KeyReveal, position: int) -> int:
        """The card ``position`` opens to with the keys of ``message`` added
        to the revealed ones, checked as :meth:`feed` checks a key reveal
        (keys, then the card read) but applying nothing: a card played face
        up with its holder's keys (Mao M4). Raises CheatDetected with the
        verdict ``feed`` would give (seat None: the card is no card of the
        deal or already public elsewhere), NotDecryptable if a key is still
        missing."""
        self._require_play(position)
        try:
            matched = self._match_keys(message.seat, message.keys)
            opened = {id(layer): key for (_, key), layer in matched}
            product = 1
            for layer in self.layers[position]:
                if layer.removed:
                    continue
                key = layer.key if layer.key is not None else opened.get(id(layer))
                if key is None:
                    raise NotDecryptable(f"position {position} still has a closed layer")
                product = product * key % L
            if position in self.public:
                return self.public[position]
            return self._read(position, mul(inverse(product), self.current[position]))
        except InvalidPoint as exc:
            raise CheatDetected(self._invalid(exc, message.seat)) from exc

    def _apply_keys(self, matched: Sequence[tuple[tuple[int, int], Layer]]) -> Verdict:
        touched = set()
        for (position, key), layer in matched:
            layer.key = key
            touched.add(position)
        verdict = Verdict.good()
        for position in sorted(touched):
            if position in self.public or self.outstanding(position):
                continue
            try:
                self.public[position] = self._read(position, self.peeled(position))
            except CheatDetected as exc:
                verdict = verdict if not verdict.ok else exc.verdict
        return verdict

    def _feed_keys(self, msg: KeyReveal) -> Verdict:
        return self._apply_keys(self._match_keys(msg.seat, msg.keys))

    def _feed_relock(self, msg: Relock) -> Verdict:
        self._require_play(msg.position)
        if msg.seat in self.shuffle_keys:
            # a layer its owner can no longer open: the audit could name nobody
            return Verdict.cheat(msg.seat, "relock after its final reveal")
        before = self.current[msg.position]
        if msg.point == before:
            return Verdict.cheat(msg.seat, "relock with the unit key")
        self.layers[msg.position].append(Layer(msg.seat, before, msg.point))
        self.current[msg.position] = msg.point
        self._sent(msg.seat, (msg.point,))
        self.public.pop(msg.position, None)
        self.known.pop(msg.position, None)
        return Verdict.good()

    def _feed_handover(self, msg: Handover) -> Verdict:
        self._require_play(msg.position)
        layer = self.own_layer(msg.position, msg.seat)
        if all(other.seat == msg.seat for other in self.outstanding(msg.position)):
            return Verdict.cheat(msg.seat, "handover with no new holder's relock over it")
        before = self.current[msg.position]
        ctx = self.setup.context.at("handover", msg.seat)
        verify_handover(ctx, layer.before, layer.after, msg.point, before, msg.proof)
        layer.removed = True
        self.current[msg.position] = msg.point
        self._sent(msg.seat, (msg.point,))
        self.handovers.append(_Handover(msg.seat, msg.position, layer, before, msg.point))
        return Verdict.good()

    def _feed_identity(self, msg: IdentityClaim) -> Verdict:
        self._require_play()
        layer = self.sole_layer(msg.position, msg.seat)
        deck = self.setup.deck
        if any(m not in deck for m in msg.members):
            return Verdict.cheat(msg.seat, "identity claim names a card outside the deal")
        pts = [(m, deck.point(m)) for m in msg.members]
        ctx = self.setup.context.at("identity", msg.seat)
        verify_member(ctx, pts, layer.before, layer.after, self.peeled(msg.position), msg.proof)
        self.claims.append(_Claim(msg.seat, msg.position, msg.members))
        return Verdict.good()

    def _feed_complaint(self, msg: Complaint) -> Verdict:
        """Always a verdict: against the point's first sender if it is
        invalid, against the complainer if it is valid."""
        if self.phase not in ("shuffle", "lock") or msg.seat != self.next_seat:
            return Verdict.cheat(msg.seat, "complaint when it is not its pass")
        if not 0 <= msg.position < self.setup.size:
            return Verdict.cheat(msg.seat, f"complaint about position {msg.position}: no such")
        point = self.expected_input()[msg.position]
        if is_valid_point(point):
            return Verdict.cheat(
                msg.seat, f"false complaint: point {msg.position} of its input deck is valid"
            )
        # the deck points (seat 0's shuffle input) are always valid, so the
        # point came in an accepted pass: its first sender is named
        return Verdict.cheat(
            self.authors[point], f"point {msg.position} of its deck is not a valid point"
        )

    def _feed_final(self, msg: FinalReveal) -> Verdict:
        self._require_play()
        if msg.seat in self.shuffle_keys:
            return Verdict.cheat(msg.seat, "second final reveal")
        if base_mul(msg.shuffle_key) != self.shuffles[msg.seat].gamma:
            return Verdict.cheat(msg.seat, "revealed shuffle key does not match its Γ")
        matched = self._match_keys(msg.seat, msg.keys, final=True)
        opened = {id(layer) for _, layer in matched}
        for position, stack in enumerate(self.layers):
            for layer in stack:
                if layer.seat == msg.seat and layer.key is None and id(layer) not in opened:
                    return Verdict.cheat(
                        msg.seat, f"final reveal lacks its key for position {position}"
                    )
        self.shuffle_keys[msg.seat] = msg.shuffle_key
        return self._apply_keys(matched)

    # ------------------------------------------------------------ audit

    def audit(self) -> Verdict:
        """After every final reveal: re-check the whole deal from keys alone
        (each shuffle is a permutation under one key, each strip removes that
        key, every position opens to a distinct card, every identity claim
        holds). Names the first cheater in seat order; an invalid point
        names the seat that sent it."""
        self._require_play()
        try:
            return self._audit()
        except InvalidPoint as exc:
            return self._invalid(exc, None)

    def _audit(self) -> Verdict:
        missing = self.missing_final()
        if missing:
            return Verdict.cheat(missing[0], "has not made its final reveal")
        for position, stack in enumerate(self.layers):
            for layer in stack:
                if layer.key is None:
                    return Verdict.cheat(
                        layer.seat, f"its key for position {position} was never revealed"
                    )
        deck_in: Sequence[bytes] = self.setup.deck.points
        for shuffle in self.shuffles:
            s_inv = inverse(self.shuffle_keys[shuffle.seat])
            undone = pmap(lambda y, s_inv=s_inv: mul(s_inv, y), shuffle.deck)
            if sorted(undone) != sorted(deck_in):
                return Verdict.cheat(
                    shuffle.seat, "shuffle output is not its input permuted under one key"
                )
            deck_in = shuffle.deck
        for lock in self.locks:  # each locked point was checked by its key
            s = self.shuffle_keys[lock.seat]
            redone = pmap(lambda x, s=s: mul(s, x), lock.stripped)
            if list(redone) != list(lock.locked):
                return Verdict.cheat(lock.seat, "stripped deck is not its locked deck unkeyed")
        for handover in self.handovers:
            if mul(handover.layer.key, handover.after) != handover.before:
                return Verdict.cheat(handover.seat, "handover took off another key than its own")
        faces = pmap(lambda p: self.setup.deck.index_of(self.peeled(p)), range(self.setup.size))
        if None in faces or len(set(faces)) != len(faces):
            # unreachable once every check above passed; kept as a guard
            return Verdict.cheat(None, "the positions do not open to the deal's cards")
        for claim in self.claims:
            if faces[claim.position] not in claim.members:
                return Verdict.cheat(
                    claim.seat, f"identity claim for position {claim.position} is false"
                )
        return Verdict.good()

    # ------------------------------------------------------------ helpers

    def _require_play(self, position: int | None = None) -> None:
        if self.phase != "play":
            raise ProtocolError("the shuffle and lock passes are not complete")
        if position is not None and (
            not isinstance(position, int) or not 0 <= position < self.setup.size
        ):
            raise ProtocolError(f"no position {position!r} in this deal")

    def _read(self, position: int, point: bytes, *, private: bool = False) -> int:
        """Map a fully decrypted point to its card; a non-card or a card
        already seen elsewhere is cheating (blamed by the final audit in an
        unproven deal; impossible after checked proofs). ``feed`` compares
        with the public reads only, so that every tracker fed the same
        messages reaches the same verdicts; a seat's own ``decrypt``
        (``private``) also compares with what that seat read before."""
        card = self.setup.deck.index_of(point)
        if card is None:
            raise CheatDetected(
                Verdict.cheat(None, f"position {position} decrypts to no card of the deal")
            )
        earlier = (*self.public.items(), *self.known.items()) if private else self.public.items()
        for other, seen in earlier:
            if seen == card and other != position:
                raise CheatDetected(
                    Verdict.cheat(None, f"positions {other} and {position} hold the same card")
                )
        return card
