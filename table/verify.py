"""``nodealer verify LOG``: check a saved game log offline and name any cheater.

:func:`verify_log` reads a saved log file (:mod:`p2p.store`, protocol.md
§3.6) as a stream, re-checks every signature and the hash chain, every
proof against a sequencer kept in the file (equivocation, a forged or a
replayed event: §3.5), replays every body through the table
with :class:`~table.replay.Replay` (every proof, every key, every move against
the engine, every timer's authority), then audits every deal from the
revealed keys. The :class:`Report` says ``clean`` with the outcome (exit 0),
names the cheater, the entry and the reason (exit 1), or says why the file
cannot be verified (exit 2: unreadable, damaged, not a nodealer log, a game
that never finished or whose final reveals are not all in without the
others' signed ``overdue``).
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.core import Outcome
from mental_poker import group
from mental_poker.batch import Check, Prechecker, checked_elsewhere, deal_checks
from mental_poker.context import Context
from mental_poker.deck import Deck
from mental_poker.errors import MentalPokerError
from mental_poker.messages import DealSetup, LockPass, ShufflePass, decode_message
from p2p.envelope import EventError, TableSpec
from p2p.log import verify_prefix
from p2p.store import MAX_RECORD, RECORD_HEADER, StoreError, parse_log, read_records

from .machine import TableSetup
from .replay import Fault, Replay, SetupError, parse_setup

EXIT_CLEAN, EXIT_CHEATING, EXIT_BAD_INPUT = 0, 1, 2


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
        header = f.read(RECORD_HEADER.size)
    if len(header) < RECORD_HEADER.size:
        return None  # torn inside the header
    length, _ = RECORD_HEADER.unpack(header)
    if length <= MAX_RECORD and end + RECORD_HEADER.size + length > size:
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
    for proof in saved.proofs:  # against a sequencer: equivocation, forged or replayed event
        try:
            culprit = proof.verify(spec)
        except EventError as exc:
            article = "an" if proof.label[0] in "aeiou" else "a"
            report.notes.append(f"ignored {article} {proof.label} that does not verify: {exc}")
            continue
        report.faults.append(Fault(culprit, replay.name(culprit), proof.what(spec), proof.seq))
    bodies = [(entry, entry.event.decoded_body()) for entry in good]
    with _prechecking(spec, [body for _, body in bodies]) as lookup, checked_elsewhere(lookup):
        for entry, body in bodies:
            replay.feed(entry.seq, entry.term, entry.event.author, body)
    report.setup = replay.setup
    report.faults.extend(replay.faults)
    if chain_problem is not None:
        position = len(hashes)  # where the bad entry sits, whatever seq it claims
        bad = saved.entries[position - 1]
        found = _chain_fault(spec, bad, position, good)
        if found is None:
            report.problem = (
                f"entry {position} of the log does not follow ({chain_problem}): the file "
                "was altered or damaged (records changed, moved, dropped or copied), which "
                "names nobody"
            )
        else:
            report.faults.append(found)
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


def pass_checks(spec: TableSpec, bodies: Sequence[Any]) -> list[Check]:
    """The shuffle and lock proofs in a log's bodies that can be stated
    without replaying it (every pass but the first shuffle of a reshuffle,
    whose input deck is the faces the game reads), in log order: what a
    :class:`~mental_poker.batch.Prechecker` verifies ahead of the replay.
    Only a guess at what the replay will check: a pass out of turn or
    malformed is simply left out (the replay checks whatever it meets
    itself, and a lookup answers only for the very same statement)."""
    try:
        setup = parse_setup(spec, bodies[0]) if bodies else None
    except SetupError:
        return []
    if setup is None or not setup.proven:
        return []
    seats = setup.seats
    deals: dict[int, tuple[list[ShufflePass], list[LockPass]]] = {}
    for body in bodies[1:]:
        if not isinstance(body, dict) or body.get("t") != "deal":
            continue
        number, msg = body.get("deal"), body.get("msg")
        if type(number) is not int or not isinstance(msg, dict) or number < 0:
            continue
        if msg.get("type") not in ("shuffle", "lock"):
            continue
        points = msg.get("deck") or msg.get("stripped") or ()
        if not isinstance(points, (list, tuple)) or len(points) < 2:
            continue  # malformed: the replay meets it and names its author
        n = len(points)
        shuffles, locks = deals.setdefault(number, ([], []))
        try:
            placeholder = DealSetup(Context(spec.table_id, number), seats, Deck.of(range(n)), True)
            message = decode_message(msg, placeholder)
        except (MentalPokerError, ValueError, TypeError):
            continue
        if isinstance(message, ShufflePass) and not locks and message.seat == len(shuffles):
            shuffles.append(message)
        elif isinstance(message, LockPass) and len(shuffles) == seats:
            if message.seat == len(locks):
                locks.append(message)
    checks: list[Check] = []
    first = Deck.of(c.index for c in setup.engine().deck(setup.decoded_config())).points
    for number, (shuffles, locks) in sorted(deals.items()):
        context = Context(spec.table_id, number)
        checks += deal_checks(context, first if number == 0 else None, shuffles, locks)
    return checks


class _prechecking:
    """The log's pass proofs verified in a background thread while the
    replay goes through the log (the replay takes each result when it meets
    the pass; see :class:`~mental_poker.batch.Prechecker`); nothing with one
    worker thread."""

    def __init__(self, spec: TableSpec, bodies: Sequence[Any]) -> None:
        self.pre: Prechecker | None = None
        if group.workers() > 1:
            try:
                checks = pass_checks(spec, bodies)
            except Exception:  # only a guess ahead: it never decides a verdict
                checks = []  # (the replay checks every pass itself)
            if checks:
                self.pre = Prechecker()
                self.pre.submit(checks)

    def __enter__(self) -> Any:
        pre = self.pre
        return pre if pre is not None else (lambda check: False)

    def __exit__(self, *exc: object) -> None:
        if self.pre is not None:
            self.pre.close()


def _chain_fault(spec: TableSpec, entry: Any, position: int, chain: Sequence[Any]) -> Fault | None:
    """Whom a bad entry names (``position``: where it sits in the log, from
    1; ``chain``: the good entries before it): nobody when its sequencer
    signature fails (anyone can alter a file: a bad signature proves
    nothing) or when it is a genuine entry out of place (records moved,
    dropped or copied); the sequencer of its term when it signed a bad event
    or a second entry for a seq of that term (protocol.md §7.4)."""
    sequencer = spec.sequencer_of(entry.term)
    name = spec.seats[sequencer].fingerprint
    try:
        entry.verify_sequencer(spec)
    except EventError:
        return None
    try:
        entry.event.verify(spec)
    except EventError as exc:
        reason = f"signed an entry around an event that fails its check ({exc})"
        return Fault(sequencer, name, reason, position)
    for earlier in chain:  # two different entries it signed for one seq and term
        if earlier.seq == entry.seq and earlier.term == entry.term and earlier != entry:
            reason = f"equivocated: signed two different entries for seq {entry.seq}"
            return Fault(sequencer, name, f"{reason} in term {entry.term}", position)
    return None  # a genuine entry out of place: records moved, dropped or copied


__all__ = ["EXIT_BAD_INPUT", "EXIT_CHEATING", "EXIT_CLEAN", "Report", "verify_log"]
