"""The games a person can play on a screen on this machine, and the table
screen of each: what ``nodealer play``, ``host`` and ``join`` look up (the
apps import this; no screen imports an app)."""

from __future__ import annotations

from textual.screen import Screen

from .bluff import BluffScreen
from .bomb import BombScreen
from .mao import MaoScreen

SCREENS: dict[str, type[Screen[None]]] = {
    "bluff": BluffScreen,
    "bomb": BombScreen,
    "mao": MaoScreen,
}
"""Game name -> its table screen (``Screen(seat=...)``)."""
