"""(v3) The words of absence: who the table waits for, who is back, why a
person's "stop waiting" was signed for nobody, and who left the table —
with the players' names and in both languages (:mod:`table.absence` and
:mod:`table.waiting` say them in protocol terms, "seat N").

A line this module does not know is shown as it came: a newer peer's
words are never lost, only left untranslated.
"""

from __future__ import annotations

import re

from table.names import SeatNames

from .words import register, t

_WAITING = re.compile(
    r"^waiting for seat (\d+), away ([\d:]+): the game goes on when seat \d+ is back$"
)
_BACK = re.compile(r"^seat (\d+) is back: the game goes on$")
_ACK = re.compile(
    r"^waiting for seat (\d+) to acknowledge entry (\d+): the game goes on when it does$"
)
_OWES_NOTHING = re.compile(r"^not signed: seat (\d+) owes nothing now$")
_HOLDS = re.compile(
    r"^not signed: this peer holds an answer of (.*), or its acks show it is there$"
)
_HALF = re.compile(
    r"^not signed: the seats not named must be more than half of the (\d+) \(it would name (\d+)\)$"
)
_SEAT = re.compile(r"seat (\d+)")
_HALF_SAID = (
    "not signed: the seats not named must be more than half of the {seats} (it would name {k})"
)
register(
    {
        "waiting for {who}, away {away}: the game goes on when {name} is back": (
            "正在等 {who}，已离开 {away}：{name} 回来后游戏继续"
        ),
        "{who} is back: the game goes on": "{who}回来了：游戏继续",
        "waiting for {who} to acknowledge entry {entry}: the game goes on when {name} does": (
            "正在等 {who}确认第 {entry} 条记录：{name} 确认后游戏继续"
        ),
        "not signed: the game is over or stopped": "没有签：游戏已经结束或停止",
        "not signed: {who} owes nothing now": "没有签：{who} 现在什么也不欠",
        "not signed: this peer holds an answer of {who}, or its acks show it is there": (
            "没有签：本机收到了 {who} 的回应，或其确认表明它在场"
        ),
        "not signed: at two seats one seat's word cannot end the game (it waits)": (
            "没有签：两个座位时一个座位说了不算，不能结束游戏（继续等待）"
        ),
        _HALF_SAID: "没有签：没被点名的座位必须超过 {seats} 个座位的一半（这会点名 {k} 个）",
    }
)


_LEFT = re.compile(r"^seat (\d+) left the table: it owed (.*) since table body (\d+) \((.*)\)$")
_LEFT_HOW = {
    "the table's patience ran out": "牌桌的耐心用完了",
    "the present seats voted to stop waiting": "在场的座位投票不再等待",
}


def abandoned_zh(text: str) -> str:
    """(v3) a leaver's line (:meth:`table.absence.Abandoned.lines`) in
    Chinese; what it owed stays in protocol terms, as a fault's reason does.

    >>> abandoned_zh("seat 2 left the table: it owed its final reveal of deal 0 "
    ...              "since table body 40 (the table's patience ran out)")
    '座位2 离开了牌桌：自第 40 条牌桌记录起欠着 its final reveal of deal 0（牌桌的耐心用完了）'
    """
    m = _LEFT.match(text)
    if m is None:
        return text
    how = _LEFT_HOW.get(m.group(4), m.group(4))
    return f"座位{m.group(1)} 离开了牌桌：自第 {m.group(3)} 条牌桌记录起欠着 {m.group(2)}（{how}）"


def _names(seat: int, lang: str, names: SeatNames | None) -> tuple[str, str]:
    """(name, who): "bob" and "bob (seat 2)"; without names "seat 2" twice."""
    zh = lang == "zh"
    plain = f"座位{seat}" if zh else f"seat {seat}"
    if names is None:
        return plain, plain
    name = names.who(seat, lang)
    return name, (f"{name}（{plain}）" if zh else f"{name} ({plain})")


def waiting_line(text: str, lang: str = "en", names: SeatNames | None = None) -> str:
    """(v3) who the table waits for (a ``waiting`` update, :mod:`table.absence`),
    with the seat's name: what every other screen shows.

    >>> bob = SeatNames(("ann", "bob", "carol"), me=0)
    >>> waiting_line("waiting for seat 2, away 1:12: the game goes on when seat 2 is back",
    ...              names=bob)
    'waiting for carol (seat 2), away 1:12: the game goes on when carol is back'
    >>> waiting_line("seat 2 is back: the game goes on", "zh")
    '座位2回来了：游戏继续'
    >>> waiting_line("waiting for seat 1 to acknowledge entry 41: the game goes on when it does",
    ...              names=bob)
    'waiting for bob (seat 1) to acknowledge entry 41: the game goes on when bob does'
    >>> waiting_line("waiting for seat 1 to acknowledge entry 41: the game goes on when it does",
    ...              "zh", bob)
    '正在等 bob（座位1）确认第 41 条记录：bob 确认后游戏继续'
    >>> waiting_line("not signed: this peer holds an answer of seat 1, seat 2, or its acks "
    ...              "show it is there", names=bob)
    'not signed: this peer holds an answer of bob and carol, or its acks show it is there'
    >>> waiting_line("not signed: the seats not named must be more than half of the 4 "
    ...              "(it would name 2)", "zh")
    '没有签：没被点名的座位必须超过 4 个座位的一半（这会点名 2 个）'
    """
    m, back = _WAITING.match(text), _BACK.match(text)
    if m is not None or back is not None:
        name, who = _names(int((m or back).group(1)), lang, names)
        if back is not None:
            return t("{who} is back: the game goes on", lang, who=who)
        return t(
            "waiting for {who}, away {away}: the game goes on when {name} is back",
            lang, who=who, name=name, away=m.group(2),
        )  # fmt: skip
    if ack := _ACK.match(text):
        name, who = _names(int(ack.group(1)), lang, names)
        return t(
            "waiting for {who} to acknowledge entry {entry}: the game goes on when {name} does",
            lang, who=who, name=name, entry=ack.group(2),
        )  # fmt: skip
    return _not_signed(text, lang, names)


def _not_signed(text: str, lang: str, names: SeatNames | None) -> str:
    """Why a person's "stop waiting" was signed for nobody, in words."""
    if owes := _OWES_NOTHING.match(text):
        _, who = _names(int(owes.group(1)), lang, names)
        return t("not signed: {who} owes nothing now", lang, who=who)
    if holds := _HOLDS.match(text):
        seats = [int(s) for s in _SEAT.findall(holds.group(1))]
        if names is not None:
            who = names.listed(seats, lang)
        else:
            who = ("、" if lang == "zh" else ", ").join(_names(s, lang, None)[0] for s in seats)
        return t(
            "not signed: this peer holds an answer of {who}, or its acks show it is there",
            lang, who=who,
        )  # fmt: skip
    if half := _HALF.match(text):
        return t(_HALF_SAID, lang, seats=half.group(1), k=half.group(2))
    return t(text, lang)  # the lines without a seat in them (English when unknown)
