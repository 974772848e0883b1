"""A saved game, step by step (``nodealer replay LOG``): every event in
order with the cards behind it — once the final reveals are in, every card
of every deal is known, so a replay shows what each seat really held and
placed — and the verifier's verdict on top.

>>> [s.text for s in steps_of_events(["seat 1 places 1, claims 1 × 3"], [{}])]
['seat 1 places 1, claims 1 × 3']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.cards import Card
from p2p.store import read_log
from table.machine import Table
from table.replay import Replay
from table.verify import Report, verify_log

from .story import story, verify_line


@dataclass(frozen=True)
class Step:
    """One event of the game as a person reads it."""

    number: int
    """the move number shown on screen (1, 2, …)"""
    text: str
    body: int | None = None
    """the table body it came of (protocol.md §6: numbered from 0; -1 before any)"""
    seat: int | None = None
    """the seat whose move it is (None: the table's own event)"""
    event: int | None = None
    """its index in the table's events"""


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


def steps_of_events(
    texts: Sequence[str], extras: Sequence[dict[str, Any]], lang: str = "en"
) -> list[Step]:
    steps: list[Step] = []
    for index, (text, extra) in enumerate(zip(texts, extras, strict=True)):
        line = story(text, lang)
        if line is None:
            continue
        cards = extra.get("cards")
        if cards:
            line += f"   [{' '.join(str(c) for c in cards)}]"
        body, seat = extra.get("body"), extra.get("seat")
        steps.append(Step(len(steps) + 1, line, body, seat, index))
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


def load(path: Path, lang: str = "en") -> tuple[list[Step], list[str]]:
    """The steps of a saved game and the verifier's lines about it (in ``lang``)."""
    replayed = replay_log(path, lang)
    return replayed.steps, replayed.lines


def replay_log(path: Path, lang: str = "en") -> Replayed:
    """:func:`load`, keeping the report, the table and the faces."""
    report = verify_log(path)
    saved = read_log(path)
    replay = Replay(saved.table)
    bodies: list[int] = []  # the table body each event came of
    for entry in saved.entries:
        replay.feed(entry.seq, entry.term, entry.event.author, entry.event.decoded_body())
        if replay.table is not None:
            new = len(replay.table.events) - len(bodies)
            bodies.extend([replay.table.count - 1] * new)
    table = replay.table
    lines = [verify_line(line, lang) for line in report.lines()]
    if table is None:
        return Replayed([], lines, report)
    faces = _faces(table)
    texts, extras = [], []
    for event, body in zip(table.events, bodies, strict=True):
        texts.append(str(event))
        positions = getattr(event, "positions", None)
        hidden = (
            tuple(faces.get(p) for p in positions)
            if positions and not getattr(event, "SYSTEM", False) and not hasattr(event, "cards")
            else ()
        )
        extras.append(
            {
                "cards": hidden if all(c is not None for c in hidden) else (),
                "body": body,
                "seat": event.author,
            }
        )
    return Replayed(steps_of_events(texts, extras, lang), lines, report, table, faces)
