"""A finished game as one web page to share (``nodealer replay LOG --html
FILE``).

The page is self-contained: one HTML file with its style, its script and the
game inline, no network (a ``default-src 'none'`` content security policy
says so to the browser too). It holds only what the log holds: the public
moves and, once the final reveals are in, the faces they revealed — so every
seat's hand shows as it was at every step, as in the replay screen.

The game goes into a ``<script type="application/json">`` block, built here
from what :func:`tui.replay.replay_log` computed (the steps, the verifier's
report, the table and the known faces): per step, the story line, whose move
it was, every seat's hand and the table's public rows (piles, claims, the
bomb, Mao's rules…). A value equal to the previous step's is left out and
the page carries it forward (and of the table's rows only those that
changed are written), which keeps a long Mao game small. Text a
player typed (names, Mao's free words) is only ever put into the page as
text (``textContent``), and the JSON is escaped so that no ``</script>`` in it
can close the block (:func:`embed_json`).

Steps are the replay's move numbers: ``#turn=42`` opens move 42, as
``nodealer replay LOG --at 42`` does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engines.cards import Card

from .html_template import PAGE
from .replay import Replayed
from .story import game_name, rule_text
from .words import register, t

register(
    {
        "seat {seat}": "座位{seat}",
        "move {at}/{total}": "第 {at}/{total} 步",
        "first": "开头",
        "previous": "上一步",
        "next": "下一步",
        "last": "结尾",
        "step through the game": "逐步查看这局",
        "clean": "干净",
        "cheating": "作弊",
        "unfinished": "未完成",
        "{n} cards": "{n} 张",
        "{n} card": "{n} 张",
        "pile": "牌堆",
        "claim": "声称",
        "last play": "上一手",
        "seat {seat} placed {placed}, claims {claim}": "座位{seat} 扣下 {placed} 张，声称 {claim}",
        "set aside": "放在一边",
        "phase": "阶段",
        "round": "轮次",
        "bomb": "炸弹",
        "in front of seat {seat}": "在座位{seat}面前",
        "on the table": "桌上",
        "draw pile": "摸牌堆",
        "discard pile": "弃牌堆",
        "passed": "已过",
        "assassin": "刺客",
        "identity": "身份",
        "top card": "顶牌",
        "suit": "花色",
        "direction": "方向",
        "rule {slot} by seat {seat}": "座位{seat}的规则 {slot}",
        "rounds won": "赢的局数",
        "(hidden)": "（未公开）",
        "hand": "手牌",
        "turn": "轮到",
        "the game's story": "这局的经过",
        "no moves in this log": "这份日志里没有出手",
        "roles": "身份角色",
        "seat {seat}: {role}": "座位{seat}：{role}",
        "seat {seat}: {role} ({side})": "座位{seat}：{role}（{side}）",
        "captain": "队长",
        "member": "队员",
        "traitor": "叛徒",
        "civilian": "平民",
        "keys: ← → step, Home/End, or drag the slider; the address (#turn=N) points at this moment":
            "按键：← → 逐步，Home/End 跳到头尾，或拖动滑块；地址（#turn=N）指向此刻",
        "nodealer replay": "nodealer 回放",
        "every hand as the log's final reveals show it": "每手牌都按日志最后的公开显示",
        "only public cards: the log has no final reveals": "只显示公开的牌：日志里没有最后的公开",
    }
)

_SIDES_ZH = {"black": "黑方", "red": "红方"}  # K4: the alliances (not the card colours)


def _side(side: str, lang: str) -> str:
    return _SIDES_ZH.get(side, side) if lang == "zh" else side


_ZH_WORDS = {  # the engines' phases and Mao's rule states, for the page
    "deal": "发牌",
    "starter": "等待亮 A♠",
    "play": "出牌",
    "last_claim": "最后一手",
    "challenge": "质疑",
    "transfer": "收牌",
    "ending": "正在结束",
    "over": "结束",
    "active": "生效中",
    "dropped": "已撤销",
    "revealed": "已公开",
    "clockwise": "顺时针",
    "counter-clockwise": "逆时针",
}


def _word(value: Any, lang: str) -> str:
    text = str(value)
    return _ZH_WORDS.get(text, text) if lang == "zh" else text.replace("_", " ")


CARRIED = ("hands", "seats", "rows", "turn")
"""step fields a page carries forward from the step before when left out"""


def embed_json(data: Any) -> str:
    """``data`` as JSON that is safe inside ``<script type="application/json">``:
    ``<``, ``>`` and ``&`` (and the two JavaScript line separators) are written
    as ``\\u`` escapes, which JSON reads back as the same characters.

    >>> embed_json({"name": "</script><b>"})
    '{"name":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e"}'
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


