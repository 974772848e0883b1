"""A spectator's table: the records a seat's watch port sends
(:mod:`p2p.watch`), each checked as ``nodealer verify`` checks a saved log
(the chain from the table's genesis, every event signed by its seat and
every entry by its sequencer), replayed into the table (:mod:`table.replay`)
and told as only the log made public: counts of cards, faces turned up or
revealed to everyone, the moves, whose turn. A record that does not check
stops the feed with a one-line reason; nothing after it is believed.

A copy of the records is kept as a log file (protocol.md §3.6), so that
once the final reveals are in the spectator steps through the game with
every card (the replay's god view, :mod:`tui.replay`) and can share it.

>>> WatchFeed(None).lines()
('waiting for the table…',)
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

import msgpack

from engines.cards import Card
from p2p.envelope import Entry, EventError, TableSpec
from p2p.log import _check_link
from p2p.store import StoreError, parse_log
from table.names import SeatNames
from table.replay import Replay

from .replay import _faces, _order, picture
from .story import SEPARATOR, game_name, outcome_text
from .storyteller import StoryTeller
from .words import register, t

register(
    {
        "waiting for the table…": "等待牌桌…",
        "{game}: {seats} seats, {moves} moves": "{game}：{seats} 个座位，{moves} 步",
        "{who}: {n} cards": "{who}：{n} 张",
        "face up: {cards}": "明牌：{cards}",
        "to play: {who}": "轮到：{who}",
        "dealing: {n} deals to finish": "发牌中：还有 {n} 份",
        "last moves:": "最近的步：",
        "the log stopped checking out: {reason}": "日志核查失败：{reason}",
        "game over: {outcome}": "游戏结束：{outcome}",
        "every card (final reveals in):": "所有牌（最终揭示已齐）：",
        "r: every turn with every card": "r：逐步查看每一张牌",
        "{n} watching": "{n} 人观看",
    }
)

LAST_MOVES = 8


class FeedError(ValueError):
    """A record from the seat that does not check out."""


class WatchFeed:
    """The table as a spectator knows it, record by record."""

    def __init__(self, table_id: bytes | None, copy: Path | None = None) -> None:
        self.table_id = table_id
        self.copy = copy
        self.spec: TableSpec | None = None
        self._header: dict[str, Any] | None = None
        self.replay: Replay | None = None
        self.hashes: list[bytes] = []
        self.authors: list[int] = []  # of every entry, seq order
        self.terms: list[int] = [0]
        self.counters: list[int] = []
        self.problem: str | None = None
        self.records = 0
        self.proofs = 0
        self.stories: list[str] = []
        self._fd: int | None = None

    # ------------------------------------------------------------ records
    def feed(self, record: dict[str, Any]) -> None:
        """One record of the seat's log (header first); a bad one stops the
        feed (:attr:`problem`) and raises :class:`FeedError`."""
        if self.problem is not None:
            return
        try:
            self._feed(record)
        except (FeedError, EventError, StoreError, ValueError, KeyError, TypeError) as exc:
            self.problem = str(exc)[:200] or type(exc).__name__
            raise FeedError(self.problem) from None
        self.records += 1
        self._keep(record)

    def _feed(self, record: dict[str, Any]) -> None:
        if self.spec is None:
            spec = parse_log([record]).table
            if self.table_id is not None and spec.table_id != self.table_id:
                raise FeedError("the log's header names another table than the hello")
            self.spec, self._header = spec, record
            self.hashes, self.counters = [spec.genesis], [0] * spec.n
            self.replay = Replay(spec)
            return
        assert self._header is not None and self.replay is not None
        saved = parse_log([self._header, record])
        if saved.problem is not None:
            raise FeedError(saved.problem)
        kind = record["t"]
        if kind == "entry":
            self._entry(saved.entries[0])
        elif kind == "truncate":
            self._truncate(record["seq"])
        else:  # a proof against a sequencer: the seats act on it; a spectator notes it
            self.proofs += 1

    def _entry(self, entry: Entry) -> None:
        assert self.spec is not None and self.replay is not None
        if entry.seq != len(self.hashes):
            raise FeedError(f"entry {entry.seq} found where seq {len(self.hashes)} belongs")
        digest = entry.verify(self.spec)  # the seat's and the sequencer's signatures
        _check_link(entry, self.hashes[-1], self.terms[-1], self.counters)
        self.hashes.append(digest)
        self.terms.append(entry.term)
        self.authors.append(entry.event.author)
        self.counters[entry.event.author] += 1
        body = entry.event.decoded_body()
        self.replay.feed(entry.seq, entry.term, entry.event.author, body, digest)

    def _truncate(self, seq: int) -> None:
        assert self.replay is not None and self.spec is not None
        if seq >= len(self.hashes):
            return
        del self.hashes[seq + 1 :], self.terms[seq + 1 :], self.authors[seq:]
        self.counters = [0] * self.spec.n
        for author in self.authors:
            self.counters[author] += 1
        self.replay.rewind(seq)

    def _keep(self, record: dict[str, Any]) -> None:
        """Append the record to the copy (the log file format, §3.6)."""
        if self.copy is None:
            return
        if self._fd is None:
            self.copy.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
            self._fd = os.open(self.copy, flags, 0o600)
        payload = msgpack.packb(record, use_bin_type=True)
        os.write(self._fd, len(payload).to_bytes(4, "big") + zlib.crc32(payload).to_bytes(4, "big"))
        os.write(self._fd, payload)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ------------------------------------------------------------ what is public
    @property
    def table(self) -> Any:
        return None if self.replay is None else self.replay.table

    def over(self) -> bool:
        """The game is over and every final reveal is in (the god view)."""
        return (
            self.replay is not None
            and self.replay.outcome() is not None
            and not self.replay.finals_missing()
        )

    def public_faces(self) -> dict[int, Card]:
        """The faces of the positions the log turned up for everyone."""
        table = self.table
        if table is None:
            return {}
        out: dict[int, Card] = {}
        for position, (number, local) in table.where.items():
            deal = table.deals[number]
            card = deal.public_card(local) if deal.dealt else None
            if card is not None:
                out[position] = Card(card)
        out.update((p, Card(c)) for p, c in table.open_faces.items())
        out.update(_engine_faces(table.state))
        return out

    def faces(self) -> dict[int, Card]:
        """What the screen may show: public faces, every face once over."""
        table = self.table
        if table is None:
            return {}
        if not self.over():
            return self.public_faces()
        return {**_engine_faces(table.state), **_faces(table)}

    def names(self) -> SeatNames:
        n = 0 if self.spec is None else self.spec.n
        fps = () if self.spec is None else tuple(k.fingerprint for k in self.spec.seats)
        return SeatNames(("",) * n, fps)

    def turn(self) -> int | None:
        table = self.table
        if table is None or table.over:
            return None
        state = table.state
        if table.game.name == "mao":
            from engines.mao_state import turn_of

            try:
                return turn_of(state)
            except (ValueError, IndexError, ZeroDivisionError):
                return None
        turn = getattr(state, "turn", None)
        return turn if isinstance(turn, int) else None

    def story(self, lang: str = "en") -> list[str]:
        """Every move as a person reads it (the table's public events)."""
        table = self.table
        if table is None:
            return []
        teller = StoryTeller(self.names())
        lines: list[str] = []
        for event in table.events:
            lines.extend(x for x in teller.tell(str(event), lang) if not x.startswith(SEPARATOR))
        return lines

    def moves(self, lang: str = "en", last: int = LAST_MOVES) -> list[str]:
        """The last few moves under their heading (none: nothing yet)."""
        story = self.story(lang)[-last:] if last > 0 else []
        return [t("last moves:", lang), *("  " + line for line in story)] if story else []

    def lines(self, lang: str = "en", last: int = LAST_MOVES) -> tuple[str, ...]:
        """The big screen as lines: the game and its moves so far, every
        seat with its card count and its face-up cards, whose turn, the
        pile or area, the deal's progress, the last few moves; once the game
        is over every hand and identity as the final reveals made them.
        ``last``: how many moves (0: none, the screen shows them aside)."""
        table = self.table
        if self.problem is not None:
            return (t("the log stopped checking out: {reason}", lang, reason=self.problem),)
        if table is None:
            return (t("waiting for the table…", lang),)
        names, state, game = self.names(), table.state, table.game.name
        out = [t("{game}: {seats} seats, {moves} moves", lang, game=game_name(game, lang),
                 seats=table.setup.seats, moves=len(table.events))]  # fmt: skip
        over = self.over()
        faces = {} if over else self.public_faces()  # once over: every card, below
        turn = self.turn()
        for seat, hand in enumerate(getattr(state, "hands", ())):
            mark = "▶ " if seat == turn else "  "
            line = mark + t("{who}: {n} cards", lang, who=names.name(seat, lang), n=len(hand))
            shown = sorted((faces[p] for p in hand if p in faces), key=_order)
            if shown:
                line += "   " + t("face up: {cards}", lang, cards=" ".join(map(str, shown)))
            out.append(line)
        if turn is not None:
            out.append(t("to play: {who}", lang, who=names.name(turn, lang)))
        dealing = sum(1 for d in table.deals if not d.dealt)
        if dealing and not table.over:
            out.append(t("dealing: {n} deals to finish", lang, n=dealing))
        seats_lines = len(getattr(state, "hands", ()))
        out.extend(picture(game, state, self.faces(), names, lang)[seats_lines:])
        outcome = self.replay.outcome() if self.replay is not None else None
        if outcome is not None:
            out.append(t("game over: {outcome}", lang, outcome=outcome_text(str(outcome), lang,
                                                                             names)))  # fmt: skip
        if last:
            out.extend(self.moves(lang, min(last, 3) if over else last))
        if over:  # the god view: every hand as the final reveals made it
            out.append(t("every card (final reveals in):", lang))
            out.extend(
                "  " + x for x in picture(game, state, self.faces(), names, lang)[:seats_lines]
            )
            out.append(t("r: every turn with every card", lang))
        return tuple(out)


def _engine_faces(state: Any) -> dict[int, Card]:
    """Faces the game itself holds as played or shown to everyone (events
    of the log): Bluff's shown cards (B3, B5), the Bomb game's plays (K12),
    Mao's pile and the hand cards everyone saw."""
    out: dict[int, Card] = {}
    for attr in ("public", "faces"):  # Bluff, Bomb: (position, card) pairs
        for pair in getattr(state, attr, ()) or ():
            if isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Card):
                out[pair[0]] = pair[1]
    for attr in ("pile", "shown"):  # Mao: PileCard(position, card)
        for item in getattr(state, attr, ()) or ():
            card = getattr(item, "card", None)
            if isinstance(card, Card) and isinstance(getattr(item, "position", None), int):
                out[item.position] = card
    return out


__all__ = ["FeedError", "WatchFeed"]
