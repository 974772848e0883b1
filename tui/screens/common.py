"""What every screen shares: the language it speaks (the app's ``lang``),
its footer keys in that language, and the help screen (a game's public
rules and the keys that work now)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown, RichLog, Static

from engines.cards import Card
from rules import rulebook, rulebook_file
from table.names import SeatNames

from ..widgets.cards import Hand
from ..widgets.story_log import redraw, tell
from ..words import register, t

register(
    {
        "rules": "规则",
        "command palette": "命令面板",
        "palette": "命令面板",  # Textual's own ctrl+p, in the footer
        "中文": "English",
        "help": "帮助",
        "close": "关闭",
        "language": "语言",
        "theme": "主题",
        "quit": "退出",
        "Keys": "按键",
        "(rules not found: {path})": "（找不到规则：{path}）",
        "{game} — the public rules": "{game}——公开的规则",
        "escape or q closes": "按 escape 或 q 关闭",
        # Textual's own screen keys (tab, shift+tab, ctrl+c), relabelled too
        "Focus Next": "下一项",
        "Focus Previous": "上一项",
        "Copy selected text": "复制选中的文字",
        # the hand's order and the bell, on every table screen
        "sort by rank/suit": "按点数/花色排序",
        "bell on/off": "提示音 开/关",
        "bell on: it rings when your turn or a window opens": "提示音已开：轮到你或有时机时会响",
        "bell off (ctrl+g turns it on)": "提示音已关（ctrl+g 打开）",
    }
)


def lang_of(node: DOMNode) -> str:
    """The language ``node``'s app speaks (``en`` when it has none)."""
    try:
        return str(getattr(node.app, "lang", "en"))
    except Exception:
        return "en"


def relabel(node: DOMNode, lang: str) -> None:
    """Show ``node``'s footer keys in ``lang`` (descriptions are the English
    keys of :mod:`tui.words`)."""
    english: dict[tuple[str, str], str] = node.__dict__.setdefault("_english_keys", {})
    bindings = node._bindings.key_to_bindings
    for key, listed in bindings.items():
        out = []
        for binding in listed:
            original = english.setdefault((key, binding.action), binding.description)
            said = t(original, lang) if original else original  # a key with no words: none
            out.append(dataclasses.replace(binding, description=said))
        bindings[key] = out
    node.refresh_bindings()


def game_title(game: str, lang: str) -> str:
    names = {"bluff": ("Bluff", "吹牛"), "bomb": ("The Bomb game", "糊涂炸弹"),
             "mao": ("Mao", "毛")}  # fmt: skip
    en, zh = names.get(game, (game, game))
    return zh if lang == "zh" else en


