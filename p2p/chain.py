"""The chain's vocabulary and its offline check: the log's errors, roles and
effects, and :func:`verify_chain` / :func:`verify_prefix`, which re-check a
chain from the genesis (protocol.md §3.3) for the verifier and the store.
The log machine (:mod:`p2p.log`) and its elections (:mod:`p2p.election`)
build on these; :mod:`p2p.log` exports them too."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from p2p.envelope import Entry, Event, EventError, TableSpec

MAX_TERM = (1 << 32) - 1


class LogError(EventError):
    """A message that breaks the log's rules; the connection is dropped."""


class BrokenChain(LogError):
    """An entry that does not continue the chain (link, term or counter)."""


class ReplayedEvent(LogError):
    """An event whose counter was already used, or sent by someone else."""


class ProvenFault(LogError):
    """An entry its sequencer signed around a forged or replayed event: it is
    refused, and the proof against that sequencer is kept and sent."""


class Role(enum.Enum):
    FOLLOWER = "follower"  # following the sequencer of the current term
    ELECTING = "electing"  # voted for the next term's sequencer, waiting for newterm
    CANDIDATE = "candidate"  # this peer sequences the current term once a majority votes
    SEQUENCER = "sequencer"


@dataclass(frozen=True)
class Send:
    """Send ``msg`` to seat ``to``, or to every connected peer when ``to`` is None."""

    to: int | None
    msg: dict[str, Any]


@dataclass(frozen=True)
class Persist:
    """Append ``record`` to a durable file: ``"log"`` (shareable) or ``"own"``
    (this peer's private outbox). ``sync``: fsync before the next effect;
    ``lazy``: no flush of its own, synced with the next one."""

    file: str
    record: dict[str, Any]
    sync: bool = False
    lazy: bool = False


Effect = Send | Persist


def verify_chain(table: TableSpec, entries: Sequence[Entry]) -> list[bytes]:
    """Re-check a whole chain offline; return the hash of every seq (index 0
    is the genesis). Raises :class:`EventError` naming the first bad entry."""
    hashes, problem = verify_prefix(table, entries)
    if problem is not None:
        raise problem
    return hashes


def verify_prefix(
    table: TableSpec, entries: Sequence[Entry]
) -> tuple[list[bytes], EventError | None]:
    """Check a chain as far as it is valid: the hashes of the good prefix
    (genesis first) and the error that stopped it, if any."""
    hashes = [table.genesis]
    next_counter = [0] * table.n
    hterm = 0
    for expected, entry in enumerate(entries, start=1):
        try:
            if entry.seq != expected:
                raise BrokenChain(f"entry {entry.seq} found where seq {expected} belongs")
            h = entry.verify(table)
            _check_link(entry, hashes[-1], hterm, next_counter)
        except EventError as exc:
            return hashes, exc
        hashes.append(h)
        hterm = entry.term
        next_counter[entry.event.author] += 1
    return hashes, None


def _check_link(entry: Entry, prev_hash: bytes, prev_term: int, next_counter: list[int]) -> None:
    if entry.prev != prev_hash:
        raise BrokenChain(f"entry {entry.seq} does not link to the hash of seq {entry.seq - 1}")
    if entry.term < prev_term:
        raise BrokenChain(f"entry {entry.seq} goes back from term {prev_term} to {entry.term}")
    author, counter = entry.event.author, entry.event.counter
    if counter != next_counter[author]:
        raise ReplayedEvent(
            f"entry {entry.seq}: seat {author}'s event #{counter} where #{next_counter[author]} "
            "was due (replayed or skipped)"
        )


def _term(entry: Entry) -> int:
    return entry.term


def _verifies(event: Event, table: TableSpec) -> bool:
    try:
        event.verify(table)
    except EventError:
        return False
    return True
