"""A seat's name as the Bomb and Mao screens say it: "you" for your own
seat; else the table's name for it — the screen's ``names``
(:class:`table.names.SeatNames`, ``names.who(seat, lang)``) when it has
them, else its app's ``names`` (a list or a dict by seat) — else "seat N"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..words import register, t

register({"you": "你", "seat {seat}": "座位{seat}"})


def seat_namer(screen: Any, me: int | None, lang: str) -> Callable[[int], str]:
    """``name(seat)`` for the table ``screen`` shows, seen from seat ``me``.

    >>> class App: names = ["ann", "bob"]
    >>> class Screen: app = App()
    >>> name = seat_namer(Screen(), 0, "en")
    >>> name(0), name(1), name(2)
    ('you', 'bob', 'seat 2')
    """
    told = getattr(screen, "names", None)
    if callable(getattr(told, "who", None)):
        return lambda seat: str(told.who(seat, lang))  # type: ignore[union-attr]
    try:
        names = getattr(screen.app, "names", None)
    except Exception:  # no app (yet)
        names = None

    def name(seat: int) -> str:
        if seat == me:
            return t("you", lang)
        known: Any = None
        if isinstance(names, dict):
            known = names.get(seat)
        elif isinstance(names, list | tuple) and 0 <= seat < len(names):
            known = names[seat]
        if isinstance(known, str) and known:
            return known
        return t("seat {seat}", lang, seat=seat)

    return name
