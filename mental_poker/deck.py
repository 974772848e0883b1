"""Deck encoding: the card with canonical index ``i`` is a hash-to-curve point.

Canonical card index (the same in every layer): suits ♠ ♥ ♦ ♣ = 0, 1, 2, 3;
ranks A=1 … K=13; ``index = suit*13 + (rank-1)`` for 0…51; 52 black joker,
53 red joker; copy ``c`` of card ``i`` (several decks, Mao M1) is
``c*54 + i``. Identical faces of different copies are different points.

``card_point(i) = from_uniform(SHA-512(lp("nodealer/v1/card") ‖ lp(u32(i)))[:32])``
(``lp`` = u32 big-endian length prefix). This is the only way to make a deck:
never ``m·G`` or any point with a known discrete-log relation to another card
(that would let anyone undo a shuffle by testing ratios). ``from_uniform``
and the 32-byte cut are edwards25519's; a deck of another group uses that
group's hash-to-curve on the same label and index (``card_point(i, group)``;
secp256k1: protocol.md §1.1).

>>> deck = Deck.of(range(54))
>>> deck.index_of(card_point(53)), deck.index_of(card_point(54))
(53, None)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from .errors import DecodeError
from .group import ED25519
from .group_api import Group

CARD_LABEL = b"nodealer/v1/card"
DECK_SIZE = 54
MAX_COPIES = 16
MAX_CARD_INDEX = DECK_SIZE * MAX_COPIES - 1


def check_card_index(index: object) -> int:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= MAX_CARD_INDEX:
        raise DecodeError(f"card index must be an int in 0..{MAX_CARD_INDEX}, not {index!r:.40}")
    return index


@cache
def card_point(index: int, group: Group = ED25519) -> bytes:
    """The deck point of the card with this canonical index."""
    check_card_index(index)
    return group.hash_to_point(CARD_LABEL, index.to_bytes(4, "big"))


@dataclass(frozen=True)
class Deck:
    """An ordered list of distinct card indices and their points (in
    ``group``), with the reverse map point -> index (to read a decrypted
    card)."""

    cards: tuple[int, ...]
    points: tuple[bytes, ...] = field(repr=False)
    _by_point: dict[bytes, int] = field(repr=False, compare=False)
    group: Group = field(default=ED25519, repr=False)

    @classmethod
    def of(cls, cards: Iterable[int], group: Group = ED25519) -> Deck:
        indices = tuple(check_card_index(c) for c in cards)
        if len(set(indices)) != len(indices):
            raise DecodeError("a deck lists every card once")
        if len(indices) < 2:
            raise DecodeError("a deck to shuffle has at least two cards")
        points = tuple(card_point(c, group) for c in indices)
        return cls(indices, points, dict(zip(points, indices, strict=True)), group)

    @classmethod
    def standard(cls, copies: int = 1, group: Group = ED25519) -> Deck:
        """``copies`` full 54-card decks (Mao M1 uses 2 for more than 5 players)."""
        if not 1 <= copies <= MAX_COPIES:
            raise DecodeError(f"1..{MAX_COPIES} decks")
        return cls.of(range(DECK_SIZE * copies), group)

    def __len__(self) -> int:
        return len(self.cards)

    def __contains__(self, card: object) -> bool:
        if not isinstance(card, int) or isinstance(card, bool):
            return False
        return 0 <= card <= MAX_CARD_INDEX and card_point(card, self.group) in self._by_point

    def point(self, card: int) -> bytes:
        """The point of a card of this deck (KeyError if not in it)."""
        if card not in self:
            raise KeyError(f"card {card} is not in this deck")
        return card_point(card, self.group)

    def index_of(self, point: bytes) -> int | None:
        """The card this point encodes, or None if it is not in this deck."""
        return self._by_point.get(point)
