"""The interface in English and Chinese (``--lang zh|en``).

English text is the key: ``t("your hand", "zh")`` gives ``"你的手牌"``.
Every module that shows text registers its Chinese wordings with
:func:`register` at import time, next to the code that uses them, so a
string and its translation are read and changed together. Fields are filled
after translation (``t("seat {seat}", lang, seat=2)``), so the Chinese
sentence may put them where Chinese grammar wants them.

A string without a Chinese wording is shown in English and remembered in
:data:`MISSING`; the tests play whole games in Chinese and fail on any.

>>> register({"seat {seat}": "座位 {seat}"})
>>> t("seat {seat}", "zh", seat=2)
'座位 2'
>>> t("seat {seat}", "en", seat=2)
'seat 2'
"""

from __future__ import annotations

from collections.abc import Mapping

LANGS = ("en", "zh")
"""The languages of the interface; ``zh`` is the seeds' language."""

_ZH: dict[str, str] = {}
MISSING: set[str] = set()
"""English strings asked for in Chinese that have no Chinese wording."""


def register(zh: Mapping[str, str]) -> None:
    """Add Chinese wordings (English text → Chinese text)."""
    for english, chinese in zh.items():
        known = _ZH.get(english)
        if known is not None and known != chinese:
            raise ValueError(f"two Chinese wordings for {english!r}: {known!r}, {chinese!r}")
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
