"""Signed values of the log: events, sequenced entries, head statements, proofs.

Theory of operation
-------------------
A *table* (:class:`TableSpec`) is a table id, a protocol version and the seats:
the peers' public keys in seat order. Everything signed for a table binds its
*genesis* hash (version, table id and the seat list), so nothing signed for
one table, version or seat list verifies for another: a made-up header that
keeps the table id but moves the keys makes every signature fail instead of
moving the blame (who a term's sequencer or an event's author is).

* An :class:`Event` is what an author submits: its seat, its own *counter*
  (0, 1, 2, ... in the order the author made them) and an opaque msgpack body,
  signed by the author. The counter is what makes a replay detectable: the log
  accepts counter c from seat a only as a's c-th event.
* An :class:`Entry` is an event placed in the hash chain by the sequencer of a
  *term*: ``seq`` (1, 2, ...), ``term``, ``prev`` (the previous entry's hash,
  or the table's genesis hash for seq 1) and the event; the sequencer signs
  the entry's canonical bytes and the entry's hash is SHA-256 of those bytes.
  The sequencer of term t is seat ``t mod n``.
* A :class:`Head` is a signed statement "I hold the chain up to (seq, hash)";
  its ``kind`` says what for: ``ack`` (this peer has it on disk), ``beat``
  (the sequencer's heartbeat), ``vote`` (for the new sequencer of a term),
  ``newterm`` (the new sequencer starts its term there).
* A *proof against a sequencer* (:data:`SequencerProof`) is what no honest
  sequencer ever signs: an :class:`EquivocationProof` (two different entries,
  both signed by the sequencer of one term, for one sequence number), a
  :class:`ForgedEventProof` (an entry it signed around an event that does
  not verify) or a :class:`ReplayProof` (an entry it signed around an event
  whose author and counter are already in the chain that entry extends).

The exact bytes are in protocol.md §3. Verification here is pure (no I/O,
no clock) so the offline verifier can use it on a saved log.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from p2p.identity import Identity, PeerKey
from p2p.wire import MAX_BODY, MAX_LINKS, PROTOCOL_VERSION, WireError, canonical, unpack_strict

EVENT_TAG = "nodealer/event"
ENTRY_TAG = "nodealer/entry"
GENESIS_TAG = "nodealer/genesis"
HEAD_KINDS = ("ack", "beat", "vote", "newterm", "prevote", "grant")  # the last two: v3


class EventError(Exception):
    """A signed value does not verify; it is refused and nothing changes."""


class BadSignature(EventError):
    """Wrong signer, tampered bytes, or signed for another table or version."""


class BadBody(EventError, ValueError):
    """An event body that is not one strict msgpack value, or too big for the wire."""


def _too_big(body: bytes) -> str:
    return f"a body of {len(body)} bytes; the wire carries at most {MAX_BODY} bytes"


@dataclass(frozen=True)
class TableSpec:
    """A table: its id, protocol version and the seats' keys in seat order."""

    table_id: bytes
    seats: tuple[PeerKey, ...]
    version: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        if not 1 <= len(self.table_id) <= 64:
            raise ValueError("a table id is 1 to 64 bytes")
        if not 1 <= len(self.seats) <= 64:
            raise ValueError("a table has 1 to 64 seats")
        if len(set(self.seats)) != len(self.seats):
            raise ValueError("a key may hold only one seat")

    @property
    def n(self) -> int:
        return len(self.seats)

    @property
    def majority(self) -> int:
        return self.n // 2 + 1

    def seat_of(self, key: PeerKey) -> int | None:
        try:
            return self.seats.index(key)
        except ValueError:
            return None

    def sequencer_of(self, term: int) -> int:
        return term % self.n

    @cached_property
    def genesis(self) -> bytes:
        """The hash that seq 1 links to and that every signature binds:
        version, table id and seats."""
        return hashlib.sha256(
            canonical(GENESIS_TAG, self.version, self.table_id, [k.raw for k in self.seats])
        ).digest()

    def __str__(self) -> str:
        return f"table {self.table_id.hex()[:16]} v{self.version} ({self.n} seats)"


