"""The interface in English and Chinese (``--lang zh|en``).

English text is the key: ``t("your hand", "zh")`` gives what the module
showing "your hand" registered for it.
Every module that shows text registers its Chinese wordings with
:func:`register` at import time, next to the code that uses them, so a
string and its translation are read and changed together. Fields are filled
after translation (``t("seat {seat}", lang, seat=2)``), so the Chinese
sentence may put them where Chinese grammar wants them.

A string without a Chinese wording is shown in English and remembered in
:data:`MISSING`; the tests play whole games in Chinese and fail on any.

>>> register({"{n} cards left": "还剩 {n} 张"})
>>> t("{n} cards left", "zh", n=2)
'还剩 2 张'
>>> t("{n} cards left", "en", n=2)
'2 cards left'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from table.names import SeatNames

_CJK = re.compile(r"[\u4e00-\u9fff]")

LANGS = ("en", "zh")
"""The languages of the interface; ``zh`` is the seeds' language."""

_ZH: dict[str, str] = {}
MISSING: set[str] = set()
"""English strings asked for in Chinese that have no Chinese wording."""
CONFLICTS: dict[str, set[str]] = {}
"""English strings given two Chinese wordings (the first is kept; a test
fails on any: say the two senses with two English strings)."""


def register(zh: Mapping[str, str]) -> None:
    """Add Chinese wordings (English text → Chinese text)."""
    for english, chinese in zh.items():
        known = _ZH.get(english)
        if known is not None and known != chinese:
            CONFLICTS.setdefault(english, {known}).add(chinese)
            continue
        _ZH[english] = chinese


def t(text: str, lang: str = "en", /, **fields: object) -> str:
    """``text`` in ``lang``, with ``fields`` filled in. In Chinese a space
    the wording puts beside a field (for a Latin name: "轮到 bob") goes when
    the field is Chinese itself ("轮到你").

    >>> register({"{who}'s turn": "轮到 {who}"})
    >>> t("{who}'s turn", "zh", who="bob"), t("{who}'s turn", "zh", who="座位2")
    ('轮到 bob', '轮到座位2')
    """
    if lang == "zh":
        chinese = _ZH.get(text)
        if chinese is None:
            MISSING.add(text)
        else:
            text = _snug(chinese, fields)
    return text.format(**fields) if fields else text


def _snug(template: str, fields: Mapping[str, object]) -> str:
    """No space between a Chinese field value and the Chinese beside it."""
    for name, value in fields.items():
        said = str(value)
        if not said:
            continue
        if _CJK.match(said[0]):
            template = re.sub(rf"(?<=[\u4e00-\u9fff]) \{{{name}\}}", f"{{{name}}}", template)
        if _CJK.match(said[-1]):
            template = re.sub(rf"\{{{name}\}} (?=[\u4e00-\u9fff])", f"{{{name}}}", template)
    return template


def known(text: str) -> bool:
    """Whether ``text`` has a Chinese wording."""
    return text in _ZH


# ------------------------------------------------------------ player words
# What the engines call phases and moves, and why they refuse a move, in
# words a player understands (the rule ids stay in GAMES.md). Screens show
# these instead of ``place_bomb`` or ``accept is not possible in phase play``.

_PHASES: dict[tuple[str, str], tuple[str, str]] = {  # (game, phase): (en, zh)
    ("bluff", "deal"): ("the cards are being dealt", "正在发牌"),
    ("bluff", "starter"): ("waiting for A♠ to be shown", "等待亮出 A♠"),
    ("bluff", "play"): ("placing cards", "扣牌"),
    ("bluff", "last_claim"): ("the last claim may be challenged", "最后一手可以质疑"),
    ("bluff", "challenge"): ("a challenge is being settled", "正在判定质疑"),
    ("bluff", "transfer"): ("the pile is being picked up", "正在收走牌堆"),
    ("bluff", "over"): ("game over", "游戏结束"),
    ("bomb", "identities"): ("identities are being dealt", "正在发身份牌"),
    ("bomb", "starter"): ("drawing who starts", "正在抽先手"),
    ("bomb", "turn"): ("playing cards", "出牌"),
    ("bomb", "playing"): ("cards are being shown", "正在亮牌"),
    ("bomb", "place_bomb"): ("placing the bomb", "放炸弹"),
    ("bomb", "window"): ("anyone may detonate", "可以引爆"),
    ("bomb", "lot"): ("the assassin is drawn by lot", "正在抽签决定刺客"),
    ("bomb", "judging"): ("identities are being revealed", "正在亮身份"),
    ("bomb", "over"): ("game over", "游戏结束"),
    ("mao", "deal"): ("the cards are being dealt", "正在发牌"),
    ("mao", "play"): ("playing cards", "出牌"),
    ("mao", "ending"): ("the secret rules are being revealed", "正在公开秘密规则"),
    ("mao", "over"): ("game over", "游戏结束"),
}

