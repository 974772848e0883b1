"""Game over with the game's own story (the Bomb game's identities and
verdict, Mao's secret rules and what they judged), above the outcome, the
audit and the log of :class:`~tui.screens.over.GameOverScreen`.

Escape goes back to the table as it ended (the table's escape brings this
screen back); ``q`` quits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Header, Static

from ..words import register, t
from .common import footer, lang_of
from .over import GameOverScreen

register(
    {
        "back to the table": "回到牌桌",
        "q quits · esc shows the table as it ended (esc there comes back here)": (
            "按 q 退出 · 按 esc 看结束时的牌桌（在那里再按 esc 回到这里）"
        ),
    }
)

Details = Callable[[str], list[Text | str]]
"""The game's story of its end, in a language."""


class StoryOverScreen(GameOverScreen):
    """:class:`GameOverScreen` with the game's story of its end (``details``)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit", "quit"),
        Binding("escape", "back", "back to the table"),
    ]

    def __init__(
        self,
        outcome: str,
        verdict: str,
        log_path: str,
        you_won: bool | None,
        details: Details,
        names: Any = None,
    ) -> None:
        super().__init__(outcome, verdict, log_path, you_won)
        self.details = details
        if names is not None:  # the seats' names (table.names.SeatNames), where known
            self.names = names

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll(id="over"):
            yield Static(id="headline", markup=False)
            yield Static(id="details", markup=False)
            yield Static(id="outcome", markup=False)
            yield Static(id="verdict", markup=False)
            yield Static(id="log", markup=False)
            yield Static(id="hint", classes="hint", markup=False)
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def on_mount(self) -> None:
        scroll = self.query_one("#over", VerticalScroll)
        scroll.styles.height = "1fr"  # the story may be longer than 24 rows: it scrolls
        scroll.styles.padding = (0, 2)
        self.query_one("#details", Static).styles.margin = (0, 0, 1, 0)
        super().on_mount()

    def speak(self) -> None:
        super().speak()
        lang = lang_of(self)
        lines = self.details(lang)
        text = Text()
        for line in lines:
            text += line if isinstance(line, Text) else Text(line)
            text += "\n"
        self.query_one("#details", Static).update(text)
        self.query_one("#details", Static).display = bool(lines)
        self.query_one("#outcome", Static).display = not lines  # the story says it in words
        self.query_one("#hint", Static).update(
            t("q quits · esc shows the table as it ended (esc there comes back here)", lang)
        )

    def action_back(self) -> None:
        """Back to the table as it ended (never quits: issue 26)."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
