"""The Mao rule builder (M27): the winner of a round composes a secret rule
from the rule language (``engines.mao_rules``) with menus — a trigger, up to
two conditions, up to two effects, a penalty phrase — and never types code.
The rule is shown in words as it is built; a rule the engine refuses
(malformed, contradictory, game-breaking, unfair to the base rules) is shown
with the engine's reason and cannot be committed.

Keys: ↑/↓ choose a line, ←/→ change what it is, ``[``/``]`` change its value
(a rank, a suit, a count, a phrase from the menu), ``n`` negates a
condition, ``t`` types your own words for the line's phrase, enter commits,
``x`` adds no rule, escape leaves the builder for later (``w`` reopens it).

>>> draft = RuleDraft()
>>> draft.error("en")
'a rule that penalises needs a penalty phrase (M27)'
>>> draft.row = 3; draft.turn(2); print(draft.build())
When a card is played: the player must say “I love you”
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from engines.mao_rules import (
    COUNTED,
    EFFECTS,
    TRIGGERS,
    VALUE_RANGES,
    Cond,
    Effect,
    Rule,
    RuleError,
)
from engines.mao_rules import validate as validate_rule

from ..story import rule_text
from ..words import register, t
from .common import relabel

TESTS = (
    "suit",
    "rank",
    "color",
    "parity",
    "top_suit",
    "top_rank",
    "top_color",
    "same_suit",
    "same_rank",
    "same_color",
    "rank_step",
    "suit_run",
    "hand",
    "direction",
    "chain",
    "said",
)
"""The condition tests in menu order (``engines.mao_rules``)."""

PHRASES = {
    "en": (
        "I love you",
        "two fat ladies",
        "thank the deck",
        "snap",
        "going up",
        "sorry",
        "colour clash",
        "no crowds",
        "wrong way",
        "hello",
    ),
    "zh": (
        "我爱你",
        "两位胖女士",
        "谢谢牌堆",
        "啪",
        "往上走",
        "对不起",
        "颜色冲突",
        "别挤",
        "走错方向",
        "你好",
    ),
}
"""Words offered for a rule's phrases, in the table's language (or type your own)."""

ROWS = ("When", "If", "and if", "Then", "and then", "Penalty phrase")

register(
    {
        "Write a secret rule (M27): fair to every player": "写一条秘密规则（M27）：对所有人公平",
        "When": "何时",
        "If": "如果",
        "and if": "并且如果",
        "Then": "那么",
        "and then": "然后",
        "Penalty phrase": "罚语",
        "a card is played": "出牌时",
        "a player draws": "摸牌时",
        "someone speaks": "有人说话时",
        "(no condition)": "（无条件）",
        "(no further effect)": "（无其他效果）",
        "(none)": "（无）",
        "not": "非",
        "In words:": "规则原文：",
        "✓ fair and playable: enter commits it": "✓ 公平可玩：按回车提交",
        "✗ refused: {reason}": "✗ 不可用：{reason}",
        "type words for this line, enter sets them": "为这一行输入词语，回车确定",
        "↑↓ line · ←→ change · [ ] value · n not · t type words · enter commit · "
        "x no rule · esc later": "↑↓ 选行 · ←→ 更改 · [ ] 取值 · n 取反 · t 输入词语 · "
        "回车 提交 · x 不加规则 · esc 稍后",
        "line": "选行",
        "change": "更改",
        "value": "取值",
        "commit": "提交",
        "no rule": "不加规则",
        "later": "稍后",
        "type": "输入",
        # the tests and effects, as the menus name them
        "the card's suit": "这张牌的花色",
        "the card's rank": "这张牌的点数",
        "the card's colour": "这张牌的颜色",
        "even or odd rank": "点数奇偶",
        "the suit below": "下面那张牌的花色",
        "the rank below": "下面那张牌的点数",
        "the colour below": "下面那张牌的颜色",
        "same suit as below": "与下面同花色",
        "same rank as below": "与下面同点数",
        "same colour as below": "与下面同颜色",
        "rank step from below": "与下面的点数差",
        "a run of one suit": "同花色连出",
        "cards left in hand": "手里剩下的牌数",
        "direction of play": "出牌方向",
        "length of the 7 chain": "7 连的长度",
        "someone says": "有人说",
        "the card is forbidden": "这张牌不许出",
        "that is penalised": "要受罚",
        "the player must say": "出牌者必须说",
        "the next player misses turns": "下家停几轮",
        "play reverses": "出牌方向反转",
        "the same player plays again": "同一玩家再出一张",
        "the next player draws": "下家摸牌",
        "the player draws": "出牌者摸牌",
        "black": "黑色",
        "red": "红色",
        "even": "偶数",
        "odd": "奇数",
        "clockwise": "顺时针",
        "counter-clockwise": "逆时针",
    }
)

_TEST_NAMES = {
    "suit": "the card's suit",
    "rank": "the card's rank",
    "color": "the card's colour",
    "parity": "even or odd rank",
    "top_suit": "the suit below",
    "top_rank": "the rank below",
    "top_color": "the colour below",
    "same_suit": "same suit as below",
    "same_rank": "same rank as below",
    "same_color": "same colour as below",
    "rank_step": "rank step from below",
    "suit_run": "a run of one suit",
    "hand": "cards left in hand",
    "direction": "direction of play",
    "chain": "length of the 7 chain",
    "said": "someone says",
}
_EFFECT_NAMES = {
    "forbid": "the card is forbidden",
    "penalize": "that is penalised",
    "require": "the player must say",
    "skip": "the next player misses turns",
    "reverse": "play reverses",
    "again": "the same player plays again",
    "draw_next": "the next player draws",
    "draw_self": "the player draws",
}
_TRIGGER_NAMES = {"play": "a card is played", "draw": "a player draws", "say": "someone speaks"}
_RANKS = {1: "A", 11: "J", 12: "Q", 13: "K"}


# the engine's reasons to refuse a rule (engines.mao_rules.validate), in Chinese
_REFUSALS_ZH: tuple[tuple[str, str], ...] = (
    (r"an effect appears twice", "同一个效果出现了两次"),
    (r"a condition test appears twice; list several values in one instead",
     "同一个条件出现了两次；请在一个条件里列出几个值"),
    (r"card conditions only apply to plays, not to '(\w+)'",
     "牌的条件只适用于出牌，不适用于「{0}」"),
    (r"only a play can be forbidden \(drawing is always allowed, M4\)",
     "只有出牌可以被禁止（摸牌总是允许的，M4）"),
    (r"a forbidden play has no other effect: the card goes back",
     "被禁止的出牌没有别的效果：牌退回手里"),
    (r"drawing is always allowed \(M4\): it cannot be penalised or repeated",
     "摸牌总是允许的（M4）：不能罚，也不能重复"),
    (r"a rule that penalises needs a penalty phrase \(M27\)",
     "会罚牌的规则需要一句罚牌用语（M27）"),
    (r"this rule needs a penalty phrase", "这条规则需要一句罚牌用语"),
    (r"'reverse' and 'again' together: the same player plays either way",
     "「方向反转」和「再出一次」一起用：反正还是同一个人出牌"),
    (r"“(.+)” is a base penalty phrase", "“{0}”是基本规则的罚牌用语"),
    (r"a secret rule may not involve saying “Mao” \(M25\)", "秘密规则不能涉及说“毛”（M25）"),
    (r"“(.+)” is already a base penalty phrase; choose another",
     "“{0}”已经是基本规则的罚牌用语；请另选一句"),
    (r"a rule triggered by speech cannot require more speech", "由说话触发的规则不能再要求说话"),
    (r"a rule on speech needs the phrase it is about \('said'\)",
     "关于说话的规则要指明是哪句话（「有人说」）"),
    (r"the base rules require “(.+)”; it cannot be penalised", "基本规则要求说“{0}”；不能罚它"),
    (r"its conditions contradict each other: it can never apply",
     "条件互相矛盾：这条规则永远不会生效"),
    (r"one rule requires “(.+)” and another penalises it", "一条规则要求说“{0}”，另一条却罚它"),
    (r"penalty phrase too long", "罚牌用语太长"),
    (r"game-breaking( together with your other rules)?: on (\S+) no card could ever be played "
     r"\(hand (.+), (clockwise|counter-clockwise)\)",
     "会让游戏卡死{0}：顶牌是 {1} 时永远出不了牌（手牌 {2}，{3}）"),
)  # fmt: skip
_TRIGGERS_ZH = {"play": "出牌", "draw": "摸牌", "say": "说话"}


def refusal_text(reason: str, lang: str) -> str:
    """The engine's reason to refuse a rule, in ``lang`` (as it is, when no
    wording is known).

    >>> refusal_text("this rule needs a penalty phrase", "zh")
    '这条规则需要一句罚牌用语'
    >>> refusal_text("card conditions only apply to plays, not to 'draw'", "zh")
    '牌的条件只适用于出牌，不适用于「摸牌」'
    """
    if lang != "zh":
        return reason
    for pattern, wording in _REFUSALS_ZH:
        m = re.fullmatch(pattern, reason)
        if m is None:
            continue
        parts = list(m.groups())
        if pattern.startswith("card conditions"):
            parts = [_TRIGGERS_ZH.get(parts[0], parts[0])]
        elif pattern.startswith("game-breaking"):
            parts[0] = "（和你的其他规则一起）" if parts[0] else ""
            parts[3] = "顺时针" if parts[3] == "clockwise" else "逆时针"
        return wording.format(*parts)
    return reason


def _value_text(test: str, value: int, lang: str) -> str:
    if test in ("suit", "top_suit"):
        return "♠♥♦♣"[value]
    if test in ("rank", "top_rank"):
        return _RANKS.get(value, str(value))
    if test in ("color", "top_color"):
        return t(("black", "red")[value], lang)
    if test == "parity":
        return t(("even", "odd")[value], lang)
    if test == "direction":
        return t(("clockwise", "counter-clockwise")[value], lang)
    if test == "rank_step":
        return f"+{value}"
    return str(value)


@dataclass
class CondDraft:
    test: int = -1  # index into TESTS, -1: no condition
    value: int = 0  # offset into the test's value range
    negate: bool = False
    phrase: int = 0  # index into the phrase menu (``said``)


@dataclass
class EffectDraft:
    do: int = -1  # index into EFFECTS, -1: no effect
    n: int = 1
    phrase: int = 0


@dataclass
class RuleDraft:
    """The builder's choices (menus only) and the rule they make."""

    trigger: int = 0
    conds: list[CondDraft] = field(default_factory=lambda: [CondDraft(), CondDraft()])
    effects: list[EffectDraft] = field(default_factory=lambda: [EffectDraft(do=0), EffectDraft()])
    penalty: int = -1  # index into the phrase menu, -1: none
    typed: list[str] = field(default_factory=list)  # the person's own words, menu extras
    lang: str = "en"
    row: int = 0

    # -- the menus ------------------------------------------------------------------
    def phrases(self) -> list[str]:
        return [*PHRASES.get(self.lang, PHRASES["en"]), *self.typed]

    def _phrase(self, index: int) -> str:
        menu = self.phrases()
        return menu[index % len(menu)]

    def turn(self, step: int) -> None:
        """←/→ on the current line: the next trigger, test, effect or phrase."""
        row = self.row
        if row == 0:
            self.trigger = (self.trigger + step) % len(TRIGGERS)
        elif row in (1, 2):
            c = self.conds[row - 1]
            c.test = (c.test + 1 + step) % (len(TESTS) + 1) - 1
            c.value, c.negate = 0, False
        elif row in (3, 4):
            e = self.effects[row - 3]
            first = 0 if row == 3 else -1  # the first effect is always there
            span = len(EFFECTS) - first
            e.do = (e.do - first + step) % span + first
            e.n = 1
        else:
            self.penalty = (self.penalty + 1 + step) % (len(self.phrases()) + 1) - 1

    def value(self, step: int) -> None:
        """``[``/``]``: the line's value (rank, suit, count, phrase)."""
        row = self.row
        if row in (1, 2):
            c = self.conds[row - 1]
            if c.test < 0:
                return
            test = TESTS[c.test]
            if test == "said":
                c.phrase = (c.phrase + step) % len(self.phrases())
            elif test in VALUE_RANGES:
                lo, hi = VALUE_RANGES[test]
                c.value = (c.value + step) % (hi - lo + 1)
        elif row in (3, 4):
            e = self.effects[row - 3]
            if e.do < 0:
                return
            do = EFFECTS[e.do]
            if do in COUNTED:
                lo, hi = COUNTED[do]
                e.n = (e.n - lo + step) % (hi - lo + 1) + lo
            elif do == "require":
                e.phrase = (e.phrase + step) % len(self.phrases())
        elif row == 5:
            self.turn(step)

    def negate(self) -> None:
        if self.row in (1, 2) and self.conds[self.row - 1].test >= 0:
            c = self.conds[self.row - 1]
            c.negate = not c.negate

    def type_words(self, words: str) -> None:
        """The person's own words for the current line's phrase."""
        words = words.strip()
        if not words:
            return
        if words not in self.phrases():
            self.typed.append(words)
        index = self.phrases().index(words)
        if self.row in (1, 2):
            c = self.conds[self.row - 1]
            c.test, c.phrase = TESTS.index("said"), index
        elif self.row in (3, 4):
            e = self.effects[self.row - 3]
            e.do, e.phrase = EFFECTS.index("require"), index
        else:
            self.penalty = index

    # -- the rule ---------------------------------------------------------------------
    def build(self) -> Rule:
        """The rule the menus make (raises RuleError with the engine's reason)."""
        conds = []
        for c in self.conds:
            if c.test < 0:
                continue
            test = TESTS[c.test]
            if test == "said":
                conds.append(Cond(test, phrase=self._phrase(c.phrase), negate=c.negate))
            elif test in VALUE_RANGES:
                lo, _hi = VALUE_RANGES[test]
                conds.append(Cond(test, (lo + c.value,), negate=c.negate))
            else:
                conds.append(Cond(test, negate=c.negate))
        effects = []
        for e in self.effects:
            if e.do < 0:
                continue
            do = EFFECTS[e.do]
            if do in COUNTED:
                effects.append(Effect(do, e.n))
            elif do == "require":
                effects.append(Effect(do, phrase=self._phrase(e.phrase)))
            else:
                effects.append(Effect(do))
        phrase = "" if self.penalty < 0 else self._phrase(self.penalty)
        return Rule(TRIGGERS[self.trigger], tuple(conds), tuple(effects), phrase)

    def error(self, lang: str, others: tuple[Rule, ...] = ()) -> str | None:
        """The engine's reason to refuse the rule, or None."""
        try:
            validate_rule(self.build(), others)
        except RuleError as exc:
            return refusal_text(str(exc), lang)
        return None

    def lines(self, lang: str) -> list[str]:
        """One line per menu row, as shown."""
        out = [t(_TRIGGER_NAMES[TRIGGERS[self.trigger]], lang)]
        for c in self.conds:
            if c.test < 0:
                out.append(t("(no condition)", lang))
                continue
            test = TESTS[c.test]
            text = t(_TEST_NAMES[test], lang)
            if test == "said":
                text += f" “{self._phrase(c.phrase)}”"
            elif test in VALUE_RANGES:
                text += ": " + _value_text(test, VALUE_RANGES[test][0] + c.value, lang)
            if c.negate:
                text = f"{t('not', lang)} ({text})"
            out.append(text)
        for e in self.effects:
            if e.do < 0:
                out.append(t("(no further effect)", lang))
                continue
            do = EFFECTS[e.do]
            text = t(_EFFECT_NAMES[do], lang)
            if do in COUNTED:
                text += f": {e.n}"
            elif do == "require":
                text += f" “{self._phrase(e.phrase)}”"
            out.append(text)
        out.append(t("(none)", lang) if self.penalty < 0 else f"“{self._phrase(self.penalty)}”")
        return out

    def words(self, lang: str) -> str:
        """The rule in words (the engine's wording; in Chinese for ``zh``)."""
        try:
            text = str(self.build())
        except RuleError as exc:
            return str(exc)
        return rule_text(text) if lang == "zh" else text


