"""The Textual apps for tables with people on the LAN: ``nodealer host`` /
``nodealer join`` (:class:`TableApp`: the waiting room, then the table) and
``nodealer`` with no arguments (:class:`LanHomeApp`: the home screen with the
tables found on the LAN).

Theory of operation
-------------------
As in :class:`tui.app.PlayApp`, trio runs as a guest on Textual's loop
(:mod:`tui.guest`) and both share one thread. The trio side runs
:func:`table.seating.host_table` or :func:`~table.seating.join_table`: first
the lobby, whose every new state goes to the waiting room
(:class:`~tui.screens.lobby.LobbyScreen`), then the game. The host's ``s``
calls the running lobby's ``start()`` inside trio.

The person's seat is played through the seat's session: seating hands it
over (``on_session``), the screen reads ``session.snapshot`` and the
person's moves go through ``session.submit_move``, exactly as in
``PlayApp`` (checked against the engine first: a refused move is never
signed), then out through the session's own signing and publishing, like
every other seat's.

A game without a table screen on this machine is played by a sensible bot;
the waiting room says so and shows the story.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import trio
from textual.binding import Binding, BindingType
from textual.screen import Screen

from p2p.identity import Identity
from p2p.lobby.messages import REMOVED, WRONG_CODE
from table.names import SeatNames, names_of_log
from table.seating import (
    GameSettings,
    HeldTable,
    SeatResult,
    host_table,
    join_table,
    resume_table,
)
from table.session import (
    MoveRefused,
    SessionError,
    Snapshot,
    TableMovedOn,
    TableSession,
    Update,
)
from table.verify import verify_log

from .base import NodealerApp
from .guest import TrioGuest, start_trio_guest
from .screens.common import relabel
from .screens.lobby import LobbyScreen
from .screens.over import GameOverScreen
from .screens.tables import SCREENS
from .story import update_line
from .storyteller import StoryTeller
from .turn_clock import TurnCountdown
from .watch_serve import spectators_short
from .words import refusal_text, register, t


def _planned_game(plan: Any) -> str | None:
    settings = getattr(plan, "settings", None)
    return None if settings is None else settings.game


CALLED_OFF = "the start is called off: press s to start with those left"
"""Said after a removal while the host's start was under way (p2p.lobby calls it off)."""

register(
    {
        "the rules come with the table's settings": "规则要等牌桌的设置定下来才有",
        "no table screen for {game} on this machine yet: a sensible bot plays your seat": (
            "本机还没有 {game} 的牌桌界面：由一个稳健的机器人替你出牌"
        ),
        "the table is not ready yet": "牌桌还没准备好",
        "ctrl+w: stop waiting": "ctrl+w：不再等待",
        "stop waiting": "不再等待",
        "you said to stop waiting for {who}": "你选择了不再等待 {who}",
        "the table is waiting for nobody": "牌桌没有在等任何人",
        "your move is on its way": "你的出牌正在发送",
        "not started: {reason}": "未开始：{reason}",
        "the table could not be opened or joined: {reason}": "无法开桌或加入：{reason}",
        "going back to {table} (seat {seat}): waiting for the other seats": (
            "回到牌桌 {table}（座位{seat}）：正在等其他座位"
        ),
        "{table}, you are {you}": "{table}，你是{you}",
        "Leave the table? The others are still playing; the game waits for your seat "
        "(nodealer join takes you back).": (
            "离开牌桌吗？其他人还在玩；这局会等你的座位（nodealer join 可以回来）。"
        ),
        "q quits (Esc does nothing here)": "按 q 退出（这里的 Esc 不做任何事）",
        "{who} was not removed: no longer seated, or the table has started": (
            "{who} 未被请离：已不在座，或牌桌已开始"
        ),
        CALLED_OFF: "开始已取消：按 s 以剩下的人开始",
    }
)


SAID_AS_IS = (WRONG_CODE, REMOVED)
"""Lobby refusals that say everything themselves (p2p.lobby's WRONG_CODE
and REMOVED): shown alone, not as "could not be joined: ..."."""


def table_screens() -> dict[str, type[Screen[None]]]:
    """The games a person can play on a screen on this machine."""
    return dict(SCREENS)


