"""The Bluff / 吹牛 table: your hand, the pile, the last claim, and only the
moves the rules allow now (B4–B13).

Keys: ←/→ move along your hand, space picks a card to place face down,
↑/↓ choose the claim among the legal ones (B5: more cards, or as many of a
higher rank), enter places the picked cards with that claim, ``c``
challenges the last claim (B7), ``a`` lets a last claim stand (B11), ``s``
shows your A♠ to start (B3).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Header, RichLog, Static

from engines.bluff import Accept, Challenge, Claim, PlayFaceDown, Show

from ..widgets.cards import Hand
from ..words import register, t
from .common import HELP_FIRST, TableScreen, footer, lang_of, relabel

register(
    {
        "pick": "选牌",
        "claim +": "声称 +",
        "claim −": "声称 −",
        "place": "扣牌",
        "challenge": "吹牛！",
        "let it stand": "不质疑",
        "show A♠": "亮 A♠",
        "rules": "规则",
        "dealing: shuffling and locking the deck…": "发牌中：正在洗牌、上锁……",
        "your turn": "轮到你",
        "seat {seat}'s turn": "轮到座位{seat}",
        "Bluff · you are seat {seat} · {turn} · {phase}": (
            "吹牛 · 你是座位{seat} · {turn} · {phase}"
        ),
        "   you may: ": "   你可以：",
        "seat {seat}: {n} cards": "座位{seat}：{n} 张",
        "pile: {n} cards": "牌堆：{n} 张",
        "   last: seat {seat} placed {placed}, claims {claim}": (
            "   上一手：座位{seat} 扣下 {placed} 张，声称 {claim}"
        ),
        "picked {n} · claim: ": "已选 {n} 张 · 声称：",
        "   (space picks, ↑/↓ claim, enter places)": "   （空格选牌，↑/↓ 选声称，回车扣牌）",
        "pick at least one card (space) first": "先用空格至少选一张牌",
        "you do not hold A♠": "你没有 A♠",
    }
)
_WORDS_ZH = {  # phases and moves: engine names, in this game's sense
    "challenge": "吹牛！",
    "play": "出牌",
    "show": "亮 A♠",
    "accept": "不质疑",
    "deal": "发牌",
    "starter": "等待亮 A♠",
    "last_claim": "最后一手",
    "transfer": "收牌",
    "over": "结束",
}


def _word(name: str, lang: str) -> str:
    return _WORDS_ZH.get(name, name) if lang == "zh" else name


class BluffScreen(TableScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_FIRST,
        Binding("left", "cursor(-1)", "◀", show=False),
        Binding("right", "cursor(1)", "▶", show=False),
        Binding("space", "pick", "pick"),
        Binding("up", "claim(1)", "claim +"),
        Binding("down", "claim(-1)", "claim −"),
        Binding("enter", "place", "place"),
        Binding("c", "challenge", "challenge"),
        Binding("a", "accept", "let it stand"),
        Binding("s", "show", "show A♠"),
        Binding("question_mark", "app.rules", "rules", show=False),  # F1 in the footer
    ]

    def __init__(self, seat: int) -> None:
        super().__init__(seat)
        self.claim_index = 0
        self.snapshot: Any = None

    def on_mount(self) -> None:
        relabel(self, lang_of(self))

    def speak(self) -> None:
        """Say everything again in the app's language (after a switch)."""
        relabel(self, lang_of(self))
        if self.snapshot is not None:
            self.refresh_table(self.snapshot, self._game)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="table"):
            yield Static(id="status")
            yield Static(id="others")
            yield Static(id="pile")
            yield Hand(id="hand")
            yield Static(id="claim")
        yield RichLog(id="story", wrap=True, markup=False)
        yield footer()  # fits the width: F1, ^q and F2 always shown

    # -------------------------------------------------------------- from the app
    def refresh_table(self, snapshot: Any, game: Any) -> None:
        """Show the seat's view of the latest table snapshot."""
        self.snapshot, self.view = snapshot, snapshot.view
        self._game = game
        lang = lang_of(self)
        if self.view is None:
            self.query_one("#status", Static).update(
                t("dealing: shuffling and locking the deck…", lang)
            )
            return
        view = self.view
        may = set(view["may"])
        turn = (
            t("your turn", lang)
            if view["turn"] == self.seat
            else t("seat {seat}'s turn", lang, seat=view["turn"])
        )
        phase = _word(str(view["phase"]), lang)
        status = Text(
            t("Bluff · you are seat {seat} · {turn} · {phase}", lang, seat=self.seat, turn=turn,
              phase=phase), style="bold"
        )  # fmt: skip
        if may:
            status += Text(
                t("   you may: ", lang) + ", ".join(sorted(_word(m, lang) for m in may)),
                style="green",
            )
        self.query_one("#status", Static).update(status)
        counts = view["counts"]
        others = "   ".join(
            t("seat {seat}: {n} cards", lang, seat=s, n=n)
            for s, n in enumerate(counts)
            if s != self.seat
        )
        self.query_one("#others", Static).update(others)
        last = view["last"]
        pile = t("pile: {n} cards", lang, n=view["pile"])
        if last is not None:
            pile += t("   last: seat {seat} placed {placed}, claims {claim}", lang,
                      seat=last["seat"], placed=last["placed"], claim=last["claim"])  # fmt: skip
        self.query_one("#pile", Static).update(pile)
        self._hand_widget().hold(self._hand())
        self._show_claim()

    # -------------------------------------------------------------- helpers
    def _claims(self) -> list[Claim]:
        if self.snapshot is None or self.snapshot.state is None:
            return []
        return self._game.legal_claims(self.snapshot.state, limit=8)

    def _claim(self) -> Claim | None:
        claims = self._claims()
        if not claims:
            return None
        self.claim_index = max(0, min(self.claim_index, len(claims) - 1))
        return claims[self.claim_index]

    def _show_claim(self) -> None:
        claim = self._claim()
        picked = len(self._hand_widget().picked)
        lang = lang_of(self)
        text = Text(t("picked {n} · claim: ", lang, n=picked))
        text += Text(str(claim) if claim else "-", style="bold cyan")
        if self.view and "play" in self.view["may"]:
            text += Text(t("   (space picks, ↑/↓ claim, enter places)", lang), style="dim")
        self.query_one("#claim", Static).update(text)

    # -------------------------------------------------------------- actions
    def action_pick(self) -> None:
        if self._hand_widget().toggle():
            self._show_claim()

    def action_claim(self, step: int) -> None:
        self.claim_index += step
        self._show_claim()

    def action_place(self) -> None:
        claim = self._claim()
        hand = self._hand_widget()
        if not hand.picked or claim is None:
            self.notify(
                t("pick at least one card (space) first", lang_of(self)), severity="warning"
            )
            return
        event = PlayFaceDown(self.seat, tuple(sorted(hand.picked)), claim)
        hand.clear_picks()
        self.claim_index = 0
        self._submit(event)

    def action_challenge(self) -> None:
        self._submit(Challenge(self.seat))

    def action_accept(self) -> None:
        self._submit(Accept(self.seat))

    def action_show(self) -> None:
        ace = next((p for p, c in self._hand() if c is not None and str(c) == "A♠"), None)
        if ace is None:
            self.notify(t("you do not hold A♠", lang_of(self)), severity="warning")
            return
        self._submit(Show(self.seat, ace))
