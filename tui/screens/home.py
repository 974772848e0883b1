"""Home: the tables found on the LAN (appearing and vanishing live), host a
table, join one by address, play against bots, open a saved game, and who
you are (nickname and fingerprint).

The screen ends the app with what was chosen (``play:GAME``,
``replay:PATH``, ``host:{json}``, ``join:HOST:PORT`` for an address typed
in, ``lan:{json}`` for a table picked from the LAN list: its address and the
table id and host fingerprint its advert named, which the join then
requires of the lobby it reaches); the command line does it. The LAN list
is fed by a *browser* given to the screen (:func:`p2p.discovery.browse` in
``nodealer``, a fake in the tests): the screen never starts mDNS on its own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Checkbox, Header, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from p2p.discovery import BadHostPort, Change, DiscoveryError, TableAd, TableEvent, parse_hostport
from p2p.watch import DEFAULT_MAX as DEFAULT_SPECTATORS
from p2p.watch import MAX_SPECTATORS
from table.names import SeatNames, names_of_log
from table.seating import HeldTable

from ..story import game_name
from ..variants import parse_config
from ..watch_serve import spectators_text
from ..words import register, t
from .common import footer, relabel

WAITING_LINE = "your game with {others} is waiting for you (enter: go back)"
MOST_WAITING = 3  # held tables home offers (most recent first)

Browser = Callable[[], AbstractAsyncContextManager[AsyncIterator[TableEvent]]]
"""Opens a LAN browser: ``async with browser() as events: async for event in events``."""

register(
    {
        "you: {who}": "你：{who}",
        "tables on this LAN": "局域网上的牌桌",
        "looking for tables on this LAN…": "正在局域网上寻找牌桌……",
        "no open table found yet (it shows here as soon as one is advertised)": (
            "还没有找到开放的牌桌（一有广播就会显示在这里）"
        ),
        "LAN browsing is off here: host or join by address (h, j)": (
            "此处未开启局域网浏览：用地址开桌或加入（h，j）"
        ),
        "LAN browsing stopped: {reason}; join by address (j)": (
            "局域网浏览已停止：{reason}；请用地址加入（j）"
        ),
        "play {game} against bots ({seats} players)": "与机器人玩 {game}（{seats} 人）",
        "replay {line}": "回放 {line}",
        "host a table on the LAN…": "在局域网上开桌……",
        "join a table by address…": "按地址加入牌桌……",
        "proven": "带证明",
        "unproven": "不带证明",
        "full": "已满",
        "another protocol version": "协议版本不同",
        "host {host}": "主人 {host}",
        "that table is full": "那张牌桌已满",
        "that table speaks another protocol version": "那张牌桌的协议版本不同",
        "host a table": "开桌",
        "join by address": "按地址加入",
        "LAN tables": "局域网牌桌",
        "game": "游戏",
        "seats ({low}-{high}, default {default})": "座位（{low}-{high}，默认 {default}）",
        "variants (KEY=VALUE, space between; e.g. {example})": (
            "变体（KEY=VALUE，以空格分隔；例如 {example}）"
        ),
        "the table's name (default: {default})": "牌桌名称（默认：{default}）",
        "enter hosts, escape goes back": "回车开桌，Esc 返回",
        "join a table by address": "按地址加入牌桌",
        "watch a table by its watch port…": "按观看端口观看牌桌……",
        "watch a table by its watch port": "按观看端口观看牌桌",
        "the watch port, HOST:PORT (nodealer host --watch-port prints it)": (
            "观看端口，HOST:PORT（nodealer host --watch-port 会显示）"
        ),
        "enter watches, escape goes back": "回车开始观看，Esc 返回",
        "spectators (a big screen: nodealer watch), at most": (
            "接受观众（大屏幕：nodealer watch），至多"
        ),
        "spectators: 1 to {most}, not {text!r}": "观众人数：1 到 {most}，不是 {text!r}",
        "a private table takes no spectators (its log would reach anyone who finds the watch "
        "port)": "私密牌桌不接受观众（否则任何找到观看端口的人都能拿到它的日志）",
        "playing: w watches": "对局中：按 w 观看",
        "watch the table": "观看牌桌",
        "pick a table in the LAN list to watch (l, then w)": (
            "请在局域网列表里选一张牌桌观看（l，再按 w）"
        ),
        "that table takes no spectators": "那张牌桌不接受观众",
        "the host's lobby, HOST:PORT (nodealer host prints it)": (
            "主人的大厅地址 HOST:PORT（nodealer host 会显示）"
        ),
        "enter joins, escape goes back": "回车加入，Esc 返回",
        "{text!r} is not a number of seats": "{text!r} 不是座位数",
        "private": "私密",
        "private table (a code to read aloud; only who types it sits)": (
            "私密牌桌（念出口令；只有输入口令的人才能就座）"
        ),
        "Tab: the table code, if the table is private (like 4721-walnut)": (
            "Tab：牌桌口令，私密牌桌才需要（例如 4721-walnut）"
        ),
        "the private table {name}": "私密牌桌 {name}",
        "its table code, as the host reads it (like 4721-walnut)": (
            "它的牌桌口令，照主人念的输入（例如 4721-walnut）"
        ),
        WAITING_LINE: "你和 {others} 的对局在等你（回车：回去）",
    }
)


def _lang(node: Any) -> str:
    return getattr(node.app, "lang", "en")


@dataclass(frozen=True)
class Waiting:
    """A table this home holds unfinished (:func:`table.seating.held_tables`),
    as home offers it first: its id and the other seats, by the names the
    lobby gave them. Chosen, it ends home with ``back:TABLE_ID_HEX``: the
    command line goes back to it as ``nodealer join --table-id`` does.

    >>> names = SeatNames(("ann", "bob", "carol"), me=0)
    >>> waiting = Waiting("1a2b3c4d5e6f7a8b", names, 0)
    >>> waiting.line()
    'your game with bob and carol is waiting for you (enter: go back)'
    >>> waiting.line("zh")
    '你和 bob、carol 的对局在等你（回车：回去）'
    """

    table: str
    names: SeatNames
    seat: int

    @classmethod
    def of(cls, held: HeldTable) -> Waiting:
        """The held table with the names its store keeps (read-only)."""
        return cls(held.spec.table_id.hex(), names_of_log(held.log_path, held.seat), held.seat)

    def line(self, lang: str = "en") -> str:
        others = [seat for seat in range(len(self.names)) if seat != self.seat]
        return t(WAITING_LINE, lang, others=self.names.listed(others, lang))


def table_row(ad: TableAd, lang: str = "en") -> str:
    """One line of the LAN list: friendly name, game, seats, host, proven.

    >>> ad = TableAd(b"\\x1a" * 8, "bluff", 1, 3, "K3QF-7ZPA-M2XD-4RTY", "192.168.1.20",
    ...              4000, name="Ann's table", host_name="ann", proven=True)
    >>> table_row(ad)
    "Ann's table · bluff 1/3 · host ann K3QF-7ZPA-M2XD-4RTY · proven"
    """
    name = ad.name or f"{ad.game} {ad.table_id.hex()[:8]}"
    host = f"{ad.host_name} {ad.host_fingerprint}" if ad.host_name else ad.host_fingerprint
    seats = f"{game_name(ad.game, lang)} {ad.seats_taken}/{ad.seats_total}"
    parts = [name, seats, t("host {host}", lang, host=host)]
    if ad.private:
        parts.append(t("private", lang))
    if ad.proven is not None:
        parts.append(t("proven" if ad.proven else "unproven", lang))
    if ad.watch_port is not None:  # the host takes spectators: w watches it
        said = spectators_text((ad.watch_port, ad.spectators), None, lang)
        parts.append(said if ad.playing else f"{said} (w)")
    if ad.playing:
        parts.append(t("playing: w watches", lang))
    elif ad.is_full:
        parts.append(t("full", lang))
    if not ad.compatible:
        parts.append(t("another protocol version", lang))
    return " · ".join(parts)


class LanTables:
    """The tables on the LAN as the home screen lists them (no I/O): fed
    :class:`~p2p.discovery.TableEvent` values, it keeps the current list.

    >>> ad = TableAd(b"\\x01" * 8, "bomb", 1, 5, "K3QF-7ZPA-M2XD-4RTY", "10.0.0.2", 4000)
    >>> tables = LanTables()
    >>> tables.apply(TableEvent(Change.APPEARED, "a", ad)); len(tables)
    1
    >>> tables.apply(TableEvent(Change.VANISHED, "a", ad)); len(tables)
    0
    """

    def __init__(self) -> None:
        self.tables: dict[str, TableAd] = {}

    def __len__(self) -> int:
        return len(self.tables)

    def apply(self, event: TableEvent) -> None:
        if event.change is Change.VANISHED:
            self.tables.pop(event.name, None)
        else:
            self.tables[event.name] = event.ad

    def rows(self) -> list[tuple[str, TableAd]]:
        """(instance name, advert), open tables first, then by game and name."""
        return sorted(
            self.tables.items(),
            key=lambda item: (not item[1].takes_seats, item[1].game, item[1].name, item[0]),
        )


class HomeScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("h", "host", "host a table"),
        Binding("j", "join", "join by address"),
        Binding("l", "focus_lan", "LAN tables"),
        Binding("w", "watch", "watch the table", show=False),  # the LAN rows say w
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(
        self,
        who: str,
        games: list[tuple[str, int]],
        saved: list[Any],
        *,
        lan: Browser | None = None,
        hostable: list[str] | None = None,
        waiting: Sequence[Waiting] = (),
    ) -> None:
        super().__init__()
        self.who, self.games, self.saved = who, games, saved
        self.waiting = list(waiting)[:MOST_WAITING]
        self.lan = lan
        self.hostable = hostable if hostable is not None else [name for name, _ in games]
        self.tables = LanTables()
        self._lan_note = ""
        self._guest: Any = None

    def compose(self) -> ComposeResult:
        lang = _lang(self)
        yield Header(show_clock=False)
        with Vertical(id="home"):
            yield Static(t("you: {who}", lang, who=self.who), id="status", markup=False)
            yield Static(t("tables on this LAN", lang), id="lan-title", markup=False)
            yield OptionList(id="lan", markup=False)
            yield Static(id="lan-note", classes="hint", markup=False)
        play = "play {game} against bots ({seats} players)"
        options = [Option(w.line(lang), id=f"back:{w.table}") for w in self.waiting]
        options += [
            Option(t(play, lang, game=game_name(g, lang), seats=n), id=f"play:{g}")
            for g, n in self.games
        ]
        options += [
            Option(t("replay {line}", lang, line=saved.line()), id=f"replay:{saved.path}")
            for saved in self.saved[:8]
        ]
        options += [
            Option(t("host a table on the LAN…", lang), id="form:host"),
            Option(t("join a table by address…", lang), id="form:join"),
            Option(t("watch a table by its watch port…", lang), id="form:watch"),
        ]
        yield OptionList(*options, id="choices", markup=False)
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def speak(self) -> None:
        """Say everything again in the app's language (after a switch)."""
        relabel(self, _lang(self))
        self.run_worker(self._say_again(), exclusive=True, group="speak")

    async def _say_again(self) -> None:
        await self.recompose()
        self.query_one("#choices", OptionList).focus()
        if self.lan is None:
            self._note(t("LAN browsing is off here: host or join by address (h, j)", _lang(self)))
        else:
            self._show_lan()

    def on_mount(self) -> None:
        relabel(self, _lang(self))
        self.query_one("#choices", OptionList).focus()
        if self.lan is None:
            self._note(t("LAN browsing is off here: host or join by address (h, j)", _lang(self)))
            return
        from ..guest import start_trio_guest

        self._note(t("looking for tables on this LAN…", _lang(self)))
        self._guest = start_trio_guest(self._browse)
        self.run_worker(self._guest.wait(), exit_on_error=False)

    def on_unmount(self) -> None:
        if self._guest is not None:
            self._guest.cancel()

    # -------------------------------------------------------------- the LAN list
    async def _browse(self) -> None:
        """Trio side: feed the list until the screen goes away."""
        assert self.lan is not None
        try:
            async with self.lan() as events:
                self._show_lan()
                async for event in events:
                    self.lan_event(event)
        except (DiscoveryError, OSError) as exc:
            text = "LAN browsing stopped: {reason}; join by address (j)"
            self._note(t(text, _lang(self), reason=exc))

    def lan_event(self, event: TableEvent) -> None:
        """One table appeared, changed or vanished."""
        self.tables.apply(event)
        self._show_lan()

    def _show_lan(self) -> None:
        lan = self.query_one("#lan", OptionList)
        highlighted = lan.highlighted
        lang = _lang(self)
        lan.clear_options()
        rows = self.tables.rows()
        lan.add_options([Option(table_row(ad, lang), id=name) for name, ad in rows])
        if rows and highlighted is not None:
            lan.highlighted = min(highlighted, len(rows) - 1)
        if rows:
            self._note("")
        else:
            self._note(
                t(
                    "no open table found yet (it shows here as soon as one is advertised)",
                    lang,
                )
            )

    def _note(self, text: str) -> None:
        self._lan_note = text
        self.query_one("#lan-note", Static).update(text)

    # -------------------------------------------------------------- choices
    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        choice = message.option.id or ""
        if message.option_list.id == "lan":
            self._join_listed(choice)
        elif choice == "form:host":
            self.action_host()
        elif choice == "form:join":
            self.action_join()
        elif choice == "form:watch":  # a spectator (tui.watch): the big screen
            self.app.push_screen(WatchForm(), lambda w: w and self.app.exit(f"watch:{w}"))
        else:
            self.app.exit(choice)

    def _join_listed(self, name: str) -> None:
        ad = self.tables.tables.get(name)
        if ad is None:
            return  # vanished meanwhile
        lang = _lang(self)
        if not ad.compatible:
            self.notify(t("that table speaks another protocol version", lang), severity="warning")
        elif ad.playing and ad.watch_port is not None:  # no seat to take: watch it
            self.action_watch()
        elif ad.is_full or ad.playing:
            self.notify(t("that table is full", lang), severity="warning")
        else:  # the lobby there must be the advertised table (tui.cli.choice_argv)
            listed = {"connect": str(ad.hostport), "table": ad.table_id.hex(),
                      "host": ad.host_fingerprint}  # fmt: skip
            if not ad.private:
                self.app.exit("lan:" + json.dumps(listed))
                return

            def coded(code: str | None) -> None:
                if code is not None:
                    self.app.exit("lan:" + json.dumps({**listed, "code": code}))

            self.app.push_screen(CodeForm(ad.name or ad.table_id.hex()[:8]), coded)

    def action_watch(self) -> None:
        """Watch the LAN table highlighted (its advert's watch port and table
        id: ``nodealer watch --connect ADDR:PORT --table-id HEX``)."""
        lan = self.query_one("#lan", OptionList)
        rows = self.tables.rows()
        if lan.highlighted is None or lan.highlighted >= len(rows):
            self.notify(t("pick a table in the LAN list to watch (l, then w)", _lang(self)))
            return
        ad = rows[lan.highlighted][1]
        if ad.watch_hostport is None or not ad.compatible:
            self.notify(t("that table takes no spectators", _lang(self)), severity="warning")
            return
        watch = {"connect": str(ad.watch_hostport), "table": ad.table_id.hex()}
        self.app.exit("watchlan:" + json.dumps(watch))

    def action_focus_lan(self) -> None:
        self.query_one("#lan", OptionList).focus()

    def action_host(self) -> None:
        def chosen(plan: dict[str, Any] | None) -> None:
            if plan is not None:
                self.app.exit("host:" + json.dumps(plan))

        self.app.push_screen(HostForm(self.hostable), chosen)

    def action_join(self) -> None:
        def chosen(where: str | None) -> None:
            if where is not None:
                self.app.exit(f"join:{where}")

        self.app.push_screen(JoinForm(), chosen)


