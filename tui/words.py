"""The interface in English and Chinese (``--lang zh|en``).

English text is the key: ``t("your hand", "zh")`` gives what the module
showing "your hand" registered for it.
Every module that shows text registers its Chinese wordings with
:func:`register` at import time, next to the code that uses them, so a
string and its translation are read and changed together. Fields are filled
after translation (``t("seat {seat}", lang, seat=2)``), so the Chinese
sentence may put them where Chinese grammar wants them.

A string without a Chinese wording is shown in English and remembered in
:data:`MISSING`; the tests play whole games in Chinese and fail on any.

>>> register({"{n} cards left": "还剩 {n} 张"})
>>> t("{n} cards left", "zh", n=2)
'还剩 2 张'
>>> t("{n} cards left", "en", n=2)
'2 cards left'
"""

from __future__ import annotations

from collections.abc import Mapping

LANGS = ("en", "zh")
"""The languages of the interface; ``zh`` is the seeds' language."""

_ZH: dict[str, str] = {}
MISSING: set[str] = set()
"""English strings asked for in Chinese that have no Chinese wording."""
CONFLICTS: dict[str, set[str]] = {}
"""English strings given two Chinese wordings (the first is kept; a test
fails on any: say the two senses with two English strings)."""


def register(zh: Mapping[str, str]) -> None:
    """Add Chinese wordings (English text → Chinese text)."""
    for english, chinese in zh.items():
        known = _ZH.get(english)
        if known is not None and known != chinese:
            CONFLICTS.setdefault(english, {known}).add(chinese)
            continue
        _ZH[english] = chinese


def t(text: str, lang: str = "en", /, **fields: object) -> str:
    """``text`` in ``lang``, with ``fields`` filled in."""
    if lang == "zh":
        chinese = _ZH.get(text)
        if chinese is None:
            MISSING.add(text)
        else:
            text = chinese
    return text.format(**fields) if fields else text


def known(text: str) -> bool:
    """Whether ``text`` has a Chinese wording."""
    return text in _ZH
