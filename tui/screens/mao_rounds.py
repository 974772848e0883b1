"""Mao's rounds and end on the table screen (a mixin of
:class:`~tui.screens.mao.MaoScreen`): the round-over banner (M26/M27) that
holds the next round's timer until it goes, the line that explains a
running 7 chain (M9), and the game-over screen with every secret rule and
the plays it judged (M27/M28). The words are :mod:`tui.screens.mao_news`'s."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.widgets import Static

from ..words import t
from .holding import TimerHold
from .mao_news import chain_line, round_banner, rules_at_end
from .naming import seat_namer
from .table_over import StoryOverScreen

ROUND_PAUSE = 6.0
"""Seconds the round-over banner stays at least (M26)."""
AFTER_DEAL = 3.0
"""Seconds it stays once the next round's cards are dealt, before its timer runs."""


class RoundNews:
    """The banner, the 7 chain line (``#mao-news``) and game over, for a
    screen with ``state``, ``view``, ``seat``, ``lang``, ``hold``, ``_who``,
    ``_feed`` and ``_put``."""

    state: Any
    view: Any
    seat: int
    lang: str
    hold: TimerHold
    app: Any
    _who: Any
    _feed: Any
    _put: Any
    query_one: Any

    def news_init(self) -> None:
        self.wins_seen = -1  # rounds won so far, as last seen (-1: nothing seen yet)
        self.banner: tuple[list[str], float] | None = None  # its lines, when it opened
        self.banner_dealt: float | None = None  # when the next round's play began
        self.over_args: tuple[str, str, str, bool | None] | None = None  # see game_over
        self.over_names: Any = None

    def _round_over(self) -> None:
        """M26: a round won opens the banner (and holds the next round's timer)."""
        state = self.state
        assert state is not None
        won = sum(state.wins)
        if self.wins_seen >= 0 and won > self.wins_seen and state.phase != "over":
            before = self._last_wins or tuple(0 for _ in state.wins)
            winner = next((s for s, w in enumerate(state.wins) if w > before[s]), -1)
            lines = round_banner(won, winner, state.awaiting_rule, self.seat, self._who, self.lang)
            self.banner = (lines, time.monotonic())
            self.banner_dealt = None
            self.hold.hold("banner")
            self._feed(t("── round {n} ──", self.lang, n=state.round + 1))
        self.wins_seen, self._last_wins = won, tuple(state.wins)
        if self.banner is not None and self.banner_dealt is None and self.view is not None:
            if self.view["turn"] is not None and state.awaiting_rule < 0:
                self.banner_dealt = time.monotonic()

    _last_wins: tuple[int, ...] = ()

    def _banner_left(self) -> float:
        """Seconds until the banner goes (while the next round is dealt: at least AFTER_DEAL)."""
        assert self.banner is not None
        now = time.monotonic()
        left = self.banner[1] + ROUND_PAUSE - now
        dealt = self.banner_dealt
        state = self.state
        if state is not None and state.phase in ("ending", "over"):
            return left
        return max(left, AFTER_DEAL if dealt is None else dealt + AFTER_DEAL - now)

    def _show_news(self) -> None:
        """The banner, else what a running 7 chain asks (M9), else nothing."""
        lang = self.lang
        if self.banner is not None and self._banner_left() <= 0:
            self.banner = None
            self.hold.release("banner")
        if self.banner is not None:
            left = f"{max(0.0, self._banner_left()):.0f}"
            key = ("The next round starts in {left} s; its timer waits until then."
                   if self.hold.holding else "The next round starts in {left} s.")  # fmt: skip
            text = Text(" ".join([*self.banner[0], t(key, lang, left=left)]),
                        style="bold reverse")  # fmt: skip
        else:
            chain = None if self.view is None else chain_line(self.view, self.seat, self._who,
                                                              lang)  # fmt: skip
            text = Text(chain or "", style="bold yellow")
        widget = self.query_one("#mao-news", Static)
        widget.display = bool(text.plain)
        self._put("mao-news", text)

    def game_over(
        self, outcome: str, verdict: str, log_path: str, you_won: bool | None, names: Any = None
    ) -> StoryOverScreen:
        """The game-over screen with every secret rule and the plays it judged (M27/M28)."""
        self.over_args = (outcome, verdict, log_path, you_won)
        self.over_names = names
        return StoryOverScreen(outcome, verdict, log_path, you_won, self.ending, names)  # type: ignore[arg-type]

    def ending(self, lang: str) -> list[Text | str]:
        if self.state is None:
            return []
        return list(rules_at_end(self.state, seat_namer(self, self.seat, lang), lang))
