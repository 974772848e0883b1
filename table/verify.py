"""``nodealer verify LOG``: check a saved game log offline and name any cheater.

:func:`verify_log` reads a saved log file (:mod:`p2p.store`, protocol.md
§3.6) as a stream, re-checks every signature and the hash chain, every
proof against a sequencer kept in the file (equivocation, a forged or a
replayed event: §3.5), replays every body through the table
with :class:`~table.replay.Replay` (every proof, every key, every move against
the engine, every timer's authority), then audits every deal from the
revealed keys. The :class:`Report` says ``clean`` with the outcome (exit 0),
names the cheater, the entry and the reason (exit 1), says (v3) that the game
ended *abandoned* and who left it, owing what (exit 3: not a cheating
verdict), or says why the file cannot be verified (exit 2: unreadable,
damaged, not a nodealer log, a game that never finished or whose final
reveals are not all in without the others' signed ``overdue`` (v2) or
``abandon`` (v3)).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.core import Outcome
from mental_poker.batch import checked_elsewhere
from p2p.envelope import EventError, TableSpec
from p2p.store import LogIndex, StoreError, scan_log
from p2p.store import damage as damage_in

from .absence import Abandoned, audit_present
from .machine import TableSetup
from .precheck import ProofsAhead
from .replay import Fault, Replay

EXIT_CLEAN, EXIT_CHEATING, EXIT_BAD_INPUT, EXIT_ABANDONED = 0, 1, 2, 3
VERDICTS = {EXIT_CLEAN: "clean", EXIT_CHEATING: "cheating", EXIT_ABANDONED: "abandoned"}


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
    abandoned: Abandoned | None = None
    """(v3) the game ended abandoned: who left, owing what"""

    @property
    def verdict(self) -> str:
        return VERDICTS.get(self.exit_code, "unverifiable")

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
        } | ({} if self.spec is None or self.spec.version < 3 else {  # (v3)
            "abandoned": self._abandoned_json()
        })  # fmt: skip

    def _abandoned_json(self) -> dict[str, Any] | None:
        ended = self.abandoned
        if ended is None:
            return None
        name = (lambda s: None) if self.spec is None else (lambda s: self.spec.seats[s].fingerprint)
        left = [
            {"seat": s, "fingerprint": name(s), "owed": owed, "since": since}
            for s, owed, since in zip(ended.seats, ended.owed, ended.since, strict=True)
        ]
        return {"left": left, "at": ended.at, "why": ended.why}

    @property
    def clean(self) -> bool:
        return self.problem is None and not self.faults and self.outcome is not None

    @property
    def exit_code(self) -> int:
        if self.faults:
            return EXIT_CHEATING
        if self.abandoned is not None and self.problem is None:
            return EXIT_ABANDONED
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
        elif self.abandoned is not None:
            if self.outcome is not None:
                out.append(f"outcome: {self.outcome}")
            name = None if self.spec is None else (lambda s: self.spec.seats[s].fingerprint)
            out.extend(f"ABANDONED: {line}" for line in self.abandoned.lines(name))
        else:
            assert self.outcome is not None
            out.append(f"clean: {self.outcome}")
        return out


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
    """Verify one saved log file offline (see the module docstring). The
    file is read as a stream, twice: once for where its entries lie, then
    entry by entry through the replay (while a second process checks the
    pass proofs ahead, :class:`~table.precheck.ProofsAhead`), so memory
    holds the table, not the log."""
    path = Path(path)
    with ProofsAhead(path) as pre:  # started first: it reads the file itself
        return _verify(path, pre)


def _verify(path: Path, pre: ProofsAhead) -> Report:
    report = Report(path)
    try:
        kind = path.stat().st_mode
        if not stat.S_ISREG(kind):
            what = "a directory" if stat.S_ISDIR(kind) else "not a regular file"
            report.problem = f"{path} is {what} (a saved log is a file)"
            return report
        index = scan_log(path)
        damage = None if index is None else damage_in(path, index.end)
    except OSError as exc:
        report.problem = f"cannot read {path}: {exc.strerror or exc}"
        return report
    except StoreError as exc:
        report.problem = f"not a nodealer log: {exc}"
        return report
    if index is None:
        report.problem = "not a nodealer log (no records)"
        return report
    spec = report.spec = index.table
    if damage is not None:
        report.problem = damage
        return report
    if index.problem is not None:  # §3.6: reading stops there, keeping what came before
        report.notes.append(
            f"ignored the rest of the file from its first bad record on ({index.problem}), "
            f"after entry {len(index.offsets)}"
        )
    if index.end < path.stat().st_size:
        report.notes.append("a torn last record (writer killed mid-append) was ignored")
    replay = Replay(spec, keep=False)
    report.entries = len(index.offsets)
    if index.bad_proofs:
        if index.bad_proofs == 1:
            report.notes.append(f"ignored {index.bad_proof}")
        else:
            report.notes.append(
                f"ignored {index.bad_proofs} proof records that do not verify; the first: "
                f"{index.bad_proof}"
            )
    for proof in index.proofs:  # against a sequencer: equivocation, forged or replayed event
        culprit = proof.culprit(spec)  # verified as it was read (scan_log)
        report.faults.append(Fault(culprit, replay.name(culprit), proof.what(spec), proof.seq))
    try:
        with checked_elsewhere(pre):
            # the signatures are checked here: a thread for them would wait
            # for the GIL after every check while the replay runs Python
            chain = index.chain(path)
            for entry in chain:
                pre.reached(entry.seq)
                replay.feed(entry.seq, entry.term, entry.event.author, chain.body, chain.hash)
    except (OSError, StoreError) as exc:  # the file changed or went away meanwhile
        report.problem = f"cannot read {path}: {exc}"
        return report
    good = chain.good
    report.setup = replay.setup
    report.faults.extend(replay.faults)
    if chain.problem is not None:
        position = good + 1  # where the bad entry sits, whatever seq it claims
        try:  # read again: the file may have changed or gone away meanwhile
            bad = index.entry(path, position)
            found = _chain_fault(spec, bad, position, index, path)
        except (OSError, StoreError) as exc:
            report.problem = f"cannot read {path}: it changed while it was read ({exc})"
            return report
        if found is None:
            report.problem = (
                f"entry {position} of the log does not follow ({chain.problem}): the file "
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
    report.abandoned = replay.abandoned
    if report.abandoned is not None:  # (v3) the leavers' final reveals are not waited for
        missing = [s for s in missing if s not in report.abandoned.seats]
    if table.refusal is not None and not replay.faults:
        seat, why = table.refusal
        report.counts = _counts(replay, good)
        report.problem = f"seat {seat} refused the host's setup ({why}): no game was played"
        return report
    if not table.over and not replay.stopped and report.abandoned is None:
        report.counts = _counts(replay, good)
        report.problem = f"the game did not finish ({good} entries, nothing wrong in them so far)"
        return report
    report.counts = _counts(replay, good)
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
        gone = () if report.abandoned is None else report.abandoned.seats
        if any(s in gone for s in replay.finals_missing()):
            verdict = audit_present(table, gone)  # as far as the present seats' keys go
            report.notes.append("the leavers' keys are not all out: their cards were not opened")
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


def _chain_fault(
    spec: TableSpec, entry: Any, position: int, index: LogIndex, path: Path
) -> Fault | None:
    """Whom a bad entry names (``position``: where it sits in the log, from
    1; the good entries before it are in ``index``): nobody when its
    sequencer signature fails (anyone can alter a file: a bad signature
    proves nothing) or when it is a genuine entry out of place (records
    moved, dropped or copied); the sequencer of its term when it signed a
    bad event or a second entry for a seq of that term (protocol.md §7.4)."""
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
    if 1 <= entry.seq < position:  # the good entry at that seq (the good chain's seq = place)
        earlier = index.entry(path, entry.seq)
        if earlier.term == entry.term and earlier != entry:  # two it signed for one seq, term
            reason = f"equivocated: signed two different entries for seq {entry.seq}"
            return Fault(sequencer, name, f"{reason} in term {entry.term}", position)
    return None  # a genuine entry out of place: records moved, dropped or copied


__all__ = [
    "EXIT_ABANDONED",
    "EXIT_BAD_INPUT",
    "EXIT_CHEATING",
    "EXIT_CLEAN",
    "Report",
    "verify_log",
]
