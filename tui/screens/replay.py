"""Replay a saved game: ←/→ (or ↑/↓) step through it, home/end jump, the
verifier's verdict on top; ``/`` then a seat (its number or name) jumps to
that seat's next move, ``n``/``N`` to its next/previous one."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from ..moments import next_move_of, seat_named
from ..replay import Step
from ..words import register, t
from .common import lang_of, relabel

register(
    {
        "next": "下一步",
        "back": "上一步",
        "first": "开头",
        "last": "结尾",
        "event {at}/{total}": "第 {at}/{total} 件事",
        "find seat": "找座位",
        "next of seat": "该座位下一步",
        "seat (number or name), enter: its next move": "座位（编号或名字），回车：它的下一步",
        "no seat {who}": "没有座位 {who}",
        "seat {seat} made no move": "座位{seat}没有出过手",
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
        Binding("slash", "search", "find seat"),
        Binding("n", "again(0)", "next of seat", show=False),
        Binding("N", "again(1)", "next of seat", show=False),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, steps: list[Step], verdict: list[str], at: int = 0) -> None:
        super().__init__()
        self.steps, self.verdict, self.at = steps, verdict, at
        self.sought: int | None = None  # the seat last searched for

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="table"):
            yield Static(id="verdict")
            yield Static(id="position")
            yield Static(id="steps")
        yield Footer(compact=True, show_command_palette=False)  # fits 80 columns; ctrl+p on F1

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

    # -- a seat's moves: / then its number or name; n/N its next/previous move
    def action_search(self) -> None:
        if not self.query("#seek"):  # only while asked for: else it would take the arrow keys
            hint = t("seat (number or name), enter: its next move", lang_of(self))
            seek = Input(id="seek", placeholder=hint)
            self.query_one("#table", Vertical).mount(seek)
            seek.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        message.input.remove()
        seats = 1 + max((s.seat for s in self.steps if s.seat is not None), default=-1)
        names = [t("seat {seat}", "en", seat=s) for s in range(seats)]
        seat = seat_named(message.value, names)
        if seat is None:
            self.notify(t("no seat {who}", lang_of(self), who=message.value.strip()[:20]))
            return
        self.sought = seat
        self.action_again(0)

    def on_key(self, event: Any) -> None:
        if event.key == "escape" and self.query("#seek"):
            event.stop()
            self.query_one("#seek", Input).remove()

    def action_again(self, back: int) -> None:
        if self.sought is None or not self.steps:
            return
        found = next_move_of(self.steps, self.at, self.sought, back=bool(back))
        if found is None:
            self.notify(t("seat {seat} made no move", lang_of(self), seat=self.sought))
            return
        self.at = found
        self._show()