@dataclass(frozen=True)
class HostPlan:
    """Open a table: its settings and where its lobby listens."""

    settings: GameSettings
    interface: str = "127.0.0.1"
    port: int = 0
    min_seats: int | None = None
    code: str | None = None  # a private table's code (p2p.lobby.table_code)
    watch: tuple[str, int, int] | None = None
    """(address, port, at most N): serve the table to spectators (tui.watch)"""


@dataclass(frozen=True)
class JoinPlan:
    """Take a seat at the lobby at ``host:port``; our game node binds ``bind``.
    ``table_id`` / ``host_fingerprint``: what the advert of a table picked
    from the LAN list said; the lobby there must be that table (else the
    join is refused and nothing changes). ``code``: a private table's code,
    as the host read it."""

    host: str
    port: int
    bind: str = "127.0.0.1"
    table_id: bytes | None = None
    host_fingerprint: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class ResumePlan:
    """Go back to a table this seat holds (after a crash or a quit): the
    log and the secrets come back from the store, the game goes on."""

    held: HeldTable
    bind: str = "127.0.0.1"

    @property
    def settings(self) -> GameSettings:
        return self.held.settings


Plan = HostPlan | JoinPlan | ResumePlan


def problem_text(exc: BaseException) -> str | None:
    """One line a person can act on for a table that could not be opened,
    joined or played (a lobby refusal, an address in use, …); None: a bug."""
    from p2p.discovery import DiscoveryError
    from p2p.lobby import LobbyError
    from p2p.store import StoreError
    from table.session import SessionError

    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = problem_text(inner)
            if found is not None:
                return found
        return None
    if isinstance(exc, LobbyError | SessionError | StoreError | DiscoveryError):
        return str(exc)
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return None


