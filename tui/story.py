"""The story of a game for a person, from the session's event lines: what
players did and what came of it, without the protocol underneath (cards
dealt by position, reveals of positions, reshuffled positions, jointly drawn
values, a rule's verdict that changed nothing). ``--verbose`` shows all.

>>> story("rule 0 (seat 1) on event 173: nothing") is None
True
>>> story("seat 0 plays 10♦ (#1)")
'seat 0 plays 10♦'
>>> story("reveal #15=BJ #3=7♦")
'cards shown: BJ 7♦'
>>> story("seat 1 places 1, claims 1 × 2")
'seat 1 places 1, claims 1 × 2'
>>> story("seat 2 plays 7♠ 7♥ (C)")
'seat 2 plays 7♠ 7♥ (kind C: a pair or a sequence)'

In Chinese (``--lang zh``), the same story in the seeds' language; what
players said is shown in Chinese when it is a phrase the game knows:

>>> story("seat 1 places 2, claims 3 × Q", "zh")
'座位1 扣下 2 张，声称 3 张 Q'
>>> story("seat 0 plays 7♠ (#4) “have a nice day”", "zh")
'座位0 出 7♠ “祝你愉快”'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from table.names import SeatNames

from .waiting_words import abandoned_zh, waiting_line

_HIDDEN = (
    re.compile(r"^dealt \[[0-9 ]*\] to seat \d+$"),
    re.compile(r"^reshuffled new_positions="),
    re.compile(r"^transferred \[[0-9 ]*\] to seat \d+$"),
    re.compile(r"^random (?!starter=)"),
    re.compile(r"^rule \d+ \(seat \d+\) on event \d+: nothing$"),
    re.compile(r"^seat \d+'s proof about #\d+ verified$"),
)
_POSITION = re.compile(r" \(#\d+\)")
_SHOWS = re.compile(r"shows #\d+ as ")
_REVEAL = re.compile(r"#\d+=(\S+)")
_KINDS = {  # K12: what each Bomb play kind is
    "A": ("kind A: related to the identity", "A 类：与身份牌相关"),
    "B": ("kind B: the whole hand, none related", "B 类：整手牌，均与身份无关"),
    "C": ("kind C: a pair or a sequence", "C 类：对子或等差数列"),
}
_BOMB_PLAY = re.compile(r"^(seat \d+ plays .*) \(([ABC])\)$")


def story(line: str, lang: str = "en", names: SeatNames | None = None) -> str | None:
    """The line a person reads for one event, or None to leave it out;
    ``names``: seats by name ("you" for the reading seat), else "seat N".

    >>> names = SeatNames(("ann", "bob"), me=0)
    >>> story("seat 1 challenges: 吹牛!", "en", names)
    'bob challenges: Bluff!'
    >>> story("seat 0 places 2, claims 2 × 7", "en", names)
    'you place 2, claim 2 × 7'
    >>> story("seat 0: 炸掉!", "zh", names)
    '你：炸掉！'
    """
    if any(pattern.search(line) for pattern in _HIDDEN):
        return None
    if line.startswith("reveal #"):
        line = "cards shown: " + " ".join(_REVEAL.findall(line))
    else:
        line = _SHOWS.sub("shows ", _POSITION.sub("", line))
    bomb = _BOMB_PLAY.match(line)
    if bomb:
        line = f"{bomb.group(1)} ({_KINDS[bomb.group(2)][0]})"
    line = _plain(line)
    if lang == "zh":
        return _named_zh(chinese(line), names)
    return _named_en(line, names)


_PLAIN = (  # the engine's words → a player's (English; chinese() reads these)
    (re.compile(r"^(seat \d+) challenges: 吹牛!$"), r"\1 challenges: Bluff!"),
    (re.compile(r"^(seat \d+): 炸掉!$"), r"\1: detonate!"),
    (re.compile(r"^(seat \d+ adds a secret rule) \S+$"), r"\1"),
    (re.compile(r"^rule (\d+) \((seat \d+)\) on event \d+: "), r"rule \1 (\2): "),
    (re.compile(r"^time up: turn [\d.]+ (seat \d+)$"), r"time up: \1 took too long"),
    (re.compile(r"^random starter=(\d+)$"), r"seat \1 starts (drawn at random)"),
    (re.compile(r"^time up: detonation$"), "time up: nobody detonated"),
    (re.compile(r"^time up: race$"), "the detonation window closes"),  # (v3) K17
    (re.compile(r"^time up: starter$"), "time up: play starts"),
    (re.compile(r"^time up: time-limit$"), "time up: the game's time limit is reached"),
)


def _plain(line: str) -> str:
    for pattern, said in _PLAIN:
        line = pattern.sub(said, line)
    return line


_SUBJECT = re.compile(r"^seat (\d+)( (\w+)|:)")
_SEAT = re.compile(r"\bseat (\d+)('s)?")


def _base(verb: str) -> str:
    """A verb for "you": "plays" → "play", "passes" → "pass"."""
    if verb.endswith(("sses", "shes", "ches", "xes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def _named_en(line: str, names: SeatNames | None) -> str:
    if names is None:
        return line
    m = _SUBJECT.match(line)
    if m and int(m.group(1)) == names.me:
        said = ":" if m.group(3) is None else " " + _base(m.group(3))
        line = "you" + said + line[m.end() :].replace(", claims ", ", claim ", 1)
    return _SEAT.sub(
        lambda m: names.whose(int(m.group(1))) if m.group(2) else names.who(int(m.group(1))),
        line,
    )


_SEAT_ZH = re.compile(r"([\u4e00-\u9fff])?座位(\d+)")


def _named_zh(line: str, names: SeatNames | None) -> str:
    if names is None:
        return line

    def one(m: re.Match[str]) -> str:
        who = names.who(int(m.group(2)), "zh")
        before = m.group(1) or ""
        after = m.string[m.end() : m.end() + 1]
        space_after = who[-1:].isascii() and bool(re.match(r"[\u4e00-\u9fff]", after))
        return (
            before
            + (" " if before and who[:1].isascii() else "")
            + who
            + (" " if space_after else "")
        )

    return _SEAT_ZH.sub(one, line)


SEPARATOR = "──"
"""Story lines that start with this are separators, not moves (see
:mod:`tui.storyteller`)."""


# ------------------------------------------------------------------ Chinese

_QUOTED = re.compile(r"“([^”]*)”")
_FAILURE = re.compile(r"^(continued )?failure to say (.*)$")


def _said(text: str) -> str:
    """Quoted words in Chinese when they are a phrase the game knows."""
    from engines.phrases import parse

    def one(m: re.Match[str]) -> str:
        phrase = parse(m.group(1))  # None: free words, shown as typed
        fail = _FAILURE.match(m.group(1))
        if phrase is None and fail:  # a secret rule's own phrase, not said
            inner = _said(f"“{fail.group(2)}”")[1:-1]
            return f"“{'持续' if fail.group(1) else ''}未能说「{inner}」”"
        return f"“{phrase.text('zh') if phrase is not None else m.group(1)}”"

    return _QUOTED.sub(one, text)


_RULE_WORDS = (  # a revealed Mao rule (engines.mao_rules' wording), longest first
    ("When a card is played and ", "出牌时，如果"),
    ("When a player draws and ", "摸牌时，如果"),
    ("When someone speaks and ", "有人说话时，如果"),
    ("When a card is played", "出牌时"),
    ("When a player draws", "摸牌时"),
    ("When someone speaks", "有人说话时"),
    (" long:", "："),
    ("the card below", "下面那张牌"),
    ("the card is forbidden", "这张牌不许出"),
    ("that is penalised", "要受罚"),
    ("the player must say", "出牌者必须说"),
    ("the next player misses", "下家停"),
    ("the next player draws", "下家摸"),
    ("the same player plays again", "同一玩家再出一张"),
    ("the player draws", "出牌者摸"),
    ("play reverses", "出牌方向反转"),
    ("the player does not hold", "出牌者手里不是"),
    ("the player holds", "出牌者手里有"),
    ("the last", "最近"),
    ("cards share a suit", "张牌同花色"),
    ("the 7 chain is", "7 连的长度为"),
    ("nobody says", "没人说"),
    ("someone says", "有人说"),
    ("the rank is", "点数为"),
    ("play is not", "出牌方向不是"),
    ("play is", "出牌方向是"),
    ("counter-clockwise", "逆时针"),
    ("clockwise", "顺时针"),
    ("the card", "这张牌"),
    (" is not ", "不是"),
    (" is ", "是"),
    ("是 ", "是"),
    ("为 ", "为"),
    ("not ", "不是"),
    ("penalty:", "罚语："),
    (" and ", "，并且"),
    (" turns", " 轮"),
    (" turn", " 轮"),
    (" cards", " 张牌"),
    ("rank", "点数"),
    ("suit", "花色"),
    ("color", "颜色"),
    ("black", "黑色"),
    ("red", "红色"),
    ("even", "偶数"),
    ("odd", "奇数"),
)


_SAME = {"rank": "点数", "suit": "花色", "color": "颜色"}


def rule_text(text: str) -> str:
    """A Mao secret rule's English wording (``str(Rule)``) in Chinese."""
    quoted: list[str] = []

    def keep(m: re.Match[str]) -> str:  # phrases are not rule words
        quoted.append(_said(m.group(0)))
        return f"\x00{len(quoted) - 1}\x00"

    text = _QUOTED.sub(keep, text)
    text = re.sub(
        r"it has (not )?the same (rank|suit|color) as the card below",
        lambda m: f"{_SAME[m.group(2)]}与下面那张牌{'不同' if m.group(1) else '相同'}",
        text,
    )
    text = re.sub(
        r"its rank is (not )?(\S+) from the card below",
        lambda m: f"点数与下面那张牌{'不是' if m.group(1) else ''}相差 {m.group(2)}",
        text,
    )
    for english, chinese_words in _RULE_WORDS:
        text = text.replace(english, chinese_words)
    text = text.replace("(", "（").replace(")", "）").replace(": ", "：").replace("; ", "；")
    return re.sub("\x00(\\d+)\x00", lambda m: quoted[int(m.group(1))], text)


