"""How far a table's deals are, for a person waiting on them: which seat is
making which pass, and how many of the passes' zero-knowledge proofs this
peer has checked (the session's ``progress`` updates, :mod:`table.session`).

Every pass of a proven deal (one shuffle and one lock pass per seat) carries
one proof, so a deal of ``n`` seats has ``2n`` proofs. This peer accounts for
each pass the log brought back as one of:

* *checked*: its proof was verified here;
* *own*: this peer's own code made it (:meth:`~mental_poker.deal.DealTable.made_here`)
  and it came back unchanged on the same deck, so its proof was not verified
  again (protocol.md §1.11 says which own passes a peer may skip);
* *queued*: received, its proof not verified yet (a deferred deal, §1.11).

The counts come from what the tracker itself records (the proofs it verified,
the ones it holds back), so they never claim a check that did not run.

>>> ProofCount(checked=3, own=2, queued=0, total=6).text()
'proofs: 3 checked + 2 own of 6'
"""

from __future__ import annotations

from dataclasses import dataclass

from mental_poker.deal import DealTable


@dataclass(frozen=True)
class ProofCount:
    """The proofs of one proven deal as this peer holds them."""

    checked: int
    own: int
    queued: int
    total: int

    def text(self) -> str:
        queued = f" + {self.queued} queued" if self.queued else ""
        return f"proofs: {self.checked} checked + {self.own} own{queued} of {self.total}"


def proof_count(deal: DealTable) -> ProofCount | None:
    """This peer's account of a deal's proofs (None: an unproven deal):
    checked is what the tracker records it verified (``proof_checked``),
    queued what it holds back (``pending``); every other pass the log
    brought back is one whose proof it skipped as its own."""
    if not deal.setup.proven:
        return None
    checked = len(deal.proof_checked)
    queued = sum(1 for check, _, _ in deal.pending if check is not None)
    passes = len(deal.shuffles) + len(deal.locks)
    return ProofCount(checked, passes - checked - queued, queued, 2 * deal.setup.seats)


def deal_line(number: int, deal: DealTable, me: int) -> str | None:
    """One line on a deal: the pass under way (whose, which) and the
    proofs so far; once both passes are done, that it is dealt with the
    final count; None for a deal that failed.

    ``deal 0: seat 2 locks (proofs: 3 checked + 2 own of 6)``, ``deal 0:
    you shuffle (…)``, ``deal 0 dealt (…)``; an unproven deal counts passes
    (``(3/6 passes, unproven)``). The step and the count in brackets are
    short enough to share an 80-column title bar
    (:func:`tui.story.progress_parts` translates and splits them)."""
    count = proof_count(deal)
    total = 2 * deal.setup.seats
    if deal.phase in ("shuffle", "lock"):
        if deal.next_seat == me:
            step = f"you {deal.phase}"
        else:
            step = f"seat {deal.next_seat} {deal.phase}s"
        done = len(deal.shuffles) + len(deal.locks)
        counted = f"{done}/{total} passes, unproven" if count is None else count.text()
        return f"deal {number}: {step} ({counted})"
    if deal.dealt:
        counted = f"{total}/{total} passes, unproven" if count is None else count.text()
        return f"deal {number} dealt ({counted})"
    return None
