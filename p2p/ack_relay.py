"""Relayed acks and withheld acks (protocol v3, protocol.md §3.5 *Relayed
acks*): a mixin of :class:`p2p.log.LogMachine`, sans-I/O like it.

On a v3 table an entry is final at a peer only once every seat acknowledged
it (:mod:`p2p.commitment`). If acks counted only when they came straight
from their signer, one seat could keep one chosen honest seat from ever
seeing anything final (by withholding its acks from that seat alone), and
a link down between two honest seats that both still reach a third would
stop both for good. So acks travel like events: every peer keeps the
latest signed ack of every seat and passes it on (an ``acks`` message,
one item per seat, at most every 0.1 s) to each peer that, as far as
it knows, lacks it. An ack names the seat it is from; the receiver checks
it against that seat's key before it keeps it, and a bad one is dropped
without blaming the peer that passed it on (the signature is not the
relayer's). Acks are signed over (table, vote floor, seq, term of that
entry, hash of that head), so who carried one changes nothing it says:
any connected graph of honest seats reaches finality, not only a full mesh.

The sequencer's acks count like anyone's. One that sequences and beats but
never acks would keep its term while nothing is final; so "the first entry
past our final point has been in our chain for ``censor_wait`` (with the
term at least that old), and the sequencer is one of the seats whose ack it
waits for" is evidence against the sequencer, as a held event it leaves out
is (:meth:`AckRelay._acks_withheld`, used by the pre-vote rules).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from p2p.chain import Role, Send
from p2p.envelope import EventError, Head

if TYPE_CHECKING:
    from p2p.envelope import TableSpec

RELAY_PACE = 0.1  # seconds: at most one acks message per peer this often (and per timeout/4)
SUPERSEDED = 8  # per seat: signatures of acks a newer one replaced (a relay never brings them back)


class AckRelay:
    """The ack-relay half of :class:`p2p.log.LogMachine` (see the module docstring)."""

    # state LogMachine holds
    table: TableSpec
    me: int
    v3: bool
    timeout: float
    censor_wait: float
    acks: dict[int, Head]
    _acks_by_floor: dict[int, dict[int, Head]]
    _verified_acks: set[tuple[int, Head]]
    hashes: list[bytes]
    final: int
    leavers: frozenset[int]
    role: Role
    _term_entered: float

    def _relay_init(self, now: float) -> None:
        self._peer_has: dict[int, dict[int, Head]] = {}  # peer -> seat -> its ack the peer holds
        self._superseded: dict[int, deque[bytes]] = {}
        self._next_relay = now
        self._stall: tuple[int, bytes, float] | None = None  # (seq, hash, since): see _note_stall

    # ------------------------------------------------------------ relaying

    def latest_ack(self, seat: int) -> Head | None:
        """``seat``'s latest ack this peer keeps (highest vote floor, then seq)."""
        floors = self._acks_by_floor.get(seat)
        return max(floors.values(), key=lambda a: (a.term, a.seq)) if floors else None

    def _relay_heard(self, src: int, head: Head) -> None:
        """``src`` sent us its own ack ``head`` (it holds it, so we never pass it back)."""
        old = self._acks_by_floor.get(src, {}).get(head.term)
        if old is not None and old != head:
            self._superseded.setdefault(src, deque(maxlen=SUPERSEDED)).append(old.sig)
        self._peer_has.setdefault(src, {})[src] = head

    def _relay_forget(self, peer: int) -> None:
        """A (new) connection to ``peer``: it may lack anything, send it all again."""
        self._peer_has.pop(peer, None)

    def _relay_acks(self, now: float) -> None:
        """Every timeout/4 (at most RELAY_PACE): pass each seat's latest verified ack on to every
        peer (but that seat) that, as far as we know, lacks it. Our own goes
        out as ``ack`` on its own (after each fsync, and on connect)."""
        if now < self._next_relay:
            return
        self._next_relay = now + min(self.timeout / 4, RELAY_PACE)
        latest: dict[int, Head] = {}
        for seat in range(self.table.n):
            ack = self.latest_ack(seat) if seat != self.me else None
            if ack is not None and self._ack_checks(seat, ack):
                latest[seat] = ack
        for peer in range(self.table.n):
            if peer == self.me:
                continue
            has = self._peer_has.setdefault(peer, {})
            items = [(s, a) for s, a in latest.items() if s != peer and has.get(s) != a]
            if not items:
                continue
            for seat, ack in items:
                has[seat] = ack
            of = [{"seat": s, **_head_fields(a)} for s, a in items]
            self._emit(Send(peer, {"k": "acks", "of": of}))

    def _ack_checks(self, seat: int, ack: Head) -> bool:
        """Does ``ack`` verify as ``seat``'s (checked once)?"""
        if (seat, ack) in self._verified_acks:
            return True
        try:
            ack.verify(self.table, seat)
        except EventError:
            return False
        self._verified_acks.add((seat, ack))
        return True

    def _on_relayed_acks(self, src: int, items: list[dict[str, Any]], now: float) -> None:
        """``src`` passed on other seats' acks. Each counts once it verifies
        as its named seat's; one that does not is dropped (its signature is
        not ``src``'s doing), never an error against ``src``."""
        has = self._peer_has.setdefault(src, {})
        changed = False
        for item in items:
            seat = item["seat"]
            if seat >= self.table.n or seat == self.me:
                continue
            ack = Head("ack", item["term"], item["seq"], item["hterm"], item["h"], item["s"])
            kept = self._acks_by_floor.get(seat, {}).get(ack.term)
            if kept == ack:
                has[seat] = ack
                continue
            if kept is not None and kept.seq >= ack.seq:
                continue  # no newer than what we keep: not worth a signature check
            if ack.sig in self._superseded.get(seat, ()) or not self._ack_checks(seat, ack):
                continue
            has[seat] = ack
            changed = self._keep_relayed(seat, ack) or changed
            self._compare_head(src, ack, now)  # catch up, or probe a conflict (as for an ack)
        if changed:
            self._update_final()

    def _keep_relayed(self, seat: int, ack: Head) -> bool:
        """Keep a verified relayed ack unless we keep a later one of that
        seat for its vote floor (relays may bring acks late)."""
        old = self._acks_by_floor.get(seat, {}).get(ack.term)
        if old is not None and old.seq >= ack.seq:
            return False
        if old is not None:
            self._superseded.setdefault(seat, deque(maxlen=SUPERSEDED)).append(old.sig)
        self._keep_ack(seat, ack)
        self._verified_acks.add((seat, ack))
        hint = self.acks.get(seat)
        if hint is None or (ack.term, ack.seq) > (hint.term, hint.seq):
            self.acks[seat] = ack
        return True

    # ------------------------------------------------------------ withheld acks

    def waiting_for_acks(self) -> list[int]:
        """(v3) The seats (not leavers, not ours) whose ack the final point
        waits for: their latest ack does not reach the first entry we hold
        past it (none, behind it, or on another chain). Not a seat whose ack
        names a head beyond ours: we are the one behind (entries on their
        way). Empty when everything we hold is final."""
        head = len(self.hashes) - 1
        if not self.v3 or self.final >= head:
            return []
        waiting = []
        for seat in range(self.table.n):
            if seat == self.me or seat in self.leavers:
                continue
            ack = self.latest_ack(seat)
            if ack is None or (ack.seq <= head and self.acked(seat) <= self.final):
                waiting.append(seat)
        return waiting

    def _note_stall(self, now: float) -> None:
        """(tick) Since when the first entry past our final point has been so."""
        if not self.v3 or self.final >= len(self.hashes) - 1:
            self._stall = None
            return
        seq = self.final + 1
        if self._stall is None or self._stall[:2] != (seq, self.hashes[seq]):
            self._stall = (seq, self.hashes[seq], now)

    def stalled_since(self) -> float | None:
        """(v3) Since when (the ``now`` of a tick) the first entry past our
        final point has been so; None when everything we hold is final, or
        when the final point moved since the last tick (the stall just
        began)."""
        stall, head = self._stall, len(self.hashes) - 1
        if stall is None or self.final >= head:
            return None
        seq = self.final + 1
        return stall[2] if stall[:2] == (seq, self.hashes[seq]) else None

    def _acks_withheld(self, now: float) -> bool:
        """(v3) Evidence against the sequencer we follow: an entry we hold
        has stayed non-final for ``censor_wait`` (counted from our current
        term's start at the earliest) and the sequencer is one of the seats
        whose ack it waits for."""
        if self._stall is None or self.role is Role.SEQUENCER:
            return False
        since = max(self._stall[2], self._term_entered)
        if now - since < self.censor_wait:
            return False
        return self.sequencer in self.waiting_for_acks()

    # provided by LogMachine
    if TYPE_CHECKING:

        @property
        def sequencer(self) -> int: ...

        def acked(self, seat: int) -> int: ...
        def _keep_ack(self, seat: int, ack: Head) -> None: ...
        def _update_final(self) -> None: ...
        def _emit(self, effect: Any) -> None: ...
        def _compare_head(self, src: int, head: Head, now: float) -> None: ...


def _head_fields(ack: Head) -> dict[str, Any]:
    wire = ack.to_wire()
    del wire["k"]
    return wire
