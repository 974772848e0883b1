"""The waiting room: who sits where (nickname, fingerprint), the settings
every seat agrees to, and the start.

The screen holds no lobby logic: the app hands it each new
:class:`~p2p.lobby.LobbyState` (:meth:`LobbyScreen.show_state`) and where
others join (:meth:`LobbyScreen.show_where`); ``s`` asks the app to start
(the host only: a full table starts on its own, ``s`` starts with fewer
when the game allows), ``q`` leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Header, RichLog, Static

from engines.core import game as engine_for
from engines.core import to_data

from ..story import game_name
from ..words import register, t
from .common import footer, relabel

register(
    {
        "waiting room": "等候室",
        "start": "开始",
        "leave": "离开",
        "seat {seat}": "座位{seat}",
        "(you)": "(你)",
        "open": "空位",
        "{game}, {seats} players": "{game}，{seats} 人",
        "proven deals": "带证明的发牌",
        "unproven deals (no proofs)": "不带证明的发牌（无证明）",
        "variants: {variants}": "变体：{variants}",
        "variants: none (the rules as written)": "变体：无（按规则原文）",
        "Mao: the bots end after {rounds} rounds": "Mao：机器人在 {rounds} 轮后结束",
        "turn timer: {seconds} s (an idle player's move is made for them)": (
            "回合计时：{seconds} 秒（闲置的玩家由程序代为出牌）"
        ),
        "opening the table…": "正在开桌……",
        "joining {where}…": "正在加入 {where}……",
        "others join with: nodealer join --connect {where}": (
            "其他人加入：nodealer join --connect {where}"
        ),
        "the table at {where}": "{where} 的牌桌",
        "{taken}/{seats} seated": "已就座 {taken}/{seats}",
        "the table starts when every seat is taken": "所有座位坐满后牌桌开始",
        "press s to start with the {taken} seated": "按 s 以已就座的 {taken} 人开始",
        "waiting for the host to start": "等待主人开始",
        "every seat is agreeing to the table…": "所有座位正在确认牌桌……",
        "the table has started": "牌桌已开始",
    }
)


def settings_lines(settings: dict[str, Any], lang: str = "en") -> list[str]:
    """The agreed settings as a person reads them: the game and seats, the
    deals, and every variant that differs from the rules as written.

    >>> settings_lines({"game": "bluff", "seats": 3, "config": {"jokers": True},
    ...                 "proven": True, "name": "Ann's table", "rounds": None})
    ["Ann's table", 'bluff, 3 players', 'proven deals', 'variants: jokers=true']
    >>> settings_lines({"game": "bomb", "seats": 4, "config": None, "proven": True,
    ...                 "name": "", "rounds": None, "turn_time": 20}, "zh")[-1]
    '回合计时：20 秒（闲置的玩家由程序代为出牌）'
    """
    lines = [str(settings.get("name") or settings.get("game", "?"))]
    lines.append(
        t(
            "{game}, {seats} players",
            lang,
            game=game_name(str(settings.get("game")), lang),
            seats=settings.get("seats"),
        )
    )
    lines.append(
        t("proven deals" if settings.get("proven") else "unproven deals (no proofs)", lang)
    )
    changed = _variants(settings)
    if changed:
        lines.append(t("variants: {variants}", lang, variants=", ".join(changed)))
    else:
        lines.append(t("variants: none (the rules as written)", lang))
    if settings.get("rounds") is not None:
        lines.append(t("Mao: the bots end after {rounds} rounds", lang, rounds=settings["rounds"]))
    if settings.get("turn_time") is not None:  # (v3) table.turn_timer
        said = "turn timer: {seconds} s (an idle player's move is made for them)"
        lines.append(t(said, lang, seconds=settings["turn_time"]))
    return lines


def _variants(settings: dict[str, Any]) -> list[str]:
    config = settings.get("config")
    if not isinstance(config, dict):
        return []
    try:
        defaults = to_data(engine_for(str(settings.get("game"))).Config())
    except (KeyError, TypeError, ValueError):
        defaults = {}
    out = []
    for key, value in sorted(config.items()):
        if defaults.get(key, object()) != value:
            shown = {True: "true", False: "false", None: "none"}.get(value, value)
            out.append(f"{key}={shown}")
    return out


class LobbyScreen(Screen[None]):
    """The waiting room of one table (the host's or a joiner's)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "start", "start"),
        Binding("q", "app.quit", "leave"),
    ]

    def __init__(self, *, hosting: bool, fingerprint: str) -> None:
        super().__init__()
        self.hosting = hosting
        self.fingerprint = fingerprint
        self.state: Any = None
        self.where = ""

    @property
    def lang(self) -> str:
        return getattr(self.app, "lang", "en")

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="lobby"):
            yield Static(id="lobby-settings")
            yield Static(id="lobby-where", classes="hint")
            yield Static(id="lobby-seats")
            yield Static(id="lobby-status")
        yield RichLog(id="story", wrap=True, markup=False)
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def on_mount(self) -> None:
        relabel(self, self.lang)
        self.title = t("waiting room", self.lang)
        text = "opening the table…" if self.hosting else "joining {where}…"
        self.query_one("#lobby-status", Static).update(t(text, self.lang, where=self.where))
        if self.state is not None:
            self.show_state(self.state)
        problem = self.__dict__.get("_problem")
        if problem:  # a table that could not be opened stays said after F2
            self.query_one("#lobby-status", Static).update(Text(problem, style="bold red"))
        self.query_one("#lobby-where", Static).update(self._where_text())

    def speak(self) -> None:
        """Say everything again in the app's language (after a switch), the
        notes below the seats too."""
        self.on_mount()
        notes: list[Any] = self.__dict__.get("_notes", [])
        self.query_one("#story", RichLog).clear()
        for said in notes:
            line = said(self.lang) if callable(said) else said
            if line:
                self.query_one("#story", RichLog).write(line)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":
            return self.hosting  # only the host starts; the footer shows it only there
        return True

    # -------------------------------------------------------------- from the app
    def show_where(self, where: str) -> None:
        """Where the lobby is (the host: where others join)."""
        self.where = where
        if self.is_mounted:
            self.query_one("#lobby-where", Static).update(self._where_text())

    def show_state(self, state: Any) -> None:
        """Show a :class:`~p2p.lobby.LobbyState`."""
        self.state = state
        if not self.is_mounted:
            return  # on_mount shows it
        lang = self.lang
        self.query_one("#lobby-settings", Static).update(
            Text("\n".join(settings_lines(state.settings, lang)))
        )
        seats = Text()
        by_seat = {p.seat: p for p in state.players}
        for seat in range(state.seats):
            label = t("seat {seat}", lang, seat=seat)
            player = by_seat.get(seat)
            if player is None:
                seats.append(f"{label:<8} {t('open', lang)}\n", style="dim")
                continue
            you = player.fingerprint == self.fingerprint
            seats.append(f"{label:<8} ")
            seats.append(f"{player.nickname:<16} ", style="bold" if you else "")
            seats.append(player.fingerprint, style="cyan")
            seats.append(f" {t('(you)', lang)}\n" if you else "\n")
        self.query_one("#lobby-seats", Static).update(seats)
        self.query_one("#lobby-status", Static).update(self._status_text(state))

    def show_problem(self, text: str) -> None:
        """The table could not be opened or joined: say why, in place of the status."""
        self._problem = text
        self.query_one("#lobby-status", Static).update(Text(text, style="bold red"))
        self.note(text)

    def note(self, line: str | Callable[[str], str | None]) -> None:
        """A line below the seats (progress, a bot playing the seat, an
        error): text, or ``said(lang)`` to say it again after F2."""
        self.__dict__.setdefault("_notes", []).append(line)
        shown = line(self.lang) if callable(line) else line
        if shown:
            self.query_one("#story", RichLog).write(shown)

    # -------------------------------------------------------------- helpers
    def _where_text(self) -> str:
        if not self.where:
            return ""
        if self.hosting:
            text = "others join with: nodealer join --connect {where}"
            return t(text, self.lang, where=self.where)
        return t("the table at {where}", self.lang, where=self.where)

    def _status_text(self, state: Any) -> Text:
        lang = self.lang
        phase = getattr(state.phase, "value", str(state.phase))
        text = Text(t("{taken}/{seats} seated", lang, taken=state.taken, seats=state.seats))
        text.append(" · ")
        if phase == "agreeing":
            text.append(t("every seat is agreeing to the table…", lang), style="yellow")
        elif phase == "started":
            text.append(t("the table has started", lang), style="green")
        elif self.hosting and state.taken >= state.min_seats and state.taken < state.seats:
            text.append(t("press s to start with the {taken} seated", lang, taken=state.taken))
            text.append(" · " + t("the table starts when every seat is taken", lang), style="dim")
        elif self.hosting:
            text.append(t("the table starts when every seat is taken", lang))
        else:
            text.append(t("waiting for the host to start", lang))
        return text

    # -------------------------------------------------------------- actions
    def action_start(self) -> None:
        self.app.start_table()  # type: ignore[attr-defined]
