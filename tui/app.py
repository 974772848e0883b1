"""The Textual app: play a table as a person (for now Bluff against bots,
``nodealer play bluff``).

Theory of operation
-------------------
trio runs as a guest on Textual's asyncio loop (:mod:`tui.guest`): the
table — every seat a real peer with its own key on 127.0.0.1, the other
seats bots — runs in trio (:func:`table.session.play_bot_table` with
``person=0``), and this app plays seat 0 through that seat's session: the
screen renders the seat's snapshot (only what seat 0 may know) and turns key
presses into engine events that go through ``submit_move`` — the same
signed log and the same ``apply`` as every other seat's moves; the screen
holds no rules (it offers the claims the engine lists as legal). Both worlds
run on one thread, so trio callbacks update the screen directly and the
screen hands moves to trio with :meth:`TrioGuest.call_soon`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import trio
from textual.app import App
from textual.binding import Binding, BindingType

from engines.core import to_data
from table.session import MoveRefused, TableSession, Update, play_bot_table
from table.verify import verify_log

from .guest import TrioGuest, start_trio_guest
from .screens.bluff import BluffScreen
from .screens.bomb import BombScreen
from .screens.common import SPEAKING, relabel, show_help, switch_language, switch_theme
from .screens.mao import MaoScreen
from .screens.over import GameOverScreen
from .story import progress_parts, story, update_line

SCREENS = {"bluff": BluffScreen, "bomb": BombScreen, "mao": MaoScreen}
"""The games a person can play on a screen so far."""


class PlayApp(App[int]):
    """You at seat 0 against bots, each a real peer (``nodealer play``)."""

    CSS_PATH = "app.tcss"
    TITLE = "nodealer"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "quit", priority=True),
        *SPEAKING,
    ]

    def __init__(
        self,
        game: str,
        players: int,
        *,
        bots_home: Path,
        own: tuple[Any, Path],
        proven: bool = True,
        seed: int = 0,
        time_scale: float = 1.0,
        lang: str = "en",
        config: Any = None,
        processes: int | None = None,
        rounds: int | None = None,
    ) -> None:
        super().__init__()
        self.lang = lang
        # the engine's config (e.g. ``MaoConfig(hand_size=3)``, or its wire
        # form) and how many child processes play the bots (None: one per
        # core, 0: every seat in this process)
        wire = config if config is None or isinstance(config, dict) else to_data(config)
        self.config, self.processes = wire, processes
        self.rounds = rounds  # Mao: the bots end the game after this many rounds (M31)
        self.game, self.players = game, players
        self.bots_home, self.own = bots_home, own
        self.proven, self.seed, self.time_scale = proven, seed, time_scale
        self.session: TableSession | None = None
        self.guest: TrioGuest[Any] | None = None
        self._nursery: trio.Nursery | None = None
        self.table_screen = SCREENS[game](seat=0)
        self.exit_code = 2

    async def on_mount(self) -> None:
        relabel(self, self.lang)
        self.sub_title = f"{self.game}, {self.players} players, you are seat 0"
        await self.push_screen(self.table_screen)
        self.guest = start_trio_guest(self._table_main)
        self.run_worker(self._wait_for_trio(), exclusive=True)

    async def _wait_for_trio(self) -> None:
        assert self.guest is not None
        await self.guest.wait()

    # -------------------------------------------------------------- trio side
    async def _table_main(self) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            peers = await play_bot_table(
                self.game,
                self.players,
                self.bots_home,
                proven=self.proven,
                seed=self.seed,
                time_scale=self.time_scale,
                config=self.config,
                processes=self.processes,
                rounds=self.rounds,
                own=self.own,
                person=0,
                on_session=self._got_session,
                on_update=self._updated,
            )
            nursery.cancel_scope.cancel()
        self._over(peers[0])

    def _got_session(self, seat: int, session: TableSession) -> None:
        if seat == 0:
            self.session = session

    def _updated(self, seat: int, update: Update) -> None:
        if seat != 0 or self.session is None:
            return
        if update.kind == "progress":  # the deal's progress, never a frozen screen
            step, count = progress_parts(update.text, self.lang)
            self.title, self.sub_title = (step, count) if count else ("nodealer", step)
            return
        if update.kind == "event":
            line = story(update.text, self.lang)
            if line:
                self.table_screen.story(line)
        elif update.kind in ("fault", "over", "setup", "rewound"):
            self.table_screen.story(update_line(update.kind, update.text, self.lang))
            if update.kind == "fault":  # a cheater named: said, and the screen stays usable
                self.notify(update_line(update.kind, update.text, self.lang),
                            severity="error", timeout=10)  # fmt: skip
        elif update.kind in ("dropped", "back"):  # a peer's connection: said, screen usable
            line = update_line(update.kind, update.text, self.lang)
            self.table_screen.story(line)
            self.notify(line, severity="warning" if update.kind == "dropped" else "information")
            return
        table = self.session.table
        if table is not None:
            self.table_screen.refresh_table(self.session.snapshot, table.game)

    def _over(self, mine: Any) -> None:
        report = verify_log(mine.log_path)
        self.exit_code = report.exit_code
        outcome = mine.result.outcome
        won = None if outcome is None else 0 in outcome.winners
        verdict = report.lines()[-1]
        self.push_screen(GameOverScreen(str(outcome), verdict, str(mine.log_path), won))

    async def _submit_in_trio(self, event: Any) -> None:
        assert self.session is not None
        try:
            await self.session.submit_move(event)
        except MoveRefused as exc:
            self.notify(str(exc), severity="warning", timeout=4)

    # -------------------------------------------------------------- screen side
    def submit(self, event: Any) -> None:
        """A move of the person's seat, from a key press (asyncio side)."""
        if self.guest is None or self._nursery is None or self.session is None:
            self.notify("the table is not ready yet", severity="warning")
            return
        self.guest.call_soon(self._nursery.start_soon, self._submit_in_trio, event)

    def action_rules(self) -> None:
        show_help(self, self.game)

    def action_language(self) -> None:
        switch_language(self)

    def action_theme(self) -> None:
        switch_theme(self)


class ReplayApp(App[int]):
    """``nodealer replay LOG``: a saved game, step by step."""

    CSS_PATH = "app.tcss"
    TITLE = "nodealer replay"

    BINDINGS: ClassVar[list[BindingType]] = [Binding("f3", "theme", "theme")]

    def __init__(
        self,
        path: Path,
        lang: str = "en",
        at: int = 0,
        loaded: tuple[list[Any], list[str]] | None = None,
    ) -> None:
        super().__init__()
        self.path, self.lang = path, lang
        self.at, self.loaded = at, loaded  # --at (a step index); the steps if already read

    def action_theme(self) -> None:
        switch_theme(self)

    async def on_mount(self) -> None:
        from .replay import load
        from .screens.replay import ReplayScreen

        steps, verdict = self.loaded or load(self.path, self.lang)
        self.sub_title = str(self.path)
        await self.push_screen(ReplayScreen(steps, verdict, self.at))


class HomeApp(App[str]):
    """``nodealer`` in a terminal: choose what to do; exits with the choice
    (``play:GAME`` or ``replay:PATH``)."""

    CSS_PATH = "app.tcss"
    TITLE = "nodealer"

    def __init__(self, who: str, games: list[tuple[str, int]], saved: list[Any]) -> None:
        super().__init__()
        self.who, self.games, self.saved = who, games, saved

    async def on_mount(self) -> None:
        from .screens.home import HomeScreen

        await self.push_screen(HomeScreen(self.who, self.games, self.saved))