# ---------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)  # slots: a seat holds every entry of the game
class Event:
    """An author's signed event: seat, counter, msgpack body."""

    author: int
    counter: int
    body: bytes
    sig: bytes

    @staticmethod
    def signed_bytes(table: TableSpec, author: int, counter: int, body: bytes) -> bytes:
        return canonical(EVENT_TAG, table.genesis, author, counter, body)

    @classmethod
    def create(cls, table: TableSpec, identity: Identity, author: int, counter: int, body: bytes):
        sig = identity.sign(cls.signed_bytes(table, author, counter, body))
        return cls(author, counter, body, sig)

    def verify(self, table: TableSpec) -> Any:
        """Raise :class:`EventError` unless the seat's key signed this for
        ``table``; the decoded body (it was decoded to be checked)."""
        if not 0 <= self.author < table.n:
            raise BadSignature(f"event author seat {self.author} is not at this table")
        data = self.signed_bytes(table, self.author, self.counter, self.body)
        if not table.seats[self.author].verify(self.sig, data):
            raise BadSignature(
                f"event #{self.counter} of seat {self.author} is not signed by that seat "
                "for this table and version"
            )
        if len(self.body) > MAX_BODY:
            raise BadBody(f"event #{self.counter} of seat {self.author}: {_too_big(self.body)}")
        try:
            return unpack_strict(self.body)
        except WireError as exc:
            raise BadBody(f"event #{self.counter} of seat {self.author}: {exc}") from exc

    def digest(self, table: TableSpec) -> bytes:
        data = self.signed_bytes(table, self.author, self.counter, self.body)
        return hashlib.sha256(data + self.sig).digest()

    def decoded_body(self) -> Any:
        return unpack_strict(self.body)

    def to_wire(self) -> dict[str, Any]:
        return {"a": self.author, "c": self.counter, "b": self.body, "s": self.sig}

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> Event:
        return cls(m["a"], m["c"], m["b"], m["s"])

    def __str__(self) -> str:
        return f"seat {self.author} event #{self.counter} ({len(self.body)} bytes)"


@dataclass(frozen=True, slots=True)
class Entry:
    """An event placed at ``seq`` of the chain by the sequencer of ``term``."""

    seq: int
    term: int
    prev: bytes
    event: Event
    sig: bytes

    @staticmethod
    def signed_bytes(table: TableSpec, seq: int, term: int, prev: bytes, digest: bytes) -> bytes:
        return canonical(ENTRY_TAG, table.genesis, seq, term, prev, digest)

    @classmethod
    def create(
        cls, table: TableSpec, identity: Identity, seq: int, term: int, prev: bytes, event: Event
    ) -> Entry:
        data = cls.signed_bytes(table, seq, term, prev, event.digest(table))
        return cls(seq, term, prev, event, identity.sign(data))

    def hash(self, table: TableSpec) -> bytes:
        data = self.signed_bytes(table, self.seq, self.term, self.prev, self.event.digest(table))
        return hashlib.sha256(data).digest()

    def verify(self, table: TableSpec) -> bytes:
        """Check both signatures; return the entry's hash (raises EventError)."""
        h = self.verify_sequencer(table)
        self.event.verify(table)
        return h

    def verify_sequencer(self, table: TableSpec) -> bytes:
        """Check only the sequencer's signature (the event is what it signed,
        good or bad); return the entry's hash (raises :class:`BadSignature`)."""
        data = self.signed_bytes(table, self.seq, self.term, self.prev, self.event.digest(table))
        sequencer = table.sequencer_of(self.term)
        if not table.seats[sequencer].verify(self.sig, data):
            raise BadSignature(
                f"entry seq {self.seq} term {self.term} is not signed by that term's "
                f"sequencer (seat {sequencer})"
            )
        return hashlib.sha256(data).digest()

    def to_wire(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "term": self.term,
            "prev": self.prev,
            "ev": self.event.to_wire(),
            "s": self.sig,
        }

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> Entry:
        return cls(m["seq"], m["term"], m["prev"], Event.from_wire(m["ev"]), m["s"])

    def __str__(self) -> str:
        return f"#{self.seq} (term {self.term}) {self.event}"