def _effects(text: str) -> str:
    out = []
    for part in text.split("; "):
        m = re.match(r"penalty “(.*)” to seat (\d+)$", part)
        if m:
            out.append(f"罚座位{m.group(2)}：{_said('“' + m.group(1) + '”')}")
            continue
        m = re.match(r"vouch for “(.*)” said by seat (\d+)$", part)
        if m:
            out.append(f"担保座位{m.group(2)}说的{_said('“' + m.group(1) + '”')}")
            continue
        m = re.match(r"(draw|skip) (\d+) for seat (\d+)$", part)
        if m:
            verb = "摸" if m.group(1) == "draw" else "停"
            unit = "张" if m.group(1) == "draw" else "轮"
            out.append(f"座位{m.group(3)}{verb} {m.group(2)} {unit}")
            continue
        m = re.match(r"(\w+)(?: seat (\d+))?$", part)
        words = {"return": "退回所出的牌", "reverse": "方向反转", "again": "再出一次",
                 "uphold": "罚得对", "nothing": "无"}  # fmt: skip
        if m and m.group(1) in words:
            who = f"座位{m.group(2)}：" if m.group(2) else ""
            out.append(who + words[m.group(1)])
        else:
            out.append(part)
    return "；".join(out)


_PROPOSAL = {"drop": "废除", "change": "修改"}


