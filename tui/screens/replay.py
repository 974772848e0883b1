"""Replay a saved game: ←/→ (or ↑/↓) step through it, home/end jump. At
each step the table as it was (every hand, faces once the log reveals
them, the pile or area) above the story around that step; the verdict on
top says only whether the log is clean — how the game ended is its last
step, so the start gives nothing away."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from ..moments import next_move_of, seat_named
from ..replay import Step
from ..words import register, t
from .common import footer, lang_of, relabel

register(
    {
        "next": "下一步",
        "previous": "上一步",
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


class ReplayScreen(Screen[None]):
    DEFAULT_CSS = """
    ReplayScreen #replay-table { height: auto; max-height: 60%; }
    ReplayScreen #replay-picture { height: auto; padding: 0 0 1 0; }
    ReplayScreen #replay-steps { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", "next"),
        Binding("left", "step(-1)", "previous"),
        Binding("down", "step(1)", "next", show=False),
        Binding("up", "step(-1)", "previous", show=False),
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
        with Vertical(id="replay-table"):
            yield Static(id="verdict", markup=False)
            yield Static(id="position", markup=False)
            yield Static(id="replay-picture", markup=False)
        yield Static(id="replay-steps", markup=False)
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

    # -- a seat's moves: / then its number or name; n/N its next/previous move
    def action_search(self) -> None:
        if not self.query("#seek"):  # only while asked for: else it would take the arrow keys
            hint = t("seat (number or name), enter: its next move", lang_of(self))
            seek = Input(id="seek", placeholder=hint)
            self.query_one("#replay-table", Vertical).mount(seek)
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
