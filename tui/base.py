"""What every nodealer app shares (home, play, host/join, replay): the
palette (:mod:`tui.palette`), the language, and the keys that work on every
screen — F1 help, F2 the other language, F3 light or dark, ``^q`` quit —
and going back: ``q`` and Esc go back one step (from a table to where the
game was started from, home or the shell), never quitting at once while a
game is on; ``^q`` mid-game asks first (others are playing).

No Textual internals are offered to a player: the command palette is off.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from .palette import ANSI_DARK, ANSI_LIGHT, DARK, DARK_THEME, LIGHT_THEME, NamedColours
from .screens.common import (
    SPEAKING,
    Confirm,
    HelpScreen,
    show_help,
    switch_language,
    switch_theme,
)
from .story import progress_parts
from .words import register, t

register({"back": "返回"})


class NodealerApp(App[Any]):
    """The keys and looks every nodealer app shares. Subclasses say which
    game's rules F1 shows (:meth:`help_game`), what leaving now means
    (:meth:`leave_question`) and say their own words again after F2
    (:meth:`speak`)."""

    CSS_PATH = "app.tcss"
    TITLE = "nodealer"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "leave", "quit", priority=True),
        *SPEAKING,
        Binding("q", "back", "back", show=False),
        Binding("escape", "back", "back", show=False),
    ]

    def __init__(self, lang: str = "en") -> None:
        super().__init__()
        self.lang = lang
        for theme in (DARK_THEME, LIGHT_THEME):
            self.register_theme(theme)
        self.ansi_theme_dark, self.ansi_theme_light = ANSI_DARK, ANSI_LIGHT
        # after ANSI -> truecolor, before NO_COLOR's greys (tui.palette)
        self._filters.insert(1, NamedColours(lambda: self.ansi_theme))
        self.theme = DARK

    def get_key_display(self, binding: Binding) -> str:
        """Function keys as printed on keyboards (F1, not f1)."""
        shown = super().get_key_display(binding)
        if len(shown) in (2, 3) and shown[0] == "f" and shown[1:].isdigit():
            return shown.upper()
        return shown

    # -------------------------------------------------------------- hooks
    def help_game(self) -> str | None:
        """The game whose rules F1 shows (None: what nodealer is)."""
        return None

    def leave_question(self) -> str | None:
        """The question to ask before leaving now (None: leave at once)."""
        return None

    _progress: str | None = None
    """A table app's last line of the deal's progress (None: dealt, or no table)."""

    def speak(self) -> None:
        """Say the app's own words (title, subtitle) in ``lang`` again: the
        deal's progress while it lasts, else :meth:`speak_table`."""
        if self._progress is not None:
            step, count = progress_parts(self._progress, self.lang)
            self.title, self.sub_title = (step, count) if count else ("nodealer", step)
        else:
            self.speak_table()

    def speak_table(self) -> None:
        """The subtitle once the deal is over (a table app's)."""

    def _dealt(self) -> None:
        """Something other than the deal's progress: the deal is over, the
        header says the table again."""
        if self._progress is not None:
            self._progress = None
            self.title = "nodealer"
            self.speak()

    # -------------------------------------------------------------- keys
    def action_rules(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            show_help(self, self.help_game())

    async def action_language(self) -> None:
        """F2: the other language, everywhere (the help screen, if open,
        opens again in it)."""
        helping = isinstance(self.screen, HelpScreen)
        if helping:
            await self.pop_screen()
        self.change_language()
        if helping:
            show_help(self, self.help_game())

    def change_language(self) -> None:
        """Every screen, and the app's own words, in the other language."""
        switch_language(self)
        self.speak()

    def action_theme(self) -> None:
        switch_theme(self)

    def action_leave(self) -> None:
        """``^q``: leave the app, after a yes if a game is on."""
        if isinstance(self.screen, Confirm):
            return  # already asking
        question = self.leave_question()
        if question is None:
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(Confirm(question, self.lang), answered)

    def action_back(self) -> None:
        """``q`` / Esc where the screen has no use for them: one step back,
        which from a table is leaving it (asked first while the game is on)."""
        self.action_leave()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast, always as plain text: what nodealer says in one carries
        nicknames, table names and reasons from the network, never markup
        (``a[/]`` is shown as written; Textual would raise on it). Screens'
        and widgets' ``notify`` come here too, whatever ``markup`` they pass."""
        kwargs: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        super().notify(message, title=title, severity=severity, markup=False, **kwargs)

    def note(self, text: str) -> None:
        """A short note in the corner, in ``lang`` (``text`` is English)."""
        self.notify(t(text, self.lang), timeout=4)