def _kind(m: re.Match[str]) -> str:
    return f"座位{m.group(1)} 出 {m.group(2)}（{_KINDS[m.group(3)][1]}）"


_ZH: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"^cards shown: (.*)$"), r"亮牌：\1"),
    (
        re.compile(r"^seat (\d+) places (\d+), claims (\d+) × (\S+)$"),
        r"座位\1 扣下 \2 张，声称 \3 张 \4",
    ),
    (re.compile(r"^seat (\d+) challenges: Bluff!$"), r"座位\1：吹牛！"),
    (re.compile(r"^seat (\d+) lets the claim stand$"), r"座位\1 不质疑"),
    (re.compile(r"^seat (\d+) shows (\S+)$"), r"座位\1 亮出 \2"),
    (re.compile(r"^seat (\d+) plays (.*) \(kind ([ABC]):[^)]*\)$"), _kind),
    (
        re.compile(r"^seat (\d+) places the bomb in front of seat (\d+)$"),
        r"座位\1 把炸弹放在座位\2 面前",
    ),
    (re.compile(r"^seat (\d+): detonate!$"), r"座位\1：炸掉！"),
    (re.compile(r"^seat (\d+) passes$"), r"座位\1 不炸"),
    (
        re.compile(r"^seat (\d+) plays (\S+)(.*)$"),
        lambda m: f"座位{m.group(1)} 出 {m.group(2)}{_said(m.group(3))}",
    ),
    (re.compile(r"^seat (\d+) draws(.*)$"), lambda m: f"座位{m.group(1)} 摸牌{_said(m.group(2))}"),
    (re.compile(r"^seat (\d+) says(.*)$"), lambda m: f"座位{m.group(1)} 说{_said(m.group(2))}"),
    (
        re.compile(r"^seat (\d+) to seat (\d+): (“.*”)$"),
        lambda m: f"座位{m.group(1)} 罚座位{m.group(2)}：{_said(m.group(3))}",
    ),
    (
        re.compile(r"^rule (\d+) \(seat (\d+)\): (.*)$"),
        lambda m: f"规则 {m.group(1)}（座位{m.group(2)}）：{_effects(m.group(3))}",
    ),
    (re.compile(r"^seat (\d+) adds no rule$"), r"座位\1 不加新规则"),
    (re.compile(r"^seat (\d+) adds a secret rule$"), r"座位\1 加了一条秘密规则"),
    (
        re.compile(r"^seat (\d+) reveals rule (\d+): (.*)$"),
        lambda m: f"座位{m.group(1)} 公开规则 {m.group(2)}：{rule_text(m.group(3))}",
    ),
    (re.compile(r"^seat (\d+) proposes to end the game$"), r"座位\1 提议结束游戏"),
    (
        re.compile(r"^seat (\d+) proposes to (\w+) rule (\d+)$"),
        lambda m: f"座位{m.group(1)} 提议{_PROPOSAL.get(m.group(2), m.group(2))}规则 {m.group(3)}",
    ),
    (re.compile(r"^seat (\d+) votes yes$"), r"座位\1 投赞成票"),
    (re.compile(r"^seat (\d+) votes no$"), r"座位\1 投反对票"),
    (re.compile(r"^seat (\d+) starts \(drawn at random\)$"), r"座位\1 先出（随机抽出）"),
    (re.compile(r"^time up: nobody detonated$"), "时间到：没人引爆"),
    (re.compile(r"^the detonation window closes$"), "引爆窗口关闭"),
    (re.compile(r"^time up: the game's time limit is reached$"), "时间到：游戏时限已到"),
    (re.compile(r"^time up: play starts$"), "时间到：开始出牌"),
    (re.compile(r"^time up: seat (\d+) took too long$"), r"时间到：座位\1 超时"),
    (re.compile(r"^time up: (.*)$"), r"时间到：\1"),
]


