"""Cards as a person sees them: suit symbols, red and black.

>>> card_text(Card.parse("Q♥")).plain
' Q♥ '
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from engines.cards import Card

from ..words import register, t

register({"(no cards)": "（没有牌）"})

RED_SUITS = ("♥", "♦")


def card_text(card: Card | None, *, selected: bool = False, cursor: bool = False) -> Text:
    """One card: red for hearts and diamonds (and the red joker), a hidden
    card as ``▒▒``; a selected card underlined and bold, the cursor boxed."""
    if card is None:
        label, style = "▒▒", "dim"
    else:
        label = str(card)
        red = any(s in label for s in RED_SUITS) or label == "RJ"
        style = "bold red" if red else "bold"
    if selected:
        style += " underline reverse"
    text = Text(label, style=style)
    if cursor:
        text = Text("[", style="yellow") + text + Text("]", style="yellow")
    else:
        text = Text(" ") + text + Text(" ")
    return text


class Hand(Static):
    """The seat's hand with a cursor and the picked cards: what every table
    screen lets a person move along and pick from (cards are ``(deck
    position, face)`` pairs; picks are deck positions)."""

    def __init__(self, *, picking: bool = True, **options: Any) -> None:
        super().__init__(**options)
        self.cards: list[tuple[int, Card | None]] = []
        self.cursor = 0
        self.picked: set[int] = set()
        self.picking = picking

    def hold(self, cards: list[tuple[int, Card | None]]) -> None:
        """The hand as it is now: the cursor stays on the hand, picks of
        cards that left it are dropped."""
        self.cards = list(cards)
        self.cursor = min(self.cursor, max(0, len(self.cards) - 1))
        self.picked &= {p for p, _ in self.cards}
        self._draw()

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

    def _draw(self) -> None:
        line = Text()
        for i, (position, card) in enumerate(self.cards):
            line += card_text(card, selected=position in self.picked, cursor=i == self.cursor)
        if not self.cards:
            lang = getattr(self.app, "lang", "en") if self.is_attached else "en"
            line = Text(t("(no cards)", lang), style="dim")
        self.update(line)