@dataclass(frozen=True)
class Head:
    """A signed statement of a chain head, for one purpose (``kind``)."""

    kind: str
    term: int
    seq: int
    hterm: int  # term of the entry at ``seq`` (0 for the genesis)
    hash: bytes
    sig: bytes

    @staticmethod
    def signed_bytes(
        table: TableSpec, kind: str, term: int, seq: int, hterm: int, h: bytes
    ) -> bytes:
        return canonical(f"nodealer/{kind}", table.genesis, term, seq, hterm, h)

    @classmethod
    def create(
        cls,
        table: TableSpec,
        identity: Identity,
        kind: str,
        term: int,
        seq: int,
        hterm: int,
        h: bytes,
    ) -> Head:
        sig = identity.sign(cls.signed_bytes(table, kind, term, seq, hterm, h))
        return cls(kind, term, seq, hterm, h, sig)

    def verify(self, table: TableSpec, signer: int) -> None:
        data = self.signed_bytes(table, self.kind, self.term, self.seq, self.hterm, self.hash)
        if not table.seats[signer].verify(self.sig, data):
            raise BadSignature(f"{self.kind} from seat {signer} has a bad signature")

    def to_wire(self) -> dict[str, Any]:
        return {
            "k": self.kind,
            "term": self.term,
            "seq": self.seq,
            "hterm": self.hterm,
            "h": self.hash,
            "s": self.sig,
        }

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> Head:
        return cls(m["k"], m["term"], m["seq"], m["hterm"], m["h"], m["s"])


@dataclass(frozen=True)
class EquivocationProof:
    """Two different entries signed by one term's sequencer for one seq."""

    a: Entry
    b: Entry

    kind: ClassVar[str] = "proof"  # its wire message kind and log record tag
    label: ClassVar[str] = "equivocation proof"

    @property
    def seq(self) -> int:
        return self.a.seq

    @property
    def term(self) -> int:
        return self.a.term

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.kind, self.term, self.seq)

    def culprit(self, table: TableSpec) -> int:
        return table.sequencer_of(self.a.term)

    def verify(self, table: TableSpec) -> int:
        """Check the proof; return the equivocating seat (raises EventError)."""
        if self.a.seq != self.b.seq or self.a.term != self.b.term:
            raise EventError("an equivocation proof needs two entries of one term and seq")
        ha, hb = self.a.verify(table), self.b.verify(table)
        if ha == hb:
            raise EventError("an equivocation proof needs two different entries")
        return self.culprit(table)

    def what(self, table: TableSpec) -> str:
        """What the culprit did, for a person (once the proof verified)."""
        return f"equivocated: signed two different entries for seq {self.seq} in term {self.term}"

    def to_wire(self) -> dict[str, Any]:
        return {"a": self.a.to_wire(), "b": self.b.to_wire()}

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> EquivocationProof:
        return cls(Entry.from_wire(m["a"]), Entry.from_wire(m["b"]))

    def __str__(self) -> str:
        return f"equivocation at seq {self.seq} in term {self.term}"


@dataclass(frozen=True)
class ForgedEventProof:
    """An entry validly signed by its term's sequencer whose event is not a
    valid event of its author: a bad author signature (or a body that is not
    one strict msgpack value). A sequencer checks every event before it
    signs the entry, so only a dishonest one ever signs this."""

    e: Entry

    kind: ClassVar[str] = "forged"
    label: ClassVar[str] = "forged-event proof"

    @property
    def seq(self) -> int:
        return self.e.seq

    @property
    def term(self) -> int:
        return self.e.term

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.kind, self.term, self.seq)

    def culprit(self, table: TableSpec) -> int:
        return table.sequencer_of(self.e.term)

    def verify(self, table: TableSpec) -> int:
        """Check the proof; return the sequencer that signed the forged event
        (raises EventError: the entry is not its sequencer's, or its event is good)."""
        try:
            self.e.verify_sequencer(table)
        except BadSignature as exc:
            raise EventError(f"a forged-event proof proves nothing: {exc}") from exc
        try:
            self.e.event.verify(table)
        except EventError:
            return self.culprit(table)
        raise EventError(
            f"a forged-event proof whose event verifies (seq {self.seq}, term {self.term})"
        )

    def what(self, table: TableSpec) -> str:
        ev = self.e.event
        try:
            ev.verify(table)
            why = "it verifies"  # (never, for a proof that verified)
        except EventError as exc:
            why = str(exc)
        return (
            f"forged signature: signed entry seq {self.seq} in term {self.term} around "
            f"seat {ev.author}'s event #{ev.counter}, which fails its check ({why})"
        )

    def to_wire(self) -> dict[str, Any]:
        return {"e": self.e.to_wire()}

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> ForgedEventProof:
        return cls(Entry.from_wire(m["e"]))

    def __str__(self) -> str:
        return f"forged event at seq {self.seq} in term {self.term}"


