"""A saved game, step by step (``nodealer replay LOG``): every event in
order with the cards behind it — once the final reveals are in, every card
of every deal is known, so a replay shows what each seat really held and
placed — and, at each step, the table as it was then: every hand (faces
once the log reveals them), the pile, the Bomb game's area. How the game
ended is the last step, not the first line (no spoiler); the verifier's
verdict on top says only whether the log is clean.

>>> [s.text for s in steps_of_events(["seat 1 places 1, claims 1 × 3"], [{}])]
['seat 1 places 1, claims 1 × 3']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engines.cards import Card
from p2p.store import read_log
from table.machine import Table
from table.names import SeatNames, names_of_log
from table.replay import Replay
from table.turn_timer import event_text
from table.verify import Report, verify_log

from .story import SEPARATOR, game_name, outcome_text, verify_line
from .storyteller import StoryTeller
from .words import register, t

register(
    {
        "{who}: {cards}": "{who}：{cards}",
        "pile: {n} cards, last claim {claim} by {who}": "牌堆：{n} 张，最后声称 {claim}（{who}）",
        "pile: {n} cards": "牌堆：{n} 张",
        "pile: empty": "牌堆：空",
        "area: {cards}": "桌面：{cards}",
        "the bomb lies in front of {who}": "炸弹在 {who} 面前",
        "discard pile: {n} cards": "弃牌堆：{n} 张",
        "identities: {ids}": "身份牌：{ids}",
        "top of the pile: {card} ({n} cards)": "牌堆顶：{card}（共 {n} 张）",
        "draw pile: {n} cards": "摸牌堆：{n} 张",
        "game over: {outcome}": "游戏结束：{outcome}",
        "audit: clean (every deal and every move checks out)": (
            "审计：干净（每一次发牌、每一步都核查无误）"
        ),
        "{game} with {names}": "{game}，玩家：{names}",
    }
)


@dataclass(frozen=True)
class Step:
    """One event of the game as a person reads it, and the table after it."""

    number: int
    """the move number shown on screen (1, 2, …)"""
    text: str
    body: int | None = None
    """the table body it came of (protocol.md §6: numbered from 0; -1 before any)"""
    seat: int | None = None
    """the seat whose move it is (None: the table's own event)"""
    event: int | None = None
    """its index in the table's events"""
    table: tuple[str, ...] = ()
    """the table after it, as lines of text (:func:`picture`)"""


def _faces(table: Any) -> dict[int, Card]:
    """Every engine position whose face the log makes known (final reveals)."""
    out: dict[int, Card] = {}
    for position, (number, local) in table.where.items():
        deal = table.deals[number]
        card = deal.public_card(local) if deal.dealt else None
        if card is None and deal.dealt and not deal.missing_final():
            card = deal.setup.deck.index_of(deal.peeled(local))
        if card is not None:
            out[position] = Card(card)
    out.update((p, Card(c)) for p, c in table.open_faces.items())
    return out


def _order(card: Card | None) -> tuple[int, int]:
    if card is None:
        return (99, 0)
    rank = card.rank or 14  # jokers last
    return (rank, card.suit if card.suit is not None else 9)


def _cards(positions: Sequence[int], faces: dict[int, Card]) -> str:
    shown = sorted((faces.get(p) for p in positions), key=_order)
    return " ".join("?" if c is None else str(c) for c in shown) or "—"


def picture(
    game: str, state: Any, faces: dict[int, Card], names: SeatNames, lang: str = "en"
) -> tuple[str, ...]:
    """The table in ``state`` as lines of text: each seat's hand (faces
    known from the log, sorted), then the pile, area or discard."""
    lines = [
        t("{who}: {cards}", lang, who=names.name(seat, lang), cards=_cards(hand, faces))
        for seat, hand in enumerate(getattr(state, "hands", ()))
    ]
    if game == "bluff":
        pile = getattr(state, "pile", ())
        n = sum(len(entry.positions) for entry in pile)
        if pile:
            last = pile[-1]
            lines.append(t("pile: {n} cards, last claim {claim} by {who}", lang, n=n,
                           claim=last.claim, who=names.name(last.seat, lang)))  # fmt: skip
        else:
            lines.append(t("pile: empty", lang))
    elif game == "bomb":
        area = getattr(state, "area", ())
        if area:
            lines.append(t("area: {cards}", lang, cards=_cards(area, faces)))
        if getattr(state, "bomb", None) is not None:
            lines.append(t("the bomb lies in front of {who}", lang,
                           who=names.name(state.bomb, lang)))  # fmt: skip
        if getattr(state, "discard", ()):
            lines.append(t("discard pile: {n} cards", lang, n=len(state.discard)))
        identities = getattr(state, "identities", ())
        if identities:  # K20-K23: turned up at the end
            said = ", ".join(f"{names.name(s, lang)} {card}" for s, card in enumerate(identities))
            lines.append(t("identities: {ids}", lang, ids=said))
    elif game == "mao":
        pile = getattr(state, "pile", ())
        if pile:
            lines.append(t("top of the pile: {card} ({n} cards)", lang, card=pile[-1].card,
                           n=len(pile)))  # fmt: skip
        lines.append(t("draw pile: {n} cards", lang, n=len(getattr(state, "draw", ()))))
    return tuple(lines)


def steps_of_events(
    texts: Sequence[str],
    extras: Sequence[dict[str, Any]],
    lang: str = "en",
    names: SeatNames | None = None,
) -> list[Step]:
    """The steps a person reads: one per story line (separators left out),
    each with the cards behind a hidden play and the table after it."""
    teller = StoryTeller(names)
    steps: list[Step] = []
    for index, (text, extra) in enumerate(zip(texts, extras, strict=True)):
        lines = teller.tell(text, lang)
        if not lines and steps and extra.get("table"):  # what followed from it (a reveal)
            steps[-1] = replace(steps[-1], table=extra["table"])
        for line in lines:
            if line.startswith(SEPARATOR):
                continue
            cards = extra.get("cards")
            if cards:
                line += f"   [{' '.join(str(c) for c in cards)}]"
            steps.append(Step(len(steps) + 1, line, extra.get("body"), extra.get("seat"), index,
                              extra.get("table", ())))  # fmt: skip
    return steps


@dataclass
class Replayed:
    """A saved game replayed: its steps, the verifier's report and lines, the
    table at the end and every face the log made known."""

    steps: list[Step]
    lines: list[str]
    report: Report
    table: Table | None = None
    faces: dict[int, Card] = field(default_factory=dict)
    names: SeatNames | None = None


def load(
    path: Path, lang: str = "en", me: str | None = None
) -> tuple[list[Step], list[str]]:
    """The steps of a saved game and the verifier's lines about it (in
    ``lang``; the outcome is the last step, the verdict's last line only
    says clean or not). ``me``: this machine's fingerprint (its seat reads
    "you")."""
    replayed = replay_log(path, lang, me)
    return replayed.steps, replayed.lines


def replay_log(path: Path, lang: str = "en", me: str | None = None) -> Replayed:
    """:func:`load`, keeping the report, the table, the faces and the names."""
    report = verify_log(path)
    saved = read_log(path)
    seat = None
    if me is not None and saved.table is not None:
        seat = next((s for s, k in enumerate(saved.table.seats) if k.fingerprint == me), None)
    names = names_of_log(path, me=seat)
    lines = [verify_line(line, lang, names) for line in report.lines()]
    if report.exit_code == 0 and lines:
        lines[-1] = t("audit: clean (every deal and every move checks out)", lang)
    replay = Replay(saved.table)
    bodies: list[int] = []  # the table body each event came of
    for entry in saved.entries:
        body = entry.event.decoded_body()
        replay.feed(entry.seq, entry.term, entry.event.author, body, entry.hash(saved.table))
        if replay.table is not None:
            new = len(replay.table.events) - len(bodies)
            bodies.extend([replay.table.count - 1] * new)
    table = replay.table
    if table is None:
        return Replayed([], lines, report, names=names)
    faces = _faces(table)
    texts, extras = [], []
    state = table.game.new_for(table.config, table.setup.seats, table.setup.version)
    game = table.game.name
    for index, (event, body) in enumerate(zip(table.events, bodies, strict=True)):
        state = table.game.apply(state, event)
        texts.append(event_text(table, index))  # a turn timer's move marked (auto)
        positions = getattr(event, "positions", None)
        hidden = (
            tuple(faces.get(p) for p in positions)
            if positions and not getattr(event, "SYSTEM", False) and not hasattr(event, "cards")
            else ()
        )
        extras.append({
            "cards": hidden if all(c is not None for c in hidden) else (),
            "table": picture(game, state, faces, names, lang),
            "body": body,
            "seat": event.author,
        })  # fmt: skip
    steps = steps_of_events(texts, extras, lang, names)
    outcome = report.outcome
    if outcome is not None:
        said = t("game over: {outcome}", lang, outcome=outcome_text(str(outcome), lang, names))
        last = steps[-1] if steps else None
        steps.append(Step(len(steps) + 1, said, None if last is None else last.body,
                          table=() if last is None else last.table))  # fmt: skip
    return Replayed(steps, lines, report, table, faces, names)


def title(path: Path, lang: str = "en", me: str | None = None) -> str:
    """What a replay's header says: the game and its players (not the
    file's path)."""
    saved = read_log(path)
    seat = None
    if me is not None and saved.table is not None:
        seat = next((s for s, k in enumerate(saved.table.seats) if k.fingerprint == me), None)
    names = names_of_log(path, me=seat)
    setup = verify_log(path).setup
    game = game_name(setup.game, lang) if setup is not None else "?"
    return t("{game} with {names}", lang, game=game, names=names.listed(range(len(names)), lang))
