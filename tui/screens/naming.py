"""A seat's name as the Bomb and Mao screens say it: "you" for your own
seat, the name the table knows (the app's ``names``, when it has them),
else "seat N"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..words import register, t

register({"you": "你", "seat {seat}": "座位{seat}"})


def seat_namer(app: Any, me: int | None, lang: str) -> Callable[[int], str]:
    """``name(seat)`` for ``app``'s table, seen from seat ``me``.

    >>> class App: names = ["ann", "bob"]
    >>> name = seat_namer(App(), 0, "en")
    >>> name(0), name(1), name(2)
    ('you', 'bob', 'seat 2')
    """
    names = getattr(app, "names", None)

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
