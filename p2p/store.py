"""Durable state of one peer at one table: the log, its outbox, its secrets.

Theory of operation
-------------------
A table's files live in ``<data dir>/tables/<table id hex>/`` (the data dir is
``$NODEALER_HOME`` when set; see :mod:`p2p.identity`):

``log``
    The shareable game log, what ``nodealer verify`` reads: a header record
    naming the table (version, id, seat keys), then every entry as it was
    accepted, every truncation, every proof against a sequencer (equivocation,
    a forged or a replayed event). It holds nothing secret.
``own``
    This peer's outbox: every event it signed (before it is sent, so a crash
    can never make it sign a different event with the same counter), every
    term it led (so it never sequences a term twice) or voted in (so its acks
    keep that promise), and where it and its peers listened (so a restarted
    peer finds the table again).
``secrets``
    Values the table session asks us to keep (its keys for the deal), mode
    0600, latest value per name wins.

Each file is a sequence of records: 4-byte big-endian length, 4-byte CRC-32
of the payload, the msgpack payload (protocol.md §3.6). Appends go straight to
the OS; :meth:`Store.sync` fsyncs what was appended, and the node calls it
before acknowledging or delivering anything (F_FULLFSYNC on macOS, where
fsync stops at the drive's cache); the folders and files a store creates are
made durable by fsyncing their parent folder before it is used
(:mod:`p2p.disk`). One process at a time holds a store (a lock on its
``lock`` file: flock on POSIX, msvcrt on Windows). A process killed in the middle of
an append leaves a torn last record; opening the store cuts it off. Loading
re-verifies the whole chain, so a damaged file cannot feed the log a bad entry.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import zlib
from array import array
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO

import msgpack

from p2p import disk
from p2p.chain import BrokenChain, _check_link, verify_prefix
from p2p.commitment import merge_swaps
from p2p.envelope import (
    PROOF_KINDS,
    Entry,
    Event,
    EventError,
    SequencerProof,
    TableSpec,
    proof_from_wire,
)
from p2p.identity import PeerKey, data_dir
from p2p.wire import (
    ENTRY,
    EVENT,
    KEY_LEN,
    LINK,
    MAX_LINKS,
    MAX_SEATS,
    MAX_SEQ,
    MAX_TABLE_ID,
    READABLE_VERSIONS,
    SEAT,
    SchemaError,
    WireError,
    bin_field,
    int_field,
    list_field,
    map_field,
    text_field,
    unpack_strict,
)

RECORD_HEADER = struct.Struct(">II")  # u32 length, u32 CRC-32 of the payload
MAX_RECORD = 4 << 20


class StoreError(Exception):
    """A store file that belongs to another table or cannot be read."""


def table_dir(table_id: bytes, home: Path | None = None) -> Path:
    base = data_dir() if home is None else Path(home)
    return base / "tables" / table_id.hex()


def _encode(record: dict[str, Any]) -> bytes:
    payload = msgpack.packb(record, use_bin_type=True)
    return RECORD_HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def read_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Every whole record of a file and the byte offset where they end (a torn
    or damaged tail after it is ignored). Read as a stream: memory holds the
    records, never more than one record's bytes besides (a file of garbage
    costs nothing however large it is)."""
    records = RecordStream(path)
    return [record for _, record in records], records.end


