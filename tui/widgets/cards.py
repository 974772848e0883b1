"""Cards as a person sees them: suit symbols, red and black.

>>> card_text(Card.parse("Q♥")).plain
' Q♥ '
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from engines.cards import Card

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
    """The seat's hand, a cursor and a selection (positions)."""

    def show(self, cards: list[tuple[int, Card | None]], cursor: int, selected: set[int]) -> None:
        line = Text()
        for i, (position, card) in enumerate(cards):
            line += card_text(card, selected=position in selected, cursor=i == cursor)
        self.update(line if cards else Text("(no cards)", style="dim"))