def chinese(line: str) -> str:
    """One story line in Chinese (a line it does not know stays English)."""
    for pattern, template in _ZH:
        m = pattern.match(line)
        if m:
            return template(m) if callable(template) else m.expand(template)
    return line


_OUTCOME = re.compile(
    r"^winners \[([\d, ]*)\], losers \[([\d, ]*)\]: (.*?)(?:; cheaters \[([\d, ]*)\])?$"
)
_REASONS = (  # (engine reason, English, Chinese): the rule ids stay in GAMES.md
    (r"^B11: hand empty, last claim stood$",
     "the winner's hand is empty and nobody challenged the last claim",
     "赢家的手牌出完了，最后的声称无人质疑"),
    (r"^B11/B12: hand empty, challenge failed$",
     "the winner's hand is empty and the challenge of the last claim failed",
     "赢家的手牌出完了，对最后声称的质疑失败"),
    (r"^B12: no cards left to play$", "no cards were left to play", "没有牌可出了"),
    (r"^K25: time limit reached, civilians win$", "the time limit was reached: the civilians win",
     "时限已到，平民获胜"),
    (r"^K22: a civilian detonated and loses alone$",
     "a civilian detonated the bomb and loses alone", "平民引爆了炸弹，独自落败"),
    (r"^K18: a captain killed an enemy captain$", "a captain blew up the enemy captain",
     "队长炸死了敌方队长"),
    (r"^K19: a captain killed a traitor of their own alliance$",
     "a captain blew up a traitor of their own alliance", "队长炸死了本方的叛徒"),
    (r"^K23: a civilian was killed$", "a civilian was blown up", "平民被炸死"),
    (r"^K20: the assassination failed$", "the assassination failed", "刺杀失败"),
    (r"^the table voted to end the game \(M31\) after (\d+) round\(s\); most rounds won: (\d+)$",
     r"the table voted to end the game after \1 round(s); most rounds won: \2",
     r"全桌投票结束游戏，共 \1 局；最多赢 \2 局"),
    (r"^game stopped: seat (\d+) (.*)$", r"the game was stopped: seat \1 \2",
     r"游戏中止：座位\1 \2"),
)  # fmt: skip
_RULE_ID = re.compile(r"\s*\((?:[BKM]\d+(?:/[BKM]\d+)*)\)|^(?:[BKM]\d+(?:/[BKM]\d+)*): ")


