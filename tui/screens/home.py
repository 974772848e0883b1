"""Home: play against bots, open a saved game, how to host or join a table
on the LAN, and who you are (nickname and fingerprint)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option


class HomeScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "app.quit", "quit")]

    def __init__(self, who: str, games: list[tuple[str, int]], saved: list[Any]) -> None:
        super().__init__()
        self.who, self.games, self.saved = who, games, saved

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="table"):
            yield Static(f"you: {self.who}", id="status")
            yield Static(
                "With friends on this LAN: nodealer host GAME (opens a table), "
                "nodealer join (takes a seat); nodealer tables lists the open ones.",
                classes="hint",
            )
        options = [
            Option(f"play {name} against bots ({seats} players)", id=f"play:{name}")
            for name, seats in self.games
        ]
        options += [
            Option(f"replay {saved.line()}", id=f"replay:{saved.path}") for saved in self.saved[:8]
        ]
        yield OptionList(*options, id="choices")
        yield Footer()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self.app.exit(message.option.id)