class TableApp(TurnCountdown, NodealerApp):
    """One person at a table on the LAN: the waiting room, then the table,
    then the game-over screen. ``exit_code``: 0 clean, 1 cheating, 2 a
    problem (``problem`` says which). ``ctrl+w``: stop waiting for the
    seats the table waits for (v3, :meth:`TableSession.stop_waiting`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+w", "stop_waiting", "stop waiting", show=False),
    ]

    def __init__(
        self,
        plan: Plan,
        *,
        identity: Identity,
        home: Path | None = None,
        nickname: str = "player",
        time_scale: float = 1.0,
        bot_for: Callable[[GameSettings, int], Any] | None = None,
        advertise: Callable[[Any, Callable[[str], None]], Awaitable[None]] | None = None,
        lang: str = "en",
    ) -> None:
        super().__init__(lang)
        self.plan, self.identity, self.home = plan, identity, home
        self.nickname, self.time_scale = nickname, time_scale
        self.bot_for, self.advertise = bot_for, advertise
        self.hosting = isinstance(plan, HostPlan)
        self.lobby_screen = LobbyScreen(
            hosting=self.hosting,
            fingerprint=identity.public.fingerprint,
            code=getattr(plan, "code", None),
        )
        self.table_screen: Any = None
        self.lobby: Any = None  # the running LobbyHost (host only)
        self.lobby_state: Any = None
        self.settings: GameSettings | None = None
        self.seat: int | None = None
        self.session: TableSession | None = None
        self.watch_server: Any = None  # the host's watch port (HostPlan.watch)
        self._host_watch: Any = None
        self.heard_watching: int | None = None  # a joiner: the host's count, as last asked
        self.guest: TrioGuest[Any] | None = None
        self._nursery: trio.Nursery | None = None
        self._pending: tuple[Snapshot, Any] | None = None
        self.result: SeatResult | None = None
        self.problem: str | None = None
        self.exit_code = 2
        self.names: SeatNames | None = None  # from the lobby (or the held table's store)
        if isinstance(plan, ResumePlan):
            self.names = names_of_log(plan.held.log_path, me=plan.held.seat)
        self.teller = StoryTeller(self.names)
        self._told: list[str] = []  # the story so far, shown once the table screen is up
        self._told_shown = 0
        self._progress: str | None = None  # the deal's last progress line

    def help_game(self) -> str | None:
        return self.settings.game if self.settings is not None else _planned_game(self.plan)

    def change_language(self) -> None:
        super().change_language()
        screen = self.table_screen
        if screen is not None and screen.is_mounted:
            self._told = self.teller.retell(self.lang)
            self._told_shown = len(self._told)
            screen.retell(list(self._told))

    def leave_question(self) -> str | None:
        if self.table_screen is None or self.result is not None or self.problem is not None:
            return None  # the waiting room, the game over, a table that failed
        return t("Leave the table? The others are still playing; the game waits for your "
                 "seat (nodealer join takes you back).", self.lang)  # fmt: skip

    def speak_table(self) -> None:
        if self.table_screen is None or self.settings is None:
            return
        you = self.names.name(self.seat, self.lang) if self.names is not None else None
        self.sub_title = t("{table}, you are {you}", self.lang, table=self.settings,
                           you=you or t("seat {seat}", self.lang, seat=self.seat))  # fmt: skip
        self.sub_title += self.turn_note()  # tui.turn_clock
        watch = getattr(self.lobby_state, "watch", None)  # every seat: the table's setting
        server = self.watch_server  # the host counts its spectators live, the others ask it
        watching = self.heard_watching if server is None else server.stats.watching
        said = spectators_short(watch, watching, self.lang)
        if said:  # first: 80 columns show it
            self.sub_title = said + " · " + self.sub_title

    async def on_mount(self) -> None:
        relabel(self, self.lang)
        if isinstance(self.plan, JoinPlan):
            self.lobby_screen.show_where(f"{self.plan.host}:{self.plan.port}")
        await self.push_screen(self.lobby_screen)
        self.start_countdown()  # tui.turn_clock
        if isinstance(self.plan, ResumePlan):
            held = self.plan.held
            text = "going back to {table} (seat {seat}): waiting for the other seats"
            self.lobby_screen.note(lambda lang: t(text, lang, table=held.settings, seat=held.seat))
        self.guest = start_trio_guest(self._main)
        self.run_worker(self._wait_for_trio(), exclusive=True)

    async def _wait_for_trio(self) -> None:
        assert self.guest is not None
        await self.guest.wait()

    # -------------------------------------------------------------- trio side
    async def _main(self) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                seat = await self._seat()
                if self.watch_server is not None:  # the game over shows; spectators get the end
                    from .watch_serve import linger

                    self._over(seat)
                    await linger([self.watch_server])
                nursery.cancel_scope.cancel()
        except Exception as exc:
            problem = problem_text(exc)
            if problem is None:
                raise
            self._failed(problem)
            return
        if self.watch_server is None:
            self._over(seat)

    async def _seat(self) -> SeatResult:
        plan = self.plan
        if isinstance(plan, ResumePlan):  # no lobby: the table is held already
            return await resume_table(
                self.identity,
                plan.held,
                home=self.home,
                bind=plan.bind,
                player_for=self._player_for,
                time_scale=self.time_scale,
                on_update=self._updated,
                on_session=self._got_session,
            )
        options: dict[str, Any] = {
            "home": self.home,
            "nickname": self.nickname,
            "time_scale": self.time_scale,
            "on_change": self._lobby_changed,
            "on_update": self._updated,
            "on_session": self._got_session,
        }
        if isinstance(plan, HostPlan):
            if plan.watch is not None:  # spectators: the port opens with the lobby
                options.update(await self._open_watch(plan.watch))
            return await host_table(
                self.identity,
                plan.settings,
                host=plan.interface,
                port=plan.port,
                player=self._player_for(plan.settings, 0),
                on_lobby=self._lobby_opened,
                min_seats=plan.min_seats,
                code=plan.code,
                **options,
            )
        return await join_table(
            self.identity,
            plan.host,
            plan.port,
            bind=plan.bind,
            player_for=self._player_for,
            expect_table=plan.table_id,
            expect_host=plan.host_fingerprint,
            code=plan.code,
            **options,
        )

    async def _open_watch(self, watch: tuple[str, int, int]) -> dict[str, Any]:
        """The host's watch port, open before its lobby (whose every message
        then says it); host_table's table id and watch setting."""
        from .watch_serve import HostWatch

        assert self._nursery is not None
        self._host_watch = HostWatch(self.home, *watch)
        self.watch_server = await self._host_watch.open(self._nursery)
        self._nursery.start_soon(self._count_spectators)
        return self._host_watch.lobby_options()

    def _player_for(self, settings: GameSettings, seat: int) -> Any:
        """Who plays the seat: the person (through the screen), or a bot
        for a game this machine has no screen for."""
        self.settings, self.seat = settings, seat
        if settings.game not in table_screens():
            said = "no table screen for {game} on this machine yet: a sensible bot plays your seat"
            self.lobby_screen.note(lambda lang: t(said, lang, game=settings.game))
            return None if self.bot_for is None else self.bot_for(settings, seat)
        return None  # the session is handed to us (on_session): submit_move

    def _lobby_opened(self, lobby: Any) -> None:
        self.lobby = lobby
        host = lobby.host
        if host in ("0.0.0.0", "::", ""):
            from p2p.discovery import local_addresses
            from p2p.netroute import lan_address  # the one mDNS leaves by (not docker0)

            host = lan_address([a for _, a in local_addresses()]) or "<this machine's address>"
        self.lobby_screen.show_where(f"{host}:{lobby.port}")
        if self.lobby_state is None:
            self._lobby_changed(lobby.state)  # the settings and the host's seat at once
        if self.advertise is not None and self._nursery is not None:
            self._nursery.start_soon(self.advertise, lobby, self.lobby_screen.note)
        if getattr(self.plan, "code", None) is not None and self._nursery is not None:
            self._nursery.start_soon(self._watch_attempts, lobby)
        if self.watch_server is not None and self._nursery is not None:
            from .watch_serve import serving_line

            self._nursery.start_soon(self._host_watch.tell, lobby)  # every seat sees the count
            self.lobby_screen.note(lambda lang: serving_line(self.watch_server, lang))

    async def _watch_attempts(self, lobby: Any) -> None:
        """Every counted table-code try goes to the waiting room, read from
        the host's own counter (never from text a connection sent)."""
        guesses, shown = lobby.machine.guesses, 0
        while True:
            await trio.sleep(0.2)
            new = min(guesses.total - shown, len(guesses.attempts))
            for attempt in guesses.attempts[len(guesses.attempts) - new :] if new > 0 else ():
                self.lobby_screen.show_attempt(attempt)
            shown = guesses.total

    def _lobby_changed(self, state: Any) -> None:
        self.lobby_state = state
        players = getattr(state, "players", ())
        if players:
            mine = self.identity.public.fingerprint
            seat = next((p.seat for p in players if p.fingerprint == mine), None)
            self.names = SeatNames(tuple(p.nickname for p in players),
                                   tuple(p.fingerprint for p in players), seat)  # fmt: skip
            self.teller.names = self.names
        started = getattr(state.phase, "value", "") == "started"
        if started and self.settings is not None and self.settings.seats != state.taken:
            self.settings = replace(self.settings, seats=state.taken)  # started with fewer
        self.lobby_screen.show_state(state)

    def _got_session(self, session: TableSession) -> None:
        self.session = session
        session.person = True  # this screen's person: the table's turn timer moves for them
        state, plan = self.lobby_state, self.plan
        watch = getattr(state, "watch", None)
        if isinstance(plan, JoinPlan) and watch is not None and self._nursery is not None:
            from .watch_serve import follow_count  # the host's watch port: how many watch

            self._nursery.start_soon(follow_count, plan.host, watch[0], state.table_id,
                                     self._heard_count)  # fmt: skip

    def _heard_count(self, watching: int | None) -> None:
        if watching != self.heard_watching:
            self.heard_watching = watching
            self.speak()

    async def _count_spectators(self) -> None:
        """The host's subtitle follows the spectator count (checked every second)."""
        said = -1
        while True:
            if self.watch_server.stats.watching != said:
                said = self.watch_server.stats.watching
                self.speak_table()
            await trio.sleep(1)

    def _updated(self, update: Update) -> None:
        self._to_table()
        if update.kind == "progress":  # the deal's progress, never a frozen screen
            self._progress = update.text
            self.speak()
            return
        self._dealt()
        line: str | None = None
        if update.kind == "event":
            for line in self.teller.tell(update.text, self.lang):
                self._story(line)
        elif update.kind in (
            *("fault", "over", "setup", "rewound", "abandoned"),
            *("dropped", "back", "waiting"),
        ):
            line = update_line(update.kind, update.text, self.lang, self.names)
            self._story(line)
        if update.kind in ("dropped", "back", "waiting"):  # a peer gone or away: said
            severity = "information" if update.kind == "back" else "warning"
            if update.kind == "waiting" and update.text.startswith("waiting for"):
                line = f"{line} ({t('ctrl+w: stop waiting', self.lang)})"
            self.notify(line or update.text, severity=severity)
            return
        if update.kind == "fault":  # a cheater named: said, and the screen stays usable
            self.notify(line or update.text, severity="error", timeout=10)
        session = self.session
        if session is not None and session.table is not None:
            self._show(session.snapshot, session.table.game)

    def action_stop_waiting(self) -> None:
        """The person's "stop waiting for <name>": this seat votes to end
        the game around the seats the table waits for (v3)."""
        session = self.session
        away = [] if session is None else session.waiting()
        if session is None or not away:
            self.notify(t("the table is waiting for nobody", self.lang))
            return
        for seat in away:
            try:
                session.stop_waiting(seat.seat)
            except SessionError as exc:
                self.notify(str(exc), severity="warning")
                return
            names = self.names
            who = f"seat {seat.seat}" if names is None else names.who(seat.seat, self.lang)
            self.notify(t("you said to stop waiting for {who}", self.lang, who=who))

    def _to_table(self) -> None:
        """The game has begun: leave the waiting room for the table screen."""
        if self.table_screen is not None or self.settings is None or self.seat is None:
            return
        screen = table_screens().get(self.settings.game)
        if screen is None:
            return  # a bot plays: the waiting room shows the story
        self.table_screen = screen(seat=self.seat)
        if self.names is not None:
            self.table_screen.names = self.names.seen_by(self.seat)
        self._progress = None
        self.speak()
        self.push_screen(self.table_screen)

    def _over(self, mine: SeatResult) -> None:
        self.result = mine
        report = verify_log(mine.log_path)
        self.exit_code = report.exit_code
        if mine.result.faults or not mine.result.audit.ok:
            self.exit_code = max(self.exit_code, 1)
        outcome = mine.result.outcome
        won = None if outcome is None or self.seat is None else self.seat in outcome.winners
        verdict = report.lines()[-1]
        over = getattr(self.table_screen, "game_over", GameOverScreen)  # a game's own story
        self.push_screen(over(str(outcome), verdict, str(mine.log_path), won, names=self.names))

    def _failed(self, problem: str) -> None:
        self.problem = problem
        self.exit_code = 2
        if problem in SAID_AS_IS:  # the whole story in one line, in the person's language
            text = t(problem, self.lang)
        else:
            text = t("the table could not be opened or joined: {reason}", self.lang,
                     reason=problem)  # fmt: skip
        self.notify(text, severity="error", timeout=30)
        if self.lobby_screen.is_mounted:
            self.lobby_screen.show_problem(text, unseated=problem == REMOVED)

    # -------------------------------------------------------------- loop side
    def _show(self, snapshot: Snapshot, game: Any) -> None:
        """Show the seat's latest view (once the table screen is mounted)."""
        self._pending = (snapshot, game)
        self._flush()

    def _flush(self) -> None:
        if self._pending is None or self.table_screen is None:
            return
        if not self.table_screen.is_mounted:
            self.set_timer(0.05, self._flush)
            return
        snapshot, game = self._pending
        self._pending = None
        self._story_backlog()
        self.table_screen.refresh_table(snapshot, game)

    def _story(self, line: str) -> None:
        """One more story line; kept until the table screen is up (a seat
        that went back gets its whole story from the log at once)."""
        screen = self.table_screen
        if screen is None:
            if self.lobby_screen.is_mounted:
                self.lobby_screen.note(line)
            return
        self._told.append(line)
        if screen.is_mounted:
            self._story_backlog()

    def _story_backlog(self) -> None:
        screen = self.table_screen
        if screen is None or not screen.is_mounted or self._told_shown == len(self._told):
            return
        if self._told_shown == 0 and len(self._told) > 1:
            screen.retell(list(self._told))
        else:
            for line in self._told[self._told_shown :]:
                screen.story(line)
        self._told_shown = len(self._told)

    def _refused(self, reason: str) -> None:
        self.notify(reason, severity="warning", timeout=4)

    def submit(self, event: Any, seen: int | None = None) -> None:
        """A move of the person's seat, from a key press; ``seen``: the
        table it was chosen on (refused if it moved on)."""
        if self.session is not None and self.guest is not None and self._nursery is not None:
            self.guest.call_soon(self._nursery.start_soon, self._submit_in_trio, event, seen)
        else:
            self.notify(t("the table is not ready yet", self.lang), severity="warning")

    async def _submit_in_trio(self, event: Any, seen: int | None = None) -> None:
        assert self.session is not None
        try:
            await self.session.submit_move(event, seen=seen)
        except MoveRefused as exc:  # the table moving on is said in the person's language
            if isinstance(exc, TableMovedOn):
                said = t(str(exc), self.lang)
            else:
                game = self.settings.game if self.settings is not None else ""
                names = self.names or SeatNames.numbered(0, self.seat)
                said = refusal_text(str(exc), game, names.seen_by(self.seat), self.lang)
            self.notify(said, severity="warning", timeout=4)

    def start_table(self) -> None:
        """The host's ``s``: start with the seats taken now."""
        if self.lobby is None or self.guest is None or self.guest.done:
            self.notify(t("the table is not ready yet", self.lang), severity="warning")
            return
        self.guest.call_soon(self._start_in_trio)

    def remove_player(self, player: Any) -> None:
        """The host's ``r``, confirmed: remove ``player`` (a seated
        :class:`~p2p.lobby.Player`) before the start; told why."""
        if self.lobby is None or self.guest is None or self.guest.done:
            self.notify(t("the table is not ready yet", self.lang), severity="warning")
            return
        self.guest.call_soon(self._remove_in_trio, player)

    def _remove_in_trio(self, player: Any) -> None:
        asked = self.lobby.start_requested
        if self.lobby.remove(player.fingerprint):
            said = "{who} was removed from the table"
            self.lobby_screen.note(lambda lang: t(said, lang, who=player.nickname))
            if asked and not self.lobby.start_requested:  # nobody starts it but the host
                self.lobby_screen.note(lambda lang: t(CALLED_OFF, lang))
        else:  # it left meanwhile, or the table started
            said = "{who} was not removed: no longer seated, or the table has started"
        self.notify(t(said, self.lang, who=player.nickname))

    def _start_in_trio(self) -> None:
        from p2p.lobby import LobbyError

        try:
            self.lobby.start()
        except LobbyError as exc:
            self.notify(t("not started: {reason}", self.lang, reason=exc), severity="warning")