def reason_text(reason: str, lang: str = "en", names: SeatNames | None = None) -> str:
    """Why a game ended, in words (no rule ids).

    >>> reason_text("K20: the assassination failed")
    'the assassination failed'
    """
    for pattern, english, chinese_reason in _REASONS:
        hit = re.match(pattern, reason)
        if hit:
            said = hit.expand(chinese_reason if lang == "zh" else english)
            return _named_zh(said, names) if lang == "zh" else _named_en(said, names)
    return _RULE_ID.sub("", reason)


def _numbers(listed: str | None) -> list[int]:
    return [int(s) for s in (listed or "").split(",") if s.strip()]


def outcome_text(
    text: str, lang: str = "en", names: SeatNames | None = None, past: bool = False
) -> str:
    """An engine outcome (``str(Outcome)``) for a person: who won and lost,
    by name ("you" for the reading seat), and why, in words (``past``: "you
    won", for a list of old games).

    >>> outcome_text("winners [1], losers [0, 2]: K20: the assassination failed",
    ...              names=SeatNames(("ann", "bob", "carol"), me=0))
    'bob wins; you and carol lose: the assassination failed'
    >>> outcome_text("winners [0], losers [1]: K20: the assassination failed", "zh")
    '座位0 赢；座位1 输：刺杀失败'
    >>> outcome_text("winners [0], losers [1]: B12: no cards left to play", past=True,
    ...              names=SeatNames(("ann", "bob"), me=0))
    'you won; bob lost: no cards were left to play'
    """
    m = _OUTCOME.match(text)
    if not m:
        return text
    names = names or SeatNames.numbered(0)
    won, lost, cheats = _numbers(m.group(1)), _numbers(m.group(2)), _numbers(m.group(4))
    reason = reason_text(m.group(3), lang, names)
    if lang == "zh":
        out = f"{names.listed(won, 'zh') if won else '没有人'} 赢"
        out += f"；{names.listed(lost, 'zh')} 输" if lost else ""
        out += f"：{reason}"
        return out + (f"；作弊：{names.listed(cheats, 'zh')}" if cheats else "")

    def verb(seats: list[int], word: str) -> str:
        if past:
            return {"win": "won", "lose": "lost"}[word]
        plural = len(seats) != 1 or seats[0] == names.me
        return word if plural else word + "s"

    out = (
        f"{names.listed(won)} {verb(won, 'win')}"
        if won
        else ("nobody won" if past else "nobody wins")
    )
    out += f"; {names.listed(lost)} {verb(lost, 'lose')}" if lost else ""
    out += f": {reason}"
    return out + (f"; caught cheating: {names.listed(cheats)}" if cheats else "")


_FAULT = re.compile(r"^(?:seat (\d+) \(([^)]*)\)|unknown seat)(?: at entry #(\d+))?: (.*)$")


def fault_text(text: str, lang: str = "en", names: SeatNames | None = None) -> str:
    """A named cheat (``str(Fault)``): who (by name when known, with the
    fingerprint: this is evidence), where; the reason stays as the checks
    wrote it (protocol terms, in English).

    >>> fault_text("seat 1 (ABCD) at entry #7: wrong key", "zh")
    '座位1（ABCD），第 7 条记录：wrong key'
    >>> fault_text("seat 1 (ABCD) at entry #7: wrong key", names=SeatNames(("ann", "bob")))
    'bob (ABCD) at entry #7: wrong key'
    """
    m = _FAULT.match(text)
    if not m:
        return text
    if lang != "zh":
        if names is None or m.group(1) is None:
            return text
        return names.name(int(m.group(1))) + text[text.index(" (") :]
    seat = f"座位{m.group(1)}" if names is None or not m.group(1) else names.name(int(m.group(1)))
    who = f"{seat}（{m.group(2)}）" if m.group(1) else "未知座位"
    where = f"，第 {m.group(3)} 条记录" if m.group(3) else ""
    return f"{who}{where}：{m.group(4)}"


