"""Terms and elections of the ordered log (protocol.md §3.5 *Failover*,
*Pre-vote*, *Censorship*): a mixin of :class:`p2p.log.LogMachine`, which
holds the state these methods use (sans-I/O like it: they emit effects).

A follower that hears nothing from the sequencer for ``timeout`` seconds
(the sequencer beats every ``timeout/4``) - or, on v3 tables, that holds an
event the sequencer leaves out for ``censor_wait`` - votes for the next
term's sequencer (skipping seats proven against); on v3 only once a
majority granted it a pre-vote (:mod:`p2p.prevote`). It keeps following the
old one meanwhile; if that one is silent too, the next timeout moves on
again, so the next live seat in seat order takes over. The new sequencer
waits for votes from a majority (itself included), adopts the most
up-to-date voted chain - highest (term of head entry, seq), fetching what it
lacks from that voter (one that goes quiet loses its vote: a candidate
never leads with less than a vote it counts) - persists that it leads the
term and announces ``newterm`` with the votes as its *certificate*. A term
is entered only through a certificate that checks (a majority of validly
signed votes for that term, none ahead of the start), never through an
entry or a beat, so a seat nobody elected cannot start one. Followers then
drop the older terms' entries beyond that start and fetch what they lack.
"""

from __future__ import annotations

from typing import Any

from p2p.chain import MAX_TERM, LogError, Persist, Role, Send
from p2p.commitment import merge_swaps
from p2p.envelope import EventError, Head
from p2p.prevote import PreVoteRound


