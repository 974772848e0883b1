"""Held events and censorship (protocol v3, protocol.md §3.5 *Censorship*).

On a v3 table every seat sends each signed event to every peer, not only to
the sequencer. A peer keeps the events it received that are not yet in its
chain: :class:`HeldEvents`. They are the evidence that a seat answered (the
table layer never signs a verdict against a seat whose event it holds) and
the measure of a sequencer that censors: an event that could be sequenced
next (its counter is its author's next one) and that the sequencer of the
current term has not sequenced ``censor_wait`` seconds after this peer held
it and that term began is *censored*; the peer then votes the sequencer out
as after a timeout, and the next sequencer sequences the held events first.

Pure bookkeeping, no I/O, no clock of its own: the log machine
(:mod:`p2p.log`) says what time it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2p.envelope import Event

HOLD_AHEAD = 64  # events held per author beyond its next counter (as a sequencer buffers)


class HeldEvents:
    """Verified events per author, not yet in the chain, each with the time
    this peer first received it."""

    def __init__(self, n: int) -> None:
        self._by_author: list[dict[int, tuple[Event, float]]] = [{} for _ in range(n)]
        self._next = [0] * n  # each author's next counter, as the log last said it

    def hold(self, event: Event, now: float, next_counter: int) -> bool:
        """Keep a verified ``event`` (its author's next counter is
        ``next_counter``); False if it conflicts with a different event held
        for the same counter. An event already in the chain or too far
        ahead is not kept (True: nothing wrong with it)."""
        held = self._by_author[event.author]
        self._next[event.author] = next_counter
        if event.counter < next_counter or event.counter - next_counter > HOLD_AHEAD:
            return True
        old = held.get(event.counter)
        if old is not None:
            return old[0] == event
        held[event.counter] = (event, now)
        return True

    def has(self, event: Event) -> bool:
        """Is this very event held already?"""
        old = self._by_author[event.author].get(event.counter)
        return old is not None and old[0] == event

    def all(self) -> list[Event]:
        """Every held event, author by author, in counter order."""
        return [held[c][0] for held in self._by_author for c in sorted(held)]

    def sequenced(self, author: int, next_counter: int) -> None:
        """The chain now holds ``author``'s events below ``next_counter``."""
        held = self._by_author[author]
        self._next[author] = next_counter
        for counter in [c for c in held if c < next_counter]:
            del held[counter]

    def events(self, author: int) -> list[Event]:
        """``author``'s held events that can enter the chain now: its next
        counter and those contiguous from it, in counter order. Only these
        are evidence that the seat answered (protocol.md §6 *Away*): an
        event past a gap (a decoy far ahead of the counter it owes) can never
        be sequenced before the missing one, so it answers nothing."""
        held = self._by_author[author]
        run, counter = [], self._next[author]
        while counter in held:
            run.append(held[counter][0])
            counter += 1
        return run

    def since(self, author: int) -> float | None:
        """When this peer first received the oldest of :meth:`events`."""
        held = self._by_author[author]
        times = [held[e.counter][1] for e in self.events(author)]
        return min(times, default=None)

    def due(self, next_counter: Sequence[int]) -> list[Event]:
        """Every held event that can enter the chain now or right after
        another held one (contiguous from its author's next counter), oldest
        received first, each author's in counter order."""
        runs: list[tuple[float, int, list[Event]]] = []
        for author, held in enumerate(self._by_author):
            run = []
            counter = next_counter[author]
            while counter in held:
                run.append(held[counter][0])
                counter += 1
            if run:
                runs.append((held[next_counter[author]][1], author, run))
        return [event for _, _, run in sorted(runs, key=lambda r: r[:2]) for event in run]

    def censored(self, next_counter: Sequence[int], cutoff: float) -> int | None:
        """A seat whose next event this peer has held since ``cutoff`` or
        earlier (the caller passes ``now - censor_wait``, never earlier than
        the current term's start): the sequencer should have sequenced it."""
        for author, held in enumerate(self._by_author):
            first = held.get(next_counter[author])
            if first is not None and first[1] <= cutoff:
                return author
        return None

    def __len__(self) -> int:
        return sum(map(len, self._by_author))
