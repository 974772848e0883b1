"""Replay a saved game: ←/→ (or ↑/↓) step through it, home/end jump, the
verifier's verdict on top."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Header, Static

from ..replay import Step
from ..words import register, t
from .common import footer, lang_of, relabel

register(
    {
        "next": "下一步",
        "back": "上一步",
        "first": "开头",
        "last": "结尾",
        "event {at}/{total}": "第 {at}/{total} 件事",
    }
)

WINDOW = 12


class ReplayScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", "next"),
        Binding("left", "step(-1)", "back"),
        Binding("down", "step(1)", "next", show=False),
        Binding("up", "step(-1)", "back", show=False),
        Binding("home", "jump(0)", "first"),
        Binding("end", "jump(-1)", "last"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, steps: list[Step], verdict: list[str]) -> None:
        super().__init__()
        self.steps, self.verdict, self.at = steps, verdict, 0

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="table"):
            yield Static(id="verdict")
            yield Static(id="position")
            yield Static(id="steps")
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def on_mount(self) -> None:
        relabel(self, lang_of(self))
        verdict = Text(self.verdict[-1] if self.verdict else "", style="bold")
        self.query_one("#verdict", Static).update(verdict)
        self._show()

    def _show(self) -> None:
        total = len(self.steps)
        self.query_one("#position", Static).update(
            t("event {at}/{total}", lang_of(self), at=self.at + 1 if total else 0, total=total)
        )
        start = max(0, min(self.at - WINDOW // 2, total - WINDOW))
        lines = Text()
        for step in self.steps[start : start + WINDOW]:
            style = "reverse" if step.number == self.at + 1 else ""
            lines += Text(f"{step.number:4d}  {step.text}\n", style=style)
        self.query_one("#steps", Static).update(lines)

    def action_step(self, delta: int) -> None:
        if self.steps:
            self.at = max(0, min(len(self.steps) - 1, self.at + delta))
            self._show()

    def action_jump(self, where: int) -> None:
        if self.steps:
            self.at = where % len(self.steps)
            self._show()
