"""The turn timer on a person's screen (:mod:`table.turn_timer`): the idle
seat's countdown in the header ("auto-move in 7 s") and the "(auto)" mark
of a move a turn timer made, in the story of every seat.

>>> auto_mark("seat 1 places 2, claims 2 × 7 (auto)")
('seat 1 places 2, claims 2 × 7', True)
>>> mark_line("bob places 2, claims 2 × 7", "zh")
'bob places 2, claims 2 × 7（自动）'
>>> countdown_text(6.2, "en"), countdown_text(0.0, "zh")
('auto-move in 7 s', '0 秒后自动出牌')
"""

from __future__ import annotations

import math
from typing import Any

from table.turn_timer import AUTO

from .words import register, t

register(
    {
        "auto-move in {seconds} s": "{seconds} 秒后自动出牌",
        "(auto)": "（自动）",
    }
)


def auto_mark(event: str) -> tuple[str, bool]:
    """An event line without its turn timer's mark, and whether it had one."""
    if event.endswith(AUTO):
        return event[: -len(AUTO)], True
    return event, False


def mark_line(line: str, lang: str = "en") -> str:
    """A story line marked as a turn timer's move."""
    said = t("(auto)", lang)
    return line + said if lang == "zh" else f"{line} {said}"


def countdown_text(left: float, lang: str = "en") -> str:
    """The idle seat's countdown, whole seconds rounded up."""
    return t("auto-move in {seconds} s", lang, seconds=math.ceil(left))


class TurnCountdown:
    """An app's countdown in its header (a mixin of the table apps): it looks
    twice a second at its session's turn timer and says it again when the
    whole seconds left change; the app's ``speak_table`` adds
    :meth:`turn_note` to its subtitle."""

    session: Any
    lang: str
    _turn_said: str | None = None

    def start_countdown(self) -> None:
        self.set_interval(0.5, self._turn_tick)  # type: ignore[attr-defined]

    def turn_note(self) -> str:
        """`` · auto-move in 7 s`` while the person's turn runs out, else ''."""
        return "" if self._turn_said is None else f" · {self._turn_said}"

    def _turn_tick(self) -> None:
        session = self.session
        left = None if session is None else session.turn_seconds_left()
        said = None if left is None else countdown_text(left, self.lang)
        if said != self._turn_said:
            self._turn_said = said
            self.speak()  # type: ignore[attr-defined]


__all__ = ["TurnCountdown", "auto_mark", "countdown_text", "mark_line"]