class Election:
    """The election half of :class:`p2p.log.LogMachine` (see the module docstring)."""

    # ------------------------------------------------------------ terms

    def _censoring(self, now: float) -> bool:
        """(v3) Does the sequencer we follow leave out an event we hold that it
        could sequence, ``censor_wait`` after we held it and its term began?
        Measured on the entries we actually received, whatever its beats
        claim (a beat ahead of what it hands out, or entries sent always one
        beat late, would otherwise keep its term forever)."""
        if now - self._term_entered < self.censor_wait:
            return False
        if self._acks_withheld(now):  # (v3) it never acks what it sequenced (p2p.ack_relay)
            return True
        return self.holding.censored(self.next_counter, now - self.censor_wait) is not None

    def _would_grant(self, now: float) -> bool:
        """(v3) Our own evidence against the sequencer we follow: silent for the
        timeout, or leaving out an event we hold for ``censor_wait``. Being in
        an election is no evidence (a lone liar's vote could have put us there)."""
        if self.role is Role.SEQUENCER:
            return False
        if now - self._sequencer_heard >= self.timeout or self._censoring(now):
            return True
        # a majority already promised a later term (their acks say so): ours
        # can make nothing final any more, whoever of them still beats
        later = sum(1 for s, ack in self.acks.items() if s != self.me and ack.term > self.term)
        return later + (self.voted > self.term) >= self.table.majority

    def _hear_from_sequencer(self, now: float) -> None:
        """The sequencer we follow is alive: any election we started was premature
        (v3: unless we voted it out for censoring: its beats change nothing)."""
        self._sequencer_heard = now
        if self.election is not None and self.v3 and self._censoring(now):
            return  # (v3) voted out for censoring: its beats change nothing while it does
        # (a censor vote whose event has been sequenced since is over: left
        # standing, its limbo held every seat's final point back for good)
        self._censor_vote = False
        self._heard = now
        if self._voted_ahead:  # (v3) a restart's limbo: the election we voted in did not
            self._voted_ahead = False  # happen, the term we follow goes on (its acks count)
            self._settle_restart_swap(self.term)
        if self.election is not None and self.role is not Role.SEQUENCER:
            self.election = None
            self.votes = {}
            self._sync_from = None
            self.role = Role.FOLLOWER

    def _on_newterm(self, src: int, head: Head, votes: list[dict[str, Any]], now: float) -> None:
        if src != self.table.sequencer_of(head.term):
            raise LogError(f"seat {src} announced term {head.term}, which is not its to lead")
        if head.term < self.term or src in self.banned:
            return  # stale (it comes again on every connect): no signatures to check
        if head.term == self.term and self.term_start is not None:
            if (head.seq, head.hash) != (self.term_start, self.term_start_hash):
                return  # (v3) a second start for the term we follow: not entered (review 6, #9)
            if not self._start_restored:
                self._hear_from_sequencer(now)  # from its sealed connection: it is alive
                return
            # the start came from our disk after a restart: take the newterm
            # again (its fetch brings the certified entries we may lack)
        head.verify(self.table, src)
        self._check_certificate(head, votes)
        if head.seq <= self.head and head.hash == self.hashes[head.seq]:
            true_term = self.chain[head.seq - 1].term if head.seq else 0
            if head.hterm != true_term:  # it would look further ahead than it is
                raise LogError(
                    f"newterm {head.term} says seq {head.seq} is of term {head.hterm}; "
                    f"that entry is of term {true_term}"
                )
        self._check_keeps_committed(head)
        restored, self._start_restored = self._start_restored, False
        if self.v3 and not restored:  # a restart keeps rules 1 and 2 (review 6, #4 and #9)
            # one record, synced before anything else of the term: the term
            # and its start together (review 7, #5: two records, a power cut
            # between them left the term without its start)
            record = {"t": "term", "term": head.term, "start": head.seq, "h": head.hash}
            self._emit(Persist("own", record, sync=True))
            self._term_saved = max(self._term_saved, head.term)
        self._enter_term(head.term, now, start=head.seq)
        self.term_start_hash = head.hash
        if head.seq < self.head and self.hashes[head.seq] == head.hash:
            if self.chain[head.seq].term < head.term:
                self._truncate(head.seq)  # older terms' entries no majority voted for
        elif head.seq <= self.head and self.hashes[head.seq] != head.hash:
            self._rewind_fetch(src, head.seq, now)
        elif head.seq > self.head:
            self._fetch(src, self.head + 1, now, force=True)
        self._submit_to_sequencer(self.own_pending, now)
        if self.v3:
            self._forward(self.holding.all())  # censor_wait counts from the term's start

    def _check_certificate(self, head: Head, votes: list[dict[str, Any]]) -> None:
        """A newterm must show that a majority voted for its term and that it
        starts at least as far as every voter's head (so it holds every entry
        a majority acknowledged); term 0 starts at the genesis, unelected."""
        term = head.term
        if term == 0:
            if votes or head.seq != 0:
                raise LogError("term 0 starts at the genesis, with no votes")
            return
        if head.hterm >= term:
            raise LogError(f"newterm {term} must start after entries of older terms")
        seats = [v["seat"] for v in votes]
        if len(set(seats)) != len(seats):
            raise LogError(f"newterm {term} counts a seat's vote twice")
        if len(seats) < self.table.majority or max(seats) >= self.table.n:
            raise LogError(
                f"newterm {term} shows {len(seats)} votes of seats at this table; "
                f"a majority is {self.table.majority}"
            )
        for v in votes:
            vote = Head("vote", term, v["seq"], v["hterm"], v["h"], v["s"])
            try:
                vote.verify(self.table, v["seat"])
            except EventError as exc:
                raise LogError(f"newterm {term}: seat {v['seat']}'s vote: {exc}") from exc
            if (vote.hterm, vote.seq) > (head.hterm, head.seq):
                raise LogError(
                    f"newterm {term} starts at seq {head.seq}, behind seat {v['seat']}'s "
                    f"voted head at seq {vote.seq} (term {vote.hterm})"
                )

    def _check_keeps_committed(self, head: Head) -> None:
        """Votes show heads, not what was acknowledged: a sequencer that lies
        about its start (say, entries it signs for an older term it never led)
        may look ahead of every vote. Whatever the acks we hold show a
        majority acknowledged (v3: every seat, :attr:`final`) is never cut,
        whoever asks."""
        committed = self.kept
        if head.seq >= committed:
            return
        what = "every seat" if self.v3 else "a majority"
        if self.hashes[head.seq] != head.hash:
            raise LogError(
                f"newterm {head.term} starts at seq {head.seq} off the chain {what} "
                f"acknowledged up to seq {committed}"
            )
        if self.chain[head.seq].term < head.term:
            raise LogError(
                f"newterm {head.term} would cut entries {what} acknowledged "
                f"(seq {head.seq + 1} to {committed})"
            )

    def _on_vote(self, src: int, head: Head, now: float) -> None:
        self._compare_head(src, head, now)
        term = head.term
        if self.table.sequencer_of(term) != self.me or term <= self.term:
            if self.role is Role.SEQUENCER and term == self.term:
                self._emit(Send(src, self._newterm))
            return
        if term in self.led_terms or self.me in self.banned or term > MAX_TERM - 2 * self.table.n:
            return  # (near the last term, the next elections would not fit on the wire)
        if term > max(self.term, self.election or 0) + 2 * self.table.n:
            return  # far beyond any election we see: a voter out of step, or pushing us
        if self.election is None or term > self.election:
            if self.v3 and not self._would_grant(now):
                # (v3) we stand only if we too would grant a pre-vote; kept until then
                self._early_votes[(src, term)] = head
                return
            self._become_candidate(term, now)
        if self.role is Role.CANDIDATE and self.election == term:
            self.votes[src] = head
            self._count_votes(now)

    def _count_votes(self, now: float) -> None:
        if len(self.votes) < self.table.majority or self._sync_from is not None:
            return
        assert self.election is not None
        self.votes[self.me] = self._head_statement("vote", self.election)  # our head now
        best_seat = max(self.votes, key=lambda s: (self.votes[s].hterm, self.votes[s].seq))
        best = self.votes[best_seat]
        if (best.hterm, best.seq) > (self.head_term, self.head):
            self._sync_from = best_seat
            self._sync_target = (best.hterm, best.seq)
            self._heard = now
            start = self.head + 1 if best.seq > self.head else best.seq
            self._rewind_fetch(best_seat, start, now)
            return
        assert self.election is not None
        self._lead(now, self.election)

    def _enter_term(self, term: int, now: float, start: int | None) -> None:
        """Follow the sequencer of ``term`` (it announced itself or sent entries)."""
        self.term = term
        if self.v3 and term > self._term_saved:  # on disk before any ack in it
            self._term_saved = term
            self._emit(Persist("own", {"t": "term", "term": term}, sync=True))
        self.term_start = start
        self.term_start_hash = None  # (_on_newterm sets it)
        self._voted_ahead = False
        self._settle_restart_swap(term)
        self.role = Role.FOLLOWER
        self.election = None
        self._heard = self._term_entered = self._sequencer_heard = now
        self._censor_vote = False
        self._prevote = None
        self._early_votes = {k: v for k, v in self._early_votes.items() if k[1] > term}
        self.votes = {}
        self._sync_from = None
        self._buffer = {}

    def _eligible(self, term: int) -> bool:
        seat = self.table.sequencer_of(term)
        return seat not in self.banned and not (seat == self.me and term in self.led_terms)

    def _next_election_term(self) -> int | None:
        """The next eligible term we would vote in, if any."""
        term = (self.term if self.election is None else self.election) + 1
        for _ in range(2 * self.table.n):
            if self._eligible(term):
                break
            term += 1
        else:
            return None  # every seat is proven against: nobody left to follow
        if term > MAX_TERM:
            return None  # terms are 32 bits on the wire; never reached honestly
        return term

    def _time_out(self, now: float, censor: bool = False) -> None:
        """The sequencer (or the last candidate) is silent, or (v3) censors:
        v2 votes at once; v3 first asks every peer for a pre-vote
        (:mod:`p2p.prevote`) and votes once a majority granted one."""
        if not self.v3:
            self._start_election(now)
            return
        term = self._next_election_term()
        if term is None:
            return
        asked = self._prevote
        if asked is not None and asked.term == term and not asked.stale(now, self.timeout):
            return  # waiting for answers
        self._prevote = PreVoteRound(term, now, censor, {self.me})
        if len(self._prevote.grants) >= self.table.majority:
            self._on_grant(self.me, self._head_statement("grant", term), now)
            return
        self._emit(Send(None, self._head_statement("prevote", term).to_wire()))

    def _on_prevote(self, src: int, head: Head, now: float) -> None:
        """(v3) Grant a pre-vote only if we too miss the sequencer we follow
        (silent for the timeout) or we too hold an event it leaves out; being
        in an election ourselves is no evidence."""
        if self.role is Role.SEQUENCER:
            if self._newterm:  # it may have missed our term's start: here it is again
                self._emit(Send(src, self._newterm))
            return
        if head.term <= self.term:
            return
        if self._would_grant(now):
            self._emit(Send(src, self._head_statement("grant", head.term).to_wire()))

    def _on_grant(self, src: int, head: Head, now: float) -> None:
        asked = self._prevote
        if asked is None or head.term != asked.term:
            return  # a late answer to an older request
        if not asked.grant(src, self.table.majority):
            return
        self._prevote = None
        if self._next_election_term() != asked.term:
            return  # things moved on meanwhile
        if asked.censor:
            if not (self.role is Role.FOLLOWER and self._censoring(now)):
                return
            self._censor_vote = True  # beats of the censor do not call this vote back
        elif now - self._heard < self.timeout:
            return  # we heard the sequencer again meanwhile
        self._start_election(now)

    def _start_election(self, now: float) -> None:
        """The sequencer (or the last candidate) is silent: vote for the next
        eligible term. We keep following the current term until a newterm."""
        term = self._next_election_term()
        if term is None:
            return
        if self.table.sequencer_of(term) == self.me:
            self._become_candidate(term, now)
            self._count_votes(now)
            return
        self.election = term
        self.role = Role.ELECTING
        self.votes = {}
        self._sync_from = None
        self._heard = now
        self._promise(term)
        self._emit(
            Send(self.table.sequencer_of(term), self._head_statement("vote", term).to_wire())
        )

    def _promise(self, term: int) -> None:
        """We vote in ``term``: from now on our acks say so (they no longer
        count for older terms' entries), even after a restart."""
        if term > self.voted:
            self.voted = term
            self._emit(Persist("own", {"t": "vote", "term": term}, sync=True))

    def _become_candidate(self, term: int, now: float) -> None:
        # no promise yet: our own vote is our head when we lead, and leading
        # moves our term (so our floor) anyway
        self.election = term
        self.role = Role.CANDIDATE
        self.votes = {self.me: self._head_statement("vote", term)}
        self._sync_from = None
        self._heard = now
        for (src, voted), vote in list(self._early_votes.items()):
            if voted == term:
                self.votes[src] = vote
        self._early_votes = {k: v for k, v in self._early_votes.items() if k[1] > term}

    def _lead(self, now: float, term: int) -> None:
        self.term = term
        self.election = None
        self.role = Role.SEQUENCER
        self._censor_vote = False
        self._prevote = None
        self.led_terms.add(term)
        self.term_start = self.head
        self.term_start_hash = self.head_hash
        self._voted_ahead = False
        mine = (self.head_term, self.head)
        certificate = [
            {"seat": s, "seq": v.seq, "hterm": v.hterm, "h": v.hash, "s": v.sig}
            for s, v in sorted(self.votes.items())
            if (v.hterm, v.seq) <= mine
        ]
        self._newterm = {**self._head_statement("newterm").to_wire(), "votes": certificate}
        self.votes = {}
        self._buffer = {}
        self._emit(Persist("own", {"t": "lead", "term": term}, sync=True))
        self._emit(Send(None, self._newterm))
        self._next_beat = now + self.timeout / 4
        if self.v3:
            self._sequence_held()  # (v3) what the last sequencer left out comes first
        self._submit_to_sequencer(self.own_pending, now)

    def _start_contradicted(self) -> bool:
        """Whether the newterm we follow certified a hash at its start that
        our chain does not have there (or we do not reach its start yet)."""
        start, h = self.term_start, self.term_start_hash
        if start is None or h is None or self.role is not Role.FOLLOWER:
            return False
        return start > self.head or self.hashes[start] != h

    def _start_certified(self, seq: int) -> bool:
        """Whether ``seq`` lies at or below the start of the term we follow
        and the newterm's hash there is ours (our chain is the one certified)."""
        start, h = self.term_start, self.term_start_hash
        if start is None or h is None or seq > start or start > self.head:
            return False
        return self.hashes[start] == h

    def _settle_restart_swap(self, term: int) -> None:
        """(v3) After a restart, acks of terms below our vote floor counted
        only up to final (:attr:`_restart_swap`): once we follow ``term``,
        only those below ``term`` (a vote whose election never happened
        leaves the acks of the term that went on counting)."""
        swap = self._restart_swap
        if swap is None or term >= swap[1]:
            return
        if self._swap == merge_swaps(swap, self._cut_saved):  # no cut since the restart
            self._restart_swap = (swap[0], term)
            # never below a cut made before the restart (fifth review, #10)
            self._swap = merge_swaps(self._restart_swap, self._cut_saved)
