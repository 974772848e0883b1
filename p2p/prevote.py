"""Pre-vote (protocol v3, protocol.md §3.5 *Pre-vote*; Raft's PreVote).

A v3 peer does not vote a sequencer out - which raises its vote floor and,
repeated, the table's term - on its own clock alone. It first asks every
peer for a *pre-vote* for the term it would vote in (``prevote``, its signed
head) and votes only once a majority of seats, itself included, granted one
(``grant``). A peer grants only if it too has not heard the sequencer it
follows for the timeout (or is itself in an election), or it too holds an
event that sequencer has left out for ``censor_wait``
(:mod:`p2p.censor`). A seat cut off from the table gets no grant: however
long the cut, it raises no term, and back, it finds the table where it was
and follows the sequencer it had.

This module keeps one round's bookkeeping; :class:`p2p.log.LogMachine`
decides when to ask and whether to grant.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PreVoteRound:
    """Our request for pre-votes for ``term``, begun at ``started``."""

    term: int
    started: float
    censor: bool  # asked because the sequencer leaves out an event we hold
    grants: set[int] = field(default_factory=set)

    def grant(self, seat: int, majority: int) -> bool:
        """Count ``seat``'s grant; True once a majority granted."""
        self.grants.add(seat)
        return len(self.grants) >= majority

    def stale(self, now: float, timeout: float) -> bool:
        """Unanswered for the timeout: ask again."""
        return now - self.started >= timeout