class RecordStream:
    """The whole records of a file, one at a time, each with the byte offset
    where it starts, as :func:`read_records` reads them (nothing but the
    record at hand in memory); once iterated, :attr:`end` is where the whole
    records end. A missing file has no records."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.end = 0

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        self.end = 0
        try:
            f = self.path.open("rb")
        except FileNotFoundError:
            return
        with f:
            while True:
                record, size = _next_record(f)
                if record is None:
                    return
                yield self.end, record
                self.end += size


def _next_record(f: BinaryIO) -> tuple[dict[str, Any] | None, int]:
    """The record at the file's position and its size in bytes (None: no
    whole, sound record there)."""
    header = f.read(RECORD_HEADER.size)
    if len(header) < RECORD_HEADER.size:
        return None, 0
    length, crc = RECORD_HEADER.unpack(header)
    if length > MAX_RECORD:
        return None, 0
    payload = f.read(length)
    if len(payload) < length or zlib.crc32(payload) != crc:
        return None, 0
    try:
        record = unpack_strict(payload)
    except WireError:
        return None, 0
    if type(record) is not dict or type(record.get("t")) is not str:
        return None, 0
    return record, RECORD_HEADER.size + length


def damage(path: Path, end: int) -> str | None:
    """Why the file has bytes after its last good record (``end``), if it
    does: a *damaged* record, one followed by a whole, sound record (that
    one was written, synced and perhaps relied on after it). Bytes after
    ``end`` with no sound record anywhere in them are a *torn* tail (a
    writer killed mid-append; a power cut that left the last append's
    blocks zero-filled or stale), which the store cuts off."""
    size = path.stat().st_size
    if end >= size:
        return None
    with path.open("rb") as f:
        f.seek(end)
        # a damaged record is at most a record long: the next one starts
        # within that, and is at most a record long itself
        rest = f.read(2 * (RECORD_HEADER.size + MAX_RECORD))
    found = _next_sound(rest, 1)
    if found is None or not _whole_to_the_end(path, end + found, size):
        return None  # (a record inside a torn append's bytes: review 7, #4)
    return (
        f"damaged record at byte {end} of {size} (length or CRC-32 wrong; "
        f"a whole record follows at byte {end + found})"
    )


def _whole_to_the_end(path: Path, offset: int, size: int) -> bool:
    """Whether whole, sound records follow one another from ``offset`` to
    the very end of the file (what an append-only writer leaves after a
    damaged record; a record a seat put inside its move's bytes, cut by a
    crash mid-append, is followed by the rest of those bytes instead)."""
    with path.open("rb") as f:
        f.seek(offset)
        while offset < size:
            record, length = _next_record(f)
            if record is None:
                return False
            offset += length
    return offset == size


def _next_sound(data: bytes, start: int) -> int | None:
    """The first offset at or after ``start`` where a whole, sound record
    begins in ``data`` (None: none). A record's payload is a msgpack map
    (first byte 0x80-0x8f or 0xde), which most offsets fail at once."""
    for at in range(start, len(data) - RECORD_HEADER.size):
        length, crc = RECORD_HEADER.unpack_from(data, at)
        body = at + RECORD_HEADER.size
        if not 0 < length <= min(MAX_RECORD, len(data) - body):
            continue
        if not (0x80 <= data[body] <= 0x8F or data[body] == 0xDE):
            continue
        if zlib.crc32(data[body : body + length]) != crc:
            continue
        try:
            record = unpack_strict(data[body : body + length])
        except WireError:
            continue
        if type(record) is dict and type(record.get("t")) is str:
            return at
    return None


def read_record_at(path: Path, offset: int) -> dict[str, Any]:
    """The record that starts at ``offset`` of a file (one of
    :class:`RecordStream`'s offsets); StoreError if there is none."""
    with Path(path).open("rb") as f:
        f.seek(offset)
        record, _ = _next_record(f)
    if record is None:
        raise StoreError(f"no record at byte {offset} of {path}")
    return record


@dataclass
class SavedLog:
    """What a log file says: the table, the chain, the proofs."""

    table: TableSpec
    entries: list[Entry] = field(default_factory=list)
    proofs: list[SequencerProof] = field(default_factory=list)
    problem: str | None = None  # why loading stopped early, if it did
    bad_proof: str | None = None  # why the first proof left out was (check_proofs)


def _header(table: TableSpec) -> dict[str, Any]:
    return {
        "t": "table",
        "v": table.version,
        "table": table.table_id,
        "seats": [k.raw for k in table.seats],
    }


_TAG = text_field(0, 8)
_HEADER = map_field(
    {
        "t": _TAG,
        "v": int_field(0, 0xFFFF),
        "table": bin_field(1, MAX_TABLE_ID),
        "seats": list_field(bin_field(KEY_LEN, KEY_LEN), 0, MAX_SEATS),
    }
)
_LOG_RECORDS = {
    "entry": map_field({"t": _TAG, "e": ENTRY}),
    "truncate": map_field({"t": _TAG, "seq": int_field(0, MAX_SEQ)}),
    # proofs against a sequencer (protocol.md §3.5), with their message's fields
    "proof": map_field({"t": _TAG, "a": ENTRY, "b": ENTRY}),
    "forged": map_field({"t": _TAG, "e": ENTRY}),
    "replay": map_field(
        {"t": _TAG, "a": ENTRY, "b": ENTRY, "links": list_field(LINK, 0, MAX_LINKS)}
    ),
}


def parse_log(records: Iterable[dict[str, Any]], *, check_proofs: bool = False) -> SavedLog:
    """Replay log records (header, entries, truncations, proofs); pure. Every
    record is schema-checked; the first bad one stops the replay (``problem``).
    Proofs are not verified here (see :func:`verified_proofs`) unless
    ``check_proofs``: then each is checked as it comes and only those that
    verify are kept, one per seat named (a file of bogus proof records
    costs no memory; ``problem`` says why the first bad one was left out)."""
    records = iter(records)
    head = next(records, None)
    if head is None:
        raise StoreError("a log starts with its table header")
    saved = SavedLog(table_of(head))
    named: set[int] = set()
    for record in records:
        kind = record["t"]
        saved.problem = _record_problem(record)
        if saved.problem is not None:
            break
        if kind == "entry":
            saved.entries.append(Entry.from_wire(record["e"]))
        elif kind == "truncate":
            del saved.entries[record["seq"] :]
        elif kind in PROOF_KINDS and not check_proofs:
            saved.proofs.append(proof_from_wire(kind, record))
        elif kind in PROOF_KINDS:
            proof = proof_from_wire(kind, record)
            try:
                culprit = proof.verify(saved.table)
            except EventError as exc:
                why = f"left out {_a(proof.label)} that does not verify: {exc}"
                saved.bad_proof = saved.bad_proof or why
                continue
            if culprit not in named:
                named.add(culprit)
                saved.proofs.append(proof)
    return saved


def table_of(head: dict[str, Any]) -> TableSpec:
    """The table a log's first record names (StoreError if it is no header)."""
    if head.get("t") != "table":
        raise StoreError("a log starts with its table header")
    try:
        _HEADER(head, "header")
        table = TableSpec(head["table"], tuple(PeerKey(k) for k in head["seats"]), head["v"])
    except (SchemaError, ValueError) as exc:
        raise StoreError(f"bad table header: {exc}") from exc
    if table.version not in READABLE_VERSIONS:  # its signatures are over other bytes
        readable = " and ".join(map(str, READABLE_VERSIONS))
        raise StoreError(
            f"a log of protocol version {table.version}; this program reads "
            f"versions {readable}"
        )
    return table


def read_table(path: Path) -> TableSpec:
    """The table a log file's header names, reading that first record only
    (StoreError if the file holds no record or starts with no header, or is
    not a regular file: a pipe or a device is never opened)."""
    if not stat.S_ISREG(Path(path).stat().st_mode):
        raise StoreError(f"{path} is not a regular file")
    for _, record in RecordStream(path):
        return table_of(record)
    raise StoreError("not a nodealer log (no records)")


def _record_problem(record: dict[str, Any]) -> str | None:
    """Why a log record after the header is not one (None: it is)."""
    kind = record["t"]
    check = _LOG_RECORDS.get(kind)
    if check is None:
        return f"unknown log record {kind[:40]!r}"
    try:
        check(record, kind)
    except SchemaError as exc:
        return f"bad {kind} record: {exc}"
    return None


@dataclass
class LogIndex:
    """What a log file says, as :func:`parse_log` reads it, but with each
    entry kept as the byte offset of its record (:func:`read_record_at`):
    memory for a few numbers per entry, whatever the game's length."""

    table: TableSpec
    offsets: array[int] = field(default_factory=lambda: array("q"))
    """the record offset of every entry of the chain, in seq order (the
    entries a later ``truncate`` record cut are not in it)"""
    proofs: list[SequencerProof] = field(default_factory=list)
    """the proofs against a sequencer that verify, one per seat they name
    (checked as they are read: a file of bogus proofs costs no memory)"""
    bad_proofs: int = 0  # proof records that do not verify, left out
    bad_proof: str | None = None  # why the first of them does not
    problem: str | None = None  # why reading stopped early, if it did
    end: int = 0
    """the byte offset where the whole records end"""

    def entries(self, path: Path) -> Iterator[Entry]:
        """The chain's entries in seq order, read from the file one at a
        time (the file ``scan_log`` read)."""
        wanted = iter(self.offsets)
        nxt = next(wanted, None)
        if nxt is None:
            return
        for offset, record in RecordStream(path):
            if offset == nxt:  # kept offsets grow with seq: one read in order
                yield Entry.from_wire(record["e"])
                nxt = next(wanted, None)
                if nxt is None:
                    return
        raise StoreError(f"{path} changed while it was read")

    def entry(self, path: Path, position: int) -> Entry:
        """The entry at ``position`` (from 1) of the chain."""
        return Entry.from_wire(read_record_at(path, self.offsets[position - 1])["e"])

    def chain(self, path: Path, pool: Executor | None = None) -> VerifiedChain:
        """The chain's entries as far as it is valid, read one at a time."""
        return VerifiedChain(self, path, pool)


class VerifiedChain:
    """The entries of a scanned log (:func:`scan_log`) as far as the chain is
    valid, checked as :func:`~p2p.chain.verify_prefix` checks them, one at a
    time as they are read: an entry is yielded only once it verifies and
    links to the one before. Once iterated, :attr:`good` says how many did
    and :attr:`problem` why the next one did not (None: every entry).
    ``pool``: the signatures of the next :data:`SIGNATURE_BATCH` entries are
    checked there while these are used (the same checks, in the same order
    of blame)."""

    def __init__(self, index: LogIndex, path: Path, pool: Executor | None = None) -> None:
        self.index, self.path, self.pool = index, Path(path), pool
        self.good = 0
        self.problem: EventError | None = None
        self.body: Any = None
        """the decoded body of the entry last yielded (decoded once: to be
        checked, then for whoever reads the chain)"""
        self.hash = b""  # the chain hash of the entry last yielded

    def __iter__(self) -> Iterator[Entry]:
        table = self.index.table
        prev, hterm, next_counter = table.genesis, 0, [0] * table.n
        self.good, self.problem = 0, None
        for expected, (entry, checked) in enumerate(self._checked(), start=1):
            try:
                if entry.seq != expected:
                    raise BrokenChain(f"entry {entry.seq} found where seq {expected} belongs")
                if isinstance(checked, bytes):
                    h, body = checked, entry.event.decoded_body()
                else:  # Entry.verify, keeping the body its check decoded
                    h = entry.verify_sequencer(table)
                    body = entry.event.verify(table)
                _check_link(entry, prev, hterm, next_counter)
            except EventError as exc:
                self.problem = exc
                return
            prev, hterm = h, entry.term
            next_counter[entry.event.author] += 1
            self.good = expected
            self.body, self.hash = body, h
            yield entry

    def _checked(self) -> Iterator[tuple[Entry, bytes | None]]:
        """Each entry with its hash if its signatures were checked ahead
        (None: check them now, and meet whatever error they raise)."""
        entries = self.index.entries(self.path)
        if self.pool is None:
            yield from ((entry, None) for entry in entries)
            return
        table, ahead = self.index.table, deque()
        while True:
            while len(ahead) < 2:  # the batch in use and the next one
                batch = list(islice(entries, SIGNATURE_BATCH))
                if not batch:
                    break
                ahead.append((batch, self.pool.submit(_signatures, table, batch)))
            if not ahead:
                return
            batch, hashes = ahead.popleft()
            yield from zip(batch, hashes.result(), strict=True)


SIGNATURE_BATCH = 64


def _signatures(table: TableSpec, entries: list[Entry]) -> list[bytes | None]:
    """Each entry's hash if both its signatures hold, else None."""
    out: list[bytes | None] = []
    for entry in entries:
        try:
            out.append(entry.verify(table))
        except EventError:
            out.append(None)
    return out


def scan_log(path: Path) -> LogIndex | None:
    """Read a log file as :func:`read_records` then :func:`parse_log` would,
    as a stream (None: no record at all): the table, where each entry of the
    chain lies, the proofs against a sequencer, where the whole records end.
    Raises StoreError as :func:`parse_log` does."""
    records = RecordStream(path)
    index: LogIndex | None = None
    for offset, record in records:
        if index is None:
            index = LogIndex(table_of(record))
            continue
        if index.problem is not None:
            continue  # read on to find where the whole records end
        kind = record["t"]
        index.problem = _record_problem(record)
        if index.problem is not None:
            continue
        if kind == "entry":
            index.offsets.append(offset)
        elif kind == "truncate":
            del index.offsets[record["seq"] :]
        elif kind in PROOF_KINDS:
            _keep_proof(index, proof_from_wire(kind, record))
    if index is not None:
        index.end = records.end
    return index


def _keep_proof(index: LogIndex, proof: SequencerProof) -> None:
    """Keep ``proof`` if it verifies and names a seat no kept one names."""
    try:
        culprit = proof.verify(index.table)
    except EventError as exc:
        index.bad_proofs += 1
        index.bad_proof = index.bad_proof or f"{_a(proof.label)} that does not verify: {exc}"
        return
    if all(kept.culprit(index.table) != culprit for kept in index.proofs):
        index.proofs.append(proof)


def verified_proofs(
    table: TableSpec, proofs: list[SequencerProof]
) -> tuple[list[SequencerProof], str | None]:
    """The proofs that verify, and why any other was left out."""
    good: list[SequencerProof] = []
    problem = None
    for proof in proofs:
        try:
            proof.verify(table)
        except EventError as exc:
            problem = f"left out {_a(proof.label)} that does not verify: {exc}"
            continue
        good.append(proof)
    return good, problem


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def read_secret(directory: Path, name: str) -> bytes | None:
    """One secret of a table's store, read without opening the store (no
    lock taken, nothing truncated: another process may be playing it)."""
    value = None
    records, _ = read_records(Path(directory) / "secrets")
    for record in records:
        if record.get("t") == "secret" and record.get("name") == name:
            found = record.get("value")
            value = found if type(found) is bytes else value
    return value


def read_log(path: Path) -> SavedLog:
    """Load a saved log file and keep its longest verified prefix (pure
    except for reading the file; for ``nodealer verify``). ``problem`` says
    why anything was left out."""
    saved = parse_log((r for _, r in RecordStream(Path(path))), check_proofs=True)
    hashes, problem = verify_prefix(saved.table, saved.entries)
    if problem is not None:
        saved.problem = str(problem)
        saved.entries = saved.entries[: len(hashes) - 1]
    saved.problem = saved.problem or saved.bad_proof
    return saved


class Store:
    """The durable files of one peer at one table (blocking file I/O; the
    node runs its fsyncs through :mod:`p2p.disk_pace`)."""

    def __init__(self, table: TableSpec, directory: Path) -> None:
        self.table = table
        self.directory = Path(directory)
        disk.make_dirs(self.directory, 0o700)
        self.entries: list[Entry] = []
        self.proofs: list[SequencerProof] = []
        self.own_events: list[Event] = []
        self.led_terms: set[int] = set()
        self.voted = 0  # the highest term this peer voted in
        self.followed = 0  # (v3) the highest term this peer followed
        # (v3) (term, start, hash) of the latest newterm it followed
        self.followed_start: tuple[int, int, bytes] | None = None
        self.cut: tuple[int, int] | None = None  # (v3) its cuts: lowest seq, highest floor
        self.final = 0  # (v3) the highest seq this peer held final
        self.addresses: dict[int, tuple[str, int]] = {}  # where each seat listened last
        self.listen_port: int | None = None  # where we listened last
        self._secrets: dict[str, bytes] = {}
        self.problem: str | None = None
        self._fds: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._created = False  # a file made by this open (its folder to be synced)
        self._lock = self._take_lock()
        try:
            self._load()
        except BaseException:
            self.close()
            raise

    def _take_lock(self) -> int:
        """One process at a time per table store: a second one (a second
        ``nodealer join`` of the same seat) would cut the first one's
        records as torn and write over them."""
        fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT | disk.O_BINARY, 0o600)
        try:
            disk.lock(fd)
        except OSError:
            os.close(fd)
            raise StoreError(
                f"this table's store ({self.directory}) is in use by another nodealer "
                "process: one process per seat"
            ) from None
        return fd

    @classmethod
    def open(cls, table: TableSpec, home: Path | None = None) -> Store:
        return cls(table, table_dir(table.table_id, home))

    # ---------------------------------------------------------------- loading

    def _open_file(self, name: str, records_end: int, mode: int = 0o600) -> int:
        path = self.directory / name
        flags = os.O_RDWR | os.O_APPEND | disk.O_BINARY
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, mode)
            self._created = True  # its name is durable once the folder is synced
        except FileExistsError:
            fd = os.open(path, flags)
        disk.make_private(fd, path, mode)  # even if it was created (or copied) looser
        if os.fstat(fd).st_size != records_end:
            problem = damage(path, records_end)
            if problem is not None:  # whole records after it were relied on: cut nothing
                os.close(fd)
                raise StoreError(
                    f"{path}: {problem}; nothing was cut (move the file away to start "
                    "this table's store afresh)"
                )
            os.ftruncate(fd, records_end)  # cut a torn tail off
        self._fds[name] = fd
        return fd

    def _load(self) -> None:
        log_records, end = read_records(self.directory / "log")
        if log_records:
            saved = parse_log(log_records)
            if saved.table != self.table:
                raise StoreError(f"{self.directory / 'log'} belongs to another table")
            hashes, problem = verify_prefix(self.table, saved.entries)
            self.entries = saved.entries[: len(hashes) - 1]
            if problem is not None:
                self.problem = f"saved chain damaged ({problem}); kept the verified part"
            self.proofs, bad_proof = verified_proofs(self.table, saved.proofs)
            self.problem = self.problem or saved.problem or bad_proof
            self._open_file("log", end)
        else:
            self._open_file("log", 0)
            self.append("log", _header(self.table))
            self.sync()
        own_records, end = read_records(self.directory / "own")
        for record in own_records:
            if record["t"] == "submit" and _valid(EVENT, record.get("ev")):
                self.own_events.append(Event.from_wire(record["ev"]))
            elif record["t"] == "lead" and _valid(_TERM, record):
                self.led_terms.add(record["term"])
            elif record["t"] == "vote" and _valid(_TERM, record):
                self.voted = max(self.voted, record["term"])
            elif record["t"] == "term" and _valid(_TERM_START, record):
                self.followed = max(self.followed, record["term"])
                self.followed_start = max(
                    self.followed_start or (-1, 0, b""),
                    (record["term"], record["start"], record["h"]),
                    key=lambda start: start[0],
                )
            elif record["t"] == "term" and _valid(_TERM, record):
                self.followed = max(self.followed, record["term"])
            elif record["t"] == "cut" and _valid(_CUT, record):
                self.cut = merge_swaps((record["seq"], record["floor"]), self.cut)
            elif record["t"] == "final" and _valid(_FINAL, record):
                self.final = max(self.final, record["seq"])
            elif record["t"] == "addr" and _valid(_ADDR, record):
                self.addresses[record["seat"]] = (record["host"], record["port"])
            elif record["t"] == "listen" and _valid(_LISTEN, record):
                self.listen_port = record["port"]
        self._open_file("own", end)
        secret_records, end = read_records(self.directory / "secrets")
        for record in secret_records:
            name, value = record.get("name"), record.get("value")
            if record["t"] == "secret" and type(name) is str and type(value) is bytes:
                self._secrets[name] = value
        self._open_file("secrets", end)
        # what a crash left in the page cache but not on the disk is read back
        # like the rest: make it durable before anything is acknowledged or
        # (re)sent from it (protocol.md §3.6)
        self.fsync(list(self._fds.values()))
        if self._created:  # and a file made now is in its folder after a power cut
            disk.sync_dir(self.directory)

    # ---------------------------------------------------------------- writing

    def append(self, file: str, record: dict[str, Any], *, lazy: bool = False) -> None:
        """Append one record to ``file`` ("log", "own" or "secrets"); not yet
        durable until :meth:`sync`. ``lazy``: the file is not marked to be
        synced for this record (it is with the next record that is)."""
        data = _encode(record)
        fd = self._fds[file]
        start = os.fstat(fd).st_size
        try:
            written = os.write(fd, data)
            while written < len(data):  # a full disk may take part of it
                written += os.write(fd, data[written:])
        except OSError:
            # no fragment may stay for the next record to follow (sixth
            # review, #5): on the next open it would read as a damaged record
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise
        if not lazy:
            self._dirty.add(file)

    def sync(self) -> None:
        """fsync every file appended to since the last sync."""
        self.fsync(self.take_dirty())

    @property
    def dirty(self) -> bool:
        """Whether anything was appended since the last :meth:`take_dirty`."""
        return bool(self._dirty)

    def take_dirty(self, files: Collection[str] | None = None) -> list[int]:
        """The descriptors appended to since the last call (for :meth:`fsync`,
        which may then run in another thread while appends go on); only
        those of ``files`` when given (the others stay to be synced)."""
        if files is None:
            dirty, self._dirty = self._dirty, set()
        else:
            dirty = self._dirty & set(files)
            self._dirty -= dirty
        return [self._fds[name] for name in dirty if name in self._fds]

    @staticmethod
    def fsync(fds: list[int]) -> None:
        for fd in fds:
            disk.sync_file(fd)

    def remember_address(self, seat: int, host: str, port: int) -> None:
        """Note where ``seat`` listens (so a restart can redial it); no fsync."""
        if self.addresses.get(seat) != (host, port):
            self.addresses[seat] = (host, port)
            self.append("own", {"t": "addr", "seat": seat, "host": host, "port": port})

    def remember_listen_port(self, port: int) -> None:
        if self.listen_port != port:
            self.listen_port = port
            self.append("own", {"t": "listen", "port": port})

    def record_own_event(self, event: Event, *, sync: bool = True) -> None:
        """Note an event we signed, before it leaves this peer (``sync``:
        fsync now; the node syncs through :mod:`p2p.disk_pace` instead)."""
        self.append("own", {"t": "submit", "ev": event.to_wire()})
        if sync:
            self.sync()

    # ---------------------------------------------------------------- secrets

    def put_secret(self, name: str, value: bytes, *, sync: bool = True) -> None:
        """Keep ``value`` under ``name`` on disk (fsync'd before returning
        unless ``sync`` is false: then the caller must :meth:`sync`)."""
        if type(name) is not str or type(value) is not bytes:
            raise TypeError("a secret is a text name and a bytes value")
        self.append("secrets", {"t": "secret", "name": name, "value": value})
        if sync:
            self.sync()
        self._secrets[name] = value

    def get_secret(self, name: str) -> bytes | None:
        return self._secrets.get(name)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds = {}
        if self._lock >= 0:
            disk.unlock(self._lock)
            os.close(self._lock)
            self._lock = -1

    @property
    def log_path(self) -> Path:
        return self.directory / "log"


_PORT = int_field(1, 0xFFFF)
_ADDR = map_field({"t": text_field(0, 8), "seat": SEAT, "host": text_field(0, 255), "port": _PORT})
_LISTEN = map_field({"t": text_field(0, 8), "port": _PORT})
_TERM = map_field({"t": text_field(0, 8), "term": int_field(0, (1 << 32) - 1)})
_TERM_START = map_field(
    {
        "t": text_field(0, 8),
        "term": int_field(0, (1 << 32) - 1),
        "start": int_field(0, MAX_SEQ),
        "h": bin_field(32, 32),
    }
)
_FINAL = map_field({"t": text_field(0, 8), "seq": int_field(0, MAX_SEQ)})
_CUT = map_field(
    {"t": text_field(0, 8), "seq": int_field(1, MAX_SEQ), "floor": int_field(0, (1 << 32) - 1)}
)


def _valid(check: Any, value: Any) -> bool:
    try:
        check(value, "record")
    except SchemaError:
        return False
    return True
