"""The Mao / 毛 table (GAMES.md M1–M40): your hand, the top card and the suit
in force, the direction of play, every seat's hand size, whose turn it is
with the 10-second timer (M23), the draw and discard piles, the secret rules
("rule 2 (seat 0): ?" until revealed), M30 proposals and votes, a feed of
plays, phrases and penalties, and a phrase box.

What you say goes with your next play or draw, or on its own: ``t`` opens
the phrase box (it completes the phrases the game knows, in Chinese and
English, and those penalties have taught this table; → accepts), enter puts
the words in line for your next move, backspace takes the last one back.

Keys: ←/→ move along your hand, enter plays the card under the cursor with
your words, ``d`` draws with them, ``s`` says them now, ``c`` calls a
penalty (then the seat's number, then the phrase's number: 0 is your own
words), ``o`` calls a point of order (during one, ``o`` ends it), ``m``
proposes (``e`` end the game, ``d``/``g`` and a rule's number: drop or
change it, M30), ``y``/``n`` vote, ``w`` writes your secret rule when you
may (the rule builder opens by itself when you win a round).

When a round ends a banner says who won it and who writes the next
secret rule, and the next round's timer waits for it to go
(:mod:`tui.screens.mao_news`). Under ``nodealer play`` the table's timers
also hold while the help is open or a phrase is being typed
(:mod:`tui.screens.holding`); at a LAN table they never do.

The screen holds no rules: the engine judges everything said and done; a
rule you wrote is judged by your own session (:class:`~engines.mao_author.
RuleAuthor`, the session's player for your seat), and you see its verdicts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.suggester import Suggester
from textual.widgets import Header, Input, RichLog, Static

from engines.cards import Card, Suit
from engines.core import Timer
from engines.mao import MaoState
from engines.mao_author import RuleAuthor
from engines.mao_events import Call, Draw, PlayCard, Propose, Say, Vote
from engines.mao_rules import Rule, RuleError
from engines.mao_state import judged_of
from engines.phrases import FIXED, POO_ENDERS, Phrase, parse, suit_name
from table.session import SessionError

from ..story import chinese, rule_text
from ..widgets.cards import Hand, card_text
from ..words import register, t
from .common import HELP_FIRST, TableScreen, footer, relabel
from .holding import TimerHold
from .mao_news import feed_line
from .mao_rounds import RoundNews
from .naming import seat_namer
from .rule_builder import RuleBuilder

LANGS = ("en", "zh")
CALLS = ("bad_card", "out_of_turn", "fail_say:last_card", "fail_10s", "talking", "in_vain")
"""Base penalty phrases offered when calling a penalty (M20–M25, M37)."""
LEARNED_IN_MENU = 3
POO_PAUSED = "⏸ point of order ({who}): play paused, timer stopped — it ends with: {enders}"
VOTE_LINE = "vote: {who} proposes to {what} — yes: {yes} · no: {no}"
PROPOSE_MENU = "propose: e end the game · d + number drop a rule · g + number change a rule (M30)"
SAY_BOX = "say a phrase (→ completes, enter puts it in line, esc leaves)"

register(
    {
        "your rules written before the crash cannot be judged: {reason}": (
            "崩溃前你写的规则无法裁决：{reason}"
        ),
        "Mao": "毛",
        "round {n}": "第 {n} 局",
        "you are seat {seat}": "你是座位{seat}",
        "you are {name}": "你是 {name}",
        "{who}'s turn": "轮到 {who}",
        "penalty: {who} “{phrase}” (+{n})": "罚 {who}：“{phrase}”（+{n}）",
        ", called by {who}": "，由 {who} 罚",
        "your turn": "轮到你",
        "⏱ {left} s": "⏱ {left} 秒",
        "(held)": "（暂停）",
        "clockwise": "顺时针",
        "counter-clockwise": "逆时针",
        "dealing…": "发牌中…",
        "top card": "顶牌",
        "suit in force: {suit}": "指定花色：{suit}",
        "7 chain: {n}": "7 连：{n}",
        "draw pile {n}": "摸牌堆 {n}",
        "discard pile {n}": "弃牌堆 {n}",
        "seat {seat}": "座位{seat}",
        "you": "你",
        "{n} cards": "{n} 张",
        "won {n}": "赢 {n} 局",
        "out": "离场",
        "your words: {words}": "你要说的：{words}",
        "(none: t types a phrase)": "（无：按 t 输入）",
        "you owe: {words}": "你欠着：{words}",
        POO_PAUSED: "⏸ 秩序点（{who}）：暂停出牌，计时停止——结束它要说：{enders}",
        "secret rules:": "秘密规则：",
        "none yet": "暂无",
        "rule {slot} ({who}): ?": "规则 {slot}（{who}）：？",
        "rule {slot} (yours): {text}": "规则 {slot}（你写的）：{text}",
        "rule {slot} ({who}): {text}": "规则 {slot}（{who}）：{text}",
        "dropped": "已废除",
        "✓ {n} verdicts re-checked": "✓ {n} 个判决已复核",
        "✗ {faults}": "✗ {faults}",
        VOTE_LINE: "表决：{who} 提议{what}——赞成：{yes} · 反对：{no}",
        "end the game": "结束游戏",
        "drop rule {slot}": "废除规则 {slot}",
        "change rule {slot}": "修改规则 {slot}",
        " · y/n to vote": " · 按 y/n 投票",
        "call a penalty on whom? {menu} (esc cancels)": "罚谁？{menu}（esc 取消）",
        "call on {who}, which phrase? {menu}": "罚 {who}，用哪句罚语？{menu}",
        "0 your words": "0 你输入的话",
        PROPOSE_MENU: "提议：e 结束游戏 · d+编号 废除规则 · g+编号 修改规则（M30）",
        "which rule? (its number)": "哪条规则？（编号）",
        "waiting for {who} to write a secret rule": "等 {who} 写秘密规则",
        "you won the round: write your secret rule (w)": "你赢了这一局：写你的秘密规则（w）",
        "your rule is on its way to the table": "你的规则正在发往牌桌",
        "penalty: seat {seat} “{phrase}” (+{n})": "罚座位{seat}：“{phrase}”（+{n}）",
        ", called by seat {seat}": "，由座位{seat} 罚",
        ", by rule {slot}": "，按规则 {slot}",
        "rule {slot} ({who}) revealed: {text}": "规则 {slot}（{who}）公开：{text}",
        "no card is under the cursor": "光标下没有牌",
        "that card's face is not known yet": "这张牌的牌面还不知道",
        "nothing to say: t types a phrase": "没有要说的话：按 t 输入",
        "there is no vote open": "现在没有表决",
        "you may not write a rule now": "你现在不能写规则",
        SAY_BOX: "说一句话（→ 补全，回车排队，esc 离开）",
        "play": "出牌",
        "draw": "摸牌",
        "say": "说",
        "type": "输入",
        "call": "罚",
        "point of order": "秩序点",
        "propose": "提议",
        "vote yes": "赞成",
        "vote no": "反对",
        "write rule": "写规则",
        "unsay": "撤回",
        "rules": "规则",
        "cancel": "取消",
        "◀": "◀",
        "▶": "▶",
    }
)


def base_phrases() -> list[str]:
    """Every phrase the base rules know, in English and Chinese (M9–M16,
    M32–M36), for completion in the phrase box.

    >>> "last card" in base_phrases() and "最后一张" in base_phrases()
    True
    """
    out: list[str] = []
    for kind, english, chinese_words in FIXED.values():
        if kind == "say":
            out += [*english, *chinese_words]
    for very in range(4):
        for lang in LANGS:
            out += [Phrase("nice_day", very).text(lang), Phrase("thank_you", very).text(lang)]
    for rank in range(1, 14):
        out += [Phrase("spade", rank).text(lang) for lang in LANGS]
    for suit in Suit:
        out += [suit_name(suit).text(lang) for lang in LANGS]
    out.append(Phrase("poo_quoted").text("en"))
    return list(dict.fromkeys(out))


_FAILURE = re.compile(r"^(?:continued )?failure to say (.+)$")


def phrase_text(text: str, lang: str) -> str:
    """A phrase as said on the wire (either language), in ``lang`` when the
    game knows it; a secret rule's words stay as their author wrote them."""
    found = parse(text)
    if found is not None:
        return found.text(lang)
    fail = _FAILURE.match(text)
    if fail and lang == "zh":
        return f"未能说“{fail.group(1)}”"
    return text