def _cards(lang: str, n: int) -> str:
    return t("{n} card" if n == 1 else "{n} cards", lang, n=n)


def _face(value: Any) -> str | None:
    """A card as the page shows it (``Q♥``), None for a hidden one."""
    if value is None:
        return None
    if isinstance(value, int):
        return str(Card(value))
    return str(value)


def _view(game: Any, state: Any, seat: int, known: dict[int, Card]) -> dict[str, Any] | None:
    try:
        return game.view(state, seat, known)
    except (IndexError, KeyError, ValueError):  # before the deal some views have no hands
        return None


def _hand(view: dict[str, Any] | None) -> list[str | None]:
    if view is None:
        return []
    cards = []
    for card in view.get("hand", []):
        if isinstance(card, dict):
            cards.append(_face(card.get("card")))
        else:
            cards.append(_face(card[1]))
    return cards


class _Rows:
    """The table's public rows of one step: (label, text, cards)."""

    def __init__(self, lang: str) -> None:
        self.lang, self.rows = lang, []  # type: ignore[var-annotated]

    def add(self, label: str, text: str = "", cards: Sequence[Any] = ()) -> None:
        self.rows.append([t(label, self.lang), text, [_face(c) for c in cards]])


def _bluff(state: Any, public: dict[str, Any], faces: dict[int, Card], rows: _Rows) -> None:
    lang = rows.lang
    rows.add("phase", _word(public["phase"], lang))
    pile = [p for entry in state.pile for p in entry.positions]
    rows.add("pile", _cards(lang, public["pile"]), [faces.get(p) for p in pile])
    if public["claim"]:
        rows.add("claim", public["claim"])
    last = public["last"]
    if last is not None:
        rows.add("last play", t("seat {seat} placed {placed}, claims {claim}", lang, **last))
    if public["aside"]:
        rows.add("set aside", _cards(lang, public["aside"]))


def _bomb(public: dict[str, Any], rows: _Rows) -> None:
    lang = rows.lang
    rows.add("round", str(public["round"] + 1))
    if public["bomb"] is not None:
        rows.add("bomb", t("in front of seat {seat}", lang, seat=public["bomb"]))
    rows.add("on the table", "", public["area"])
    rows.add("draw pile", _cards(lang, public["draw"]))
    rows.add("discard pile", _cards(lang, public["discard"]))
    if public["passed"]:
        rows.add("passed", " ".join(t("seat {seat}", lang, seat=s) for s in public["passed"]))
    if public["assassin"] is not None:
        rows.add("assassin", t("seat {seat}", lang, seat=public["assassin"]))


def _roles(identities: Sequence[str | None], rows: _Rows) -> None:
    """K4/K5: every seat's role and the alliance it wins with, once every
    identity card is known (a finished game's god view, or the end's reveals)."""
    from engines.bomb import roles, side_of

    if not identities or any(card is None for card in identities):
        return
    cards = tuple(Card.parse(card) for card in identities if card is not None)
    said = []
    for seat, (card, role) in enumerate(zip(cards, roles(cards), strict=True)):
        side = side_of(card, role)
        words = {"seat": seat, "role": t(role.value, rows.lang)}
        if side is None:
            said.append(t("seat {seat}: {role}", rows.lang, **words))
        else:
            side_said = _side(side.value, rows.lang)
            said.append(t("seat {seat}: {role} ({side})", rows.lang, side=side_said, **words))
    rows.add("roles", " · ".join(said))


def _mao(public: dict[str, Any], rows: _Rows) -> None:
    lang = rows.lang
    rows.add("round", str(public["round"] + 1))
    rows.add("phase", _word(public["phase"], lang))
    rows.add("top card", "", [public["top"]] if public["top"] else [])
    rows.add("pile", "", public["pile"])
    rows.add("draw pile", _cards(lang, public["draw_pile"]))
    if isinstance(public["suit"], int) and 0 <= public["suit"] < 4:
        rows.add("suit", "♠♥♦♣"[public["suit"]])  # M11: the suit named after a J
    rows.add("direction", _word(public["direction"], lang))
    for rule in public["rules"]:
        label = t("rule {slot} by seat {seat}", lang, slot=rule["slot"] + 1, seat=rule["author"])
        said = rule["text"] and (rule_text(rule["text"]) if lang == "zh" else rule["text"])
        colon = "：" if lang == "zh" else ": "
        text = _word(rule["status"], lang) + (colon + said if said else "")
        rows.rows.append([label, text, []])
    rows.add("rounds won", " · ".join(str(w) for w in public["wins"]))