FORM_KEYS: list[BindingType] = [
    Binding("escape", "cancel", "back"),
    # a modal screen hides the app's keys: help, language and theme here too
    Binding("f1", "app.rules", "help", show=False),
    Binding("f2", "app.language", "language", show=False),
    Binding("f3", "app.theme", "theme", show=False),
]


class HostForm(ModalScreen[dict[str, Any] | None]):
    """Host a table: game, seats, variants, name. Enter checks everything
    (the same checks as ``nodealer host``) and hosts; a mistake is shown
    and nothing happens."""

    BINDINGS: ClassVar[list[BindingType]] = FORM_KEYS

    def __init__(self, games: list[str]) -> None:
        super().__init__()
        self.games = games

    def compose(self) -> ComposeResult:
        lang = _lang(self)
        with Vertical(id="form"):
            yield Static(
                t("host a table", lang), classes="form-title", id="form-title", markup=False
            )
            choices = [(g, g) for g in self.games]
            yield Select(choices, value=self.games[0], allow_blank=False, id="game")
            yield Label(id="seats-label", markup=False)
            yield Input(id="seats")
            yield Label(id="variants-label", markup=False)
            yield Input(id="variants")
            yield Label(id="name-label", markup=False)
            yield Input(id="name")
            yield Checkbox(id="private")
            with Horizontal(id="spectators-row"):  # the host's choice (protocol.md §8)
                yield Checkbox(id="spectators")
                yield Input(value=str(DEFAULT_SPECTATORS), id="spectators-count")
            yield Static(id="form-error", markup=False)
            yield Static(
                t("enter hosts, escape goes back", lang),
                classes="hint",
                id="form-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        self._describe()
        self.query_one("#seats", Input).focus()

    def speak(self) -> None:
        """Say the form again in the app's language (what is typed stays)."""
        lang = _lang(self)
        self.query_one("#form-title", Static).update(t("host a table", lang))
        self.query_one("#form-hint", Static).update(t("enter hosts, escape goes back", lang))
        self._describe()

    def on_select_changed(self, message: Select.Changed) -> None:
        self._describe()

    def _describe(self) -> None:
        from engines.core import game, to_data

        lang = _lang(self)
        name = str(self.query_one("#game", Select).value)
        engine = game(name)
        self.query_one("#seats-label", Label).update(
            t(
                "seats ({low}-{high}, default {default})",
                lang,
                low=engine.min_seats,
                high=engine.max_seats,
                default=engine.default_seats,
            )
        )
        example = next(iter(sorted(to_data(engine.Config()).items())), ("key", "value"))
        shown = json.dumps(example[1]) if not isinstance(example[1], str) else example[1]
        self.query_one("#variants-label", Label).update(
            t(
                "variants (KEY=VALUE, space between; e.g. {example})",
                lang,
                example=f"{example[0]}={shown}",
            )
        )
        self.query_one("#name-label", Label).update(
            t("the table's name (default: {default})", lang, default=default_name(name))
        )
        self.query_one("#private", Checkbox).label = t(PRIVATE_LABEL, lang)
        self.query_one("#spectators", Checkbox).label = t(SPECTATORS_LABEL, lang)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        plan = self.check()
        if plan is not None:
            self.dismiss(plan)

    def check(self) -> dict[str, Any] | None:
        """The form as a host plan, or None with the mistake shown."""
        from engines.core import game
        from table.seating import GameSettings, SeatingError

        lang = _lang(self)
        name = str(self.query_one("#game", Select).value)
        engine = game(name)
        text = self.query_one("#seats", Input).value.strip()
        try:
            seats = int(text) if text else engine.default_seats
        except ValueError:
            return self._error(t("{text!r} is not a number of seats", lang, text=text))
        pairs = self.query_one("#variants", Input).value.replace(",", " ").split()
        table_name = self.query_one("#name", Input).value.strip() or default_name(name)
        try:
            config = parse_config(engine, pairs)
            GameSettings(name, seats, config, True, table_name)
        except (ValueError, SeatingError) as exc:
            return self._error(str(exc))
        plan: dict[str, Any] = {"game": name, "seats": seats, "config": pairs, "name": table_name}
        if self.query_one("#private", Checkbox).value:
            plan["private"] = True  # a table code (nodealer host --private)
        if self.query_one("#spectators", Checkbox).value:  # nodealer host --spectators N
            text = self.query_one("#spectators-count", Input).value.strip()
            if not text.isdigit() or not 1 <= int(text) <= MAX_SPECTATORS:
                return self._error(t("spectators: 1 to {most}, not {text!r}", lang,
                                     most=MAX_SPECTATORS, text=text))  # fmt: skip
            if plan.get("private"):
                return self._error(t(PRIVATE_NO_SPECTATORS, lang))
            plan["spectators"] = int(text)
        return plan

    def _error(self, text: str) -> None:
        self.query_one("#form-error", Static).update(text)
        return None

    def action_cancel(self) -> None:
        self.dismiss(None)


JOIN_LABEL = "the host's lobby, HOST:PORT (nodealer host prints it)"
CODE_LABEL = "Tab: the table code, if the table is private (like 4721-walnut)"
PRIVATE_LABEL = "private table (a code to read aloud; only who types it sits)"
SPECTATORS_LABEL = "spectators (a big screen: nodealer watch), at most"
PRIVATE_NO_SPECTATORS = (
    "a private table takes no spectators (its log would reach anyone who finds the watch port)"
)


def default_name(game: str) -> str:
    """A table's name when the host gives none."""
    import os

    who = (os.environ.get("USER") or os.environ.get("USERNAME") or "player")[:32]
    return f"{who}'s {game.capitalize()} table"


class AddressForm(ModalScreen[str | None]):
    """A form for an address, ``HOST:PORT``: a title, the address, what a
    subclass adds (:meth:`more`), a line for mistakes and a hint. Enter
    checks it (a typo is shown and nothing happens) and dismisses the form
    with :meth:`chosen`'s answer."""

    BINDINGS: ClassVar[list[BindingType]] = FORM_KEYS
    TITLE = ""
    LABEL = ""
    HINT = ""
    PLACEHOLDER = "192.168.1.20:40123"

    def compose(self) -> ComposeResult:
        lang = _lang(self)
        with Vertical(id="form"):
            yield Static(t(self.TITLE, lang), classes="form-title", id="form-title", markup=False)
            yield Label(t(self.LABEL, lang), id="address-label", markup=False)
            yield Input(placeholder=self.PLACEHOLDER, id="address")
            yield from self.more(lang)
            yield Static(id="form-error", markup=False)
            yield Static(t(self.HINT, lang), classes="hint", id="form-hint", markup=False)

    def more(self, lang: str) -> ComposeResult:
        """Widgets after the address (none here)."""
        yield from ()

    def speak(self) -> None:
        """Say the form again in the app's language (what is typed stays)."""
        lang = _lang(self)
        self.query_one("#form-title", Static).update(t(self.TITLE, lang))
        self.query_one("#address-label", Label).update(t(self.LABEL, lang))
        self.query_one("#form-hint", Static).update(t(self.HINT, lang))

    def on_input_submitted(self, message: Input.Submitted) -> None:
        error = self.query_one("#form-error", Static)
        try:
            where = parse_hostport(self.query_one("#address", Input).value)
        except BadHostPort as exc:
            error.update(str(exc))
            self.query_one("#address", Input).focus()
            return
        answer = self.chosen(str(where), error)
        if answer is not None:
            self.dismiss(answer)

    def chosen(self, where: str, error: Static) -> str | None:
        """The form's answer for the address ``where`` (None: a mistake, said in ``error``)."""
        return where

    def action_cancel(self) -> None:
        self.dismiss(None)


class JoinForm(AddressForm):
    """Join by address: ``HOST:PORT`` and, for a private table, its code
    (dismissed with ``HOST:PORT`` or ``HOST:PORT CODE``); a typo is shown
    and nothing happens. Enter in either field joins (Tab goes to the code)."""

    TITLE = "join a table by address"
    LABEL = JOIN_LABEL
    HINT = "enter joins, escape goes back"

    def more(self, lang: str) -> ComposeResult:
        yield Label(t(CODE_LABEL, lang), id="code-label", markup=False)
        yield Input(placeholder="4721-walnut", id="code")

    def speak(self) -> None:
        super().speak()
        self.query_one("#code-label", Label).update(t(CODE_LABEL, _lang(self)))

    def chosen(self, where: str, error: Static) -> str | None:
        from p2p.lobby import BadCode, parse_code

        typed = self.query_one("#code", Input).value.strip()
        try:
            code = parse_code(typed) if typed else None
        except BadCode as exc:
            error.update(str(exc))
            return None
        return where if code is None else f"{where} {code}"


class CodeForm(ModalScreen[str | None]):
    """The code of a private table picked from the LAN list (canonical); a
    typo is shown and nothing happens."""

    BINDINGS: ClassVar[list[BindingType]] = FORM_KEYS

    def __init__(self, name: str) -> None:
        super().__init__()
        self.table_name = name

    def compose(self) -> ComposeResult:
        lang = _lang(self)
        with Vertical(id="form"):
            title = t("the private table {name}", lang, name=self.table_name)
            yield Static(title, classes="form-title", id="form-title", markup=False)
            yield Label(t(CODE_HINT, lang), id="code-label", markup=False)
            yield Input(placeholder="4721-walnut", id="code")
            yield Static(id="form-error", markup=False)
            yield Static(
                t("enter joins, escape goes back", lang),
                classes="hint",
                id="form-hint",
                markup=False,
            )

    def speak(self) -> None:
        lang = _lang(self)
        title = t("the private table {name}", lang, name=self.table_name)
        self.query_one("#form-title", Static).update(title)
        self.query_one("#code-label", Label).update(t(CODE_HINT, lang))
        self.query_one("#form-hint", Static).update(t("enter joins, escape goes back", lang))

    def on_input_submitted(self, message: Input.Submitted) -> None:
        from p2p.lobby import BadCode, parse_code

        try:
            code = parse_code(message.value)
        except BadCode as exc:
            self.query_one("#form-error", Static).update(str(exc))
            return
        self.dismiss(code)

    def action_cancel(self) -> None:
        self.dismiss(None)


CODE_HINT = "its table code, as the host reads it (like 4721-walnut)"


class WatchForm(AddressForm):
    """Watch a table (a spectator, ``nodealer watch``): its seat's watch
    port, ``HOST:PORT``; a typo is shown and nothing happens."""

    TITLE = "watch a table by its watch port"
    LABEL = "the watch port, HOST:PORT (nodealer host --watch-port prints it)"
    HINT = "enter watches, escape goes back"
    PLACEHOLDER = "192.168.1.20:4100"