@dataclass(frozen=True)
class ReplayProof:
    """An entry ``b`` validly signed by its term's sequencer whose event's
    (author, counter) is already in the chain ``b`` extends, at entry ``a``.
    ``links`` are (term, event digest) of each entry between them, so that
    ``b.prev`` is seen to hash back to ``a``: the proof stands on its own."""

    a: Entry
    b: Entry
    links: tuple[tuple[int, bytes], ...] = ()

    kind: ClassVar[str] = "replay"
    label: ClassVar[str] = "replay proof"

    @property
    def seq(self) -> int:
        return self.b.seq

    @property
    def term(self) -> int:
        return self.b.term

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.kind, self.term, self.seq)

    def culprit(self, table: TableSpec) -> int:
        return table.sequencer_of(self.b.term)

    def verify(self, table: TableSpec) -> int:
        """Check the proof; return the sequencer that signed the replay
        (raises EventError)."""
        a, b = self.a, self.b
        if (a.event.author, a.event.counter) != (b.event.author, b.event.counter):
            raise EventError("a replay proof needs two entries of one event (author, counter)")
        if not a.seq < b.seq or len(self.links) != b.seq - a.seq - 1:
            raise EventError(
                f"a replay proof from seq {a.seq} to seq {b.seq} needs "
                f"{max(b.seq - a.seq - 1, 0)} links, not {len(self.links)}"
            )
        if len(self.links) > MAX_LINKS:
            raise EventError(f"a replay proof carries at most {MAX_LINKS} links")
        h = a.verify(table)
        b.verify(table)
        for seq, (term, digest) in enumerate(self.links, start=a.seq + 1):
            h = hashlib.sha256(Entry.signed_bytes(table, seq, term, h, digest)).digest()
        if h != b.prev:
            raise EventError(
                f"a replay proof whose seq {a.seq} is not in the chain seq {b.seq} extends"
            )
        return self.culprit(table)

    def what(self, table: TableSpec) -> str:
        ev = self.b.event
        return (
            f"replayed an event: sequenced seat {ev.author}'s event #{ev.counter} again at "
            f"seq {self.seq} in term {self.term}; it is already at seq {self.a.seq}"
        )

    def to_wire(self) -> dict[str, Any]:
        links = [{"term": term, "d": digest} for term, digest in self.links]
        return {"a": self.a.to_wire(), "b": self.b.to_wire(), "links": links}

    @classmethod
    def from_wire(cls, m: dict[str, Any]) -> ReplayProof:
        links = tuple((link["term"], link["d"]) for link in m["links"])
        return cls(Entry.from_wire(m["a"]), Entry.from_wire(m["b"]), links)

    def __str__(self) -> str:
        return f"replayed event at seq {self.seq} in term {self.term}"


SequencerProof = EquivocationProof | ForgedEventProof | ReplayProof
"""Evidence, checkable by anyone holding the table, that the sequencer of a
term signed what no honest sequencer signs (protocol.md §3.5)."""

PROOF_KINDS: dict[str, type[EquivocationProof] | type[ForgedEventProof] | type[ReplayProof]] = {
    cls.kind: cls for cls in (EquivocationProof, ForgedEventProof, ReplayProof)
}


def proof_from_wire(kind: str, m: dict[str, Any]) -> SequencerProof:
    """A proof from its schema-checked message or log record (``kind``: its
    message kind / record tag, a key of :data:`PROOF_KINDS`)."""
    return PROOF_KINDS[kind].from_wire(m)