_DOING: dict[tuple[str, str], tuple[str, str]] = {  # (game, phase) → your task, when yours
    ("bluff", "starter"): ("show A♠ (s)", "亮出 A♠（s）"),
    ("bluff", "play"): ("place cards and claim", "扣牌并声称"),
    ("bluff", "last_claim"): ("challenge (c) or let it stand (a)", "质疑（c）或不质疑（a）"),
    ("bomb", "turn"): ("play cards", "出牌"),
    ("bomb", "place_bomb"): ("place the bomb in front of a player", "把炸弹放到一名玩家面前"),
    ("bomb", "window"): ("detonate (d) or pass (n)", "引爆（d）或不炸（n）"),
    ("mao", "play"): ("play a card", "出一张牌"),
}

_WAITING = {"deal", "identities", "starter", "playing", "challenge", "transfer", "lot",
            "judging", "ending", "over"}  # fmt: skip
"""Phases in which nobody's turn is shown: the table, not a player, acts."""


def phase_text(game: str, phase: str, lang: str = "en") -> str:
    """A game phase in a player's words.

    >>> phase_text("bomb", "place_bomb"), phase_text("bluff", "last_claim", "zh")
    ('placing the bomb', '最后一手可以质疑')
    """
    said = _PHASES.get((game, phase))
    if said is None:
        return phase.replace("_", " ")
    return said[1] if lang == "zh" else said[0]


def turn_text(
    game: str, phase: str, turn: int | None, names: SeatNames, may_act: bool, lang: str = "en"
) -> str:
    """Whose turn it is, in words: "your turn: place the bomb in front of a
    player", "bob's turn", or what the table is doing (during the deal, or
    when no seat acts). "your turn" only when the reading seat may act.

    >>> names = SeatNames(("ann", "bob"), me=0)
    >>> turn_text("bomb", "place_bomb", 0, names, True)
    'your turn: place the bomb in front of a player'
    >>> turn_text("bomb", "place_bomb", 0, names, False)
    'placing the bomb'
    >>> turn_text("bluff", "deal", 0, names, False, "zh")
    '正在发牌'
    >>> turn_text("bluff", "play", 1, names, False)
    "bob's turn: placing cards"
    """
    if phase in _WAITING or turn is None:
        return phase_text(game, phase, lang)
    if turn == names.me:
        if not may_act:
            return phase_text(game, phase, lang)
        task = _DOING.get((game, phase))
        doing = (task[1] if lang == "zh" else task[0]) if task else phase_text(game, phase, lang)
        return f"轮到你：{doing}" if lang == "zh" else f"your turn: {doing}"
    who = names.name(turn, lang)
    phase_said = phase_text(game, phase, lang)
    return f"轮到 {who}：{phase_said}" if lang == "zh" else f"{who}'s turn: {phase_said}"


_MOVES = {  # engine event kinds → what a player does
    "play": ("play cards", "出牌"),
    "challenge": ("challenge", "质疑"),
    "accept": ("let the claim stand", "不质疑"),
    "show": ("show A♠", "亮出 A♠"),
    "place_bomb": ("place the bomb", "放炸弹"),
    "detonate": ("detonate", "引爆"),
    "pass": ("pass", "不炸"),
    "say": ("speak", "说话"),
    "draw": ("draw", "摸牌"),
    "call": ("call a penalty", "罚人"),
    "propose": ("propose", "提议"),
    "vote": ("vote", "投票"),
    "add_rule": ("add a rule", "加规则"),
}


def _move(kind: str, lang: str) -> str:
    said = _MOVES.get(kind)
    if said is None:
        return kind.replace("_", " ")
    return said[1] if lang == "zh" else said[0]


