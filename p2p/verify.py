"""Replaying a table's log: the pure replay every peer runs, and ``nodealer verify``.

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
  :class:`~p2p.table.Table` with its author and the term of its entry, so the
  timer authority rule (only the sequencer of the entry's term may time out a
  timer) holds for every peer and for the verifier alike.
* A body the table refuses is a :class:`Fault`: the seat responsible (seat
  number and fingerprint), the entry (seq) and the reason. The first fault
  stops the game for the honest sessions; the table itself goes on replaying
  whatever follows (a cheater's further bodies cannot hide the first fault).

:func:`verify_log` is ``nodealer verify LOG``: it reads a saved log file
(:mod:`p2p.store`, §3.6), re-checks every signature and the hash chain, every
equivocation proof kept in the file, replays every body through the table
(every proof, every key, every move against the engine, every timer's
authority), then checks that every seat made its final reveal and audits
every deal from the revealed keys. The :class:`Report` says ``clean`` with
the outcome (exit 0), names the cheater, the entry and the reason (exit 1),
or says why the file cannot be verified (exit 2: unreadable, damaged, not a
nodealer log, or a game that never finished).

Everything here is pure except reading the file; heavy checks are the
table's (the session runs :meth:`Replay.feed` in a worker thread).
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.core import EngineError, Outcome, game
from mental_poker.errors import Verdict

from .envelope import EventError, TableSpec
from .log import verify_prefix
from .store import _RECORD, MAX_RECORD, StoreError, parse_log, read_records
from .table import Table, TableError, TableSetup

SETUP = "setup"
EXIT_CLEAN, EXIT_CHEATING, EXIT_BAD_INPUT = 0, 1, 2


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


def setup_body(game_name: str, seats: int, config: Any = None, proven: bool = True) -> dict:
    """The first body of a table's log, submitted by the host (seat 0)."""
    return {"t": SETUP, "game": game_name, "seats": seats, "config": config, "proven": proven}


def parse_setup(spec: TableSpec, body: Any) -> TableSetup:
    """The table's setup from the first log body (raises :class:`SetupError`)."""
    if not isinstance(body, Mapping) or body.get("t") != SETUP:
        raise SetupError("the first entry of a table's log must be the host's setup")
    if set(body) != {"t", "game", "seats", "config", "proven"}:
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
    setup = TableSetup(spec.table_id, name, seats, body["config"], proven)
    try:
        engine.new(setup.decoded_config(), seats)
    except (EngineError, ValueError, TypeError) as exc:
        raise SetupError(f"bad {name} config: {exc}") from exc
    return setup


@dataclass(frozen=True)
class Item:
    """One log entry as the replay needs it."""

    seq: int
    term: int
    author: int
    body: Any


class Replay:
    """The public table rebuilt from a log, entry by entry (pure)."""

    def __init__(self, spec: TableSpec) -> None:
        self.spec = spec
        self.items: list[Item] = []
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
        """A fault was found, or a seat refused the setup: honest seats play
        no further."""
        return bool(self.faults) or (self.table is not None and self.table.refusal is not None)

    def feed(self, seq: int, term: int, author: int, body: Any) -> Fault | None:
        """Apply the entry at ``seq`` (entries come in order from 1)."""
        if seq != len(self.items) + 1:
            raise ValueError(f"entry #{seq} fed where #{len(self.items) + 1} belongs")
        self.items.append(Item(seq, term, author, body))
        return self._apply(self.items[-1])

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
            return None
        try:
            verdict = self.table.feed(item.author, item.body, item.term)
        except TableError as exc:  # a log entry by a seat not at the table
            verdict = Verdict.cheat(None, str(exc))
        if verdict.ok:
            return None
        found = self.fault(verdict, item.seq)
        self.faults.append(found)
        return found

    def rewind(self, seq: int) -> None:
        """Keep entries up to ``seq`` and rebuild the table from them."""
        items = self.items[:seq]
        self.items, self.setup, self.table, self.faults, self.broken = [], None, None, [], False
        for item in items:
            self.items.append(item)
            self._apply(item)

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


# ---------------------------------------------------------------- the verifier


