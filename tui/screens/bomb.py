"""The Bomb game (糊涂炸弹) table: your identity (hidden until you ask, so a
neighbour cannot read it off the screen), your hand, the public area and
its 7 slots, which play kinds your pick allows and why (K12), the bomb
placement (K15), the detonation window with its countdown (K16/K17).

Keys: ←/→ move along your hand (or the seats, when placing the bomb), space
picks a card, ``a``/``b``/``c`` play the picked cards as kind A, B or C,
``i`` shows or hides your identity, ``enter`` places the bomb before the
seat under the cursor, ``d`` detonates, ``n`` passes.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Header, RichLog, Static

from engines.bomb import Detonate, Kind, Pass, PlaceBomb, PlayToArea, is_pattern, related
from engines.cards import Card

from ..widgets.cards import Hand, card_text
from ..words import kind_needs, register, t, turn_text
from .common import HELP_FIRST, TableScreen, lang_of, relabel

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
        "your turn": "轮到你",
        "seat {seat}'s turn": "轮到座位{seat}",
        "Bomb · you are seat {seat} · round {round} · {turn}": (
            "糊涂炸弹 · 你是座位{seat} · 第 {round} 轮 · {turn}"
        ),
        "   you may: ": "   你可以：",
        "seat {seat}: {n}": "座位{seat}：{n}",
        "{who}: {n}": "{who}：{n}",
        "Bomb · {name} · round {round} · {turn}": "糊涂炸弹 · {name} · 第 {round} 轮 · {turn}",
        "area ({n}/{slots}): ": "公共区（{n}/{slots}）：",
        "   draw {draw}  discard {discard}": "   摸牌堆 {draw}  弃牌堆 {discard}",
        "identities: {ids}": "身份：{ids}",
        "identity: being dealt…": "身份：发牌中……",
        "identity: ": "身份：",
        "  (i hides it)": "  （按 i 藏起）",
        "identity: ▒▒ hidden (i shows it)": "身份：▒▒ 已隐藏（按 i 查看）",
        "picked {n}: ": "已选 {n} 张：",
        "no kind allowed yet": "还没有可出的牌型",
        "   💣 detonation window: {left} s — d detonates, n passes": (
            "   💣 引爆时间：{left} 秒——d 炸掉，n 不炸"
        ),
        "kind {kind} is not allowed for these cards": "这些牌不能按 {kind} 类出",
        "not kind {kind}: {needs}": "这些牌不能按 {kind} 类出：{needs}",
        "{card} relates to your identity": "{card} 与你的身份牌相关",
        "your whole hand, none related to your identity": "整手牌，都与你的身份牌无关",
        "a pair or a run": "对子或等差数列",
    }
)
_WORDS_ZH = {  # phases and moves: engine names, in this game's sense
    "identities": "发身份牌",
    "starter": "抽先手",
    "turn": "出牌",
    "playing": "亮牌中",
    "place_bomb": "放炸弹",
    "window": "引爆时间",
    "judging": "亮身份",
    "over": "结束",
    "detonate": "炸掉",
    "draw": "摸牌",
}


def _word(name: str, lang: str) -> str:
    return _WORDS_ZH.get(name, name) if lang == "zh" else name


AREA_SLOTS = 7


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
    ]

    def __init__(self, seat: int) -> None:
        super().__init__(seat)
        self.target = 0
        self.show_identity = False
        self.window_since: float | None = None
        self.window_seconds = 10.0

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="table"):
            yield Static(id="status")
            yield Static(id="identity")
            yield Static(id="others")
            yield Static(id="area")
            yield Hand(id="hand")
            yield Static(id="claim")
        yield RichLog(id="story", wrap=True, markup=False)
        yield Footer(compact=True, show_command_palette=False)  # fits 80 columns; ctrl+p on F1

    def on_mount(self) -> None:
        relabel(self, lang_of(self))
        self.set_interval(0.25, self._tick)

    def speak(self) -> None:
        """Say everything again in the app's language (after a switch)."""
        relabel(self, lang_of(self))
        if self.view is not None:
            self.refresh_table(type("S", (), {"view": self.view, "state": None})(), None)

    # -------------------------------------------------------------- from the app
    def refresh_table(self, snapshot: Any, game: Any) -> None:
        self.view = snapshot.view
        lang = lang_of(self)
        if self.view is None:
            self.query_one("#status", Static).update(
                t("dealing: shuffling and locking the deck…", lang)
            )
            return
        view = self.view
        config = getattr(snapshot.state, "config", None)
        if config is not None:
            scale = getattr(self.app, "time_scale", 1.0)
            self.window_seconds = config.detonation_seconds * scale
        if view["phase"] == "window":
            self.window_since = self.window_since or time.monotonic()
        else:
            self.window_since = None
        may = set(view["may"])
        whose = turn_text("bomb", str(view["phase"]), view["turn"], self.names, bool(may), lang)
        status = Text(t("Bomb · {name} · round {round} · {turn}", lang,
                        name=self.names.name(self.seat, lang), round=view["round"],
                        turn=whose))  # fmt: skip
        if may:
            status += Text(
                t("   you may: ", lang) + ", ".join(sorted(_word(m, lang) for m in may)),
                style="green",
            )
        self.query_one("#status", Static).update(status)
        counts = view["counts"]
        seats = []
        for s, n in enumerate(counts):
            mark = " 💣" if view["bomb"] == s else ""
            here = "▶" if "place_bomb" in may and s == self.target else " "
            who = self.names.who(s, lang)
            seats.append(f"{here}{t('{who}: {n}', lang, who=who, n=n)}{mark}")
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
        if view.get("identities"):
            ids = " ".join(f"{self.names.who(s, lang)}:{Card(c)}"
                           for s, c in enumerate(view["identities"]))  # fmt: skip
            self.story(t("identities: {ids}", lang, ids=ids))

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
        if self.window_since is not None:
            left = max(0.0, self.window_seconds - (time.monotonic() - self.window_since))
            text += Text(t("   💣 detonation window: {left} s — d detonates, n passes", lang,
                           left=f"{left:.0f}"))  # fmt: skip
        self.query_one("#claim", Static).update(text)

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

    def action_play(self, kind: str) -> None:
        hand = [c for _, c in self._hand() if c is not None]
        picked = self._picked()
        allowed = allowed_kinds(self._identity(), picked, hand)
        if kind not in allowed:
            lang = lang_of(self)  # why not: what the kind needs (K12)
            said = t("not kind {kind}: {needs}", lang, kind=kind, needs=kind_needs(kind, lang))
            self.notify(said, severity="warning")
            return
        picked = self._hand_widget().picked_cards()
        positions = tuple(p for p, _ in picked)
        faces = tuple(c for _, c in picked if c is not None)
        self._hand_widget().clear_picks()
        self._submit(PlayToArea(self.seat, positions, faces, Kind(kind)))

    def action_place(self) -> None:
        self._submit(PlaceBomb(self.seat, self.target))

    def action_detonate(self) -> None:
        self._submit(Detonate(self.seat))

    def action_pass(self) -> None:
        self._submit(Pass(self.seat))

    def action_identity(self) -> None:
        self.show_identity = not self.show_identity
        self._show_identity()