def _refusals(game: str, names: SeatNames, lang: str) -> list[tuple[str, Any]]:
    zh = lang == "zh"

    def say(en: str, chinese: str) -> str:
        return chinese if zh else en

    return [
        (r"waiting for the table \((\w+)\); (\w+) is not possible now",
         lambda m: say(f"not now: {phase_text(game, m.group(1))}",
                       f"现在不行：{phase_text(game, m.group(1), 'zh')}")),
        (r"it is seat (\d+)'s turn to play",
         lambda m: say(f"wait: it is {names.whose(int(m.group(1)))} turn",
                       f"请等待：轮到 {names.who(int(m.group(1)), 'zh')}")),
        (r"only the latest play may be challenged, by another seat, before the next play",
         lambda m: say("you can challenge only the latest claim of another player, before "
                       "the next one", "只能质疑别人的最新一手，而且要在下一手之前")),
        (r"(\w+) is not possible in phase (\w+)",
         lambda m: say(f"you cannot {_move(m.group(1), 'en')} now: {phase_text(game, m.group(2))}",
                       f"现在不能{_move(m.group(1), 'zh')}："
                       f"{phase_text(game, m.group(2), 'zh')}")),
        (r"claim (.+) does not beat (.+?) \(B5.*\)",
         lambda m: say(f"{m.group(1)} does not beat {m.group(2)}: claim more cards, or as many "
                       "of a higher rank",
                       f"{m.group(1)} 压不过 {m.group(2)}：要声称更多张，或同样张数但点数更大")),
        (r"\[.*\] are not in your hand|position \d+ is not in your hand",
         lambda m: say("those cards are not in your hand (any more)", "这些牌已经不在你手里")),
        (r"K12 A: play one, two or three cards",
         lambda m: say("kind A is one, two or three cards, one of them related to your identity",
                       "A 类要出一到三张牌，其中一张与你的身份牌相关")),
        (r"K12 B: play all your hand cards",
         lambda m: say("kind B plays your whole hand", "B 类要把整手牌都出掉")),
        (r"K12 B: every identity relates to one of these",
         lambda m: say("kind B needs a hand none of whose cards relates to your identity",
                       "B 类要求手里没有一张牌与你的身份牌相关")),
        (r"K12 C: not a pair or an arithmetic sequence.*",
         lambda m: say("kind C is a pair or a run (A counts 1 or 14, jokers are wild)",
                       "C 类要出对子或等差数列（A 算 1 或 14，王可以当任何牌）")),
        (r"you already passed", lambda m: say("you already passed", "你已经不炸了")),
        (r"nothing to pass on", lambda m: say("there is nothing to pass on", "现在没有可以放过的")),
        (r"the game is over", lambda m: say("the game is over", "游戏已经结束")),
        (r"a named face is already face up elsewhere",
         lambda m: say("one of those cards is already face up", "其中一张牌已经翻开了")),
        (r"waiting for seat (\d+) to add a secret rule",
         lambda m: say(f"wait: {names.who(int(m.group(1)))} is writing a secret rule",
                       f"请等待：{names.who(int(m.group(1)), 'zh')}在写秘密规则")),
        (r"the round has not started",
         lambda m: say("the round has not started yet", "这一局还没开始")),
        (r"only the dictator (gives penalties|adds rules) \(M39\)",
         lambda m: say("only the dictator may do that", "只有独裁者可以这样做")),
        (r"you have no rule to add now \(M27\)",
         lambda m: say("you may add a rule only after winning a round",
                       "只有赢了一局才能加规则")),
        (r"the game has not been set up yet",
         lambda m: say("the table is not ready yet", "牌桌还没准备好")),
        (r"your last move is still on its way to the table",
         lambda m: say("your last move is still on its way to the table",
                       "你的上一步还在送往牌桌的路上")),
        (r"the game was stopped: a seat cheated",
         lambda m: say("the game was stopped: a player cheated", "游戏已停止：有人作弊")),
    ]  # fmt: skip


_KIND_NEEDS = {  # K12: what each kind of Bomb play needs
    "A": ("kind A is one to three cards, one of them related to your identity card",
          "A 类要出一到三张牌，其中一张与你的身份牌相关"),
    "B": ("kind B is your whole hand, none of it related to your identity card",
          "B 类要出整手牌，而且没有一张与你的身份牌相关"),
    "C": ("kind C is a pair or a run (A counts 1 or 14, jokers are wild)",
          "C 类要出对子或等差数列（A 算 1 或 14，王可以当任何牌）"),
}  # fmt: skip


def kind_needs(kind: str, lang: str = "en") -> str:
    """What a kind of Bomb play needs (K12), for a refused pick.

    >>> kind_needs("A")
    'kind A is one to three cards, one of them related to your identity card'
    """
    said = _KIND_NEEDS.get(kind)
    if said is None:
        return f"kind {kind}"
    return said[1] if lang == "zh" else said[0]


def refusal_text(text: str, game: str, names: SeatNames, lang: str = "en") -> str:
    """Why a move was refused (``MoveRefused``), in a player's words.

    >>> names = SeatNames(("ann", "bob"), me=0)
    >>> refusal_text("seat 0: accept is not possible in phase play", "bluff", names)
    'you cannot let the claim stand now: placing cards'
    >>> refusal_text("seat 0: it is seat 1's turn to play", "bomb", names, "zh")
    '请等待：轮到 bob'
    """
    reason = re.sub(r"^seat \d+: ", "", text)
    reason = re.sub(r" \(penalty: .*\)$", "", reason)
    for pattern, said in _refusals(game, names, lang):
        m = re.fullmatch(pattern, reason)
        if m:
            return str(said(m))
    return t(reason, lang)
