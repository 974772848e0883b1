"""Replaying a table's log: the pure replay every peer runs while it plays
and that ``nodealer verify`` runs offline (:mod:`table.verify`).

Theory of operation
-------------------
A game is its log. :class:`Replay` rebuilds the public table from log
entries, one at a time, exactly as every peer does while playing and as the
offline verifier does from a saved file - the same code, so a peer and a
verifier cannot disagree about what a body meant.

* Entry 1 must be the *setup* body by seat 0 (the host): ``{t: "setup",
  game, seats, config, proven}`` (protocol.md §7.1). It fixes the game, the
  engine config and whether deals carry zero-knowledge proofs; the seat count
  must equal the log's. Everything after it is a table body (§6), fed to
  :class:`~table.machine.Table` with its author and the term of its entry, so
  the timer authority rule (only the sequencer of the entry's term may time
  out a timer) holds for every peer and for the verifier alike.
* A body the table refuses is a :class:`Fault`: the seat responsible (seat
  number and fingerprint), the entry (seq) and the reason. The first fault
  stops the game for the honest sessions; the table itself goes on replaying
  whatever follows (a cheater's further bodies cannot hide the first fault).

Everything here is pure (the session runs :meth:`Replay.feed` in a worker
thread: proof checks are heavy).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import msgpack

from engines.core import EngineError, Outcome, game
from mental_poker.errors import Verdict
from p2p.envelope import TableSpec

from .absence import MAX_PATIENCE, PATIENCE, Abandoned
from .machine import Table, TableError, TableSetup
from .turn_timer import MAX_TURN_TIME

SETUP = "setup"


class SetupError(ValueError):
    """A setup body that does not describe a game this table can play."""


@dataclass(frozen=True)
class Fault:
    """Who cheated, where, and how: a refused body, a broken signature, a
    missing final reveal. ``seat`` is None when nobody can be named."""

    seat: int | None
    fingerprint: str | None
    reason: str
    seq: int | None = None

    def __str__(self) -> str:
        who = "unknown seat" if self.seat is None else f"seat {self.seat} ({self.fingerprint})"
        where = f" at entry #{self.seq}" if self.seq is not None else ""
        return f"{who}{where}: {self.reason}"


def setup_body(
    game_name: str,
    seats: int,
    config: Any = None,
    proven: bool = True,
    patience: int | None = None,
    turn_time: int | None = None,
) -> dict:
    """The first body of a table's log, submitted by the host (seat 0);
    ``patience`` (v3 tables): seconds the table waits for an away seat;
    ``turn_time`` (v3 tables): the turn timer's seconds (table.turn_timer)."""
    body = {"t": SETUP, "game": game_name, "seats": seats, "config": config, "proven": proven}
    if patience is not None:
        body["patience"] = patience
    if turn_time is not None:
        body["turn_time"] = turn_time
    return body


def parse_setup(spec: TableSpec, body: Any) -> TableSetup:
    """The table's setup from the first log body (raises :class:`SetupError`)."""
    if not isinstance(body, Mapping) or body.get("t") != SETUP:
        raise SetupError("the first entry of a table's log must be the host's setup")
    keys = {"t", "game", "seats", "config", "proven"}
    patience = body.get("patience", PATIENCE)
    if spec.version >= 3:  # (v3) the table's patience may be said (§7.1)
        keys |= {"patience"} & set(body)
        if type(patience) is not int or not 1 <= patience <= MAX_PATIENCE:
            raise SetupError(f"setup body: patience is 1…{MAX_PATIENCE} seconds")
    turn_time = body.get("turn_time")
    if spec.version >= 3 and "turn_time" in body:  # (v3) the turn timer (§7.1)
        keys.add("turn_time")
        if type(turn_time) is not int or not 1 <= turn_time <= MAX_TURN_TIME:
            raise SetupError(f"setup body: turn_time is 1…{MAX_TURN_TIME} seconds")
    if set(body) != keys:
        raise SetupError("setup body: expected t, game, seats, config, proven")
    name, seats, proven = body["game"], body["seats"], body["proven"]
    if type(name) is not str or type(seats) is not int or type(proven) is not bool:
        raise SetupError("setup body: game is text, seats a whole number, proven true/false")
    if seats != spec.n:
        raise SetupError(f"setup is for {seats} seats but the table has {spec.n}")
    try:
        engine = game(name)
    except KeyError:
        raise SetupError(f"unknown game {name!r:.40}") from None
    if not engine.min_seats <= seats <= engine.max_seats:
        raise SetupError(f"{name} is for {engine.min_seats}-{engine.max_seats} seats, not {seats}")
    setup = TableSetup(spec.table_id, name, seats, body["config"], proven, spec.version, patience)
    if turn_time is not None:
        setup = replace(setup, turn_time=turn_time)
    try:
        engine.new_for(setup.decoded_config(), seats, setup.version)
    except (EngineError, ValueError, TypeError) as exc:
        raise SetupError(f"bad {name} config: {exc}") from exc
    return setup