def _table(name: str, game: Any, state: Any, seats: int, faces: dict[int, Card],
           lang: str) -> dict[str, Any]:  # fmt: skip
    """One step's table: every seat's hand (faces the log made known),
    the seats' notes, the public rows and whose turn it is."""
    views = [_view(game, state, s, faces) for s in range(seats)]
    hands = [_hand(view) for view in views]
    # beside each seat: its card count and, in the Bomb game, its identity once known
    notes = [
        [len(hand), _face(view.get("identity")) if view is not None else None]
        for hand, view in zip(hands, views, strict=True)
    ]
    public = _view(game, state, 0, {})
    rows = _Rows(lang)
    turn = None
    if public is not None:
        turn = public.get("turn")
        if name == "bluff":
            _bluff(state, public, faces, rows)
        elif name == "bomb":
            _bomb(public, rows)
            _roles([note[1] for note in notes], rows)
        elif name == "mao":
            _mao(public, rows)
    return {"hands": hands, "seats": notes, "rows": rows.rows, "turn": turn}


def _verdict(replayed: Replayed) -> dict[str, Any]:
    """clean / cheating (who and why) / unfinished, with the verifier's lines."""
    report = replayed.report
    kind = {"clean": "clean", "cheating": "cheating"}.get(report.verdict, "unfinished")
    prefixes = ("CHEATING", "clean", "cannot verify", "outcome", "作弊", "干净", "无法核查", "结果")
    lines = [line for line in replayed.lines if line.startswith(prefixes)]
    return {"kind": kind, "lines": lines or replayed.lines[-1:]}


def page_data(replayed: Replayed, lang: str = "en", names: Sequence[str] | None = None
              ) -> dict[str, Any]:  # fmt: skip
    """Everything the page shows, as plain data (JSON-ready)."""
    report, table = replayed.report, replayed.table
    seats = report.spec.n if report.spec is not None else 0
    labels = [t("seat {seat}", lang, seat=s) for s in range(seats)]
    if names:
        labels = [f"{name} ({label})" for name, label in zip(names, labels, strict=False)]
        labels += [t("seat {seat}", lang, seat=s) for s in range(len(labels), seats)]
    fingerprints = [] if report.spec is None else [k.fingerprint for k in report.spec.seats]
    data: dict[str, Any] = {
        "nodealer_page": 1,
        "lang": lang,
        "game": None if table is None else table.setup.game,
        "title": game_name(table.setup.game, lang) if table is not None else "?",
        "table": None if report.spec is None else report.spec.table_id.hex(),
        "seats": labels,
        "fingerprints": fingerprints,
        "verdict": _verdict(replayed),
        "revealed": table is not None and table.over and bool(replayed.faces),
        "words": _words(lang),
        "steps": [],
    }
    if table is None:
        return data
    game = table.game
    state = game.new_for(table.config, seats, table.setup.version)
    previous: dict[str, Any] = {}
    by_event: dict[int | None, list[Any]] = {}  # an event may tell several lines, or none
    for step in replayed.steps:
        by_event.setdefault(step.event, []).append(step)

    def add(step: Any) -> None:
        nonlocal previous
        now = _table(data["game"], game, state, seats, replayed.faces, lang)
        out: dict[str, Any] = {"n": step.number, "text": step.text, "body": step.body,
                               "seat": step.seat}  # fmt: skip
        out.update({k: v for k, v in now.items() if previous.get(k, object()) != v})
        before = previous.get("rows")
        if "rows" in out and before is not None and len(before) == len(now["rows"]):
            # only the rows that changed (a Mao rule's text is long and rarely changes)
            changed = [[i, row] for i, row in enumerate(now["rows"]) if row != before[i]]
            out["rowdiff"] = changed
            del out["rows"]
        previous = now
        data["steps"].append(out)

    for index, event in enumerate(table.events):
        state = game.apply(state, event)
        for step in by_event.get(index, ()):
            add(step)
    for step in by_event.get(None, ()):  # how the game ended: the last step
        add(step)
    return data


def _words(lang: str) -> dict[str, str]:
    keys = ("move {at}/{total}", "first", "previous", "next", "last", "clean", "cheating",
            "unfinished", "hand", "turn", "(hidden)", "the game's story", "nodealer replay",
            "step through the game", "no moves in this log",
            "every hand as the log's final reveals show it",
            "only public cards: the log has no final reveals",
            "keys: ← → step, Home/End, or drag the slider; the address (#turn=N) points at "
            "this moment")  # fmt: skip
    return {k: t(k, lang) for k in keys}


def page_html(data: dict[str, Any]) -> str:
    """The page for ``data`` (:func:`page_data`)."""
    title = f"{data['words']['nodealer replay']} · {data['title']}"
    escaped = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        PAGE.replace("{{lang}}", "zh-Hans" if data["lang"] == "zh" else "en")
        .replace("{{title}}", escaped)
        .replace("{{data}}", embed_json(data))
    )
