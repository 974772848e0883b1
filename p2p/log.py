"""The ordered log: hash chain, sequencer, acks, equivocation, failover.

Theory of operation
-------------------
This module is the whole state machine of a table's log and does no I/O (in
the spirit of h11): the node feeds it what arrived (:meth:`LogMachine.receive`),
what time it is (:meth:`LogMachine.tick`) and who connected; it returns
*effects* - messages to send (:class:`Send`) and records to make durable
(:class:`Persist`) - which the node carries out in order. Everything that
changes the log's state lives here, and the machine does not care whose
event it is: our own events reach the chain through the same submit path and
the same checks as everybody else's.

Roles. Time is cut into *terms*; the sequencer of term t is seat ``t mod n``
(the table's creator, seat 0, for term 0). Authors send ``submit`` messages
to the sequencer (v3: to every peer, which holds them). The sequencer takes
them, checks the author's signature and counter (an author's events are
numbered 0, 1, 2, ... and must enter the chain in that order: a replay or a
reuse of a counter is refused), links each event to the chain head, signs the
entry and sends it to everyone. A peer never sequences a term twice (it
persists the terms it led), so a restart cannot make it equivocate by
accident.

Followers accept an entry when both signatures verify, it links to their head
(``prev`` is the hash of their entry seq-1), the term never decreases along
the chain, and the author's counter is the next one. They persist it, and
once it is on disk (fsync) they acknowledge the head they hold (a signed
``ack``, broadcast). A gap (an entry beyond head+1, a heartbeat or ack showing
a longer chain) is filled by ``fetch``: any peer answers with the entries it
holds, which verify on their own.

Proofs against a sequencer (:data:`~p2p.envelope.SequencerProof`).
Equivocation: two entries for one seq signed by one term's sequencer. A peer
finds one when an entry conflicts with one it holds, or when another peer's
signed head names a different hash for a seq of the same term (it then
fetches that entry). A forged event: an entry its sequencer signed around an
event whose author signature (or body) fails. A replayed event: an entry its
sequencer signed on top of our chain, repeating an (author, counter) that
chain already holds (the proof carries the hash links between the two). An
honest sequencer signs none of these, and each proof names only the seat
whose sequencer signature is on it (who relayed it does not matter). The
entry is refused, the proof persisted, broadcast to everyone, and its
culprit never sequences again: the honest peers move to the next term at
once. A counter that skips ahead is refused but proves nothing by itself.

Failover, pre-vote and censorship: :mod:`p2p.election` (a mixin of
:class:`LogMachine`). v3 tables: events go to every peer, which holds them
(:mod:`p2p.censor`), and a session acts on *final* entries only, those
every seat acknowledged (:mod:`p2p.commitment`).

Commitment. Votes are durable promises: an ack carries the sender's *vote
floor* (the highest term it follows or voted in) and counts only towards
entries of that term (:attr:`LogMachine.committed`, Raft's rule), so a voter
that hears the old sequencer again after voting cannot make the old term's
later entries look committed. Whatever a peer knows a majority acknowledged
it never cuts, whoever asks: an honest failover never needs to, and it stops
an elected sequencer that makes up its start. A truncation below what the
session already consumed is reported, never silent.

Pure functions for the offline verifier (in :mod:`p2p.chain`, exported here):
:func:`verify_chain`, :func:`verify_prefix`.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from p2p.ack_relay import AckRelay
from p2p.catch_up import CatchUp
from p2p.censor import HOLD_AHEAD, HeldEvents
from p2p.chain import (
    MAX_TERM,
    BrokenChain,
    Effect,
    LogError,
    Persist,
    ProvenFault,
    ReplayedEvent,
    Role,
    Send,
    _check_link,
    _term,
    _verifies,
    verify_chain,
    verify_prefix,
)
from p2p.commitment import acked_by_all, merge_swaps, reach
from p2p.election import Election
from p2p.envelope import (
    PROOF_KINDS,
    BadBody,
    Entry,
    EquivocationProof,
    Event,
    EventError,
    ForgedEventProof,
    Head,
    ReplayProof,
    SequencerProof,
    TableSpec,
    proof_from_wire,
)
from p2p.identity import Identity
from p2p.prevote import PreVoteRound
from p2p.wire import MAX_BODY, MAX_LINKS

ACK_FLOORS = 4  # acks kept per seat: its latest for each of its last vote floors
MAX_AHEAD = HOLD_AHEAD  # submissions a sequencer buffers per author beyond the next counter


class LogMachine(Election, AckRelay, CatchUp):
    """One peer's view of a table's log (sans-I/O; see the module docstring)."""

    def __init__(
        self,
        table: TableSpec,
        identity: Identity,
        *,
        timeout: float = 3.0,
        censor_wait: float | None = None,
        now: float = 0.0,
        entries: Iterable[Entry] = (),
        own_events: Iterable[Event] = (),
        led_terms: Iterable[int] = (),
        proofs: Iterable[SequencerProof] = (),
        voted: int = 0,
        final: int = 0,
        followed: int = 0,
        cut: tuple[int, int] | None = None,
        followed_start: tuple[int, int, bytes] | None = None,
    ) -> None:
        seat = table.seat_of(identity.public)
        if seat is None:
            raise ValueError(f"{identity.fingerprint} holds no seat at {table}")
        self.table = table
        self.identity = identity
        self.me = seat
        self.timeout = timeout
        self.v3 = table.version >= 3  # (v3) events to everyone, commitment by every seat
        # (v3) a held event unsequenced this long while the sequencer beats: censored
        self.censor_wait = 2 * timeout if censor_wait is None else censor_wait
        self.holding = HeldEvents(table.n)  # (v3) events received, not yet in the chain
        self._censor_vote = False  # (v3) our election is against a censor: beats do not undo it
        self.chain: list[Entry] = []
        self.hashes: list[bytes] = [table.genesis]
        self.next_counter = [0] * table.n
        self._index: dict[tuple[int, int], int] = {}  # (author, counter) -> seq
        for entry in entries:
            self._append(entry, entry.hash(table), trusted=True)
        self._durable = self.head  # the chain is on our disk up to here (it was loaded)
        self.own_events: dict[int, Event] = {}
        for event in own_events:  # from our private file: still, only what we signed
            if event.author == self.me and _verifies(event, table):
                self.own_events[event.counter] = event
        self._held: set[int] = set()  # counters signed but not yet on our disk
        self.led_terms: set[int] = set(led_terms)
        # proofs against sequencers (verified; at most one per seat): key -> proof
        self.proofs: dict[tuple[str, int, int], SequencerProof] = {}
        self.banned: set[int] = set()
        for proof in proofs:  # from our log file, verified when it was loaded
            if proof.culprit(table) not in self.banned:
                self.proofs[proof.key] = proof
                self.banned.add(proof.culprit(table))
        self.acks: dict[int, Head] = {}  # latest ack per seat (a hint; see committed)
        self._acks_by_floor: dict[int, dict[int, Head]] = {}  # seat -> vote floor -> ack
        self._verified_acks: set[tuple[int, Head]] = set()  # (seat, ack) checked as seat's
        self._relay_init(now)  # (v3) relayed acks (p2p.ack_relay)
        self.voted = max(voted, 0)  # highest term we voted in or stood for (durable)
        self.leavers: frozenset[int] = frozenset()  # (v3) seats the table layer abandoned
        # (v3) the highest seq we held final (durable): never cut, whoever asks
        self.final = min(max(final, 0), self.head) if self.v3 else 0
        self.votes: dict[int, Head] = {}
        self.truncations = 0  # how many times the chain was cut back
        self.low_water = len(self.chain)  # lowest head since the node last looked
        fresh = not self.chain and not self.led_terms
        # (v3) the term we followed is on disk (fifth review, #3: a restart
        # that forgot it lowered the vote floor of rule 3's restart form)
        self.term = max([self.head_term, *self.led_terms, followed if self.v3 else 0])
        self._term_saved = self.term  # the highest term our `own` file says we followed
        self.term_start: int | None = None
        # the hash at term_start the newterm certified: while our chain has
        # it, nothing at or below the start is ever replaced in this term
        self.term_start_hash: bytes | None = None
        if self.v3 and followed_start is not None and followed_start[0] == self.term:
            # (on disk with the term: a restarted peer stays in rule 1's limbo
            # while its chain contradicts it, and a second newterm of this
            # term, with another start, is not entered: sixth review, #4, #9)
            self.term_start, self.term_start_hash = followed_start[1], followed_start[2]
        self._start_restored = self.term_start is not None  # not yet taken again this run
        self.role = Role.FOLLOWER
        self.election: int | None = None  # the term we voted for, still following self.term
        self._heard = now  # last sign of life of the current sequencer / election start
        self._term_entered = now  # (v3) when we began following the current term
        self._sequencer_heard = now  # (v3) when the sequencer we follow last showed life
        self._prevote: PreVoteRound | None = None  # (v3) our request for pre-votes
        # (v3) votes for us we had no evidence for yet: (seat, term) -> vote
        self._early_votes: dict[tuple[int, int], Head] = {}
        self._next_beat = now
        self._next_resubmit = now + timeout / 2
        self._fetch_busy_until = 0.0
        self._fetch_end = 0  # last seq the latest fetch asked for
        self._known_head = 0  # longest chain some peer showed us
        self._fetch_turn = 0  # (v3) whom _fetch_again asks next
        # (v3) (seq, term) of our cuts (commitment.reach), on disk (`cut`
        # records: fifth review, #10), and as a restart's guess besides: a
        # restarted peer counts acks of older terms than its vote floor only
        # up to its final point (fourth review, A2a)
        self._cut_saved = cut if self.v3 else None
        self._restart_swap = (self.final + 1, self.vote_floor) if self.v3 else None
        self._swap: tuple[int, int] | None = merge_swaps(self._restart_swap, self._cut_saved)
        # (v3) we voted for a term we have not entered, before a restart:
        # limbo (see _ack) until we hear the sequencer we follow or enter a
        # term (fourth review, A2c: the restart ended the limbo)
        self._voted_ahead = self.v3 and self.voted > self.term
        self._rewind = 1
        self._sync_from: int | None = None
        self._sync_target: tuple[int, int] = (0, 0)
        self._buffer: dict[int, dict[int, Event]] = {}
        self._pending_effects: list[Effect] = []
        self._newterm: dict[str, Any] = {}  # the newterm we announced, while we sequence
        if fresh and self.table.sequencer_of(0) == self.me:
            self._lead(now, 0)

    # ------------------------------------------------------------ properties

    @property
    def head(self) -> int:
        return len(self.chain)

    @property
    def head_hash(self) -> bytes:
        return self.hashes[-1]

    @property
    def head_term(self) -> int:
        return self.chain[-1].term if self.chain else 0

    @property
    def sequencer(self) -> int:
        return self.table.sequencer_of(self.term)

    @property
    def next_own_counter(self) -> int:
        return max([self.next_counter[self.me] - 1, *self.own_events]) + 1

    @property
    def own_pending(self) -> list[Event]:
        """Our events on our disk and not yet in the chain (never one that
        :meth:`author` signed and the node has not persisted yet: sent, and
        lost with a power cut, its counter would be signed again over
        another body)."""
        start = self.next_counter[self.me]
        return [
            self.own_events[c]
            for c in sorted(self.own_events)
            if c >= start and c not in self._held
        ]

    @property
    def committed(self) -> int:
        """Highest seq that a majority (this peer included) acknowledged, the
        way Raft counts: an entry of term t is committed when a majority acked
        it with vote floor t (in term t, having voted in no later term), and
        so is everything before it. Only acks whose signatures verify count
        (each checked once, when it first counts: acks arrive often, this is
        asked rarely)."""
        by_floor: dict[int, list[int]] = {}
        for seat, floors in self._acks_by_floor.items():
            for floor, ack in list(floors.items()):
                if ack.seq > self.head or self.hashes[ack.seq] != ack.hash:
                    continue
                if seat != self.me and (seat, ack) not in self._verified_acks:
                    try:
                        ack.verify(self.table, seat)
                    except EventError:
                        del floors[floor]  # forged: never counted, never kept
                        continue
                    self._verified_acks.add((seat, ack))
                by_floor.setdefault(floor, []).append(ack.seq)
        best = 0
        for floor, seqs in by_floor.items():
            if len(seqs) < self.table.majority:
                continue
            reach = sorted(seqs, reverse=True)[self.table.majority - 1]
            # the last entry up to reach whose term is at most floor (terms never decrease)
            k = bisect.bisect_right(self.chain, floor, 0, reach, key=_term)
            if k and self.chain[k - 1].term == floor:
                best = max(best, k)
        return best

    def entry(self, seq: int) -> Entry:
        return self.chain[seq - 1]

    @property
    def kept(self) -> int:
        """The entries no failover may cut: on v3 tables the final ones (a
        session acts on nothing else), on v2 what a majority acknowledged."""
        return self.final if self.v3 else self.committed

    def set_leavers(self, seats: Iterable[int]) -> list[Effect]:
        """(v3) The table layer abandoned ``seats``: entries are final once
        every other seat acknowledged them."""
        leavers = frozenset(seats)
        if any(not 0 <= s < self.table.n for s in leavers):
            raise ValueError(f"leavers {sorted(leavers)}: not all seats of this table")
        if self.me in leavers:
            raise ValueError(f"seat {self.me} cannot abandon itself")
        if len(leavers) >= self.table.n:
            raise ValueError("every seat cannot have left")
        self.leavers = leavers
        self._update_final()
        return self.take_effects()

    def acked(self, seat: int) -> int:
        """(v3) How far ``seat``'s latest ack reaches on our chain (ours: the head)."""
        if seat == self.me:
            return self.head
        return reach(self._acks_by_floor.get(seat, {}), self.hashes)

    def _update_final(self) -> None:
        """(v3) Raise :attr:`final` to what every seat (not a leaver) has
        acknowledged on our chain and a majority has the Raft way."""
        if not self.v3:
            return
        committed = self.committed  # first: it checks the signatures of the acks it counts
        seats = [s for s in range(self.table.n) if s not in self.leavers]
        reached = min(
            committed, acked_by_all(self._acks_by_floor, self.hashes, seats, self._swap)
        )
        if reached > self.final:
            self.final = reached
            self._emit(Persist("own", {"t": "final", "seq": reached}, lazy=True))

    def take_effects(self) -> list[Effect]:
        """Effects produced outside a call that returns them (at start-up)."""
        out, self._pending_effects = self._pending_effects, []
        return out

    def _emit(self, effect: Effect) -> None:
        self._pending_effects.append(effect)

    @property
    def vote_floor(self) -> int:
        """The highest term we follow or have voted in (stood for): our acks
        say it, and count only towards entries of that very term."""
        return max(self.term, self.voted)

    def _ack(self) -> Head:
        """Our ack: the head of what is on our disk (protocol.md §3.4), which
        may be behind the chain we hold. (v3) Between a vote and the newterm,
        and while the newterm we follow certified another chain than ours at
        its start, what we hold past final may be cut: we vouch only for our
        final entries (third review, A3: an honest seat's ack of its old
        branch, signed after its vote and before it swapped, made that
        branch final at the other honest seat)."""
        seq = min(self._durable, self.head)
        limbo = self._voted_ahead or (
            self.election is not None and self.role is not Role.SEQUENCER
        )
        if self.v3 and (limbo or self._start_contradicted()):
            # (v3) between our vote for a term and its newterm (which may cut
            # what we hold past final), or following a newterm whose start
            # contradicts our chain: we vouch only for final entries
            seq = min(seq, self.final)
        ack = Head.create(
            self.table,
            self.identity,
            "ack",
            self.vote_floor,
            seq,
            self.chain[seq - 1].term if seq else 0,
            self.hashes[seq],
        )
        self._keep_ack(self.me, ack)
        self._update_final()
        return ack

    def _keep_ack(self, seat: int, ack: Head) -> None:
        floors = self._acks_by_floor.setdefault(seat, {})
        old = floors.get(ack.term)
        if old is not None:
            self._verified_acks.discard((seat, old))
        floors[ack.term] = ack
        if len(floors) > ACK_FLOORS:
            self._verified_acks.discard((seat, floors.pop(min(floors))))

    def _head_statement(self, kind: str, term: int | None = None) -> Head:
        return Head.create(
            self.table,
            self.identity,
            kind,
            self.term if term is None else term,
            self.head,
            self.head_term,
            self.head_hash,
        )

    # ------------------------------------------------------------ local input

    def author(self, body: bytes) -> Event:
        """Sign our next event; the node persists it (outbox) and then calls
        :meth:`submit_own`. Raises BadBody (an EventError and a ValueError) if
        ``body`` is not strict msgpack or too big for the wire."""
        if len(body) > MAX_BODY:  # signed, it would stay in our outbox, refused by all
            raise BadBody(
                f"event #{self.next_own_counter}: a body of {len(body)} bytes; "
                f"the wire carries at most {MAX_BODY} bytes"
            )
        event = Event.create(self.table, self.identity, self.me, self.next_own_counter, body)
        event.verify(self.table)
        self.own_events[event.counter] = event
        self._held.add(event.counter)  # not sent, not even resent, before submit_own
        return event

    def submit_own(self, event: Event, now: float) -> list[Effect]:
        """Send our own event, now persisted, to the sequencer (v3: to every peer)."""
        self._held.discard(event.counter)
        self._submit_to_sequencer([event], now)
        return self.take_effects()

    def _submit_to_sequencer(self, events: list[Event], now: float) -> None:
        if not events:
            return
        if self.role is Role.SEQUENCER:
            for event in events:
                self._on_submit(self.me, event, now)
        else:  # to the sequencer we follow (v3: to everyone); resent after a newterm anyway
            to = None if self.v3 else self.sequencer
            for event in events:
                if self.v3:
                    self._hold(event, now)
                self._emit(Send(to, {"k": "submit", "ev": event.to_wire()}))
        self._next_resubmit = now + self.timeout / 2

    def held_events(self, seat: int) -> list[Event]:
        """(v3) ``seat``'s verified events this peer holds, not in its chain,
        in counter order."""
        return self.holding.events(seat)

    def held_since(self, seat: int) -> float | None:
        """(v3) When this peer first received the oldest of :meth:`held_events`."""
        return self.holding.since(seat)

    def _hold(self, event: Event, now: float) -> None:
        if not self.holding.hold(event, now, self.next_counter[event.author]):
            raise ReplayedEvent(f"seat {event.author} sent two different events #{event.counter}")

    def _sequence_held(self) -> None:
        """(v3) Sequence every held event that can enter the chain."""
        for event in self.holding.due(self.next_counter):
            self._sequence(event)

    def peer_connected(self, seat: int, now: float) -> list[Effect]:
        """A connection to ``seat`` finished its handshake: tell it our head."""
        self._relay_forget(seat)
        self._emit(Send(seat, self._ack().to_wire()))
        for proof in self.proofs.values():
            self._emit(Send(seat, {"k": proof.kind, **proof.to_wire()}))
        if self.role is Role.SEQUENCER:
            self._emit(Send(seat, self._newterm))  # our term's start and its certificate
        elif self.election is not None and seat == self.table.sequencer_of(self.election):
            self._emit(Send(seat, self._head_statement("vote", self.election).to_wire()))
        if self.v3 and self.role is not Role.SEQUENCER:
            for event in self.own_pending:  # (v3) every peer holds our events
                self._emit(Send(seat, {"k": "submit", "ev": event.to_wire()}))
        elif seat == self.sequencer and self.role is not Role.SEQUENCER:
            self._submit_to_sequencer(self.own_pending, now)
        return self.take_effects()

    def flushed(self, seq: int, seq_hash: bytes, truncations: int | None = None) -> list[Effect]:
        """The chain up to ``seq`` (hash ``seq_hash``, taken with the count of
        ``truncations`` so far, before the fsync began) is on disk:
        acknowledge what is. A cut meanwhile leaves it unsure (the entries
        appended again after a cut may not be on disk even if they are
        the same)."""
        rose = False
        if truncations in (None, self.truncations) and seq <= self.head:
            if self.hashes[seq] == seq_hash and seq > self._durable:
                self._durable, rose = seq, True
        if rose or (seq == self.head and seq_hash == self.head_hash):
            self._emit(Send(None, self._ack().to_wire()))
        return self.take_effects()

    def tick(self, now: float) -> list[Effect]:
        """Timers: heartbeats, sequencer silence, elections, resubmission."""
        if self.role is Role.SEQUENCER:
            if now >= self._next_beat:
                self._emit(Send(None, self._head_statement("beat").to_wire()))
                self._next_beat = now + self.timeout / 4
        elif self.role is Role.CANDIDATE:
            if self._sync_from is not None and now - self._heard >= self.timeout / 2:
                # the voter we were syncing from went quiet: without its vote we
                # may lead only if the other votes still make a majority that
                # our head covers (never lead with less than a voter holds)
                del self.votes[self._sync_from]
                self._sync_from = None
                self._count_votes(now)
            elif now - self._heard >= self.timeout:
                self._time_out(now)
        elif now - self._heard >= self.timeout:
            self._time_out(now)
        elif self.v3 and self.role is Role.FOLLOWER and self._censoring(now):
            self._time_out(now, censor=True)
        if self.v3:  # (v3) pass on acks; note entries that stay non-final (p2p.ack_relay)
            self._relay_acks(now)
            self._note_stall(now)
            self._fetch_again(now)
        if self._early_votes and self._would_grant(now):
            term = self._next_election_term()  # (v3) now we have evidence too
            for (src, voted), vote in list(self._early_votes.items()):
                if voted == term and self.election != term:
                    self._on_vote(src, vote, now)
        if self.role is not Role.SEQUENCER and now >= self._next_resubmit:
            self._submit_to_sequencer(self.own_pending, now)
        return self.take_effects()

    # ------------------------------------------------------------ remote input

    def receive(self, src: int, msg: dict[str, Any], now: float) -> list[Effect]:
        """Handle one schema-checked message from the peer at seat ``src``.

        Raises :class:`EventError` (bad signature, broken chain, replay) with
        the state unchanged; the node then drops that connection."""
        kind = msg["k"]
        if kind == "submit":
            self._on_submit(src, Event.from_wire(msg["ev"]), now)
        elif kind == "entry":
            self._on_entry(src, Entry.from_wire(msg["e"]), now)
        elif kind == "fetch":
            self._on_fetch(src, msg["from"], msg["n"])
        elif kind in PROOF_KINDS:
            self._on_proof(proof_from_wire(kind, msg), now)
        elif kind == "ack":
            # Only a hint here (catch-up, conflict probe, committed mark), from a
            # peer the handshake authenticated: checking n² ack signatures per
            # head would cost more than the entries. Its signature makes it
            # evidence for whoever keeps it (Head.verify).
            self._on_ack(src, Head.from_wire(msg), now)
        elif kind == "acks" and self.v3:  # (v3) other seats' acks, passed on (p2p.ack_relay)
            self._on_relayed_acks(src, msg["of"], now)
        elif kind in ("beat", "vote") or (self.v3 and kind in ("prevote", "grant")):
            head = Head.from_wire(msg)
            head.verify(self.table, src)
            getattr(self, f"_on_{kind}")(src, head, now)
        elif kind == "newterm":
            self._on_newterm(src, Head.from_wire(msg), msg["votes"], now)
        else:
            raise LogError(f"message kind {kind!r} does not belong to the log")
        return self.take_effects()

    def _on_submit(self, src: int, event: Event, now: float) -> None:
        if self.v3 and event.author != src:
            self._on_forwarded(event, now)
            return
        if event.author != src:
            raise ReplayedEvent(
                f"seat {src} submitted seat {event.author}'s event #{event.counter}"
            )
        author, counter = event.author, event.counter
        if counter < self.next_counter[author]:
            seq = self._index[(author, counter)]
            if self.entry(seq).event == event:
                return  # a resubmission of an event already in the chain
            event.verify(self.table)
            raise ReplayedEvent(f"seat {author} reused counter #{counter} (already at seq {seq})")
        event.verify(self.table)
        if counter - self.next_counter[author] > MAX_AHEAD:
            if self.role is Role.SEQUENCER:
                raise ReplayedEvent(f"seat {author}'s event #{counter} is too far ahead")
            return  # (v3) not held; its author sends it again
        if self.v3:  # every peer holds it; the sequencer sequences what it can
            held = len(self.holding)
            self._hold(event, now)
            if self.role is Role.SEQUENCER:
                self._sequence_held()
            elif len(self.holding) > held:
                self._forward([event])
            return
        if self.role is not Role.SEQUENCER:
            return  # v2: the author resubmits to the new sequencer after a newterm
        waiting = self._buffer.setdefault(author, {})
        if counter in waiting and waiting[counter] != event:
            raise ReplayedEvent(f"seat {author} sent two different events #{counter}")
        waiting[counter] = event
        while self.next_counter[author] in waiting:
            self._sequence(waiting.pop(self.next_counter[author]))

    def _on_forwarded(self, event: Event, now: float) -> None:
        """(v3) A peer passed on another seat's event it holds (the author may
        not have sent it to the sequencer): hold it as if from the author.
        Whatever is wrong with it is the author's doing, not the peer's:
        ignored, never an error against the peer that passed it on."""
        author, counter = event.author, event.counter
        if counter < self.next_counter[author] or counter - self.next_counter[author] > MAX_AHEAD:
            return
        if self.holding.has(event) or not _verifies(event, self.table):
            return
        if self.holding.hold(event, now, self.next_counter[author]) and self.role is Role.SEQUENCER:
            self._sequence_held()

    def _forward(self, events: list[Event]) -> None:
        """(v3) Pass other seats' held events on to the sequencer we follow, so
        an author who leaves the sequencer out cannot frame it as a censor."""
        if self.role is Role.SEQUENCER or self.term_start is None:
            return
        for event in events:
            if event.author not in (self.me, self.sequencer):
                self._emit(Send(self.sequencer, {"k": "submit", "ev": event.to_wire()}))

    def _sequence(self, event: Event) -> None:
        entry = Entry.create(
            self.table, self.identity, self.head + 1, self.term, self.head_hash, event
        )
        self._append(entry, entry.hash(self.table))
        self._emit(Send(None, {"k": "entry", "e": entry.to_wire()}))

    def _append(self, entry: Entry, h: bytes, trusted: bool = False) -> None:
        if not trusted:
            self._emit(Persist("log", {"t": "entry", "e": entry.to_wire()}))
        self.chain.append(entry)
        self.hashes.append(h)
        ev = entry.event
        self.next_counter[ev.author] += 1
        self._index[(ev.author, ev.counter)] = entry.seq
        if self.v3:
            self.holding.sequenced(ev.author, self.next_counter[ev.author])
        if not trusted:
            self._check_acks_at(entry.seq)

    def _truncate(self, seq: int) -> None:
        if seq >= self.head:
            return
        cut = self.chain[seq:]
        for entry in cut:
            ev = entry.event
            self.next_counter[ev.author] -= 1
            del self._index[(ev.author, ev.counter)]
        if self.v3:  # (v3) held again, censor_wait counted from the current term's start
            for entry in cut:  # (not what a sequencer proven against put there)
                if self.table.sequencer_of(entry.term) not in self.banned:
                    ev = entry.event
                    self.holding.hold(ev, self._term_entered, self.next_counter[ev.author])
        del self.chain[seq:]
        del self.hashes[seq + 1 :]
        # (v3) acks of an older term count only below the cut from now on
        # (p2p.commitment.reach): what replaces these entries must be acked
        # again in the term that brings it
        self._swap = merge_swaps((seq + 1, self.vote_floor), self._swap)
        if self.v3:  # on disk before our next ack (the flusher syncs every file first)
            self._emit(Persist("own", {"t": "cut", "seq": seq + 1, "floor": self.vote_floor}))
        self._durable = min(self._durable, seq)  # what replaces the rest is not on disk yet
        self.truncations += 1
        self.low_water = min(self.low_water, seq)
        self._emit(Persist("log", {"t": "truncate", "seq": seq}))

    def _syncing_from(self, src: int) -> bool:
        return self.role is Role.CANDIDATE and self._sync_from == src

    def _authoritative(self, src: int) -> bool:
        if self.role is Role.CANDIDATE and self._sync_from is not None:
            return src == self._sync_from
        return self.role is not Role.SEQUENCER and src == self.sequencer

    def _on_entry(self, src: int, entry: Entry, now: float) -> None:
        seq = entry.seq
        if seq <= self.head and entry.prev == self.hashes[seq - 1]:
            # cheap duplicate check before any signature work
            if entry == self.chain[seq - 1]:
                return
        if src in self.banned and src == self.table.sequencer_of(entry.term):
            return  # a proven cheat's entries reach us only from others now
        h = self._verify_entry(entry, now)
        syncing = self._syncing_from(src)
        if entry.term > self.term and not (syncing and entry.term <= self._sync_target[0]):
            return  # a term whose certified newterm we have not seen: wait for it
        if entry.term == self.term and self.term_start is not None and seq <= self.term_start:
            return  # a term's sequencer places nothing at or before its start
        if entry.term < self.term and self.term_start is not None and seq > self.term_start:
            if not syncing:
                return  # from a sequencer deposed before this seq
        if src == self.sequencer and entry.term == self.term and self.role is not Role.SEQUENCER:
            self._hear_from_sequencer(now)
        if seq <= self.head:
            self._on_conflict(src, entry, h, now)
            return
        if seq > self.head + 1:
            self._known_head = max(self._known_head, seq)
            self._fetch(src, self.head + 1, now)
            return
        if entry.prev != self.head_hash:
            if self._authoritative(src) or entry.term == self.head_term:
                self._rewind_fetch(src, self.head, now)
            return
        if entry.term < self.head_term:
            return  # a stale entry of an older term, from a peer that has not caught up
        self._check_link_or_prove(entry, self.head_hash, self.head_term, self.next_counter, now)
        self._append(entry, h)
        self._rewind = 1
        if self.head == self._fetch_end and self._known_head > self.head:
            self._fetch(src, self.head + 1, now, force=True)  # a long catch-up goes on
        self._after_progress(now)

    def _on_conflict(self, src: int, entry: Entry, h: bytes, now: float) -> None:
        seq = entry.seq
        mine = self.chain[seq - 1]
        if h == self.hashes[seq]:
            return
        if mine.term == entry.term:
            self._record_proof(EquivocationProof(mine, entry), now)
            replaceable = self.table.sequencer_of(entry.term) in self.banned
        else:
            replaceable = entry.term > mine.term
        if not (replaceable and self._authoritative(src)):
            return
        if seq <= self.kept:
            return  # acknowledged (v3: final): no sequencer may replace it
        if self.v3 and self._start_certified(seq):
            # the newterm we follow certified our chain up to its start: no
            # entry at or below it is replaced in this term, whoever sends
            # one (third review, A3: a lying sequencer of the next term gave
            # each honest seat the other's branch of a proven equivocator)
            return
        if self.term_start is None and not self._syncing_from(src):
            return  # we have not seen this term's newterm (restarted): it comes first
        if entry.prev != self.hashes[seq - 1]:
            self._rewind_fetch(src, seq - 1, now)
            return
        counters = list(self.next_counter)
        for dropped in self.chain[seq - 1 :]:
            counters[dropped.event.author] -= 1
        prev_term = self.chain[seq - 2].term if seq >= 2 else 0
        # before any change:
        self._check_link_or_prove(entry, self.hashes[seq - 1], prev_term, counters, now)
        cut = [e.event for e in self.chain[seq - 1 :]]
        self._truncate(seq - 1)
        self._append(entry, h)
        if self.v3:
            self._forward([e for e in cut if self.holding.has(e)])
        self._rewind = 1
        self._after_progress(now)

    def _verify_entry(self, entry: Entry, now: float) -> bytes:
        """Both signatures of an entry; its hash. An event that fails its
        check inside an entry its sequencer did sign is that sequencer's
        doing: the proof is kept and sent before the entry is refused."""
        h = entry.verify_sequencer(self.table)  # not the sequencer's: proves nothing
        if self.v3 and self.holding.has(entry.event):
            return h  # (v3) this very event was checked when we came to hold it
        try:
            entry.event.verify(self.table)
        except EventError as exc:
            culprit = self.table.sequencer_of(entry.term)
            self._prove(ForgedEventProof(entry), now)
            raise ProvenFault(
                f"{exc}; seat {culprit} signed it as sequencer of term {entry.term} "
                "(a forged-event proof is kept and sent)"
            ) from exc
        return h

    def _check_link_or_prove(
        self, entry: Entry, prev_hash: bytes, prev_term: int, counters: list[int], now: float
    ) -> None:
        """:func:`_check_link` against our chain up to ``entry.seq - 1``
        (``prev_hash`` is its hash); a replay of an event that chain holds
        is proven against the entry's sequencer before it is refused."""
        try:
            _check_link(entry, prev_hash, prev_term, counters)
        except ReplayedEvent as exc:
            ev = entry.event
            first = self._index.get((ev.author, ev.counter))
            if first is None or first >= entry.seq or entry.prev != self.hashes[entry.seq - 1]:
                raise  # a counter skipped ahead: not provable from a few entries
            if entry.seq - first - 1 > MAX_LINKS:
                raise  # too far back for a proof that fits a frame
            links = tuple(
                (e.term, e.event.digest(self.table)) for e in self.chain[first : entry.seq - 1]
            )
            self._prove(ReplayProof(self.chain[first - 1], entry, links), now)
            culprit = self.table.sequencer_of(entry.term)
            raise ProvenFault(
                f"{exc}; seat {culprit} signed it as sequencer of term {entry.term} "
                "(a replay proof is kept and sent)"
            ) from exc

    def _prove(self, proof: SequencerProof, now: float) -> None:
        """Record a proof we made ourselves, checked like anyone's first:
        whatever we keep and send must never name an honest seat."""
        if proof.culprit(self.table) in self.banned:
            return
        proof.verify(self.table)
        self._record_proof(proof, now)

    def _after_progress(self, now: float) -> None:
        if self.role is Role.CANDIDATE and self._sync_from is not None:
            self._heard = now
            if (self.head_term, self.head) >= self._sync_target:
                self._sync_from = None
                self._count_votes(now)  # votes that came meanwhile may hold more

    def _check_acks_at(self, seq: int) -> None:
        for seat, ack in self.acks.items():
            if ack.seq == seq and ack.hash != self.hashes[seq]:
                if ack.hterm == self.chain[seq - 1].term:
                    self._emit(Send(seat, {"k": "fetch", "from": seq, "n": 1}))

    def _on_ack(self, src: int, head: Head, now: float) -> None:
        self._relay_heard(src, head)
        self.acks[src] = head
        self._keep_ack(src, head)
        self._update_final()
        if self.role is Role.SEQUENCER and head.term < self.term:
            self._emit(Send(src, self._newterm))  # it follows an older term still
        self._compare_head(src, head, now)

    def _on_beat(self, src: int, head: Head, now: float) -> None:
        if src != self.table.sequencer_of(head.term):
            raise LogError(f"seat {src} sent a heartbeat for term {head.term}, not its own")
        if head.term < self.term or src in self.banned:
            return
        if head.term > self.term:
            # we missed its newterm: our ack shows the sequencer our term, and
            # it sends the newterm again (a term is entered only with one)
            self._emit(Send(src, self._ack().to_wire()))
            return
        self._hear_from_sequencer(now)
        self._compare_head(src, head, now)

    def _on_proof(self, proof: SequencerProof, now: float) -> None:
        if proof.key in self.proofs or proof.culprit(self.table) in self.banned:
            return  # known already (peers send theirs on every connect): no verifying
        proof.verify(self.table)
        self._record_proof(proof, now)

    def _record_proof(self, proof: SequencerProof, now: float) -> None:
        """Keep a verified proof (one per culprit is enough), send it to
        every peer, and stop following its culprit."""
        culprit = proof.culprit(self.table)
        if proof.key in self.proofs or culprit in self.banned:
            return
        self.proofs[proof.key] = proof
        self.banned.add(culprit)
        self._emit(Persist("log", {"t": proof.kind, **proof.to_wire()}, sync=True))
        self._emit(Send(None, {"k": proof.kind, **proof.to_wire()}))
        target = self.term if self.election is None else self.election
        if culprit == self.table.sequencer_of(target):
            self._start_election(now)

    # ------------------------------------------------------------ terms


__all__ = [
    "ACK_FLOORS",
    "MAX_AHEAD",
    "MAX_TERM",
    "BrokenChain",
    "Effect",
    "LogError",
    "LogMachine",
    "Persist",
    "ProvenFault",
    "ReplayedEvent",
    "Role",
    "Send",
    "verify_chain",
    "verify_prefix",
]