_GAME_ZH = {"bluff": "吹牛", "bomb": "糊涂炸弹", "mao": "毛"}


def game_name(name: str, lang: str = "en") -> str:
    """A game's name for a person (Chinese: the seeds' names)."""
    return _GAME_ZH.get(name, name) if lang == "zh" else name


_PROGRESS = re.compile(
    r"^(deal (\d+): (you|seat (\d+)) (shuffle|lock)s?|deal (\d+) dealt) \((.*)\)$"
)
_PROOFS = re.compile(r"^proofs: (\d+) checked \+ (\d+) own(?: \+ (\d+) queued)? of (\d+)$")
_PASSES = re.compile(r"^(\d+)/(\d+) passes, unproven$")
_PEER = re.compile(
    r"^(lost the connection to|connected again to|connected to|no connection to) "
    r"seat (\d+) \(([^)]*)\)( yet)?$"
)
_PEER_SAID = {
    "lost the connection to": "与座位{}（{}）的连接断了",
    "connected again to": "与座位{}（{}）又连上了",
    "connected to": "与座位{}（{}）连上了",
    "no connection to": "还没有与座位{}（{}）连上",
}
_PEER_ZH = {"dropped": "断线", "back": "重连"}


def progress_parts(text: str, lang: str = "en") -> tuple[str, str]:
    """A deal's progress line (:func:`table.progress.deal_line`) as its step
    and its count, in ``lang``: what the app shows as its title and
    sub-title (both fit 80 columns). Another progress line is the whole
    step, with no count.

    >>> progress_parts("deal 0: seat 2 locks (proofs: 3 checked + 1 own of 6)", "zh")
    ('第 0 次发牌：座位2 上锁', '证明：已检查 3 + 自己的 1，共 6')
    >>> progress_parts("deal 1 dealt (4/4 passes, unproven)")
    ('deal 1 dealt', '4/4 passes, unproven')
    """
    m = _PROGRESS.match(text)
    if m is None:
        if lang == "zh":
            text = {"auditing every deal from the revealed keys": "正在用公开的密钥审计每一次发牌",
                    "dealt": "发牌完成"}.get(text, text)  # fmt: skip
        return text, ""
    count = m.group(7)
    if lang != "zh":
        return m.group(1), count
    if m.group(6) is not None:
        step = f"第 {m.group(6)} 次发牌完成"
    else:
        who = "你" if m.group(3) == "you" else f"座位{m.group(4)} "
        step = f"第 {m.group(2)} 次发牌：{who}{'洗牌' if m.group(5) == 'shuffle' else '上锁'}"
    proofs, passes = _PROOFS.match(count), _PASSES.match(count)
    if proofs:
        queued = f" + 排队 {proofs.group(3)}" if proofs.group(3) else ""
        checked, own, total = proofs.group(1), proofs.group(2), proofs.group(4)
        count = f"证明：已检查 {checked} + 自己的 {own}{queued}，共 {total}"
    elif passes:
        count = f"{passes.group(1)}/{passes.group(2)} 步，无证明"
    return step, count


def update_line(kind: str, text: str, lang: str = "en", names: SeatNames | None = None) -> str:
    """A session update that is not a game event (``setup``, ``over``,
    ``done``, ``fault``, ``rewound``, ``stale``, ``progress``, ``dropped``,
    ``back``), as printed; seats by name when ``names`` are known.

    >>> update_line("over", "winners [1], losers [0]: K20: the assassination failed", "zh")
    '游戏结束：座位1 赢；座位0 输：刺杀失败'
    >>> update_line("over", "winners [1], losers [0]: K20: the assassination failed",
    ...             names=SeatNames(("ann", "bob"), me=0))
    'game over: bob wins; you lose: the assassination failed'
    >>> update_line("progress", "deal 0: you shuffle (proofs: 0 checked + 0 own of 6)", "zh")
    '第 0 次发牌：你洗牌（证明：已检查 0 + 自己的 0，共 6）'
    >>> update_line("progress", "deal 1 dealt (4/4 passes, unproven)", "zh")
    '第 1 次发牌完成（4/4 步，无证明）'
    >>> update_line("dropped", "lost the connection to seat 2 (K3QF-7ZPA-M2XD-4RTY)", "zh")
    '[断线] 与座位2（K3QF-7ZPA-M2XD-4RTY）的连接断了'
    >>> update_line("dropped", "no connection to seat 2 (K3QF-7ZPA-M2XD-4RTY) yet", "zh")
    '[断线] 还没有与座位2（K3QF-7ZPA-M2XD-4RTY）连上'
    """
    if kind == "waiting":  # names the seat itself: "bob (seat 2)"
        return ("[等待] " if lang == "zh" else "[waiting] ") + waiting_line(text, lang, names)
    said = _update_line(kind, text, lang, names)
    return _named_zh(said, names) if lang == "zh" else _seats_named(said, names)


