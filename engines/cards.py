"""Playing cards as small immutable values.

A card is a face (rank and suit, or a joker) plus a copy number, because Mao
(GAMES.md M1) may shuffle two decks together and identical faces are then
distinct physical cards.

Canonical card index (shared with mental_poker's deck encoding through p2p,
and written in protocol.md): suits ♠ ♥ ♦ ♣ = 0, 1, 2, 3; ranks A=1 … K=13;
``index = suit * 13 + (rank - 1)`` for 0…51; 52 is the black joker, 53 the
red joker; copy ``c`` of card ``i`` has index ``c * 54 + i``.

>>> Card.parse("9♦")
Card.parse('9♦')
>>> str(Card.parse("10h")), Card.parse("A♠").index
('10♥', 0)
>>> Card.from_index(53 + 54).copy, str(Card.from_index(52))
(1, 'BJ')
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

DECK_SIZE = 54
"""Cards in one deck: 52 plus two jokers (M1, K1)."""


class Suit(IntEnum):
    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def symbol(self) -> str:
        return "♠♥♦♣"[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)


RANK_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K"}
_RANK_BY_NAME = {"A": 1, "J": 11, "Q": 12, "K": 13, "T": 10}
_SUIT_BY_NAME = {
    "♠": Suit.SPADES, "S": Suit.SPADES, "♤": Suit.SPADES,
    "♥": Suit.HEARTS, "H": Suit.HEARTS, "♡": Suit.HEARTS,
    "♦": Suit.DIAMONDS, "D": Suit.DIAMONDS, "♢": Suit.DIAMONDS,
    "♣": Suit.CLUBS, "C": Suit.CLUBS, "♧": Suit.CLUBS,
}  # fmt: skip
BLACK_JOKER = 52
RED_JOKER = 53
_SUITS = tuple(Suit)
"""Suit by value, without an enum lookup (``Card.suit`` is on hot paths)."""


def rank_name(rank: int) -> str:
    """``1 -> 'A'``, ``10 -> '10'``, ``13 -> 'K'``."""
    return RANK_NAMES.get(rank, str(rank))


def parse_rank(text: str) -> int:
    """Parse a rank name (``'A'``, ``'10'``, ``'t'``, ``'k'``); ValueError if none."""
    t = text.strip().upper()
    if t in _RANK_BY_NAME:
        return _RANK_BY_NAME[t]
    if t.isdigit() and 2 <= int(t) <= 10:
        return int(t)
    raise ValueError(f"not a rank: {text!r} (expected A, 2-10, J, Q or K)")


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One physical card. ``rank`` is 1…13 for suited cards, 0 for jokers;
    ``suit`` is None for jokers; ``joker`` is "black"/"red" or None."""

    index: int

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or isinstance(self.index, bool) or self.index < 0:
            raise ValueError(f"card index must be a non-negative int, not {self.index!r}")

    # -- construction -------------------------------------------------------
    @classmethod
    def from_index(cls, index: int) -> Card:
        return cls(index)

    @classmethod
    def of(cls, rank: int, suit: Suit | int, copy: int = 0) -> Card:
        if not 1 <= rank <= 13:
            raise ValueError(f"rank must be 1..13, not {rank!r}")
        return cls(copy * DECK_SIZE + int(Suit(suit)) * 13 + rank - 1)

    @classmethod
    def joker(cls, red: bool, copy: int = 0) -> Card:
        return cls(copy * DECK_SIZE + (RED_JOKER if red else BLACK_JOKER))

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``'9♦'``, ``'10h'``, ``'As'``, ``'BJ'``/``'RJ'``, with an optional
        ``'#2'`` copy suffix (``'9♦#1'`` is the second deck's 9♦)."""
        body, _, copy_text = text.strip().partition("#")
        copy = int(copy_text) if copy_text else 0
        b = body.strip().upper()
        if b in ("BJ", "JOKER-", "B🃏", "BLACK JOKER"):
            return cls.joker(False, copy)
        if b in ("RJ", "R🃏", "RED JOKER"):
            return cls.joker(True, copy)
        if len(b) < 2 or b[-1] not in _SUIT_BY_NAME:
            raise ValueError(f"not a card: {text!r} (try '9♦', '10h', 'As', 'BJ', 'RJ')")
        return cls.of(parse_rank(b[:-1]), _SUIT_BY_NAME[b[-1]], copy)

    # -- properties ---------------------------------------------------------
    @property
    def face(self) -> int:
        """Index within one deck (0…53): equal faces from different copies match."""
        return self.index % DECK_SIZE

    @property
    def copy(self) -> int:
        return self.index // DECK_SIZE

    @property
    def is_joker(self) -> bool:
        return self.face >= BLACK_JOKER

    @property
    def suit(self) -> Suit | None:
        face = self.index % DECK_SIZE
        return None if face >= BLACK_JOKER else _SUITS[face // 13]

    @property
    def rank(self) -> int:
        """1…13; 0 for a joker."""
        return 0 if self.is_joker else self.face % 13 + 1

    @property
    def is_red(self) -> bool:
        if self.is_joker:
            return self.face == RED_JOKER
        return self.suit.is_red  # type: ignore[union-attr]

    def __str__(self) -> str:
        if self.is_joker:
            text = "RJ" if self.face == RED_JOKER else "BJ"
        else:
            text = f"{rank_name(self.rank)}{self.suit.symbol}"  # type: ignore[union-attr]
        return f"{text}#{self.copy}" if self.copy else text

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


def full_deck(decks: int = 1, jokers: bool = True) -> list[Card]:
    """Every card of ``decks`` decks in index order (jokers optional, B1/B8)."""
    if decks < 1:
        raise ValueError("need at least one deck")
    return [
        Card(c * DECK_SIZE + i)
        for c in range(decks)
        for i in range(DECK_SIZE)
        if jokers or i < BLACK_JOKER
    ]