class PhraseSuggester(Suggester):
    """Completes the phrase box from a live list (the base phrases and those
    penalties have taught this table)."""

    def __init__(self, phrases: Callable[[], list[str]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.phrases = phrases

    async def get_suggestion(self, value: str) -> str | None:
        return complete(value, self.phrases())


def complete(value: str, phrases: list[str]) -> str | None:
    """The first phrase that ``value`` begins (case-insensitively).

    >>> complete("las", ["Mao", "last card"])
    'last card'
    """
    folded = value.casefold()
    if not folded:
        return None
    for phrase in phrases:
        if phrase.casefold().startswith(folded) and len(phrase) > len(value):
            return value + phrase[len(value) :]
    return None


class MaoScreen(RoundNews, TableScreen):
    HAND = "#mao-hand"
    STORY = "#mao-feed"

    AUTO_FOCUS = ""  # keys go to the table; ``t`` focuses the phrase box (None would
    # inherit the app's "*" and focus the box when the screen comes back)
    BINDINGS: ClassVar[list[BindingType]] = [
        HELP_FIRST,
        Binding("left", "cursor(-1)", "◀", show=False),
        Binding("right", "cursor(1)", "▶", show=False),
        Binding("enter", "play", "play"),
        Binding("d", "draw", "draw"),
        Binding("t", "type", "type"),
        Binding("s", "say", "say"),
        Binding("backspace", "unsay", "unsay", show=False),
        Binding("c", "call", "call"),
        Binding("o", "point_of_order", "point of order"),
        Binding("m", "propose", "propose"),
        Binding("y", "vote(True)", "vote yes", show=False),
        Binding("n", "vote(False)", "vote no", show=False),
        Binding("w", "write_rule", "write rule"),
        Binding("escape", "cancel", "cancel", show=False),
        Binding("question_mark", "app.rules", "rules", show=False),  # F1 in the footer
    ]

    def __init__(self, seat: int, author: RuleAuthor | None = None) -> None:
        super().__init__(seat)
        self.author = author or RuleAuthor()
        self._adopt_failed = False
        self.state: MaoState | None = None
        self.words: list[str] = []  # said with the next play, draw or say
        self.mode: str | None = None  # call-seat, call-phrase, propose, propose-slot
        self.call_target = -1
        self.propose_action = ""
        self.learned: list[str] = []  # phrases penalties taught this table
        self.taught: list[str] = []  # the secret rules' penalty phrases seen
        self.penalties_seen = 0
        self.revealed_seen: set[int] = set()
        self.timer: tuple[str, float] | None = None  # purpose, when first seen
        self.timer_seconds = 10.0
        self.builder_open = False
        self.builder_offered: tuple[int, int] | None = None  # (round, rules) offered for
        self._shown: dict[str, Text] = {}  # what each line shows now (see _put)
        self._writable = False  # whether ``w`` is in the footer (check_action)
        self._to_end = False  # the feed scrolls to its end after the next refresh
        self.hold = TimerHold(self)
        self.news_init()

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="mao-table"):
            yield Static(id="mao-news", markup=False)
            yield Static(id="mao-status", markup=False)
            yield Static(id="mao-top", markup=False)
            yield Static(id="mao-seats", markup=False)
            yield Hand(id="mao-hand", picking=False)
            yield Static(id="mao-words", markup=False)
            yield Static(id="mao-rules", markup=False)
            yield Static(id="mao-vote", markup=False)
        yield RichLog(id="mao-feed", wrap=True, markup=False)
        yield Input(
            id="mao-say",
            placeholder=t(SAY_BOX, self.lang),
            suggester=PhraseSuggester(self.completions),
        )
        yield footer()  # fits the width: F1, ^q and F2 always shown

    def on_mount(self) -> None:
        relabel(self, self.lang)
        self.set_interval(0.25, self._tick)
        self.set_focus(None)
        self._show_all()

    def on_screen_suspend(self) -> None:
        self.hold.hold("away")  # the help or the rule builder covers the table

    def on_screen_resume(self) -> None:
        self.hold.release("away")

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, Input):
            self.hold.hold("typing")  # a phrase is being typed: the clock waits (play only)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if isinstance(event.widget, Input):
            self.hold.release("typing")

    def _who(self, seat: int) -> str:
        return seat_namer(self, self.seat, self.lang)(seat)

    # ------------------------------------------------------------------ from the app
    def refresh_table(self, snapshot: Any, game: Any) -> None:
        session = getattr(self.app, "session", None)
        if session is not None and session.player is None and not self._adopt_failed:
            # the author judges its own rules: this seat's session plays the
            # author's duties (verdicts, reveals, the commitment) like a bot's;
            # after a crash it first takes back the rules written before
            try:
                session.adopt_player(self.author)
            except SessionError as exc:  # a damaged secrets file of this peer
                self._adopt_failed = True  # said once; the screen stays usable
                said = t("your rules written before the crash cannot be judged: {reason}",
                         self.lang, reason=exc)  # fmt: skip
                self.app.notify(said, severity="error", timeout=60)
        self.view, self.state = snapshot.view, snapshot.state
        if self.state is not None and game is not None:
            self._round_over()
            self._note_timer(game)
            self._news()
        self._show_all()
        self._footer_keys()
        self._offer_builder()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``w`` is offered (in the footer, and works) only while you may
        write a rule: at 80 columns the footer has no room for a dead key."""
        if action == "write_rule":
            return self._writable
        return True

    def _footer_keys(self) -> None:
        state = self.state
        writable = state is not None and self.author.may_write(state, self.seat)
        if writable != self._writable:
            self._writable = writable
            self.refresh_bindings()

    def speak(self) -> None:
        """Say everything again in the app's language (after a switch)."""
        relabel(self, self.lang)
        self.query_one("#mao-say", Input).placeholder = t(SAY_BOX, self.lang)
        self._show_all()

    def story(self, line: str) -> None:
        line = chinese(line) if self.lang == "zh" else line
        self._feed(feed_line(line, self._who, self.lang))

    def _feed(self, line: str) -> None:
        """One more line in the feed, which then shows its end: RichLog's own
        scroll, made before a wrapped line's height is known, could stop a
        line short of the newest (seen at 80×24 and 120×40)."""
        feed = self.query_one("#mao-feed", RichLog)
        feed.write(line)
        if not self._to_end:
            self._to_end = True
            self.call_after_refresh(self._feed_end)

    def _feed_end(self) -> None:
        self._to_end = False
        self.query_one("#mao-feed", RichLog).scroll_end(animate=False)

    # ------------------------------------------------------------------ reading the state
    def completions(self) -> list[str]:
        """What the phrase box completes: taught phrases first, then the base ones."""
        return [*reversed(self.learned), *base_phrases()]

    def _hand(self) -> list[tuple[int, Card | None]]:
        if self.view is None:
            return []
        return [
            (h["position"], None if h["card"] is None else Card.parse(h["card"]))
            for h in self.view["hand"]
        ]

    def _note_timer(self, game: Any) -> None:
        assert self.state is not None
        timer = next((r for r in game.pending(self.state) if isinstance(r, Timer)), None)
        scale = getattr(self.app, "time_scale", 1.0)
        if timer is None:
            self.timer = None
            return
        self.timer_seconds = float(timer.seconds)
        if self.timer is None or self.timer[0] != timer.purpose:
            self.timer = (timer.purpose, time.monotonic())
            self._timer_held = self.hold.held_seconds()
        self._scale = scale

    def timer_left(self) -> float | None:
        """Game seconds left on the turn's timer (M23), None when stopped;
        it stops while the table's timers are held (:mod:`tui.screens.holding`)."""
        if self.timer is None:
            return None
        scale = getattr(self, "_scale", 1.0)
        held = self.hold.held_seconds() - getattr(self, "_timer_held", 0.0)
        elapsed = (time.monotonic() - self.timer[1] - held) / scale
        return max(0.0, self.timer_seconds - elapsed)

    def _news(self) -> None:
        """New penalties and revealed rules into the feed; phrases penalties taught."""
        state = self.state
        assert state is not None
        lang = self.lang
        fresh = min(len(state.notes), state.penalties - self.penalties_seen)
        self.penalties_seen = state.penalties
        for note in state.notes[len(state.notes) - fresh :] if fresh > 0 else ():
            line = t(
                "penalty: {who} “{phrase}” (+{n})",
                lang,
                who=self.names.who(note.target, lang),
                phrase=phrase_text(note.phrase, lang),
                n=note.cards,
            )
            if note.by >= 0:
                line += t(", called by {who}", lang, who=self.names.who(note.by, lang))
            if note.slot >= 0:
                line += t(", by rule {slot}", lang, slot=note.slot)
                self._learn(note.phrase)
            self._feed(line)
        for slot, rule in enumerate(state.rules):
            if (
                rule.status == "revealed"
                and rule.rule is not None
                and slot not in self.revealed_seen
            ):
                self.revealed_seen.add(slot)
                text = self._rule_words(rule.rule) + "  " + self._checked(rule)
                self._feed(
                    t(
                        "rule {slot} ({who}) revealed: {text}",
                        lang,
                        slot=slot,
                        who=self._who(rule.author),
                        text=text,
                    )
                )

    def _learn(self, phrase: str) -> None:
        """A secret rule's penalty phrase (to call it) and the words it asks
        for (to say them), both completed in the phrase box from now on."""
        if phrase not in self.taught:
            self.taught.append(phrase)
        said = _FAILURE.match(phrase)
        for words in (phrase, said.group(1) if said else None):
            if words and words not in self.learned:
                self.learned.append(words)

    def _rule_words(self, rule: Rule) -> str:
        return rule_text(str(rule)) if self.lang == "zh" else str(rule)

    def _checked(self, rule: Any) -> str:
        if rule.faults:
            return t("✗ {faults}", self.lang, faults="; ".join(rule.faults))
        return t("✓ {n} verdicts re-checked", self.lang, n=len(judged_of(rule)))

    # ------------------------------------------------------------------ showing
    def _show_all(self) -> None:
        self._show_news()
        self._show_status()
        self._show_table()
        self._show_hand()
        self._show_words()
        self._show_rules()

    def _show_status(self) -> None:
        lang, view, state = self.lang, self.view, self.state
        status = Text(t("Mao", lang), style="bold")
        if view is None or state is None:
            self._put("mao-status", status + Text(" · " + t("dealing…", lang)))
            return
        status += Text(" · " + t("round {n}", lang, n=view["round"] + 1))
        status += Text(" · " + t("you are {name}", lang, name=self.names.name(self.seat, lang)))
        turn = view["turn"]
        if view["point_of_order"] >= 0:
            enders = " / ".join(Phrase(e).text(lang) for e in sorted(POO_ENDERS))
            status += Text(" · ")
            status += Text(
                t(
                    POO_PAUSED,
                    lang,
                    who=self._who(view["point_of_order"]),
                    enders=enders,
                ),
                style="bold reverse yellow",
            )
        elif turn is not None:
            whose = (
                t("your turn", lang)
                if turn == self.seat
                else t("{who}'s turn", lang, who=self._who(turn))
            )
            status += Text(" · ") + Text(whose, style="bold green" if turn == self.seat else "")
            left = self.timer_left()
            if left is not None:
                style = "bold red" if left < 4 else "bold"
                status += Text("  " + t("⏱ {left} s", lang, left=f"{left:.0f}"), style=style)
                if self.hold.holding:  # play: the clock waits for you (screens.holding)
                    status += Text(" " + t("(held)", lang), style="bold")
        arrow = "↻ " if view["direction"] == "clockwise" else "↺ "
        status += Text(" · " + arrow + t(view["direction"], lang))
        self._put("mao-status", status)

    def _show_table(self) -> None:
        lang, view, state = self.lang, self.view, self.state
        if view is None or state is None:
            return
        top = Text(t("top card", lang) + ": ")
        top += card_text(None if view["top"] is None else Card.parse(view["top"]))
        if view["suit"] >= 0:
            suit = "♠♥♦♣"[view["suit"]]
            top += Text(" " + t("suit in force: {suit}", lang, suit=suit), style="bold magenta")
        if view["chain"]:
            top += Text(" · " + t("7 chain: {n}", lang, n=view["chain"]), style="bold")
        top += Text(" · " + t("draw pile {n}", lang, n=view["draw_pile"]))
        top += Text(" · " + t("discard pile {n}", lang, n=len(state.pile)))
        self._put("mao-top", top)
        seats = Text()
        for s in range(state.seats):
            here = "▶" if view["turn"] == s else " "
            who = self._who(s)
            part = f"{here}{who}: {t('{n} cards', lang, n=state.hand_size(s))}"
            if state.wins[s]:
                part += f" ★{t('won {n}', lang, n=state.wins[s])}"
            if state.out[s]:
                part += f" ({t('out', lang)})"
            seats += Text(part + "  ", style="bold" if view["turn"] == s else "")
        self._put("mao-seats", seats)

    def _show_hand(self) -> None:
        self._hand_widget().hold(self._hand())

    def _put(self, name: str, text: Text) -> None:
        """Show ``text`` in the line ``name``, unless it shows it already (an
        update lays the whole screen out again: the status line is shown four
        times a second, but its timer changes once a second)."""
        if self._shown.get(name) == text:
            return
        self._shown[name] = text
        self.query_one(f"#{name}", Static).update(text)

    def _show_words(self) -> None:
        lang = self.lang
        said = " ".join(f"“{w}”" for w in self.words) or t("(none: t types a phrase)", lang)
        line = Text(t("your words: {words}", lang, words=said))
        if self.view is not None and self.view["owed"]:
            owed = " ".join(f"“{phrase_text(o, lang)}”" for o in self.view["owed"])
            line += Text("  " + t("you owe: {words}", lang, words=owed), style="bold red")
        prompt = self._prompt()
        if prompt:
            line = Text(prompt, style="bold cyan")
        self._put("mao-words", line)

    def _prompt(self) -> str | None:
        lang, state = self.lang, self.state
        if self.mode == "call-seat" and state is not None:
            seats = " · ".join(f"{s} {self._who(s)}" for s in range(state.seats))
            return t("call a penalty on whom? {menu} (esc cancels)", lang, menu=seats)
        if self.mode == "call-phrase":
            menu = "  ".join(f"{i} {p}" for i, p in enumerate(self.call_menu(), 1))
            if self.words or self.query_one("#mao-say", Input).value:
                menu += "  " + t("0 your words", lang)
            who = self._who(self.call_target)
            return t("call on {who}, which phrase? {menu}", lang, who=who, menu=menu)
        if self.mode == "propose":
            return t(
                PROPOSE_MENU,
                lang,
            )
        if self.mode == "propose-slot":
            return t("which rule? (its number)", lang)
        if state is not None and state.awaiting_rule >= 0:
            if state.awaiting_rule != self.seat:
                who = self._who(state.awaiting_rule)
                return t("waiting for {who} to write a secret rule", lang, who=who)
            if self.author.may_write(state, self.seat):
                return t("you won the round: write your secret rule (w)", lang)
            return t("your rule is on its way to the table", lang)
        return None

    def _show_rules(self) -> None:
        lang, state = self.lang, self.state
        text = Text(t("secret rules:", lang) + " ", style="bold")
        if state is None or not state.rules:
            text += Text(t("none yet", lang), style="dim")
        else:
            mine = self.author.mine(state, self.seat) if self.author.written else {}
            parts = []
            for slot, rule in enumerate(state.rules):
                if rule.rule is not None:
                    part = t(
                        "rule {slot} ({who}): {text}",
                        lang,
                        slot=slot,
                        who=self._who(rule.author),
                        text=self._rule_words(rule.rule),
                    )
                    part += " " + self._checked(rule)
                elif slot in mine:
                    part = t(
                        "rule {slot} (yours): {text}", lang, slot=slot,
                        text=self._rule_words(mine[slot]),
                    )  # fmt: skip
                else:
                    part = t("rule {slot} ({who}): ?", lang, slot=slot, who=self._who(rule.author))
                if rule.status == "dropped":
                    part += f" ({t('dropped', lang)})"
                parts.append(part)
            text += Text(" · ".join(parts))
        self._put("mao-rules", text)
        vote = Text()
        p = None if state is None else state.proposal
        if p is not None:
            if p.action == "end":
                what = t("end the game", lang)
            else:
                what = t(f"{p.action} rule {{slot}}", lang, slot=p.slot)
            vote = Text(
                t(
                    VOTE_LINE,
                    lang,
                    who=self.names.who(p.yes[0], lang),
                    what=what,
                    yes=self.names.listed(p.yes, lang) if p.yes else "—",
                    no=self.names.listed(p.no, lang) if p.no else "—",
                ),
                style="bold",
            )
            if self.seat not in p.yes + p.no:
                vote += Text(t(" · y/n to vote", lang), style="bold cyan")
        self._put("mao-vote", vote)

    def _tick(self) -> None:
        if self.view is not None:
            self._show_news()
            self._show_status()

    # ------------------------------------------------------------------ the rule builder
    def _offer_builder(self) -> None:
        """Open the builder by itself once when this seat has a rule to write."""
        state = self.state
        if state is None or self.builder_open or not self.author.may_write(state, self.seat):
            return
        key = (state.round, len(state.rules))
        if self.builder_offered == key:
            return
        self.builder_offered = key
        self.action_write_rule()

    def action_write_rule(self) -> None:
        state = self.state
        if state is None or not self.author.may_write(state, self.seat) or self.builder_open:
            self.notify(t("you may not write a rule now", self.lang), severity="warning")
            return
        self.builder_open = True
        others = self.author.others(state, self.seat)
        self.app.push_screen(RuleBuilder(self.lang, others), callback=self._rule_written)

    def _rule_written(self, result: Rule | str | None) -> None:
        self.builder_open = False
        state = self.state
        if result is None or state is None:
            return  # later: ``w`` reopens it
        try:
            self.author.commit(state, self.seat, None if result == "pass" else result)  # type: ignore[arg-type]
        except RuleError as exc:  # the table changed since the builder checked it
            self.notify(str(exc), severity="error")
            return
        self._show_words()
        self._footer_keys()

    # ------------------------------------------------------------------ acting
    def _take_words(self) -> tuple[str, ...]:
        words = tuple(self.words)
        self.words = []
        self._show_words()
        return words

    def action_play(self) -> None:
        under = self._hand_widget().under_cursor()
        if under is None:
            self.notify(t("no card is under the cursor", self.lang), severity="warning")
            return
        position, card = under
        if card is None:
            self.notify(t("that card's face is not known yet", self.lang), severity="warning")
            return
        self._submit(PlayCard(self.seat, position, card, self._take_words()))

    def action_draw(self) -> None:
        self._submit(Draw(self.seat, self._take_words()))

    def action_say(self) -> None:
        words = self._take_words()
        if not words:
            self.notify(t("nothing to say: t types a phrase", self.lang), severity="warning")
            return
        self._submit(Say(self.seat, words))

    def action_type(self) -> None:
        self.query_one("#mao-say", Input).focus()

    def action_unsay(self) -> None:
        if self.words:
            self.words.pop()
            self._show_words()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        words = message.value.strip()
        message.input.value = ""
        if words:
            self.words.append(words)
        self.set_focus(None)
        self._show_words()

    def action_cancel(self) -> None:
        if self.mode is None and self.focused is None and self.over_args is not None:
            again = self.game_over(*self.over_args, self.over_names)
            self.app.push_screen(again)  # back to the result
            return
        self.mode = None
        self.set_focus(None)
        self._show_words()

    def action_point_of_order(self) -> None:
        """M32: call a point of order; during one, end it (M35)."""
        poo = self.view is not None and self.view["point_of_order"] >= 0
        phrase = Phrase("poo_over" if poo else "point_of_order")
        self._submit(Say(self.seat, (phrase.text(self.lang),)))

    def call_menu(self) -> list[str]:
        """The penalty phrases offered for a call: taught ones, then the base ones."""
        taught = list(reversed(self.taught))
        base = [Phrase.from_key(k).text(self.lang) for k in CALLS]
        return [*taught[:LEARNED_IN_MENU], *base][:9]

    def action_call(self) -> None:
        self.mode = "call-seat"
        self._show_words()

    def action_propose(self) -> None:
        self.mode = "propose"
        self._show_words()

    def action_vote(self, yes: bool) -> None:
        if self.state is None or self.state.proposal is None:
            self.notify(t("there is no vote open", self.lang), severity="warning")
            return
        self._submit(Vote(self.seat, yes))

    def on_key(self, event: events.Key) -> None:
        """The second and third key of a call or a proposal."""
        if self.mode is None or self.state is None:
            return
        key, mode = event.key, self.mode
        if key == "escape":
            return  # the cancel binding
        event.stop()
        event.prevent_default()
        digit = int(key) if key.isdigit() and len(key) == 1 else None
        if mode == "call-seat" and digit is not None and digit < self.state.seats:
            self.call_target, self.mode = digit, "call-phrase"
        elif mode == "call-phrase" and digit is not None:
            menu = self.call_menu()
            if digit == 0:
                typed = self.query_one("#mao-say", Input).value.strip()
                phrase = typed or (self.words.pop() if self.words else "")
                self.query_one("#mao-say", Input).value = ""
            else:
                phrase = menu[digit - 1] if digit <= len(menu) else ""
            if phrase:
                self._submit(Call(self.seat, self.call_target, phrase))
            self.mode = None
        elif mode == "propose" and key == "e":
            self._submit(Propose(self.seat, "end"))
            self.mode = None
        elif mode == "propose" and key in ("d", "g"):
            self.propose_action, self.mode = ("drop" if key == "d" else "change"), "propose-slot"
        elif mode == "propose-slot" and digit is not None:
            self._submit(Propose(self.seat, self.propose_action, digit))
            self.mode = None
        else:
            self.mode = None
        self._show_words()
