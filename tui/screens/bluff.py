"""The Bluff / 吹牛 table: your hand, the pile, the last claim, and only the
moves the rules allow now (B4–B13).

Keys: ←/→ move along your hand, space picks a card to place face down,
↑/↓ step through the claims the rules allow (B5: more cards, or as many of
a higher rank), +/− change the claim's count, enter places the picked
cards with that claim, ``c`` challenges the last claim (B7), ``a`` lets a
last claim stand (B11), ``s`` shows your A♠ to start (B3), ``r`` sorts
your hand by rank or suit, ``ctrl+g`` turns the bell off. The claim and
hand keys work whatever has focus (the story log would scroll on them).

A key acts on the table on the screen: ``c`` pressed within
:data:`GRACE` of a new claim appearing was meant for the one before, so it
is refused with the new claim named; a move chosen on a table that has
moved on by the time it goes out is refused too (the session's ``seen``).
A claim the person chose stays chosen until it no longer beats the
standing claim; then the screen says so. What a challenge came to is told
in words ("carol was honest — you take 4 cards"), the cards taken marked
``+`` in the hand; when the turn leaves the person without their move (a
challenge before they played, a random starter), the screen says who and
why. The bell (:func:`~tui.screens.common.ring_bell`) rings when the
person's turn or a window of theirs opens.
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

from engines.bluff import (
    ACE_OF_SPADES,
    MAX_CLAIM,
    Accept,
    BluffState,
    Challenge,
    Claim,
    Phase,
    PileEntry,
    PlayFaceDown,
    Show,
)

from ..widgets.cards import Hand
from ..words import register, t, turn_text
from .common import HELP_FIRST, TableScreen, footer, lang_of, relabel, ring_bell

GRACE = 1.0
"""Seconds after a new claim shows in which ``c`` is taken to be meant for
the claim before it (a person's reaction time, about 0.3 s, and a glance)."""

register(
    {
        "pick": "选牌",
        "claim +": "声称 +",
        "claim −": "声称 −",
        "count +": "张数 +",
        "count −": "张数 −",
        "place": "扣牌",
        "challenge": "吹牛！",
        "let it stand": "不质疑",
        "show A♠": "亮 A♠",
        "rules": "规则",
        "you": "你",
        "seat {seat}": "座位{seat}",
        "your": "你的",
        "seat {seat}'s": "座位{seat}的",
        "dealing: shuffling and locking the deck…": "发牌中：正在洗牌、上锁……",
        "your turn": "轮到你",
        "seat {seat}'s turn": "轮到座位{seat}",
        "Bluff · you are seat {seat} · {turn} · {phase}": (
            "吹牛 · 你是座位{seat} · {turn} · {phase}"
        ),
        "Bluff · you are seat {seat} · {phase}": "吹牛 · 你是座位{seat} · {phase}",
        "   you may: ": "   你可以：",
        "seat {seat}: {n} cards": "座位{seat}：{n} 张",
        "{who}: {n} cards": "{who}：{n} 张",
        "Bluff · {name} · {turn}": "吹牛 · {name} · {turn}",
        "   last: {who} placed {placed}, claims {claim}": (
            "   上一手：{who} 扣下 {placed} 张，声称 {claim}"
        ),
        "pile: {n} cards": "牌堆：{n} 张",
        "picked {n} · claim: ": "已选 {n} 张 · 声称：",
        "   (space picks, ↑/↓ claim, +/− count, enter places)": (
            "   （空格选牌，↑/↓ 换声称，+/− 改张数，回车扣牌）"
        ),
        "pick at least one card (space) first": "先用空格至少选一张牌",
        "you do not hold A♠": "你没有 A♠",
        "who starts? whoever holds A♠ shows it (s) · {left} s left, then a random seat": (
            "谁先出？拿着 A♠ 的人亮出来（s）· 还剩 {left} 秒，之后随机选一人"
        ),
        "you hold A♠: press s to show it and start · {left} s left": (
            "你拿着 A♠：按 s 亮出并先出牌 · 还剩 {left} 秒"
        ),
        "{who} was honest ({claim}: {cards}) — you take {n} cards": (
            "{who}说的是真的（{claim}：{cards}）——你收下 {n} 张牌"
        ),
        "{who} was honest ({claim}: {cards}) — {taker} takes {n} cards": (
            "{who}说的是真的（{claim}：{cards}）——{taker}收下 {n} 张牌"
        ),
        "you were honest ({claim}: {cards}) — {taker} takes {n} cards": (
            "你说的是真的（{claim}：{cards}）——{taker}收下 {n} 张牌"
        ),
        "{who} bluffed ({claim}: {cards}) — {who} takes {n} cards": (
            "{who}吹牛了（{claim}：{cards}）——{who}收下 {n} 张牌"
        ),
        "you bluffed ({claim}: {cards}) — you take {n} cards": (
            "你吹牛了（{claim}：{cards}）——你收下 {n} 张牌"
        ),
        "{who} challenged {whose} {claim} before you moved: {who} plays next (B10)": (
            "{who}在你出手前质疑了{whose} {claim}：接下来由{who}出牌（B10）"
        ),
        "{who} challenged {whose} last claim {claim} before you moved (B11)": (
            "{who}在你出手前质疑了{whose}最后一手 {claim}（B11）"
        ),
        "the turn moved on without you: {turn}": "没等你出手，轮次已经变了：{turn}",
        "{who} showed A♠ and starts (B3)": "{who}亮出 A♠，先出牌（B3）",
        "you showed A♠ and start (B3)": "你亮出 A♠，先出牌（B3）",
        "nobody showed A♠ in time: {who} starts, drawn at random (B3)": (
            "没人及时亮出 A♠：随机抽到{who}先出（B3）"
        ),
        "nobody showed A♠ in time: you start, drawn at random (B3)": (
            "没人及时亮出 A♠：随机抽到你先出（B3）"
        ),
        "the table moved on: the latest claim is now {whose} {claim} — press c again "
        "to challenge it": "牌桌已经往下走了：最新的声称是{whose} {claim}——要质疑它请再按 c",
        "there is no claim you may challenge now": "现在没有你可以质疑的声称",
        "not your turn to place cards: {turn}": "还没轮到你扣牌：{turn}",
        "a lets a claim stand only when the seat before you has emptied its hand (B11)": (
            "只有上家出完手牌时才能按 a 不质疑（B11）"
        ),
        "your claim {mine} no longer beats {whose} {claim}: the claim is {now} again": (
            "你选的 {mine} 已经大不过{whose} {claim}：声称回到 {now}"
        ),
        "no smaller claim beats the standing one": "没有更小的声称能大过现在的声称",
        "no larger claim: {most} cards is the most": "不能再大了：最多 {most} 张",
        # table.session.TableMovedOn, said by the apps
        "the table moved on before your move went out: look again": (
            "你的出牌发出之前牌桌已经往下走了：请再看一眼"
        ),
    }
)
_PHASES = {  # the engine's phases, in a player's words
    "deal": ("dealing", "发牌"),
    "starter": ("who starts (A♠)", "谁先出（A♠）"),
    "play": ("play", "出牌"),
    "last_claim": ("last cards: challenge or let stand", "最后一手：质疑或不质疑"),
    "challenge": ("cards turned up", "翻牌"),
    "transfer": ("the pile changes hands", "收牌"),
    "over": ("over", "结束"),
}
_MOVES = {  # the kinds of move, as the footer names them
    "challenge": ("challenge", "吹牛！"),
    "play": ("place", "扣牌"),
    "show": ("show A♠", "亮 A♠"),
    "accept": ("let it stand", "不质疑"),
}


_ONE_CARD = re.compile(r"(?<![\d.])1 cards\b")


def _one(text: str) -> str:
    """English: "1 card", not "1 cards"."""
    return _ONE_CARD.sub("1 card", text)


def claim_words(claim: Claim | str, lang: str) -> str:
    """A claim as the story says it: ``3 × Q``, in Chinese ``3 张 Q``."""
    text = str(claim)
    return text.replace(" × ", " 张 ") if lang == "zh" else text


def _word(table: dict[str, tuple[str, str]], name: str, lang: str) -> str:
    en, zh = table.get(name, (name, name))
    return zh if lang == "zh" else en


def _cards(state: BluffState, entry: PileEntry) -> str:
    """The faces of a play, as turned up (B7)."""
    return " ".join(str(state.face(p) or "▒▒") for p in entry.positions)


class BluffScreen(TableScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_FIRST,
        Binding("left", "cursor(-1)", "◀", show=False, priority=True),
        Binding("right", "cursor(1)", "▶", show=False, priority=True),
        Binding("space", "pick", "pick"),
        Binding("up", "claim(1)", "claim +", show=False, priority=True),
        Binding("down", "claim(-1)", "claim −", show=False, priority=True),
        Binding("plus,equals_sign", "count(1)", "count +", show=False, priority=True),
        Binding("minus", "count(-1)", "count −", show=False, priority=True),
        Binding("enter", "place", "place"),
        Binding("c", "challenge", "challenge"),
        Binding("a", "accept", "let it stand"),
        Binding("s", "show", "show A♠"),
        Binding("question_mark", "app.rules", "rules", show=False),  # F1 in the footer
    ]
    IDLE_UNLESS: ClassVar[dict[str, str]] = {
        "pick": "play", "place": "play", "challenge": "challenge", "accept": "accept",
        "show": "show",
    }  # fmt: skip

    def idle_actions(self) -> frozenset[str]:
        idle = super().idle_actions()
        return idle if self._holds_ace() else idle | {"show"}  # B3: only its holder shows A♠
    CSS = """
    BluffScreen #table { padding: 0 1; }
    BluffScreen #status { margin: 0; }
    BluffScreen #hand { margin: 0; height: auto; }
    BluffScreen #news { text-style: bold; }
    """

    def __init__(self, seat: int) -> None:
        super().__init__(seat)
        self.snapshot: Any = None
        self._game: Any = None
        self.chosen: Claim | None = None  # the claim the person chose (None: follows the picks)
        self.news: str = ""  # the latest line that matters (a challenge's result, …)
        self._claim_key: tuple[int, PileEntry] | None = None  # (plays on the pile, the last)
        self._claim_since = 0.0  # when that claim showed (time.monotonic)
        self._starter_until: float | None = None  # when the A♠ window closes
        self._news_args: tuple[str, dict[str, Any]] | None = None

    def on_mount(self) -> None:
        relabel(self, lang_of(self))
        self.set_interval(0.5, self._tick)

    def speak(self) -> None:
        """Say everything again in the app's language (after a switch)."""
        relabel(self, lang_of(self))
        if self._news_args is not None:
            self.news = self._say(*self._news_args)
        if self.snapshot is not None:
            self._render_table()

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="table"):
            yield Static(id="status", markup=False)
            yield Static(id="others", markup=False)
            yield Static(id="pile", markup=False)
            yield Static(id="news", markup=False)
            yield Hand(id="hand", caption=True)
            yield Static(id="claim", markup=False)
        yield RichLog(id="story", wrap=True, markup=False)
        yield footer()  # fits the width: F1, ^q and F2 always shown

    # -------------------------------------------------------------- words
    def _who(self, seat: int) -> str:
        return self.names.who(seat, self.lang)

    def _whose(self, seat: int) -> str:
        return self.names.whose(seat, self.lang)

    def _say(self, text: str, fields: dict[str, Any]) -> str:
        """``text`` in the app's language; seat fields (``who``, ``taker``,
        ``whose``) named as the person reads them."""
        said = {k: claim_words(v, self.lang) if isinstance(v, Claim) else v
                for k, v in fields.items()}  # fmt: skip
        for key in ("who", "taker"):
            if isinstance(said.get(key), int):
                said[key] = self._who(said[key])
        if isinstance(said.get("whose"), int):
            said["whose"] = self._whose(said["whose"])
        return _one(t(text, self.lang, **said))

    def _tell(self, text: str, **fields: Any) -> None:
        """A line that matters: on the table (``#news``) and in the story."""
        self._news_args = (text, fields)
        self.news = self._say(text, fields)
        self.story(self.news)

    def _turn_words(self, view: dict[str, Any]) -> str:
        may = bool(view["may"])
        return turn_text("bluff", str(view["phase"]), view["turn"], self.names, may, self.lang)

    # -------------------------------------------------------------- from the app
    def refresh_table(self, snapshot: Any, game: Any) -> None:
        """Show the seat's view of the latest table snapshot (and say what
        changed that the person must know)."""
        before = self.snapshot
        self.snapshot, self.view = snapshot, snapshot.view
        self._game = game
        self.footer_keys()
        if self.view is not None and snapshot.state is not None:
            old = None if before is None else before.state
            self._changed(old, snapshot.state)
        self._render_table()

    def _render_table(self) -> None:
        lang = self.lang
        if self.view is None:
            self.query_one("#status", Static).update(
                t("dealing: shuffling and locking the deck…", lang)
            )
            return
        view = self.view
        may = set(view["may"])
        if not self._holds_ace():
            may.discard("show")  # B3: every seat may show A♠, only its holder can
        turn = turn_text("bluff", str(view["phase"]), view["turn"], self.names, bool(may), lang)
        status = Text(t("Bluff · {name} · {turn}", lang, name=self.names.name(self.seat, lang),
                        turn=turn), style="bold")  # fmt: skip
        if may:
            moves = sorted(_word(_MOVES, m, lang) for m in may)
            joined = ("、" if lang == "zh" else ", ").join(moves)
            status += Text(t("   you may: ", lang) + joined, style="green")
        starter = self._starter_line()
        if starter:
            status += Text("\n") + Text(starter, style="bold yellow")
        self.query_one("#status", Static).update(status)
        counts = view["counts"]
        others = "   ".join(
            _one(t("{who}: {n} cards", lang, who=self.names.name(s, lang), n=n))
            for s, n in enumerate(counts)
            if s != self.seat
        )
        self.query_one("#others", Static).update(others)
        last = view["last"]
        pile = _one(t("pile: {n} cards", lang, n=view["pile"]))
        if last is not None:
            pile += t("   last: {who} placed {placed}, claims {claim}", lang,
                      who=self.names.who(last["seat"], lang), placed=last["placed"],
                      claim=claim_words(last["claim"], lang))  # fmt: skip
        self.query_one("#pile", Static).update(pile)
        news = self.query_one("#news", Static)
        news.update(self.news)
        news.display = bool(self.news)
        self._hand_widget().hold(self._hand())
        self._show_claim()

    def _starter_line(self) -> str:
        if self._starter_until is None:
            return ""
        left = max(0, round(self._starter_until - time.monotonic()))
        if self._holds_ace():
            return t("you hold A♠: press s to show it and start · {left} s left", self.lang,
                     left=left)  # fmt: skip
        return t("who starts? whoever holds A♠ shows it (s) · {left} s left, then a random seat",
                 self.lang, left=left)  # fmt: skip

    def _tick(self) -> None:
        if self._starter_until is not None and self.view is not None:
            self._render_table()

    # -------------------------------------------------------------- what changed
    def _changed(self, old: BluffState | None, new: BluffState) -> None:
        """Compare the table before and now: a challenge's result, a turn
        lost, the starter, the A♠ window's clock, the bell."""
        self._watch_claim(new)
        self._watch_starter(new)
        if old is None:
            if self._opens(None, new):
                ring_bell(self)
            return
        if new.last is not None and new.last.seat == self.seat and new.last not in old.pile:
            self._played()
        last = old.last
        if last is not None and last not in new.pile and new.holder(last.positions[0]) is not None:
            self._challenge_result(old, new, last)
        self._turn_lost(old, new)
        if old.phase is Phase.STARTER and new.phase is not Phase.STARTER:
            self._starter_result(new)
        if self._opens(old, new):
            ring_bell(self)
        chosen = self.chosen
        if chosen is not None and new.last is not None and not self._legal(chosen):
            self.chosen = None  # no longer beats the standing claim (B5): said, not silent
            self.notify(self._say(
                "your claim {mine} no longer beats {whose} {claim}: the claim is {now} again",
                {"mine": chosen, "whose": new.last.seat, "claim": new.last.claim,
                 "now": self._claim()}), severity="warning", timeout=6)  # fmt: skip

    def _played(self) -> None:
        """The person's play is on the table: its claim, picks and the news
        they have read are done with."""
        hand = self._hand_widget()
        hand.clear_picks()
        hand.clear_fresh()
        self.chosen = None
        self.news, self._news_args = "", None

    def _watch_claim(self, new: BluffState) -> None:
        key = None if new.last is None else (len(new.pile), new.last)
        if key != self._claim_key:
            self._claim_key, self._claim_since = key, time.monotonic()

    def _watch_starter(self, new: BluffState) -> None:
        waiting = "show" in self.view["may"] if self.view else False  # type: ignore[index]
        if new.phase is Phase.STARTER and waiting:
            if self._starter_until is None:
                scale = float(getattr(self.app, "time_scale", 1.0))
                self._starter_until = time.monotonic() + new.config.show_seconds * scale
        else:
            self._starter_until = None

    def _opens(self, old: BluffState | None, new: BluffState) -> bool:
        """Whether the person's turn or a window of theirs has just opened."""
        now = self._moments(new)
        return bool(now - (self._moments(old) if old is not None else set()))

    def _moments(self, state: BluffState) -> set[str]:
        kinds = self._game.legal_kinds(state, self.seat) if self._game else frozenset()
        out = {k for k in kinds if k in ("play", "accept")}
        if "show" in kinds and self._holds_ace():
            out.add("show")
        if state.phase is Phase.LAST_CLAIM and "challenge" in kinds:
            out.add("last")
        return out

    def _challenge_result(self, old: BluffState, new: BluffState, last: PileEntry) -> None:
        taker = new.holder(last.positions[0])
        assert taker is not None
        taken = set(new.hands[taker]) - set(old.hands[taker])
        fields = {"who": last.seat, "claim": last.claim, "cards": _cards(new, last),
                  "n": len(taken), "taker": taker}  # fmt: skip
        if taker == self.seat:
            self._hand_widget().fresh = taken
        if taker != last.seat:  # the claim stood: the challenger takes the pile (B7)
            if last.seat == self.seat:
                self._tell("you were honest ({claim}: {cards}) — {taker} takes {n} cards", **fields)
            elif taker == self.seat:
                self._tell("{who} was honest ({claim}: {cards}) — you take {n} cards", **fields)
            else:
                text = "{who} was honest ({claim}: {cards}) — {taker} takes {n} cards"
                self._tell(text, **fields)
        elif last.seat == self.seat:
            self._tell("you bluffed ({claim}: {cards}) — you take {n} cards", **fields)
        else:
            self._tell("{who} bluffed ({claim}: {cards}) — {who} takes {n} cards", **fields)

    def _turn_lost(self, old: BluffState, new: BluffState) -> None:
        """Say who took the person's move away, and why (B10)."""
        mine = self._game.legal_kinds(old, self.seat) & {"play", "accept"}
        if not mine or new.phase is Phase.OVER:
            return
        if mine & self._game.legal_kinds(new, self.seat) and new.pile == old.pile:
            return  # still the person's move
        if new.pile[: len(old.pile)] == old.pile and any(
            e.seat == self.seat for e in new.pile[len(old.pile) :]
        ):
            return  # the person moved
        last = old.last
        challenged = new.phase is Phase.CHALLENGE or (last is not None and last not in new.pile)
        if not challenged or last is None:
            view = self.view
            assert view is not None
            self._tell("the turn moved on without you: {turn}", turn=self._turn_words(view))
            return
        challenger = new.challenger if new.phase is Phase.CHALLENGE else new.turn  # B10
        if challenger == self.seat:
            return  # the person's own challenge is no news
        if old.phase is Phase.LAST_CLAIM:  # B11: the claim's fate decides the game
            text = "{who} challenged {whose} last claim {claim} before you moved (B11)"
        else:
            text = "{who} challenged {whose} {claim} before you moved: {who} plays next (B10)"
        self._tell(text, who=challenger, whose=last.seat, claim=last.claim)

    def _starter_result(self, new: BluffState) -> None:
        shown = any(card == ACE_OF_SPADES and new.holder(p) == new.turn for p, card in new.public)
        if shown and new.turn == self.seat:
            self._tell("you showed A♠ and start (B3)")
        elif shown:
            self._tell("{who} showed A♠ and starts (B3)", who=new.turn)
        elif new.turn == self.seat:
            self._tell("nobody showed A♠ in time: you start, drawn at random (B3)")
        else:
            self._tell("nobody showed A♠ in time: {who} starts, drawn at random (B3)", who=new.turn)

    def _holds_ace(self) -> bool:
        return any(card == ACE_OF_SPADES for _, card in self._hand())

    # -------------------------------------------------------------- the claim
    def _claims(self) -> list[Claim]:
        """Every claim a play may make now (B5/B9), up to a few cards more
        than the standing claim."""
        if self.snapshot is None or self.snapshot.state is None or self._game is None:
            return []
        state = self.snapshot.state
        standing = 0 if state.claim is None else state.claim.count
        limit = min(MAX_CLAIM, max(8, standing + 4))
        return list(self._game.legal_claims(state, limit=limit))

    def _suggested(self, claims: list[Claim]) -> Claim:
        """The claim shown until the person chooses one: the truth about the
        picked cards if it beats the standing claim, else the lowest claim
        of as many cards, else the lowest claim."""
        picked = [c for _, c in self._hand_widget().picked_cards() if c is not None]
        if picked:
            ranks = {c.rank for c in picked if not c.is_joker}
            if len(ranks) == 1:
                honest = Claim(min(len(picked), MAX_CLAIM), ranks.pop())
                if honest in claims:
                    return honest
            same = [c for c in claims if c.count >= len(picked)]
            if same:
                return same[0]
        return claims[0]

    def _legal(self, claim: Claim) -> bool:
        """B5/B9: whether ``claim`` may be made now."""
        state = self.snapshot.state if self.snapshot is not None else None
        if state is None:
            return False
        return claim.beats(state.claim) or (state.config.twos_reset and claim.rank == 2)

    def _claim(self) -> Claim | None:
        claims = self._claims()
        if not claims:
            return None
        if self.chosen is not None and self._legal(self.chosen):
            return self.chosen
        return self._suggested(claims)

    def _show_claim(self) -> None:
        claim = self._claim()
        picked = len(self._hand_widget().picked)
        lang = self.lang
        text = Text(t("picked {n} · claim: ", lang, n=picked))
        text += Text(claim_words(claim, lang) if claim else "-", style="bold cyan")
        if self.view and "play" in self.view["may"]:
            text += Text(t("   (space picks, ↑/↓ claim, +/− count, enter places)", lang),
                         style="dim")  # fmt: skip
        self.query_one("#claim", Static).update(text)

    # -------------------------------------------------------------- actions
    def action_pick(self) -> None:
        if self._hand_widget().toggle():
            self._show_claim()

    def action_claim(self, step: int) -> None:
        claims, claim = self._claims(), self._claim()
        if claim is None:
            return
        if claim not in claims:  # beyond the listed ones: the next rank, or count
            claims = sorted({*claims, claim, *self._neighbours(claim)})
        i = claims.index(claim) + step
        self.chosen = claims[max(0, min(i, len(claims) - 1))]
        self._show_claim()

    def _neighbours(self, claim: Claim) -> list[Claim]:
        out = []
        for count, rank in ((claim.count, claim.rank + 1), (claim.count + 1, 1)):
            if rank <= 13 and count <= MAX_CLAIM:
                out.append(Claim(count, rank))
        return [c for c in out if self._legal(c)]

    def action_count(self, step: int) -> None:
        claims, claim = self._claims(), self._claim()
        if claim is None:
            return
        count = claim.count + step
        if count > MAX_CLAIM:
            self.notify(t("no larger claim: {most} cards is the most", self.lang, most=MAX_CLAIM))
            return
        same = [c for c in claims if c.count == count]
        if count < 1 or not same:
            if step < 0:
                self.notify(t("no smaller claim beats the standing one", self.lang))
                return
            same = [Claim(count, claim.rank)]  # more cards always beat (B5)
        self.chosen = next((c for c in same if c.rank >= claim.rank), same[0])
        self._show_claim()

    def action_place(self) -> None:
        view = self.view
        if view is None or "play" not in view["may"]:
            turn = self._turn_words(view) if view is not None else "-"
            self.notify(t("not your turn to place cards: {turn}", self.lang, turn=turn),
                        severity="warning")  # fmt: skip
            return
        claim = self._claim()
        hand = self._hand_widget()
        if not hand.picked or claim is None:
            self.notify(t("pick at least one card (space) first", self.lang), severity="warning")
            return
        # picks and the chosen claim stay until the play is on the table
        # (_played): a refused play loses neither
        event = PlayFaceDown(self.seat, tuple(sorted(hand.picked)), claim)
        self._submit(event, seen=self.snapshot.count)

    def action_challenge(self) -> None:
        view = self.view
        if view is None or "challenge" not in view["may"]:
            self.notify(t("there is no claim you may challenge now", self.lang), severity="warning")
            return
        if time.monotonic() - self._claim_since < GRACE and view["last"] is not None:
            last = view["last"]
            self.notify(self._say(
                "the table moved on: the latest claim is now {whose} {claim} — press c again "
                "to challenge it", {"whose": last["seat"], "claim": Claim.parse(last["claim"])}),
                severity="warning", timeout=6)  # fmt: skip
            self._claim_since = 0.0  # it has been seen now: c again challenges it
            return
        self._submit(Challenge(self.seat), seen=self.snapshot.count)

    def action_accept(self) -> None:
        if self.view is None or "accept" not in self.view["may"]:
            text = "a lets a claim stand only when the seat before you has emptied its hand (B11)"
            self.notify(t(text, self.lang), severity="warning")
            return
        self._submit(Accept(self.seat), seen=self.snapshot.count)

    def action_show(self) -> None:
        ace = next((p for p, c in self._hand() if c == ACE_OF_SPADES), None)
        if ace is None:
            self.notify(t("you do not hold A♠", self.lang), severity="warning")
            return
        self._submit(Show(self.seat, ace), seen=self.snapshot.count)
