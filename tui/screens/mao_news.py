"""Mao in a player's words, beyond the table itself: the round-over banner
(M26/M27), what a running 7 chain asks of the next player (M9), feed lines
without the engine's ids (a timer's purpose, a rule's commitment hash), and
at the end every secret rule with the plays it judged (M27/M28).

>>> name = lambda s: ["you", "bob", "carol"][s]
>>> feed_line("time up: turn 0.16 seat 1", name, "en")
'time up: bob did not play or draw in time (M23)'
>>> feed_line("seat 2 adds a secret rule 7d5ecdc183eb…", name, "en")
'carol adds a secret rule'
>>> feed_line("座位1 加了一条秘密规则 7d5ecdc183eb…", name, "zh")
'bob 加了一条秘密规则'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from engines.mao_state import MaoState, judged_of
from engines.phrases import Phrase, parse

from ..story import rule_text
from ..words import register, t

Namer = Callable[[int], str]

register(
    {
        "time up: {who} did not play or draw in time (M23)": (
            "时间到：{who} 没有按时出牌或摸牌（M23）"
        ),
        "{who} adds a secret rule": "{who} 加了一条秘密规则",
        "{who} adds no rule": "{who} 没有加规则",
        "── round {n} ──": "── 第 {n} 轮 ──",
        "Round {n} is over: {who} said “Mao” and won it.": (
            "第 {n} 局结束：{who} 说了“毛”，赢了这一局。"
        ),
        "You write a secret rule (M27).": "你来写一条秘密规则（M27）。",
        "{who} now writes a secret rule (M27).": "{who} 现在写一条秘密规则（M27）。",
        "The next round starts in {left} s; its timer waits until then.": (
            "下一局 {left} 秒后开始；在那之前计时器不走。"
        ),
        "The next round starts in {left} s.": "下一局 {left} 秒后开始。",
        "7 chain of {n}: play a 7 and say “{more}”, or draw (d) saying “{thanks}” "
        "and take {cards} (M9)": "7 连 {n} 张：出一张 7 并说“{more}”，或摸牌（d）并说“{thanks}”，"
        "拿 {cards} 张（M9）",
        "7 chain of {n}: {who} must play a 7 or say “{thanks}” and take {cards} (M9)": (
            "7 连 {n} 张：{who} 要出 7，否则说“{thanks}”并拿 {cards} 张（M9）"
        ),
        "The secret rules:": "秘密规则：",
        "rule {slot} by {who}: {text}": "规则 {slot}（{who} 写的）：{text}",
        "rule {slot} by {who}: never revealed": "规则 {slot}（{who} 写的）：没有公开",
        "  judged {n} events; what it did:": "  裁决了 {n} 个事件；它做了：",
        "  judged {n} events, none of which it changed": "  裁决了 {n} 个事件，一个也没改变",
        "    … and {n} more": "    ……还有 {n} 个",
        "{who} played {card}": "{who} 出了 {card}",
        "{who} drew": "{who} 摸牌",
        "{who} spoke": "{who} 说话",
        "a call on {who}": "罚 {who}",
        "{who} “{phrase}” +{n}": "{who}“{phrase}”+{n}",
        "the card went back": "牌退回",
        "{who} misses {n}": "{who} 停 {n} 次",
        "play reversed": "方向反转",
        "the same player again": "同一玩家再出",
        "{who} draws {n}": "{who} 摸 {n} 张",
        "the call was right": "罚得对",
        "{who}'s words were allowed": "{who} 的话是允许的",
        "Rounds won: {wins}.": "各人赢的局数：{wins}。",
    }
)

_TIME_UP = re.compile(r"^time up: turn [\d.]+ seat (\d+)$")
_TIME_UP_ZH = re.compile(r"^时间到：座位(\d+) 超时$")
_ADDS = re.compile(r"^seat (\d+) adds a secret rule \S+$")
_ADDS_ZH = re.compile(r"^座位(\d+) 加了一条秘密规则 \S+$")
_NO_RULE = re.compile(r"^seat (\d+) adds no rule$")
SHOWN_JUDGED = 4
"""Verdicts that did something, shown per rule at the end (the rest are counted)."""


def feed_line(line: str, name: Namer, lang: str) -> str:
    """A story line without engine ids (a timer's purpose, a commitment hash)."""
    for pattern, key in (
        (_TIME_UP, "time up: {who} did not play or draw in time (M23)"),
        (_TIME_UP_ZH, "time up: {who} did not play or draw in time (M23)"),
        (_ADDS, "{who} adds a secret rule"),
        (_ADDS_ZH, "{who} adds a secret rule"),
        (_NO_RULE, "{who} adds no rule"),
    ):
        found = pattern.match(line)
        if found:
            return t(key, lang, who=name(int(found.group(1))))
    return line


def round_banner(
    round_no: int, winner: int, writer: int, me: int, name: Namer, lang: str
) -> list[str]:
    """M26/M27: what the banner says when round ``round_no`` (1-based) ends."""
    out = [t("Round {n} is over: {who} said “Mao” and won it.", lang, n=round_no,
             who=name(winner))]  # fmt: skip
    if writer == me:
        out.append(t("You write a secret rule (M27).", lang))
    elif writer >= 0:
        out.append(t("{who} now writes a secret rule (M27).", lang, who=name(writer)))
    return out


def chain_line(view: dict[str, Any], me: int, name: Namer, lang: str) -> str | None:
    """M9: what the running 7 chain asks of the next player, or None without one."""
    n = view.get("chain") or 0
    turn = view.get("turn")
    if n <= 0 or turn is None:
        return None
    thanks = Phrase("thank_you", n - 1).text(lang)
    cards = t("{n} cards", lang, n=n)
    if turn == me:
        more = Phrase("nice_day", n).text(lang)
        return t("7 chain of {n}: play a 7 and say “{more}”, or draw (d) saying “{thanks}” "
                 "and take {cards} (M9)", lang, n=n, more=more, thanks=thanks,
                 cards=cards)  # fmt: skip
    return t("7 chain of {n}: {who} must play a 7 or say “{thanks}” and take {cards} (M9)",
             lang, n=n, who=name(turn), thanks=thanks, cards=cards)  # fmt: skip


def _phrase(text: str, lang: str) -> str:
    found = parse(text)
    return text if found is None else found.text(lang)


def _event_words(ctx: Any, name: Namer, lang: str) -> str:
    if ctx.trigger == "play" and ctx.card is not None:
        return t("{who} played {card}", lang, who=name(ctx.seat), card=ctx.card)
    if ctx.trigger == "draw":
        return t("{who} drew", lang, who=name(ctx.seat))
    if ctx.trigger == "call":
        return t("a call on {who}", lang, who=name(ctx.call_target))
    return t("{who} spoke", lang, who=name(ctx.seat))


def _effect_words(effect: Any, name: Namer, lang: str) -> str:
    who = name(effect.target) if effect.target >= 0 else ""
    match effect.do:
        case "penalty":
            return t("{who} “{phrase}” +{n}", lang, who=who, phrase=_phrase(effect.phrase, lang),
                     n=effect.n)  # fmt: skip
        case "return":
            return t("the card went back", lang)
        case "skip":
            return t("{who} misses {n}", lang, who=who, n=effect.n)
        case "reverse":
            return t("play reversed", lang)
        case "again":
            return t("the same player again", lang)
        case "draw":
            return t("{who} draws {n}", lang, who=who, n=effect.n)
        case "uphold":
            return t("the call was right", lang)
    return t("{who}'s words were allowed", lang, who=who)


def rules_at_end(state: MaoState, name: Namer, lang: str) -> list[str]:
    """M27/M28 at the end: every secret rule, who wrote it, and the plays it judged."""
    out = [t("Rounds won: {wins}.", lang,
             wins=", ".join(f"{name(s)} {w}" for s, w in enumerate(state.wins)))]  # fmt: skip
    if not state.rules:
        return out
    out += ["", t("The secret rules:", lang)]
    for slot, rule in enumerate(state.rules):
        who = name(rule.author)
        if rule.rule is None:
            out.append(t("rule {slot} by {who}: never revealed", lang, slot=slot, who=who))
            continue
        text = rule_text(str(rule.rule)) if lang == "zh" else str(rule.rule)
        out.append(t("rule {slot} by {who}: {text}", lang, slot=slot, who=who, text=text))
        judged = judged_of(rule)
        acted = [j for j in judged if j.effects]
        if not acted:
            out.append(t("  judged {n} events, none of which it changed", lang, n=len(judged)))
            continue
        out.append(t("  judged {n} events; what it did:", lang, n=len(judged)))
        for j in acted[-SHOWN_JUDGED:]:
            effects = ", ".join(_effect_words(e, name, lang) for e in j.effects)
            out.append(f"    {_event_words(j.ctx, name, lang)} → {effects}")
        if len(acted) > SHOWN_JUDGED:
            out.append(t("    … and {n} more", lang, n=len(acted) - SHOWN_JUDGED))
    return out
