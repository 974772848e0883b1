"""What every screen shares: the language it speaks (the app's ``lang``),
its footer keys in that language (a footer that fits the terminal's width,
never losing help, quit and language), the help screen (a game's public
rules and the keys that work now) and a yes/no question (:class:`Confirm`)
for an act that cannot be undone.

Every screen shows text as written, never as Textual markup: nicknames,
table names, phrases, reasons and file names come from other people or a
log, and ``a[/]`` would crash the program (``Carol[i][/i]`` pass for
``Carol``). So every Static, Label and OptionList is built with
``markup=False`` (RichLogs too), styles are given as rich ``Text``, and the
apps' toasts are plain (:meth:`tui.base.NodealerApp.notify`);
tests/test_tui_markup.py checks the rule over tui/'s source."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from rich.cells import cell_len
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Markdown, RichLog, Static
from textual.widgets._footer import FooterKey

from engines.cards import Card
from rules import rulebook, rulebook_file
from table.names import SeatNames

from ..palette import THEMES
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
        "help, {n} more keys": "帮助，另有 {n} 个键",
        "yes": "是",
        "no": "否",
        "y yes · n no": "y 是 · n 否",
        "nodealer — fair card games with no dealer": "nodealer——没有庄家的公平纸牌游戏",
        "Choose a game or a table; at a table F1 shows that game's rules.": (
            "选一个游戏或一张牌桌；在牌桌上按 F1 可看该游戏的规则。"
        ),
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
        # a modal screen hides the app's keys: F2 and F3 work here too
        Binding("f2", "app.language", "language", show=False),
        Binding("f3", "app.theme", "theme", show=False),
    ]

    def __init__(self, game: str | None, lang: str, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.game, self.lang, self.keys = game, lang, keys

    def compose(self) -> ComposeResult:
        keys = "\n".join(f"- `{key}` {description}" for key, description in self.keys)
        with VerticalScroll(id="help"):
            if self.game is None:  # home, replay: what nodealer is, and the keys
                yield Static(t("nodealer — fair card games with no dealer", self.lang),
                             id="help-title", markup=False)  # fmt: skip
                yield Static(t("Choose a game or a table; at a table F1 shows that game's "
                               "rules.", self.lang), markup=False)  # fmt: skip
            else:
                text = rulebook(self.game, self.lang)  # package data: a wheel has it too
                if text is None:
                    path = rulebook_file(self.game, self.lang)
                    text = t("(rules not found: {path})", self.lang, path=path)
                yield Static(t("{game} — the public rules", self.lang,
                               game=game_title(self.game, self.lang)),
                             id="help-title", markup=False)  # fmt: skip
                yield Markdown(text)
            yield Markdown(f"## {t('Keys', self.lang)}\n\n{keys}")
            yield Static(t("escape or q closes", self.lang), classes="hint", markup=False)

    def on_mount(self) -> None:
        relabel(self, self.lang)

    async def action_dismiss(self, result: Any = None) -> None:
        self.dismiss(None)


TOOLKIT_KEYS = frozenset({"tab", "shift+tab", "ctrl+c", "super+c", "ctrl+p"})
"""Keys Textual itself binds (focus, copy, its command palette): not the
game's, so the help screen does not list them."""


def key_name(key: str) -> str:
    """A key as a person reads it (``ctrl+q`` -> ``^q``, ``f1`` -> ``F1``)."""
    names = {"escape": "Esc", "enter": "Enter", "space": "Space", "up": "↑", "down": "↓",
             "left": "←", "right": "→", "backspace": "Backspace", "question_mark": "?",
             "left_square_bracket": "[", "right_square_bracket": "]", "home": "Home",
             "end": "End"}  # fmt: skip
    if key in names:
        return names[key]
    if key.startswith("ctrl+"):
        return "^" + key[5:]
    if len(key) > 1 and key[0] == "f" and key[1:].isdigit():
        return key.upper()
    return key


def screen_keys(screen: DOMNode, lang: str) -> list[tuple[str, str]]:
    """The keys a screen answers to now, with what they do, in ``lang``
    (the game's and nodealer's keys; none of the toolkit's)."""
    english: dict[tuple[str, str], str] = screen.__dict__.get("_english_keys", {})
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, listed in screen._bindings.key_to_bindings.items():
        if key in TOOLKIT_KEYS:
            continue
        for binding in listed:
            description = english.get((key, binding.action), binding.description)
            shown = binding.key_display or key_name(key)
            if description and shown not in seen:
                seen.add(shown)
                out.append((shown, t(description, lang)))
    return out


def bell_on(app: App[Any]) -> bool:
    """Whether the bell rings: on by default in a terminal (off when the
    app runs headless, as in tests), until :func:`toggle_bell`."""
    return bool(getattr(app, "bell_on", not app.is_headless))


def set_bell(app: App[Any], on: bool) -> None:
    """The bell on or off from now (``--bell``/``--no-bell``; ctrl+g toggles it)."""
    app.bell_on = on  # type: ignore[attr-defined]


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
        self._idle: frozenset[str] = frozenset()

    # the screen's actions and the move of ``view["may"]`` each needs
    IDLE_UNLESS: ClassVar[dict[str, str]] = {}

    def idle_actions(self) -> frozenset[str]:
        """The actions whose key does nothing now (the table does not allow
        their move): the footer dims them and drops them first; pressed,
        they still say why not."""
        may = set(self.view["may"]) if self.view is not None else set()
        return frozenset(a for a, move in self.IDLE_UNLESS.items() if move not in may)

    def footer_keys(self) -> None:
        """Redraw the footer when the keys that do something changed."""
        idle = self.idle_actions()
        if idle != self._idle:
            self._idle = idle
            self.refresh_bindings()  # Textual's footer skips it while the app is unfocused:
            for bar in self.query(FittingFooter):  # the keys lit must follow the table
                bar.call_later(bar.recompose)

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
"""A table screen's first key, so that F1 comes first in its footer."""

