"""Game over: the outcome, the audit of the whole log, where it was saved."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static


class GameOverScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit", "quit"),
        Binding("escape", "app.quit", "quit"),
    ]

    def __init__(self, outcome: str, verdict: str, log_path: str, you_won: bool | None) -> None:
        super().__init__()
        self.outcome, self.verdict, self.log_path, self.you_won = (
            outcome,
            verdict,
            log_path,
            you_won,
        )

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="over"):
            if self.you_won is not None:
                yield Static("You won!" if self.you_won else "You lost.", id="headline")
            yield Static(f"outcome: {self.outcome}", id="outcome")
            yield Static(f"audit of the whole log: {self.verdict}", id="verdict")
            yield Static(f"log saved: {self.log_path}", id="log")
            yield Static("q quits", classes="hint")
        yield Footer()
