"""The messages of a deal and their strict wire codec (protocol.md §1.5):
what every seat agrees on before a deal (:class:`DealSetup`), the eight
message kinds, :func:`decode_message` (every scalar and single point checked
here; deck and proof points parsed only, validated by the tracker on first
use) and the msgpack bytes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import msgpack

from .context import Context
from .deck import Deck, check_card_index
from .errors import (
    DecodeError,
)
from .group import ED25519
from .group_api import Group
from .proofs import (
    HandoverProof,
    LockProof,
    MemberProof,
    ShuffleProof,
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
    carry proofs. The group is the context's (the deck must be in it)."""

    context: Context
    seats: int
    deck: Deck
    proven: bool = True

    def __post_init__(self) -> None:
        _int(self.seats, 2, MAX_SEATS, "seats")
        if self.context.step or self.context.seat:
            raise DecodeError("a deal context has no step or seat")
        if self.deck.group is not self.context.group:
            raise DecodeError("the deck is not in the deal's group")

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
    def from_wire(cls, obj: object, group: Group = ED25519) -> DealSetup:
        """The setup sent on the wire, for a table in ``group`` (the
        protocol version decides it, not the setup)."""
        if not isinstance(obj, dict) or set(obj) != {"table", "deal", "seats", "cards", "proven"}:
            raise DecodeError("deal setup: expected table, deal, seats, cards, proven")
        if not isinstance(obj["cards"], list) or not isinstance(obj["proven"], bool):
            raise DecodeError("deal setup: cards is a list, proven a bool")
        ctx = Context(obj["table"], _int(obj["deal"], 0, 2**63 - 1, "deal"), group=group)
        return cls(ctx, obj["seats"], Deck.of(obj["cards"], group), obj["proven"])


# ---------------------------------------------------------------- messages


def _keys(value: object, setup: DealSetup, what: str) -> tuple[tuple[int, int], ...]:
    decode_scalar = setup.context.group.decode_scalar
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
    group: Group = field(default=ED25519, repr=False, compare=False)

    def to_wire(self) -> dict:
        encode_scalar = self.group.encode_scalar
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
    group: Group = field(default=ED25519, repr=False, compare=False)

    def to_wire(self) -> dict:
        encode_scalar = self.group.encode_scalar
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
    n, g = setup.size, setup.context.group
    if kind == "shuffle":
        proof = _optional_proof(obj["proof"], setup, lambda p: ShuffleProof.from_wire(p, n, g))
        return ShufflePass(
            seat, g.parse_points(obj["deck"], n, "deck"), g.decode_point(obj["gamma"]), proof
        )
    if kind == "lock":
        proof = _optional_proof(obj["proof"], setup, lambda p: LockProof.from_wire(p, n, g))
        stripped = g.parse_points(obj["stripped"], n, "stripped deck")
        return LockPass(seat, stripped, proof, g.parse_points(obj["locked"], n, "locked deck"))
    if kind == "keys":
        return KeyReveal(seat, _keys(obj["keys"], setup, "key reveal"), g)
    if kind == "relock":
        position = _int(obj["position"], 0, n - 1, "position")
        return Relock(seat, position, g.decode_point(obj["point"]))
    if kind == "handover":
        position = _int(obj["position"], 0, n - 1, "position")
        proof = HandoverProof.from_wire(obj["proof"], g)
        return Handover(seat, position, g.decode_point(obj["point"]), proof)
    if kind == "identity":
        position = _int(obj["position"], 0, n - 1, "position")
        members = obj["members"]
        if not isinstance(members, list) or not 1 <= len(members) <= n:
            raise DecodeError("identity claim: members is a non-empty list of card indices")
        members_t = tuple(check_card_index(m) for m in members)
        if list(members_t) != sorted(set(members_t)):
            raise DecodeError("identity claim: members must be ascending and distinct")
        proof = MemberProof.from_wire(obj["proof"], len(members_t), g)
        return IdentityClaim(seat, position, members_t, proof)
    if kind == "complaint":
        return Complaint(seat, _int(obj["position"], 0, n - 1, "position"))
    shuffle_key = g.decode_scalar(obj["shuffle_key"], nonzero=True)
    return FinalReveal(seat, shuffle_key, _keys(obj["keys"], setup, "final reveal"), g)


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