class HelpScreen(ModalScreen[None]):
    """A game's public rules (``rules/<lang>/<game>.md``) and the keys of the
    screen it was opened from."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "close"),
        Binding("q", "dismiss", "close", show=False),
    ]

    def __init__(self, game: str, lang: str, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.game, self.lang, self.keys = game, lang, keys

    def compose(self) -> ComposeResult:
        text = rulebook(self.game, self.lang)
        if text is None:
            path = rulebook_file(self.game, self.lang)
            text = t("(rules not found: {path})", self.lang, path=path)
        listed = [*self.keys, ("ctrl+p", t("command palette", self.lang))]
        keys = "\n".join(f"- `{key}` {description}" for key, description in listed)
        with VerticalScroll(id="help"):
            yield Static(t("{game} — the public rules", self.lang,
                           game=game_title(self.game, self.lang)), id="help-title")  # fmt: skip
            yield Markdown(text)
            yield Markdown(f"## {t('Keys', self.lang)}\n\n{keys}")
            yield Static(t("escape or q closes", self.lang), classes="hint")

    def on_mount(self) -> None:
        relabel(self, self.lang)

    async def action_dismiss(self, result: Any = None) -> None:
        self.dismiss(None)


def screen_keys(screen: DOMNode, lang: str) -> list[tuple[str, str]]:
    """The keys a screen answers to now, with what they do, in ``lang``."""
    english: dict[tuple[str, str], str] = screen.__dict__.get("_english_keys", {})
    out = []
    for key, listed in screen._bindings.key_to_bindings.items():
        for binding in listed:
            description = english.get((key, binding.action), binding.description)
            if description:
                out.append((binding.key_display or key, t(description, lang)))
    return out


def bell_on(app: App[Any]) -> bool:
    """Whether the bell rings: on by default in a terminal (off when the
    app runs headless, as in tests), until :func:`toggle_bell`."""
    return bool(getattr(app, "bell_on", not app.is_headless))


def toggle_bell(app: App[Any]) -> bool:
    """Bell on ↔ off; whether it is on now."""
    app.bell_on = not bell_on(app)  # type: ignore[attr-defined]
    return app.bell_on  # type: ignore[attr-defined]


def ring_bell(node: DOMNode) -> bool:
    """The terminal bell, for "your turn" or "a window opens" (unless the
    person turned it off, ctrl+g); whether it rang."""
    app = node.app
    if not bell_on(app):
        return False
    app.bell()
    return True


class TableScreen(Screen[None]):
    """What every game's table screen shares: the seat it shows, that seat's
    view of the table, the hand with its cursor and picks (:class:`Hand`),
    the story, the language, and moves handed to the app (``submit``).
    ``r`` sorts the hand by rank or by suit, ``ctrl+g`` turns the bell off
    or on (see :func:`ring_bell`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "sort_hand", "sort by rank/suit", show=False),
        Binding("ctrl+g", "bell", "bell on/off", show=False),
    ]
    HAND = "#hand"
    STORY = "#story"

    def __init__(self, seat: int, names: SeatNames | None = None) -> None:
        super().__init__()
        self.seat = seat
        self.view: dict[str, Any] | None = None
        self.names = (names or SeatNames.numbered(0)).seen_by(seat)
        """Every seat's name (:mod:`table.names`): ``self.names.who(s, lang)``."""
        self.told: list[str] = []

    @property
    def lang(self) -> str:
        return lang_of(self)

    def story(self, line: str) -> None:
        """One more line of the game's story (already in the app's language);
        the newest move is marked."""
        tell(self.query_one(self.STORY, RichLog), self.told, line)

    def retell(self, lines: list[str]) -> None:
        """The whole story again (after F2, or rebuilt from the log)."""
        self.told[:] = lines
        for log in self.query(self.STORY).results(RichLog):  # Mao keeps its own feed
            redraw(log, self.told)

    def _hand(self) -> list[tuple[int, Card | None]]:
        """The seat's cards from its view: (deck position, face or None)."""
        if self.view is None:
            return []
        return [(p, None if c is None else Card(c)) for p, c in self.view["hand"]]

    def _hand_widget(self) -> Hand:
        return self.query_one(self.HAND, Hand)

    @property
    def cursor(self) -> int:
        return self._hand_widget().cursor

    def _submit(self, event: Any, seen: int | None = None) -> None:
        """Hand ``event`` to the app; ``seen``: the table it was chosen on
        (its body count), refused if the table has moved on since."""
        if seen is None:
            self.app.submit(event)  # type: ignore[attr-defined]
        else:
            self.app.submit(event, seen=seen)  # type: ignore[attr-defined]

    def action_cursor(self, step: int) -> None:
        self._hand_widget().move(step)

    def action_sort_hand(self) -> None:
        self._hand_widget().toggle_order()

    def action_bell(self) -> None:
        on = toggle_bell(self.app)
        text = ("bell on: it rings when your turn or a window opens" if on
                else "bell off (ctrl+g turns it on)")  # fmt: skip
        self.notify(t(text, self.lang), timeout=3)


SPEAKING: list[BindingType] = [
    Binding("f1", "rules", "help"),
    Binding("f2", "language", "中文"),  # the other language's name: "English" in Chinese
    Binding("f3", "theme", "theme", show=False),  # listed on F1
]
"""Keys every app answers: the help screen, the language, light or dark."""

HELP_FIRST = Binding("f1", "app.rules", "help")
"""A table screen's first key, so that F1 stays in an 80-column footer
however many keys the game has (the rest are listed on the help screen)."""


def show_help(app: App[Any], game: str) -> None:
    """The help screen: the game's public rules and the keys of this screen."""
    lang = getattr(app, "lang", "en")
    keys = screen_keys(app.screen, lang)
    shown = {key for key, _ in keys}
    keys += [(b.key, t(b.description, lang)) for b in SPEAKING if isinstance(b, Binding)
             and b.key not in shown]  # fmt: skip
    app.push_screen(HelpScreen(game, lang, keys))


def switch_language(app: App[Any]) -> None:
    """English ↔ Chinese; every screen says what it shows again."""
    app.lang = "zh" if getattr(app, "lang", "en") == "en" else "en"  # type: ignore[attr-defined]
    relabel(app, app.lang)  # type: ignore[attr-defined]
    for screen in app.screen_stack:
        relabel(screen, app.lang)  # type: ignore[attr-defined]
        speak = getattr(screen, "speak", None)
        if speak is not None:
            speak()


THEMES = ("textual-dark", "textual-light")


def switch_theme(app: App[Any]) -> None:
    """Dark ↔ light (both read well: suits keep their colours)."""
    app.theme = THEMES[(THEMES.index(app.theme) + 1) % 2] if app.theme in THEMES else THEMES[1]
