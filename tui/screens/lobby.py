"""The waiting room: who sits where (nickname, fingerprint), the settings
every seat agrees to, and the start.

The screen holds no lobby logic: the app hands it each new
:class:`~p2p.lobby.LobbyState` (:meth:`LobbyScreen.show_state`) and where
others join (:meth:`LobbyScreen.show_where`); ``s`` asks the app to start
(the host only: a full table starts on its own, ``s`` starts with fewer
when the game allows), ``r`` asks the app to remove a seated player (the
host only, after a yes), ``q`` leaves. A private table's host sees its
table code big, to read aloud, and every counted wrong try
(:meth:`LobbyScreen.show_attempt`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Header, OptionList, RichLog, Static
from textual.widgets.option_list import Option

from engines.core import game as engine_for
from engines.core import to_data

from ..story import game_name
from ..watch_serve import spectators_text
from ..words import register, t
from .common import Confirm, footer, relabel

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
        "remove": "请离",
        "table code": "牌桌口令",
        "read it aloud": "念给朋友听",
        "wrong codes: {n} (below)": "错误口令：{n} 次（见下方）",
        "others join with: nodealer join {code} --connect {where}": (
            "其他人加入：nodealer join {code} --connect {where}"
        ),
        "the private table at {where}": "{where} 的私密牌桌",
        "wrong table code (try {n} of {tries} from {address})": (
            "牌桌口令错误（来自 {address} 的第 {n}/{tries} 次尝试）"
        ),
        "table-code exchange not finished (try {n} of {tries} from {address})": (
            "口令交换未完成（来自 {address} 的第 {n}/{tries} 次尝试）"
        ),
        "remove whom? (enter picks, escape goes back)": "请谁离开？（回车选择，Esc 返回）",
        "no one to remove: only you are seated": "没有可请离的人：只有你就座",
        "Remove {who} ({fp}) from the table? They are told the host removed them.": (
            "把 {who}（{fp}）请离牌桌吗？对方会看到是主人请他离开的。"
        ),
        "{who} was removed from the table": "{who} 已被请离牌桌",
        "the host removed you from the table": "主人把你请离了牌桌",
        "wrong table code — check it with the host": "牌桌口令错误——请向主人核对",
    }
)


def attempt_text(attempt: Any, lang: str = "en") -> str:
    """The host's line for one counted table-code try (from the host's own
    counter, :class:`p2p.lobby.table_code.Attempt`; never from text a
    connection sent).

    >>> from p2p.lobby.table_code import Attempt
    >>> attempt_text(Attempt("10.0.0.7", 0.0, 2, "wrong"))
    'wrong table code (try 2 of 5 from 10.0.0.7)'
    """
    from p2p.lobby.table_code import CODE_TRIES

    text = (
        "wrong table code (try {n} of {tries} from {address})"
        if attempt.outcome == "wrong"
        else "table-code exchange not finished (try {n} of {tries} from {address})"
    )
    return t(text, lang, n=attempt.number, tries=CODE_TRIES, address=attempt.address)


def spaced(code: str) -> str:
    """A table code as the waiting room shows it, big: a space between
    every character, the word in capitals (``4 7 2 1 - W A L N U T``)."""
    return " ".join(code.upper())


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
        Binding("r", "remove", "remove"),
        Binding("q", "app.quit", "leave"),
    ]

    def __init__(self, *, hosting: bool, fingerprint: str, code: str | None = None) -> None:
        super().__init__()
        self.hosting = hosting
        self.fingerprint = fingerprint
        self.code = code  # a private table's (the host shows it; a joiner typed it)
        self.state: Any = None
        self.where = ""
        self.wrong = 0  # counted wrong tries shown (the host of a private table)

    @property
    def lang(self) -> str:
        return getattr(self.app, "lang", "en")

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="lobby", classes="private" if self.code else ""):
            with Horizontal(id="lobby-top"):
                yield Static(id="lobby-settings", markup=False)
                if self.hosting and self.code is not None:
                    yield Static(id="lobby-code", markup=False)
            yield Static(id="lobby-where", classes="hint", markup=False)
            yield Static(id="lobby-seats", markup=False)
            yield Static(id="lobby-status", markup=False)
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
        self._show_code()

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
        if action in ("start", "remove"):
            return self.hosting  # only the host; the footer shows them only there
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
        watch = spectators_text(state.watch, state.watching, lang)  # the host's choice
        self.query_one("#lobby-settings", Static).update(
            Text("\n".join([*settings_lines(state.settings, lang), *([watch] if watch else [])]))
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

    def show_attempt(self, attempt: Any) -> None:
        """One more counted table-code try (the host of a private table)."""
        if attempt.outcome == "wrong":
            self.wrong += 1
        self.note(lambda lang: attempt_text(attempt, lang))
        if self.is_mounted:
            self._show_code()

    def show_problem(self, text: str, *, unseated: bool = False) -> None:
        """The table could not be opened or joined: say why, in place of the
        status. ``unseated``: we no longer sit at this table (the host removed
        us), so its seat list, with us in it, is no longer shown."""
        self._problem = text
        if unseated:
            self.state = None
            self.query_one("#lobby-seats", Static).update("")
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
    def _show_code(self) -> None:
        """The table code, big, in its own box (the host of a private table)."""
        if not self.hosting or self.code is None:
            return
        lang = self.lang
        box = self.query_one("#lobby-code", Static)
        box.border_title = t("table code", lang)
        text = Text(spaced(self.code) + "\n", style="bold")
        if self.wrong:
            text.append(t("wrong codes: {n} (below)", lang, n=self.wrong), style="red")
        else:
            text.append(t("read it aloud", lang), style="dim")
        box.update(text)

    def _where_text(self) -> str:
        if not self.where:
            return ""
        if self.hosting and self.code is not None:
            text = "others join with: nodealer join {code} --connect {where}"
            return t(text, self.lang, where=self.where, code=self.code)
        if self.hosting:
            text = "others join with: nodealer join --connect {where}"
            return t(text, self.lang, where=self.where)
        if self.code is not None:
            return t("the private table at {where}", self.lang, where=self.where)
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

    def action_remove(self) -> None:
        """``r``: pick a seated player (at once if there is one), confirm,
        and the app removes them (they are told why)."""
        lang = self.lang
        state = self.state
        others = [] if state is None else [p for p in state.players if p.seat != 0]
        if not others:
            self.notify(t("no one to remove: only you are seated", lang), severity="warning")
            return

        def confirm(player: Any) -> None:
            if player is None:
                return
            question = "Remove {who} ({fp}) from the table? They are told the host removed them."

            def answered(yes: bool | None) -> None:
                if yes:
                    self.app.remove_player(player)  # type: ignore[attr-defined]

            self.app.push_screen(
                Confirm(t(question, lang, who=player.nickname, fp=player.fingerprint), lang),
                answered,
            )

        if len(others) == 1:
            confirm(others[0])
        else:
            self.app.push_screen(RemovePicker(others, lang), confirm)


class RemovePicker(ModalScreen[Any]):
    """Which seated player to remove (Enter picks, Esc goes back)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "back")]

    def __init__(self, players: list[Any], lang: str) -> None:
        super().__init__()
        self.players, self.lang = players, lang

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(
                t("remove whom? (enter picks, escape goes back)", self.lang), markup=False
            )
            rows = [
                f"{t('seat {seat}', self.lang, seat=p.seat)}  {p.nickname}  {p.fingerprint}"
                for p in self.players
            ]
            yield OptionList(
                *(Option(row, id=str(i)) for i, row in enumerate(rows)),
                id="remove-whom",
                markup=False,  # nicknames are shown as written, never as markup
            )

    def on_mount(self) -> None:
        relabel(self, self.lang)
        self.query_one("#remove-whom", OptionList).focus()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self.dismiss(self.players[int(message.option.id or 0)])

    def action_cancel(self) -> None:
        self.dismiss(None)