PINNED_KEYS = ("f1", "ctrl+q", "f2")
"""Keys a footer never drops, however narrow the terminal: help (which
lists every key), quit and the language."""


class FittingFooter(Footer):
    """Textual's footer, cut to the terminal's width by dropping the last
    of the screen's own keys, never help (F1), quit (^q) or the language
    (F2); when keys are dropped F1 says how many more it lists."""

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        shown: dict[str, tuple[Binding, bool, str]] = {}
        idle = getattr(self.screen, "_idle", frozenset())
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            enabled = enabled and binding.action not in idle
            if binding.show and binding.action not in {b.action for b, _, _ in shown.values()}:
                shown.setdefault(binding.key, (binding, enabled, tooltip))
        others = [entry for key, entry in shown.items() if key not in PINNED_KEYS]
        said = {entry[0].description for entry in others}
        # ^q "quit" next to the screen's own q "quit" says nothing new
        pinned = [
            shown[k]
            for k in PINNED_KEYS
            if k in shown and not (k == "ctrl+q" and shown[k][0].description in said)
        ]
        width = self.size.width or self.app.size.width
        self._composed_for = width
        lang = lang_of(self)

        def cells(entry: tuple[Binding, bool, str], words: str | None = None) -> int:
            binding = entry[0]
            text = binding.description if words is None else words
            key = cell_len(self.app.get_key_display(binding))
            return key + 1 + (cell_len(text) + 1 if text else 0)

        # dropped first: keys that do nothing now (dimmed), then the last ones
        order = [e for e in reversed(others) if not e[1]] + [e for e in reversed(others) if e[1]]
        kept, help_words = others, ""
        for n in range(len(others) + 1):
            gone = {id(e) for e in order[:n]}
            kept = [e for e in others if id(e) not in gone]
            help_words = t("help, {n} more keys", lang, n=n) if n else ""
            used = sum(cells(e, help_words if help_words and e[0].key == "f1" else None)
                       for e in pinned) + sum(map(cells, kept))  # fmt: skip
            if used <= width:
                break
        head = [e for e in pinned if e[0].key == "f1"]
        tail = [e for e in pinned if e[0].key != "f1"]
        for binding, enabled, tooltip in [*head, *kept, *tail]:
            description = help_words if help_words and binding.key == "f1" else binding.description
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)

    def on_mount(self) -> None:
        # composed at once, not only when the screen's keys change while it
        # is on top (a screen pushed under a question shows its keys too)
        self._bindings_ready = True
        self.call_after_refresh(self.recompose)

    def on_resize(self, event: events.Resize) -> None:
        width = event.size.width
        ready = self._bindings_ready and self.is_attached
        if ready and width != self.__dict__.get("_composed_for"):
            self._composed_for = width
            self.call_after_refresh(self.recompose)


def footer() -> FittingFooter:
    """The footer every screen shows (compact: the most keys in 80 columns)."""
    return FittingFooter(compact=True, show_command_palette=False)


class Confirm(ModalScreen[bool]):
    """A yes/no question before an act that cannot be undone (leaving a
    table others play at, detonating): ``y`` or Enter says yes; ``n``,
    Esc or ``q`` says no. Dismissed with the answer::

        app.push_screen(Confirm(question, lang), lambda yes: ...)
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("enter", "answer(True)", "yes", show=False),
        Binding("n", "answer(False)", "no"),
        Binding("escape", "answer(False)", "no", show=False),
        Binding("q", "answer(False)", "no", show=False),
    ]

    def __init__(self, question: str, lang: str) -> None:
        super().__init__()
        self.question, self.lang = question, lang

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Static(self.question, id="confirm-question", markup=False)
            yield Static(t("y yes · n no", self.lang), classes="hint", markup=False)

    def on_mount(self) -> None:
        relabel(self, self.lang)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def show_help(app: App[Any], game: str | None) -> None:
    """The help screen: the game's public rules (None: what nodealer is)
    and every key of this screen and of the app."""
    lang = getattr(app, "lang", "en")
    keys = screen_keys(app.screen, lang)
    shown = {key for key, _ in keys}
    keys += [k for k in screen_keys(app, lang) if k[0] not in shown]
    app.push_screen(HelpScreen(game, lang, keys))


def switch_language(app: App[Any]) -> None:
    """English ↔ Chinese; every screen says what it shows again (its keys,
    its words; the app retells the story)."""
    app.lang = "zh" if getattr(app, "lang", "en") == "en" else "en"  # type: ignore[attr-defined]
    relabel(app, app.lang)  # type: ignore[attr-defined]
    for screen in app.screen_stack:
        relabel(screen, app.lang)  # type: ignore[attr-defined]
        speak = getattr(screen, "speak", None)
        if speak is not None:
            speak()
    # the story lines already told are said again by the app, which keeps
    # them as events (tui.story.StoryTeller): TableScreen.retell


def switch_theme(app: App[Any]) -> None:
    """Dark ↔ light (both read at 4.5:1 or better, in colour or without)."""
    app.theme = THEMES[(THEMES.index(app.theme) + 1) % 2] if app.theme in THEMES else THEMES[0]