class LanHomeApp(NodealerApp):
    """``nodealer`` in a terminal: the home screen with the LAN's tables;
    exits with the choice (see :mod:`tui.screens.home`; None: ``q``).
    ``lan`` opens the LAN browser (None: no browsing, e.g. in tests without
    a namespace)."""

    def action_back(self) -> None:
        # home is the first screen: Esc has nowhere to go back to, and a
        # stray Esc must not end the program
        self.note("q quits (Esc does nothing here)")

    def __init__(
        self,
        who: str,
        games: list[tuple[str, int]],
        saved: list[Any],
        *,
        lan: Any = None,
        hostable: list[str] | None = None,
        lang: str = "en",
        waiting: Any = (),
    ) -> None:
        super().__init__(lang)
        self.who, self.games, self.saved = who, games, saved
        self.lan, self.hostable = lan, hostable
        self.waiting = waiting  # held tables, offered first (tui.screens.home.Waiting)
        self.home_screen: Any = None

    async def on_mount(self) -> None:
        relabel(self, self.lang)
        from .screens.home import HomeScreen

        self.home_screen = HomeScreen(
            self.who, self.games, self.saved, lan=self.lan, hostable=self.hostable,
            waiting=self.waiting,
        )  # fmt: skip
        await self.push_screen(self.home_screen)