@dataclass
class Report:
    """What ``nodealer verify`` found in one saved log."""

    path: Path
    spec: TableSpec | None = None
    setup: TableSetup | None = None
    entries: int = 0
    faults: list[Fault] = field(default_factory=list)
    outcome: Outcome | None = None
    problem: str | None = None
    """why the file cannot be verified (bad input)"""
    notes: list[str] = field(default_factory=list)
    stale: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    """what was checked: entries, deals, proofs, keys, moves"""

    @property
    def verdict(self) -> str:
        return {EXIT_CLEAN: "clean", EXIT_CHEATING: "cheating"}.get(self.exit_code, "unverifiable")

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON document (protocol.md §7.4)."""
        outcome = None
        if self.outcome is not None:
            outcome = {
                "winners": list(self.outcome.winners),
                "losers": list(self.outcome.losers),
                "reason": self.outcome.reason,
                "cheaters": list(self.outcome.cheaters),
            }
        seats = [] if self.spec is None else [
            {"seat": s, "fingerprint": key.fingerprint} for s, key in enumerate(self.spec.seats)
        ]  # fmt: skip
        return {
            "nodealer_verify": 1,
            "verdict": self.verdict,
            "exit": self.exit_code,
            "log": str(self.path),
            "table": None if self.spec is None else self.spec.table_id.hex(),
            "seats": seats,
            "game": None if self.setup is None else self.setup.game,
            "config": None if self.setup is None else self.setup.config,
            "proven": None if self.setup is None else self.setup.proven,
            "outcome": outcome,
            "counts": dict(self.counts),
            "faults": [
                {"seat": f.seat, "fingerprint": f.fingerprint, "entry": f.seq, "reason": f.reason}
                for f in self.faults
            ],
            "problem": self.problem,
            "notes": list(self.notes),
        }

    @property
    def clean(self) -> bool:
        return self.problem is None and not self.faults and self.outcome is not None

    @property
    def exit_code(self) -> int:
        if self.faults:
            return EXIT_CHEATING
        if self.problem is not None or self.outcome is None:
            return EXIT_BAD_INPUT
        return EXIT_CLEAN

    def lines(self) -> list[str]:
        out = [f"log: {self.path}"]
        if self.spec is not None:
            out.append(f"{self.spec}: {self.entries} entries")
            for seat, key in enumerate(self.spec.seats):
                out.append(f"  seat {seat}: {key.fingerprint}")
        if self.setup is not None:
            mode = "proven" if self.setup.proven else "unproven"
            out.append(f"game: {self.setup.game}, {self.setup.seats} seats, {mode} deals")
        out.extend(f"note: {n}" for n in self.notes)
        if self.faults:
            for found in self.faults:
                out.append(f"CHEATING: {found}")
            if self.outcome is not None:
                out.append(f"outcome: {self.outcome}")
        elif self.problem is not None:
            out.append(f"cannot verify: {self.problem}")
        else:
            assert self.outcome is not None
            out.append(f"clean: {self.outcome}")
        return out


def _damage(path: Path, end: int) -> str | None:
    """Why the file has bytes after its last good record, if it does. A
    *torn* tail (a writer killed mid-append) is ignored: fewer bytes than a
    record header, or a header whose length fits the limit but runs past
    the end of the file. Anything else is a damaged record (protocol.md
    §3.6)."""
    size = path.stat().st_size
    if end >= size:
        return None
    with path.open("rb") as f:
        f.seek(end)
        header = f.read(_RECORD.size)
    if len(header) < _RECORD.size:
        return None  # torn inside the header
    length, _ = _RECORD.unpack(header)
    if length <= MAX_RECORD and end + _RECORD.size + length > size:
        return None  # torn inside the payload
    return f"damaged record at byte {end} of {size} (length or CRC-32 wrong)"


def _counts(replay: Replay, entries: int) -> dict[str, int]:
    table = replay.table
    counts = {"entries": entries, "deals": 0, "proofs": 0, "keys": 0, "moves": 0}
    if table is None:
        return counts
    counts["moves"] = sum(not event.SYSTEM for event in table.events)
    for deal in table.deals:
        counts["deals"] += 1
        passes = len(deal.shuffles) + len(deal.locks)
        counts["proofs"] += (passes if deal.setup.proven else 0) + len(deal.handovers)
        counts["proofs"] += len(deal.claims)
        counts["keys"] += sum(layer.key is not None for stack in deal.layers for layer in stack)
        counts["keys"] += len(deal.shuffle_keys)
    return counts


def verify_log(path: Path) -> Report:
    """Verify one saved log file offline (see the module docstring)."""
    path = Path(path)
    report = Report(path)
    try:
        kind = path.stat().st_mode
        if not stat.S_ISREG(kind):
            what = "a directory" if stat.S_ISDIR(kind) else "not a regular file"
            report.problem = f"{path} is {what} (a saved log is a file)"
            return report
        records, end = read_records(path)
        damage = _damage(path, end)
    except OSError as exc:
        report.problem = f"cannot read {path}: {exc.strerror or exc}"
        return report
    if not records:
        report.problem = "not a nodealer log (no records)"
        return report
    try:
        saved = parse_log(records)
    except StoreError as exc:
        report.problem = f"not a nodealer log: {exc}"
        return report
    spec = report.spec = saved.table
    if damage is not None or saved.problem is not None:
        report.problem = damage or saved.problem
        return report
    if end < path.stat().st_size:
        report.notes.append("a torn last record (writer killed mid-append) was ignored")
    replay = Replay(spec)
    hashes, chain_problem = verify_prefix(spec, saved.entries)
    good = saved.entries[: len(hashes) - 1]
    report.entries = len(saved.entries)
    for proof in saved.proofs:
        try:
            culprit = proof.verify(spec)
        except EventError as exc:
            report.notes.append(f"ignored an equivocation proof that does not verify: {exc}")
            continue
        report.faults.append(
            Fault(
                culprit,
                replay.name(culprit),
                f"equivocated: signed two different entries for seq {proof.seq} "
                f"in term {proof.term}",
                proof.seq,
            )
        )
    for entry in good:
        replay.feed(entry.seq, entry.term, entry.event.author, entry.event.decoded_body())
    report.setup = replay.setup
    report.faults.extend(replay.faults)
    if chain_problem is not None:
        position = len(hashes)  # where the bad entry sits, whatever seq it claims
        bad = saved.entries[position - 1]
        report.faults.append(_chain_fault(spec, bad, position, chain_problem))
        return report
    table = replay.table
    if table is None:
        if not replay.broken:
            report.problem = "the log holds no setup: no game was played"
        return report
    report.stale = len(table.stale)
    if table.stale:
        report.notes.append(f"{len(table.stale)} stale bodies dropped (races, nobody blamed)")
    missing = replay.finals_missing()
    if table.refusal is not None and not replay.faults:
        seat, why = table.refusal
        report.counts = _counts(replay, len(good))
        report.problem = f"seat {seat} refused the host's setup ({why}): no game was played"
        return report
    if not table.over and not replay.stopped:
        report.counts = _counts(replay, len(good))
        report.problem = (
            f"the game did not finish ({len(good)} entries, nothing wrong in them so far)"
        )
        return report
    report.counts = _counts(replay, len(good))
    if missing:
        # A log that merely stops (a crash, a copy taken mid-game) must not
        # accuse anyone: a seat that withholds its reveal is named only on
        # evidence in the log, the others' signed `overdue` (then a fault
        # above already names it).
        who = ", ".join(f"seat {s}" for s in missing)
        report.problem = (
            f"the final reveals are not all in ({who} still owes one): the audit cannot run"
        )
    else:
        verdict = replay.audit()
        if not verdict.ok:
            report.faults.append(replay.fault(verdict, None))
    report.outcome = replay.outcome()
    if report.outcome is not None:
        for seat in report.outcome.cheaters:
            report.faults.append(
                Fault(seat, replay.name(seat), f"caught by the game's rules: {report.outcome}")
            )
    return report


def _chain_fault(spec: TableSpec, entry: Any, position: int, problem: EventError) -> Fault:
    """Name the signature a bad entry breaks: its author's or its sequencer's
    (``position``: where the entry sits in the log, from 1)."""
    author = entry.event.author if 0 <= entry.event.author < spec.n else None
    try:
        entry.event.verify(spec)
    except EventError as exc:
        reason = f"{exc} - the log was altered after it was signed"
        name = None if author is None else spec.seats[author].fingerprint
        return Fault(author, name, reason, position)
    sequencer = spec.sequencer_of(entry.term)
    reason = f"{problem} - the log was altered, or its sequencer broke the chain"
    return Fault(sequencer, spec.seats[sequencer].fingerprint, reason, position)


__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_CHEATING",
    "EXIT_CLEAN",
    "Fault",
    "Item",
    "Replay",
    "Report",
    "SetupError",
    "parse_setup",
    "setup_body",
    "verify_log",
]