class RuleBuilder(ModalScreen[Rule | str | None]):
    """Compose a secret rule with menus. Dismissed with the rule to commit,
    ``"pass"`` to add no rule, or None to come back later."""

    AUTO_FOCUS = ""  # keys go to the menus (None inherits the app's "*": the hidden
    # words box took the focus, and ←/→ and [ ] typed into it)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "row(-1)", "line", show=False),
        Binding("down", "row(1)", "line", show=False),
        Binding("left", "turn(-1)", "change", show=False),
        Binding("right", "turn(1)", "change", show=False),
        Binding("left_square_bracket", "value(-1)", "value", show=False),
        Binding("right_square_bracket", "value(1)", "value", show=False),
        Binding("n", "negate", "not"),
        Binding("t", "type", "type"),
        Binding("enter", "commit", "commit"),
        Binding("x", "pass", "no rule"),
        Binding("escape", "later", "later"),
    ]

    def __init__(self, lang: str = "en", others: tuple[Rule, ...] = ()) -> None:
        super().__init__()
        self.lang = lang
        self.others = others
        self.draft = RuleDraft(lang=lang)

    def compose(self) -> ComposeResult:
        lang = self.lang
        with Vertical(id="rule-builder"):
            yield Static(
                t("Write a secret rule (M27): fair to every player", lang),
                id="rb-title",
                markup=False,
            )
            yield Static(id="rb-rows", markup=False)
            yield Static(id="rb-words", markup=False)
            yield Static(id="rb-verdict", markup=False)
            yield Input(
                id="rb-type", placeholder=t("type words for this line, enter sets them", lang)
            )
            yield Static(
                t(
                    "↑↓ line · ←→ change · [ ] value · n not · t type words · enter commit · "
                    "x no rule · esc later",
                    lang,
                ),
                classes="hint", markup=False,
            )

    def on_mount(self) -> None:
        relabel(self, self.lang)
        self.query_one("#rb-type", Input).display = False
        self.show()

    def show(self) -> None:
        lang, draft = self.lang, self.draft
        rows = Text()
        for i, (label, value) in enumerate(zip(ROWS, draft.lines(lang), strict=True)):
            here = i == draft.row
            rows += Text("▶ " if here else "  ", style="bold yellow")
            rows += Text(f"{t(label, lang)}: ", style="bold" if here else "")
            rows += Text(value + ("\n" if i < len(ROWS) - 1 else ""))
        self.query_one("#rb-rows", Static).update(rows)
        words = Text(t("In words:", lang) + " ", style="bold") + Text(draft.words(lang))
        self.query_one("#rb-words", Static).update(words)
        error = self.error()
        if error is None:
            verdict = Text(t("✓ fair and playable: enter commits it", lang), style="green")
        else:
            verdict = Text(t("✗ refused: {reason}", lang, reason=error), style="bold red")
        self.query_one("#rb-verdict", Static).update(verdict)

    def error(self) -> str | None:
        return self.draft.error(self.lang, self.others)

    # -- actions ------------------------------------------------------------------------
    def action_row(self, step: int) -> None:
        self.draft.row = (self.draft.row + step) % len(ROWS)
        self.show()

    def action_turn(self, step: int) -> None:
        self.draft.turn(step)
        self.show()

    def action_value(self, step: int) -> None:
        self.draft.value(step)
        self.show()

    def action_negate(self) -> None:
        self.draft.negate()
        self.show()

    def action_type(self) -> None:
        box = self.query_one("#rb-type", Input)
        box.display = True
        box.value = ""
        box.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.draft.type_words(message.value)
        message.input.display = False
        self.set_focus(None)
        self.show()

    def action_commit(self) -> None:
        error = self.error()
        if error is not None:
            self.notify(t("✗ refused: {reason}", self.lang, reason=error), severity="error")
            self.show()
            return
        self.dismiss(self.draft.build())

    def action_pass(self) -> None:
        self.dismiss("pass")

    def action_later(self) -> None:
        box = self.query_one("#rb-type", Input)
        if box.display:
            box.display = False
            self.set_focus(None)
            return
        self.dismiss(None)
