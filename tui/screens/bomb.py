"""The Bomb game (糊涂炸弹) table: your identity (hidden until you ask, so a
neighbour cannot read it off the screen), your hand, the public area and
its 7 slots, which play kinds your pick allows and why (K12), the bomb
placement (K15), the detonation window with its countdown (K16/K17), and
at the end a game-over screen that tells who was who and why a side won
(:mod:`tui.screens.bomb_words`).

Keys: ←/→ move along your hand (or the seats, when placing the bomb), space
picks a card, ``a``/``b``/``c`` play the picked cards as kind A, B or C,
``i`` shows or hides your identity, ``enter`` places the bomb before the
seat under the cursor, ``d`` detonates (pressed twice: it cannot be taken
back), ``n`` passes.

Under ``nodealer play`` (every other seat a bot) the table's timers hold
while the help is open (:mod:`tui.screens.holding`).
"""

from __future__ import annotations

import re
import time
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Header, RichLog, Static

from engines.bomb import Detonate, Kind, Pass, PlaceBomb, PlayToArea, is_pattern, related
from engines.cards import Card

from ..widgets.cards import Hand, card_text
from ..words import kind_needs, register, t
from .bomb_words import ending, identity_line, phase_words
from .common import HELP_FIRST, TableScreen, footer, lang_of, relabel
from .holding import TimerHold
from .naming import seat_namer
from .table_over import StoryOverScreen

register(
    {
        "pick": "选牌",
        "play A": "出 A 类",
        "play B": "出 B 类",
        "play C": "出 C 类",
        "place bomb": "放炸弹",
        "detonate!": "炸掉！",
        "pass": "不炸",
        "identity": "身份",
        "dealing: shuffling and locking the deck…": "发牌中：正在洗牌、上锁……",
        "Bomb · {name} · round {round} · {doing}": "糊涂炸弹 · {name} · 第 {round} 轮 · {doing}",
        "{who}: {n}": "{who}：{n}",
        "area ({n}/{slots}): ": "公共区（{n}/{slots}）：",
        "   draw {draw}  discard {discard}": "   摸牌堆 {draw}  弃牌堆 {discard}",
        "identities: {ids}": "身份牌：{ids}",
        "identity: being dealt…": "身份：发牌中……",
        "identity: ": "身份：",
        "  (i hides it)": "  （按 i 藏起）",
        "identity: ▒▒ hidden (i shows it)": "身份：▒▒ 已隐藏（按 i 查看）",
        "picked {n}: ": "已选 {n} 张：",
        "no kind allowed yet": "还没有可出的牌型",
        "💣 {who} detonated! d d: detonate too (at once: drawn by lot)": (
            "💣 {who} 引爆了！按两次 d 也引爆（同时引爆则抽签）"
        ),
        "💣 {who} detonated: the window closes in a moment": "💣 {who} 引爆了：窗口马上关闭",
        "💣 detonate? {left} s left — d detonates, n passes": (
            "💣 引爆？还剩 {left} 秒——d 炸掉，n 不炸"
        ),
        "💣 {left} s left — you passed": "💣 还剩 {left} 秒——你不炸",
        "press d again to blow up {target} — it ends the game (esc: no)": (
            "再按一次 d 炸 {target}——游戏就此结束（esc：不炸）"
        ),
        "press d again to blow yourself up — it ends the game (esc: no)": (
            "再按一次 d 炸你自己——游戏就此结束（esc：不炸）"
        ),
        "no": "否",
        "show the result": "看结果",
        "game over: esc shows the result": "游戏结束：按 esc 看结果",
        "The identities:": "身份：",
        "time up: nobody detonated, the area is cleared, the bomb stays (K16)": (
            "时间到：没人引爆，公共区清空，炸弹留在原地（K16）"
        ),
        "── round {n} ──": "── 第 {n} 轮 ──",
        "kind {kind} is not allowed for these cards": "这些牌不能按 {kind} 类出",
        "pick cards first (space)": "先选牌（空格）",
        "not now: {doing}": "现在不行：{doing}",
        "dealing…": "发牌中…",
        "not kind {kind}: {needs}": "这些牌不能按 {kind} 类出：{needs}",
        "{card} relates to your identity": "{card} 与你的身份牌相关",
        "your whole hand, none related to your identity": "整手牌，都与你的身份牌无关",
        "a pair or a run": "对子或等差数列",
    }
)
AREA_SLOTS = 7
_SHOWN = re.compile(r"^(?:cards shown|亮牌)：?:? ?(.*)$")
_PLAYED = re.compile(r"^.*? (?:plays|出) (.*?)\s?[(（]")
_WINDOW_CLOSED = ("time up: detonation", "time up: nobody detonated", "时间到：没人引爆")


