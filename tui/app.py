"""The Textual app: play a table as a person (for now Bluff against bots,
``nodealer play bluff``).

Theory of operation
-------------------
trio runs as a guest on Textual's asyncio loop (:mod:`tui.guest`): the
table — every seat a real peer with its own key on 127.0.0.1, the other
seats bots — runs in trio (:func:`table.bot_table.play_bot_table` with
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
from typing import Any

import trio

from engines.core import to_data
from table.bot_table import play_bot_table
from table.names import SeatNames, default_name
from table.session import MoveRefused, TableMovedOn, TableSession, Update
from table.verify import verify_log

from .base import NodealerApp
from .guest import TrioGuest, start_trio_guest
from .screens.common import (
    SPEAKING,
    game_title,
    relabel,
    show_help,
    switch_language,
    switch_theme,
)
from .screens.over import GameOverScreen
from .screens.tables import SCREENS
from .story import update_line
from .storyteller import StoryTeller
from .turn_clock import TurnCountdown
from .words import refusal_text, register, t

__all__ = ["SCREENS", "SPEAKING", "PlayApp", "ReplayApp", "show_help", "switch_language",
           "switch_theme"]  # fmt: skip

register(
    {
        "Leave this game? It ends here for you (the bots stop); its log is kept.": (
            "离开这局吗？这局对你来说就此结束（机器人停下）；日志会保留。"
        ),
    }
)


class PlayApp(TurnCountdown, NodealerApp):
    """You at seat 0 against bots, each a real peer (``nodealer play``)."""

    TIMERS_WAIT = True  # every other seat a bot: timers may wait for the person (screens.holding)

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
        pace: Any = None,
        name: str | None = None,
        turn_time: int | None = None,
        watch: tuple[str, int, int] | None = None,
    ) -> None:
        super().__init__(lang)
        self.turn_time = turn_time  # (v3) the table's turn timer (table.turn_timer), None: none
        self.watch = watch  # (address, port, at most N): seat 0 serves spectators (tui.watch)
        self.watch_server: Any = None
        self.pace = pace  # a table.pace.Pace: the bots wait for you (None: they do not)
        # seat 0 is the person (``name``), the bots are named after it
        self.names = SeatNames.for_play(name or default_name(), players, me=0)
        self.teller = StoryTeller(self.names)
        self.log_path: Path | None = None  # the person's saved log, once over
        self.outcome: str | None = None  # str(Outcome), once over (None: none)
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
        self.table_screen.names = self.names
        self.exit_code = 2
        self.finished = False  # the game-over screen is up
        self._progress: str | None = None  # the deal's last progress line

    async def on_mount(self) -> None:
        relabel(self, self.lang)
        self.speak()
        await self.push_screen(self.table_screen)
        self.start_countdown()  # tui.turn_clock
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
                pace=self.pace,
                timer_lead=0,  # the bots' timers wait for the person's (table.clock)
                names=self.names,
                on_session=self._got_session,
                on_update=self._updated,
            )
            self._over(peers[0])
            if self.watch_server is not None:  # the spectators get the end, every card
                from .watch_serve import linger

                await linger([self.watch_server])
            nursery.cancel_scope.cancel()

    def _got_session(self, seat: int, session: TableSession) -> None:
        if seat != 0:
            return
        self.session = session
        session.person, session.turn_time = True, self.turn_time  # table.turn_timer
        if self.watch is not None and self._nursery is not None:
            from .watch_serve import serve_session, serving_line

            def serving(server: Any) -> None:  # where the big screen connects: a toast
                self.notify(serving_line(server, self.lang), timeout=10)
                self.speak()

            host, port, most = self.watch
            self.watch_server = serve_session(self._nursery, session, port, most, host, serving)
            self._nursery.start_soon(self._count_spectators)

    async def _count_spectators(self) -> None:
        """The subtitle follows the spectator count (checked every second)."""
        said = -1
        while True:
            if self.watch_server.stats.watching != said:
                said = self.watch_server.stats.watching
                self.speak()
            await trio.sleep(1)

    def _updated(self, seat: int, update: Update) -> None:
        if seat != 0 or self.session is None:
            return
        if update.kind == "progress":  # the deal's progress, never a frozen screen
            self._progress = update.text
            self.speak()
            return
        self._dealt()
        if update.kind == "event":
            for line in self.teller.tell(update.text, self.lang):
                self.table_screen.story(line)
        elif update.kind in ("fault", "over", "setup", "rewound", "abandoned"):
            said = update_line(update.kind, update.text, self.lang, self.names)
            self.table_screen.story(said)
            if update.kind == "fault":  # a cheater named: said, and the screen stays usable
                self.notify(said, severity="error", timeout=10)
        elif update.kind in ("dropped", "back", "waiting"):  # a peer gone or away: said
            line = update_line(update.kind, update.text, self.lang, self.names)
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
        self.log_path = Path(mine.log_path)
        self.outcome = None if outcome is None else str(outcome)
        self.finished = True
        over = getattr(self.table_screen, "game_over", GameOverScreen)  # a game's own story
        self.push_screen(over(str(outcome), verdict, str(mine.log_path), won, names=self.names))

    async def _submit_in_trio(self, event: Any, seen: int | None = None) -> None:
        assert self.session is not None
        try:
            await self.session.submit_move(event, seen=seen)
        except MoveRefused as exc:  # the table moving on is said in the person's language
            if isinstance(exc, TableMovedOn):
                said = t(str(exc), self.lang)
            else:
                said = refusal_text(str(exc), self.game, self.names, self.lang)
            self.notify(said, severity="warning", timeout=4)

    # -------------------------------------------------------------- screen side
    def submit(self, event: Any, seen: int | None = None) -> None:
        """A move of the person's seat, from a key press (asyncio side);
        ``seen``: the table it was chosen on (refused if it moved on)."""
        if self.guest is None or self._nursery is None or self.session is None:
            self.notify("the table is not ready yet", severity="warning")
            return
        self.guest.call_soon(self._nursery.start_soon, self._submit_in_trio, event, seen)

    def help_game(self) -> str | None:
        return self.game

    def change_language(self) -> None:
        super().change_language()
        self.table_screen.retell(self.teller.retell(self.lang))

    def leave_question(self) -> str | None:
        if self.finished:
            return None
        return t("Leave this game? It ends here for you (the bots stop); its log is kept.",
                 self.lang)  # fmt: skip

    def speak_table(self) -> None:
        players = self.names.listed(range(self.players), self.lang)
        colon = "：" if self.lang == "zh" else ": "
        self.sub_title = game_title(self.game, self.lang) + colon + players + self.turn_note()
        server = self.watch_server
        if server is not None and server.address is not None:  # first: 80 columns show it
            from .watch_serve import spectators_short

            said = spectators_short((server.address[1], server.max_spectators),
                                    server.stats.watching, self.lang)  # fmt: skip
            self.sub_title = said + " · " + self.sub_title


class ReplayApp(NodealerApp):
    """``nodealer replay LOG``: a saved game, step by step. F2 reads the
    log again in the other language and stays on the same step."""

    TITLE = "nodealer replay"

    def __init__(
        self,
        path: Path,
        lang: str = "en",
        me: str | None = None,
        at: int = 0,
        loaded: tuple[list[Any], list[str]] | None = None,
    ) -> None:
        super().__init__(lang)
        self.path, self.me = path, me  # me: this machine's fingerprint
        self.at, self.loaded = at, loaded  # --at (a step index); the steps if already read
        self.game: str | None = None

    async def on_mount(self) -> None:
        relabel(self, self.lang)
        await self.push_screen(self._replay_screen())

    def _replay_screen(self) -> Any:
        from .replay import load, title
        from .screens.replay import ReplayScreen

        steps, verdict = self.loaded or load(self.path, self.lang, self.me)
        self.loaded = None  # F2 reads the log again in the other language
        self.sub_title = title(self.path, self.lang, self.me)  # not the file's path
        self.game = game_of_log(self.path)
        return ReplayScreen(steps, verdict, self.at)

    def help_game(self) -> str | None:
        return self.game

    def change_language(self) -> None:
        at = getattr(self.screen, "at", None)
        switch_language(self)
        if hasattr(self.screen, "speak"):
            from .replay import title

            self.sub_title = title(self.path, self.lang, self.me)
            return  # the replay screen says everything again itself
        if at is not None:
            self.at = at
        self.switch_screen(self._replay_screen())


def game_of_log(path: Path) -> str | None:
    """The game a saved log plays (its setup body names it), or None."""
    from p2p.store import read_log

    try:
        for entry in read_log(path).entries:
            body = entry.event.decoded_body()
            if isinstance(body, dict) and body.get("t") == "setup":
                return str(body.get("game"))
    except Exception:  # a damaged log: the replay says so; F1 shows the keys only
        return None
    return None
