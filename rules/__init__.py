"""The rulebooks (``rules/<lang>/<game>.md``) as package data.

They ship inside the wheel (pyproject's package-data) and are read through
:mod:`importlib.resources`, so the help screen finds them the same way in a
checkout (editable or on ``PYTHONPATH``), in an installed wheel and in a
zipped install. This package holds text only: no code reads anything else
from it.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

LANGUAGES = ("en", "zh")


def rulebook_file(game: str, lang: str) -> Traversable:
    """Where the rulebook of ``game`` in ``lang`` is (it may not exist)."""
    return files(__name__) / lang / f"{game}.md"


def rulebook(game: str, lang: str) -> str | None:
    """The rulebook of ``game`` in ``lang``, None when there is none (an
    unknown game or language, or an install that lost its package data)."""
    if lang not in LANGUAGES or not game.isidentifier():
        return None
    path = rulebook_file(game, lang)
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