def allowed_kinds(
    identity: Card | None, picked: list[Card], hand: list[Card], lang: str = "en"
) -> dict[str, str]:
    """K12: for each kind the picked cards allow, why (what a screen shows).

    >>> allowed_kinds(Card.parse("7♠"), [Card.parse("9♠")], [Card.parse("9♠")])
    {'A': '9♠ relates to your identity'}
    """
    out: dict[str, str] = {}
    if not picked:
        return out
    if identity is not None and 1 <= len(picked) <= 3:
        hit = next((c for c in picked if related(identity, c)), None)
        if hit is not None:
            out["A"] = t("{card} relates to your identity", lang, card=hit)
    if identity is not None and len(picked) == len(hand):
        if not any(related(identity, c) for c in picked):
            out["B"] = t("your whole hand, none related to your identity", lang)
    if len(picked) >= 2 and is_pattern(tuple(picked)):
        out["C"] = t("a pair or a run", lang)
    return out


class BombScreen(TableScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_FIRST,
        Binding("left", "cursor(-1)", "◀", show=False),
        Binding("right", "cursor(1)", "▶", show=False),
        Binding("space", "pick", "pick"),
        Binding("a", "play('A')", "play A"),
        Binding("b", "play('B')", "play B"),
        Binding("c", "play('C')", "play C"),
        Binding("enter", "place", "place bomb"),
        Binding("d", "detonate", "detonate!"),
        Binding("n", "pass", "pass"),
        Binding("i", "identity", "identity"),
        Binding("escape", "escape", "no", show=False),
    ]
    IDLE_UNLESS: ClassVar[dict[str, str]] = {
        "pick": "play", "play('A')": "play", "play('B')": "play", "play('C')": "play",
        "place": "place_bomb", "detonate": "detonate", "pass": "pass",
    }  # fmt: skip

    def __init__(self, seat: int) -> None:
        super().__init__(seat)
        self.target = 0
        self.show_identity = False
        self.window_since: float | None = None
        self.window_seconds = 10.0
        self.state: Any = None  # the last BombState seen (its end tells the story)
        self.arming = False  # ``d`` pressed once: the next ``d`` detonates
        self.over_args: tuple[str, str, str, bool | None] | None = None  # see game_over
        self.over_names: Any = None
        self.hold = TimerHold(self)
        self._last_play: list[str] | None = None  # the faces the last play line named
        self._story_round: int | None = None  # the round the story last marked
        self._last_line: str | None = None  # the story's last line (a separator already?)
        self._marked: str | None = None  # the round separator this screen wrote itself

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="table"):
            yield Static(id="status", markup=False)
            yield Static(id="identity", markup=False)
            yield Static(id="others", markup=False)
            yield Static(id="area", markup=False)
            yield Hand(id="hand")
            yield Static(id="claim", markup=False)
        yield RichLog(id="story", wrap=True, markup=False)
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def on_mount(self) -> None:
        relabel(self, lang_of(self))
        self.set_interval(0.25, self._tick)

    def on_screen_suspend(self) -> None:
        self.hold.hold("away")  # the help (or game over) covers the table

    def on_screen_resume(self) -> None:
        self.hold.release("away")

    def _who(self, seat: int) -> str:
        return seat_namer(self, self.seat, lang_of(self))(seat)

    def speak(self) -> None:
        """Say everything again in the app's language (after a switch)."""
        relabel(self, lang_of(self))
        if self.view is not None:
            self.refresh_table(type("S", (), {"view": self.view, "state": None})(), None)

    # -------------------------------------------------------------- from the app
    def refresh_table(self, snapshot: Any, game: Any) -> None:
        self.view = snapshot.view
        self.footer_keys()
        lang = lang_of(self)
        if self.view is None:
            self.query_one("#status", Static).update(
                t("dealing: shuffling and locking the deck…", lang)
            )
            return
        view = self.view
        if snapshot.state is not None:
            self.state = snapshot.state
        config = getattr(snapshot.state, "config", None)
        if config is not None:
            scale = getattr(self.app, "time_scale", 1.0)
            self.window_seconds = config.detonation_seconds * scale
        if view["phase"] == "window":
            if self.window_since is None:
                self.window_since = time.monotonic()
                self.window_held = self.hold.held_seconds()
        else:
            self.window_since = None
        if "detonate" not in view["may"]:
            self.arming = False
        if view["round"] != self._story_round:
            marked = (self._last_line or "").startswith("──")  # the story marked it already
            if self._story_round is not None and not marked:
                self._marked = t("── round {n} ──", lang, n=view["round"])
                super().story(self._marked)
            self._story_round = view["round"]
        may = set(view["may"])
        doing = phase_words(view, self.seat, self._who, lang)
        status = Text(t("Bomb · {name} · round {round} · {doing}", lang, round=view["round"],
                        name=self.names.name(self.seat, lang),
                        doing=doing))  # fmt: skip
        if may:
            status.stylize("bold green", len(status) - len(doing))
        self.query_one("#status", Static).update(status)
        counts = view["counts"]
        seats = []
        for s, n in enumerate(counts):
            mark = " 💣" if view["bomb"] == s else ""
            here = "▶" if "place_bomb" in may and s == self.target else " "
            seats.append(f"{here}{t('{who}: {n}', lang, who=self._who(s), n=n)}{mark}")
        self.query_one("#others", Static).update("   ".join(seats))
        area = Text(t("area ({n}/{slots}): ", lang, n=len(view["area"]), slots=AREA_SLOTS))
        for index in view["area"]:
            area += card_text(Card(index))
        area += Text(" ·" * max(0, AREA_SLOTS - len(view["area"])), style="dim")
        area += Text(
            t(
                "   draw {draw}  discard {discard}",
                lang,
                draw=view["draw"],
                discard=view["discard"],
            ),
            style="dim",
        )
        self.query_one("#area", Static).update(area)
        self._show_identity()
        self._hand_widget().hold(self._hand())
        self._show_kinds()

    def story(self, line: str) -> None:
        """One story line, in player words: the cards a play showed are not
        printed again (the play named them), a timed-out window says what it
        means (K16), and each round opens with a separator."""
        lang = lang_of(self)
        shown = _SHOWN.match(line)
        if shown and self._last_play and shown.group(1).split() == self._last_play:
            return
        played = _PLAYED.match(line)
        self._last_play = played.group(1).split() if played else None
        if line == self._marked:  # the story's own separator for a round this screen marked
            self._marked = None
            return
        if line in _WINDOW_CLOSED:  # as the log says it, or as the story retells it
            line = t("time up: nobody detonated, the area is cleared, the bomb stays (K16)", lang)
        self._last_line = line
        super().story(line)

    def game_over(
        self, outcome: str, verdict: str, log_path: str, you_won: bool | None, names: Any = None
    ) -> StoryOverScreen:
        """The game-over screen: who was who, who blew up whom and why (K17–K25)."""
        self.over_args = (outcome, verdict, log_path, you_won)
        self.over_names = names
        return StoryOverScreen(outcome, verdict, log_path, you_won, self.ending, names)

    def ending(self, lang: str) -> list[Text | str]:
        """The story of the end in ``lang`` (see :func:`~tui.screens.bomb_words.ending`)."""
        state = self.state
        if state is None or not state.identities:
            return []
        name = seat_namer(self, self.seat, lang)
        lines: list[Text | str] = [Text(line, style="bold") for line in ending(state, name, lang)]
        lines.append("")
        lines.append(t("The identities:", lang))
        for seat in range(state.seats):
            won = state.result is not None and seat in state.result.winners
            lines.append(Text(("✓ " if won else "✗ ") + identity_line(seat, state.identities,
                                                                      name, lang)))  # fmt: skip
        return lines

    # -------------------------------------------------------------- helpers
    def _identity(self) -> Card | None:
        index = None if self.view is None else self.view.get("identity")
        return None if index is None else Card(index)

    def _show_identity(self) -> None:
        identity = self._identity()
        lang = lang_of(self)
        if identity is None:
            text = Text(t("identity: being dealt…", lang), style="dim")
        elif self.show_identity:
            text = Text(t("identity: ", lang)) + card_text(identity)
            text += Text(t("  (i hides it)", lang), style="dim")
        else:
            text = Text(t("identity: ▒▒ hidden (i shows it)", lang), style="dim")
        self.query_one("#identity", Static).update(text)

    def _picked(self) -> list[Card]:
        return [c for _, c in self._hand_widget().picked_cards() if c is not None]

    def _show_kinds(self) -> None:
        hand = [c for _, c in self._hand() if c is not None]
        lang = lang_of(self)
        kinds = allowed_kinds(self._identity(), self._picked(), hand, lang)
        text = Text(t("picked {n}: ", lang, n=len(self._hand_widget().picked)))
        if kinds:
            text += Text("  ".join(f"{k} ({why})" for k, why in kinds.items()), style="cyan")
        else:
            text += Text(t("no kind allowed yet", lang), style="dim")
        view = self.view
        if view is not None and "place_bomb" in view["may"]:
            text = Text(t("bomb before: ▶ {target} (enter places it)", lang,
                          target=self._who(self.target)), style="bold cyan")  # fmt: skip
        race = [] if view is None else view.get("detonators") or []
        if self.window_since is not None and view is not None:
            left = f"{self.window_left():.0f}"
            if race and not self.arming:  # (v3) K17: shouts that cross draw lots
                who = self.names.listed(race, lang)
                said = "💣 {who} detonated! d d: detonate too (at once: drawn by lot)"
                if self.seat in race:
                    said = "💣 {who} detonated: the window closes in a moment"
                text = Text(t(said, lang, who=who), style="bold red")
            elif self.arming and view["bomb"] is not None:
                said = t("press d again to blow up {target} — it ends the game (esc: no)", lang,
                         target=self._who(view["bomb"]))  # fmt: skip
                if view["bomb"] == self.seat:  # K16: the target may detonate too
                    said = t("press d again to blow yourself up — it ends the game (esc: no)",
                             lang)  # fmt: skip
                text = Text(said, style="bold reverse red")
            elif "detonate" in view["may"]:
                text = Text(t("💣 detonate? {left} s left — d detonates, n passes", lang,
                              left=left), style="bold red")  # fmt: skip
            else:
                text = Text(t("💣 {left} s left — you passed", lang, left=left), style="bold")
        elif view is not None and view["phase"] == "over":
            text = Text(t("game over: esc shows the result", lang), style="bold")
        self.query_one("#claim", Static).update(text)

    def window_left(self) -> float:
        """Seconds left in the detonation window (K16), as this screen counts
        them: from when it saw the window open, less the time the table's
        timers were held meanwhile (help open under ``play``)."""
        if self.window_since is None:
            return 0.0
        held = self.hold.held_seconds() - getattr(self, "window_held", 0.0)
        return max(0.0, self.window_seconds - (time.monotonic() - self.window_since - held))

    def _tick(self) -> None:
        if self.window_since is not None and self.view is not None:
            self._show_kinds()

    # -------------------------------------------------------------- actions
    def action_cursor(self, step: int) -> None:
        if self.view is not None and "place_bomb" in self.view["may"]:
            self.target = (self.target + step) % len(self.view["counts"])
            self.refresh_table(type("S", (), {"view": self.view, "state": None})(), None)
            return
        self._hand_widget().move(step)

    def action_pick(self) -> None:
        if self._hand_widget().toggle():
            self._show_kinds()

    def _not_now(self, move: str) -> bool:
        """Say why ``move`` cannot be made now (in words, not the engine's
        phase names) and return True; False when the table allows it."""
        view = self.view
        if view is not None and move in view["may"]:
            return False
        lang = lang_of(self)
        doing = t("dealing…", lang) if view is None else phase_words(view, self.seat, self._who,
                                                                      lang)  # fmt: skip
        self.notify(t("not now: {doing}", lang, doing=doing), severity="warning")
        return True

    def action_play(self, kind: str) -> None:
        if self._not_now("play"):
            return
        hand = [c for _, c in self._hand() if c is not None]
        picked = self._picked()
        allowed = allowed_kinds(self._identity(), picked, hand)
        if kind not in allowed:
            lang = lang_of(self)  # why not: what the kind needs (K12)
            if not picked:
                self.notify(t("pick cards first (space)", lang), severity="warning")
                return
            said = t("not kind {kind}: {needs}", lang, kind=kind, needs=kind_needs(kind, lang))
            self.notify(said, severity="warning")
            return
        picked = self._hand_widget().picked_cards()
        positions = tuple(p for p, _ in picked)
        faces = tuple(c for _, c in picked if c is not None)
        self._hand_widget().clear_picks()
        self._submit(PlayToArea(self.seat, positions, faces, Kind(kind)))

    def action_place(self) -> None:
        if not self._not_now("place_bomb"):
            self._submit(PlaceBomb(self.seat, self.target))

    def action_detonate(self) -> None:
        """K17: detonating ends the game and cannot be taken back: the first
        ``d`` asks, the second detonates (esc or ``n`` says no)."""
        if self._not_now("detonate"):
            return
        if not self.arming:
            self.arming = True
            self._show_kinds()
            return
        self.arming = False
        self._submit(Detonate(self.seat))

    def action_pass(self) -> None:
        self.arming = False
        if not self._not_now("pass"):
            self._submit(Pass(self.seat))

    def action_escape(self) -> None:
        if self.arming:
            self.arming = False
            self._show_kinds()
        elif self.over_args is not None and self.app.screen is self:
            again = self.game_over(*self.over_args, self.over_names)
            self.app.push_screen(again)  # back to the result

    def action_identity(self) -> None:
        self.show_identity = not self.show_identity
        self._show_identity()
