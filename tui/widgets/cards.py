"""Cards as a person sees them: suit symbols, red and black, a hand sorted
by rank or by suit, and every mark also in text (readable without colour).

>>> card_text(Card.parse("Q♥")).plain
' Q♥ '
>>> card_text(Card.parse("Q♥"), selected=True, cursor=True).plain
'[*Q♥]'
>>> card_text(Card.parse("Q♥"), fresh=True).plain
' +Q♥ '
>>> [str(c) for _, c in sort_cards([(0, Card.parse("K♠")), (1, Card.parse("2♥")),
...                                (2, Card.parse("2♠")), (3, None)], "rank")]
['2♠', '2♥', 'K♠', 'None']
>>> [str(c) for _, c in sort_cards([(0, Card.parse("K♠")), (1, Card.parse("2♥")),
...                                (2, Card.parse("2♠"))], "suit")]
['2♠', 'K♠', '2♥']
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from engines.cards import Card

from ..words import register, t

register(
    {
        "(no cards)": "（没有牌）",
        "your hand: {n} cards by rank (r: by suit)": "你的手牌：{n} 张，按点数排（r：按花色）",
        "your hand: {n} cards by suit (r: by rank)": "你的手牌：{n} 张，按花色排（r：按点数）",
        "   * picked": "   * 已选",
        "   + new": "   + 新收的牌",
    }
)

RED_SUITS = ("♥", "♦")
ORDERS = ("rank", "suit")
"""How a hand is sorted: by rank (A low … K, then jokers) or by suit (♠ ♥ ♦ ♣)."""
PICKED_MARK = "*"
FRESH_MARK = "+"


def _key(order: str, card: Card | None) -> tuple[int, int, int, int]:
    if card is None:
        return (2, 0, 0, 0)  # a card not yet seen: last
    if card.is_joker:
        return (1, card.face, 0, card.copy)
    suit = int(card.suit or 0)
    if order == "suit":
        return (0, suit, card.rank, card.copy)
    return (0, card.rank, suit, card.copy)


def sort_cards(
    cards: list[tuple[int, Card | None]], order: str = "rank"
) -> list[tuple[int, Card | None]]:
    """``(position, card)`` pairs sorted by ``order`` (one of :data:`ORDERS`);
    cards not yet seen go last, in deck order."""
    return sorted(cards, key=lambda pc: (_key(order, pc[1]), pc[0]))


def card_text(
    card: Card | None, *, selected: bool = False, cursor: bool = False, fresh: bool = False
) -> Text:
    """One card: red for hearts and diamonds (and the red joker), a hidden
    card as ``▒▒``; a picked card marked ``*`` and reversed, a card just
    taken marked ``+`` and underlined, the cursor in brackets."""
    if card is None:
        label, style = "▒▒", "dim"
    else:
        label = str(card)
        red = any(s in label for s in RED_SUITS) or label == "RJ"
        style = "bold red" if red else "bold"
    mark = ""
    if selected:
        style += " underline reverse"
        mark = PICKED_MARK
    elif fresh:
        style += " underline"
        mark = FRESH_MARK
    text = Text(mark, style="bold") + Text(label, style=style)
    if cursor:
        text = Text("[", style="yellow") + text + Text("]", style="yellow")
    else:
        text = Text(" ") + text + Text(" ")
    return text


class Hand(Static):
    """The seat's hand, sorted, with a cursor, the picked cards and the
    cards just taken (``fresh``): what every table screen lets a person move
    along and pick from (cards are ``(deck position, face)`` pairs; picks
    are deck positions). ``caption``: a first line saying how many cards,
    the order and the marks."""

    def __init__(self, *, picking: bool = True, caption: bool = False, **options: Any) -> None:
        super().__init__(**{"markup": False, **options})  # drawn as Text, never markup
        self.cards: list[tuple[int, Card | None]] = []
        self.cursor = 0
        self.picked: set[int] = set()
        self.fresh: set[int] = set()
        self.picking = picking
        self.caption = caption
        self.order = ORDERS[0]

    def hold(self, cards: list[tuple[int, Card | None]], fresh: set[int] | None = None) -> None:
        """The hand as it is now, sorted: the cursor stays on its card (or
        its place, if that card left), picks of cards that left are dropped.
        ``fresh``: the cards just taken (None: as before, if still held)."""
        under = self.under_cursor()
        self.cards = sort_cards(list(cards), self.order)
        held = {p for p, _ in self.cards}
        self.picked &= held
        self.fresh = (self.fresh if fresh is None else set(fresh)) & held
        self._follow(under)
        self._draw()

    def sort_by(self, order: str) -> None:
        """Sort by ``order`` (one of :data:`ORDERS`); the cursor keeps its card."""
        if order not in ORDERS:
            raise ValueError(f"no order {order!r}")
        under = self.under_cursor()
        self.order = order
        self.cards = sort_cards(self.cards, order)
        self._follow(under)
        self._draw()

    def toggle_order(self) -> str:
        """By rank ↔ by suit; the new order."""
        self.sort_by(ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)])
        return self.order

    def _follow(self, under: tuple[int, Card | None] | None) -> None:
        positions = [p for p, _ in self.cards]
        if under is not None and under[0] in positions:
            self.cursor = positions.index(under[0])
        self.cursor = max(0, min(self.cursor, len(self.cards) - 1))

    def move(self, step: int) -> None:
        if self.cards:
            self.cursor = (self.cursor + step) % len(self.cards)
            self._draw()

    def toggle(self) -> bool:
        """Pick the card under the cursor, or put it back; False: no cards."""
        if not self.cards or not self.picking:
            return False
        self.picked ^= {self.cards[self.cursor][0]}
        self._draw()
        return True

    def under_cursor(self) -> tuple[int, Card | None] | None:
        return self.cards[self.cursor] if self.cards else None

    def picked_cards(self) -> list[tuple[int, Card | None]]:
        """The picked cards, in hand order."""
        return [(p, c) for p, c in self.cards if p in self.picked]

    def clear_picks(self) -> None:
        self.picked = set()
        self._draw()

    def clear_fresh(self) -> None:
        if self.fresh:
            self.fresh = set()
            self._draw()

    def _lang(self) -> str:
        return getattr(self.app, "lang", "en") if self.is_attached else "en"

    def _draw(self) -> None:
        line = Text()
        for i, (position, card) in enumerate(self.cards):
            line += card_text(card, selected=position in self.picked,
                              cursor=i == self.cursor, fresh=position in self.fresh)  # fmt: skip
        if not self.cards:
            line = Text(t("(no cards)", self._lang()), style="dim")
        if self.caption:
            line = self._caption() + Text("\n") + line
        self.update(line)

    def _caption(self) -> Text:
        lang = self._lang()
        order = ("your hand: {n} cards by rank (r: by suit)" if self.order == "rank"
                 else "your hand: {n} cards by suit (r: by rank)")  # fmt: skip
        said = t(order, lang, n=len(self.cards))
        # appended with its style, not as the Text's base style: a base style
        # would dim everything appended after it (the cards, below)
        text = Text()
        text.append(said.replace(" 1 cards ", " 1 card "), style="dim")
        if self.picked:
            text += Text(t("   * picked", lang))
        if self.fresh:
            text += Text(t("   + new", lang))
        return text
