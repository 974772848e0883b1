"""Game over: who won and lost, by name, and why, in words; the audit of
the whole log; where it was saved."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Header, Static

from table.names import SeatNames

from ..words import register, t
from .common import footer, lang_of, relabel

register(
    {
        "You won!": "你赢了！",
        "You lost.": "你输了。",
        "Game over.": "游戏结束。",
        "audit of the whole log: {verdict}": "整份日志的审计：{verdict}",
        "log saved: {path}": "日志已保存：{path}",
        "q quits": "按 q 退出",
        "the game ended without an outcome": "游戏没有分出胜负就结束了",
        "clean: every deal and every move checks out": "干净：每一次发牌、每一步都核查无误",
    }
)


class GameOverScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(
        self,
        outcome: str,
        verdict: str,
        log_path: str,
        you_won: bool | None,
        names: SeatNames | None = None,
    ) -> None:
        super().__init__()
        self.outcome, self.verdict, self.log_path, self.you_won = (
            outcome,
            verdict,
            log_path,
            you_won,
        )
        self.names = names

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="over"):
            yield Static(id="headline", markup=False)
            yield Static(id="outcome", markup=False)
            yield Static(id="verdict", markup=False)
            yield Static(id="log", markup=False)
            yield Static(id="hint", classes="hint", markup=False)
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def on_mount(self) -> None:
        self.speak()

    def speak(self) -> None:
        """Say everything (again) in the app's language."""
        from ..story import outcome_text, verify_line

        lang = lang_of(self)
        relabel(self, lang)
        if self.you_won is None:
            headline = t("Game over.", lang)
        else:
            headline = t("You won!" if self.you_won else "You lost.", lang)
        self.query_one("#headline", Static).update(headline)
        if self.outcome in ("", "None"):
            outcome = t("the game ended without an outcome", lang)
        else:
            outcome = outcome_text(self.outcome, lang, self.names)
        self.query_one("#outcome", Static).update(outcome)
        if self.verdict.startswith("clean: "):  # the outcome is said above
            verdict = t("clean: every deal and every move checks out", lang)
        else:
            verdict = verify_line(self.verdict, lang, self.names)
        self.query_one("#verdict", Static).update(
            t("audit of the whole log: {verdict}", lang, verdict=verdict)
        )
        self.query_one("#log", Static).update(t("log saved: {path}", lang, path=self.log_path))
        self.query_one("#hint", Static).update(t("q quits", lang))