class Item:
    """One log entry as the replay needs it. The body is kept packed
    (msgpack, about the size it had on the wire, a fraction of the decoded
    value's memory) and decoded again when read; a body that would not come
    back the same (not msgpack data, a tuple for a list) is kept as it is."""

    __slots__ = ("_body", "_packed", "author", "hash", "seq", "term")

    def __init__(
        self, seq: int, term: int, author: int, body: Any, chain_hash: bytes = b""
    ) -> None:
        self.seq, self.term, self.author, self.hash = seq, term, author, chain_hash
        self._body: Any = body
        self._packed = False
        try:
            packed = msgpack.packb(body, use_bin_type=True)
            same = _same(_unpack(packed), body)
        except (TypeError, ValueError, OverflowError, msgpack.PackException):
            return
        if same:
            self._body, self._packed = packed, True

    @classmethod
    def unpacked(cls, seq: int, term: int, author: int, body: Any, chain_hash: bytes = b"") -> Item:
        """An item that holds its body as it is (one not kept: no packing)."""
        item = cls.__new__(cls)
        item.seq, item.term, item.author, item._body, item._packed = seq, term, author, body, False
        item.hash = chain_hash
        return item

    @property
    def body(self) -> Any:
        return _unpack(self._body) if self._packed else self._body

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return NotImplemented
        return (self.seq, self.term, self.author, self.body) == (
            other.seq,
            other.term,
            other.author,
            other.body,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Item(seq={self.seq}, term={self.term}, author={self.author}, body={self.body!r})"


def _unpack(packed: bytes) -> Any:
    return msgpack.unpackb(packed, raw=False, use_list=True, strict_map_key=False)


def _same(a: Any, b: Any) -> bool:
    """``a == b`` with the very same types throughout (``==`` alone holds
    for ``1``, ``1.0`` and ``True``, and for two maps in another order)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            _same(k, k2) and _same(a[k], b[k2]) for k, k2 in zip(a, b, strict=False)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


class Replay:
    """The public table rebuilt from a log, entry by entry (pure)."""

    def __init__(self, spec: TableSpec, keep: bool = True) -> None:
        self.spec = spec
        self.items: list[Item] = []
        """every entry fed (a rewind rebuilds the table from them); none when
        ``keep`` is False (the offline verifier never rewinds)"""
        self.keep = keep
        self.fed = 0
        """entries fed so far"""
        self.setup: TableSetup | None = None
        self.table: Table | None = None
        self.faults: list[Fault] = []
        self.broken = False
        """the setup was bad: nothing after it can be replayed"""

    def name(self, seat: int | None) -> str | None:
        return None if seat is None else self.spec.seats[seat].fingerprint

    def fault(self, verdict: Verdict, seq: int | None) -> Fault:
        return Fault(verdict.seat, self.name(verdict.seat), verdict.reason, seq)

    @property
    def stopped(self) -> bool:
        """A fault was found, a seat refused the setup or (v3) the game
        ended abandoned: honest seats play no further."""
        return bool(self.faults) or (self.table is not None and self.table.stopped)

    def feed(
        self, seq: int, term: int, author: int, body: Any, chain_hash: bytes = b""
    ) -> Fault | None:
        """Apply the entry at ``seq`` (entries come in order from 1);
        ``chain_hash``: its hash in the chain (what a body's ``seen`` names,
        protocol.md §6 *Races*; empty: not known here, nothing is checked)."""
        if seq != self.fed + 1:
            raise ValueError(f"entry #{seq} fed where #{self.fed + 1} belongs")
        make = Item if self.keep else Item.unpacked
        item = make(seq, term, author, body, chain_hash)
        if self.keep:
            self.items.append(item)
        self.fed = seq
        return self._apply(item)

    def _apply(self, item: Item) -> Fault | None:
        if self.broken:
            return None
        if self.table is None:
            try:
                if item.author != 0:
                    raise SetupError(f"seat {item.author} wrote before the host's setup")
                self.setup = parse_setup(self.spec, item.body)
            except SetupError as exc:
                self.broken = True
                found = Fault(item.author, self.name(item.author), str(exc), item.seq)
                self.faults.append(found)
                return found
            self.table = Table(self.setup)
            self.table.saw(item.hash)
            return None
        try:
            verdict = self.table.feed(item.author, item.body, item.term, item.hash)
        except TableError as exc:  # a log entry by a seat not at the table
            verdict = Verdict.cheat(None, str(exc))
        except Exception as exc:  # a body never crashes a peer or verify
            seat = item.author if 0 <= item.author < len(self.spec.seats) else None
            why = f"{type(exc).__name__}: {exc}"[:200]
            verdict = Verdict.cheat(seat, f"its body could not be judged: {why}")
        if verdict.ok:
            return None
        found = self.fault(verdict, item.seq)
        self.faults.append(found)
        return found

    def rewind(self, seq: int) -> None:
        """Keep entries up to ``seq`` and rebuild the table from them."""
        if not self.keep:
            raise ValueError("a replay that keeps no entries cannot rewind")
        items = self.items[:seq]
        self.items, self.setup, self.table, self.faults, self.broken = [], None, None, [], False
        self.fed = 0
        for item in items:
            self.items.append(item)
            self.fed = item.seq
            self._apply(item)

    @property
    def abandoned(self) -> Abandoned | None:
        """(v3) how the game ended abandoned, if it did (table/absence.py)."""
        absence = None if self.table is None else self.table.absence
        return None if absence is None else absence.ended

    def finals_missing(self) -> list[int]:
        """Seats that still owe a final reveal of some dealt deal."""
        if self.table is None:
            return []
        return sorted({s for d in self.table.deals if d.dealt for s in d.missing_final()})

    def audit(self) -> Verdict:
        """The table's audit (every final reveal in): the first fault found."""
        assert self.table is not None
        for deal in self.table.deals:
            if deal.dealt:
                verdict = deal.audit()
                if not verdict.ok:
                    return verdict
        return Verdict.good()

    def outcome(self) -> Outcome | None:
        if self.table is None:
            return None
        return self.table.game.outcome(self.table.state)


__all__ = ["SETUP", "Fault", "Item", "Replay", "SetupError", "parse_setup", "setup_body"]