def _seats_named(line: str, names: SeatNames | None) -> str:
    """Every "seat N" in an English line by name (no grammar change)."""
    if names is None:
        return line
    return _SEAT.sub(
        lambda m: names.whose(int(m.group(1))) if m.group(2) else names.who(int(m.group(1))),
        line,
    )


def _update_line(kind: str, text: str, lang: str, names: SeatNames | None) -> str:
    if lang != "zh":
        if kind == "over":
            return f"game over: {outcome_text(text, lang, names)}"
        if kind == "setup":  # the story's first line: a separator, not a move
            m = re.match(r"^(\w+), (\d+) seats, (proven|unproven) deals$", text)
            if m:
                text = f"{m.group(1)}, {m.group(2)} players, {m.group(3)} deals"
            return f"{SEPARATOR} {text} {SEPARATOR}"
        if kind == "done" and text.startswith("clean: "):
            return f"[audit] clean: {outcome_text(text[7:], lang, names)}"
        return text if kind == "progress" else f"[{kind}] {text}"
    if kind == "progress":
        step, count = progress_parts(text, lang)
        return f"{step}（{count}）" if count else step
    if kind in ("dropped", "back"):
        m = _PEER.match(text)
        if m and (m.group(4) is not None) == (m.group(1) == "no connection to"):
            said = _PEER_SAID[m.group(1)].format(m.group(2), m.group(3))
            return f"[{_PEER_ZH[kind]}] {said}"
        return f"[{_PEER_ZH[kind]}] {text}"
    if kind == "setup":
        m = re.match(r"^(\w+), (\d+) seats, (proven|unproven) deals$", text)
        if m:
            mode = "带证明" if m.group(3) == "proven" else "不带证明"
            text = f"{game_name(m.group(1), lang)}，{m.group(2)} 名玩家，{mode}的发牌"
        return f"{SEPARATOR} {text} {SEPARATOR}"
    if kind == "over":
        return f"游戏结束：{outcome_text(text, lang, names)}"
    if kind == "done":
        if text.startswith("clean: "):
            return f"[审计] 干净：{outcome_text(text[7:], lang, names)}"
        parts = []
        for part in text.split("; "):
            if part.startswith("cheating: "):
                parts.append("作弊：" + fault_text(part[10:], lang))
            elif part.startswith("outcome: "):
                parts.append("结果：" + outcome_text(part[9:], lang, names))
            elif part.startswith("abandoned: "):
                parts.append("中途离开：" + abandoned_zh(part[11:]))
            else:
                parts.append(re.sub(r"^seat (\d+) has not made its final reveal$",
                                    r"座位\1 还没有做最后的公开", part))  # fmt: skip
        return "[审计] " + "；".join(parts)
    if kind == "abandoned":  # (v3) a seat left: not a cheating verdict
        return f"[中途离开] {abandoned_zh(text)}"
    if kind == "fault":
        found = text.removesuffix("; the game is stopped")
        stopped = "；游戏已停止" if found != text else ""
        return f"[作弊] {fault_text(found, lang)}{stopped}"
    if kind == "rewound":
        return "[回退] " + re.sub(r"^log cut back to #(\d+)$", r"日志退回到第 \1 条", text)
    if kind == "stale":  # a race, nobody blamed; the reason stays in protocol terms
        return "[过时] " + re.sub(r"^seat (\d+): ", r"座位\1：", text)
    return f"[{kind}] {text}"


def result_text(text: str, lang: str = "en", names: SeatNames | None = None) -> str:
    """How the table ended for a seat (``str(SessionResult)``), as printed
    after ``host``/``join``: the outcome in words; what was caught stays
    evidence (seat, fingerprint, entry).

    >>> result_text("clean: winners [1], losers [0]: K20: the assassination failed",
    ...             names=SeatNames(("ann", "bob"), me=0))
    'clean: bob wins; you lose: the assassination failed'
    """
    said = update_line("done", text, lang, names)
    return said.split("] ", 1)[1] if said.startswith("[") else said


