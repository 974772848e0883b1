"""Replay a saved game: ←/→ (or ↑/↓) step through it, home/end jump. At
each step the table as it was (every hand, faces once the log reveals
them, the pile or area) above the story around that step; the verdict on
top says only whether the log is clean — how the game ended is its last
step, so the start gives nothing away."""

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


class ReplayScreen(Screen[None]):
    DEFAULT_CSS = """
    ReplayScreen #replay-table { height: auto; max-height: 60%; }
    ReplayScreen #replay-picture { height: auto; padding: 0 0 1 0; }
    ReplayScreen #replay-steps { height: 1fr; }
    """
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
        with Vertical(id="replay-table"):
            yield Static(id="verdict")
            yield Static(id="position")
            yield Static(id="replay-picture")
        yield Static(id="replay-steps")
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def on_mount(self) -> None:
        self.speak()

    def on_resize(self) -> None:
        self._show()

    def speak(self) -> None:
        relabel(self, lang_of(self))
        verdict = Text(self.verdict[-1] if self.verdict else "", style="bold")
        self.query_one("#verdict", Static).update(verdict)
        self._show()

    def _show(self) -> None:
        total = len(self.steps)
        self.query_one("#position", Static).update(
            t("event {at}/{total}", lang_of(self), at=self.at + 1 if total else 0, total=total)
        )
        step = self.steps[self.at] if total else None
        picture = "\n".join(step.table) if step is not None else ""
        self.query_one("#replay-picture", Static).update(Text(picture))
        panel = self.query_one("#replay-steps", Static)
        window = max(3, panel.size.height or 8)
        start = max(0, min(self.at - window // 2, total - window))
        lines = Text(no_wrap=True, overflow="ellipsis")
        for shown in self.steps[start : start + window]:
            here = shown.number == self.at + 1
            mark = "▸" if here else " "
            lines.append(f"{mark}{shown.number:4d}  {shown.text}\n", style="bold reverse" if here
                         else "")  # fmt: skip
        panel.update(lines)

    def action_step(self, delta: int) -> None:
        if self.steps:
            self.at = max(0, min(len(self.steps) - 1, self.at + delta))
            self._show()

    def action_jump(self, where: int) -> None:
        if self.steps:
            self.at = where % len(self.steps)
            self._show()