_PROOF_ZH = {"equivocation": "两面签名", "forged-event": "伪造事件", "replay": "重放事件"}


def verify_line(line: str, lang: str = "en", names: SeatNames | None = None) -> str:
    """One line of ``nodealer verify``'s report (``Report.lines``), with the
    seats' names when the log's store keeps them.

    >>> verify_line("game: bomb, 3 seats, proven deals", "zh")
    '游戏：糊涂炸弹，3 个座位，带证明的发牌'
    >>> verify_line("  seat 1: K3QF-7ZPA-M2XD-4RTY", names=SeatNames(("ann", "bob")))
    '  seat 1 (bob): K3QF-7ZPA-M2XD-4RTY'
    >>> verify_line("clean: winners [1], losers [0]: K20: the assassination failed",
    ...             names=SeatNames(("ann", "bob")))
    'clean: bob wins; ann loses: the assassination failed'
    """
    said = _verify_line(line, lang, names)
    named = _named_zh(said, names) if lang == "zh" else _seats_named(said, names)
    seat = re.match(r"^  (?:seat |座位)(\d+)", line)
    if seat and names is not None and names.known(int(seat.group(1))):  # number and name
        number = int(seat.group(1))
        who = names.name(number, lang)
        said_seat = f"座位{number}（{who}）" if lang == "zh" else f"seat {number} ({who})"
        named = re.sub(r"^  [^:：]*", "  " + said_seat, named)
    return named


def _verify_line(line: str, lang: str, names: SeatNames | None) -> str:
    if lang != "zh":
        for prefix in ("clean: ", "outcome: "):
            if line.startswith(prefix):
                return prefix + outcome_text(line[len(prefix) :], lang, names)
        return line
    rules = (
        (r"^log: (.*)$", lambda m: f"日志：{m.group(1)}"),
        (r"^table (\S+) v(\d+) \((\d+) seats\): (\d+) entries$",
         lambda m: f"牌桌 {m.group(1)}（协议 v{m.group(2)}，{m.group(3)} 个座位）："
                   f"{m.group(4)} 条记录"),
        (r"^  seat (\d+): (\S+)$", lambda m: f"  座位{m.group(1)}：{m.group(2)}"),
        (r"^game: (\w+), (\d+) seats, (proven|unproven) deals$",
         lambda m: f"游戏：{game_name(m.group(1), lang)}，{m.group(2)} 个座位，"
         f"{'带证明' if m.group(3) == 'proven' else '不带证明'}的发牌"),
        (r"^note: a torn last record \(writer killed mid-append\) was ignored$",
         lambda m: "备注：忽略了写了一半的最后一条记录（写入时被中断）"),
        (r"^note: (\d+) stale bodies dropped \(races, nobody blamed\)$",
         lambda m: f"备注：丢弃了 {m.group(1)} 条过时的消息（竞争所致，不怪任何人）"),
        (r"^note: ignored an? (equivocation|forged-event|replay) proof that does not verify: (.*)$",
         lambda m: f"备注：忽略了一份不成立的{_PROOF_ZH[m.group(1)]}证明：{m.group(2)}"),
        (r"^note: (.*)$", lambda m: f"备注：{m.group(1)}"),
        (r"^CHEATING: (.*)$", lambda m: f"作弊：{fault_text(m.group(1), lang)}"),
        (r"^outcome: (.*)$", lambda m: f"结果：{outcome_text(m.group(1), lang, names)}"),
        (r"^cannot verify: (.*)$", lambda m: f"无法核查：{m.group(1)}"),
        (r"^clean: (.*)$", lambda m: f"干净：{outcome_text(m.group(1), lang, names)}"),
    )  # fmt: skip
    for pattern, make in rules:
        m = re.match(pattern, line)
        if m:
            return make(m)
    return line


_RED_CARD = re.compile(r"((?:10|[2-9AJQK])[♥♦]|RJ)")


def coloured(line: str) -> str:
    """Red cards in red (ANSI), for a colour terminal.

    >>> coloured("seat 0 plays Q♥ 7♠") == "seat 0 plays \x1b[31mQ♥\x1b[0m 7♠"
    True
    """
    return _RED_CARD.sub(lambda m: f"\x1b[31m{m.group(1)}\x1b[0m", line)
