"""Catching up (protocol.md §3.3 *Fetch*): how a peer asks others for the
entries it lacks and answers their asking — a mixin of
:class:`p2p.log.LogMachine`, which holds the state these methods use
(sans-I/O like it: they emit effects).

A peer fetches from whoever showed it a longer chain (an ack, a beat, a
newterm); a fetch is one batch (:data:`FETCH_BATCH`) and the next goes out
when it is in, or after a short busy time; (v3) behind a head some peer
showed it and with no fetch under way, it asks again, each time the next
peer whose ack is past its head, so no one peer (a starving sequencer)
can keep it behind. An answer is bounded in bytes (:data:`FETCH_BYTES`).
"""

from __future__ import annotations

from p2p.chain import Send
from p2p.envelope import Head
from p2p.wire import MAX_BODY, MAX_FETCH

FETCH_BATCH = 64  # entries we ask for at once (the next fetch goes out when they are in)
# an answer stops after about this many bytes of bodies: never before a whole
# batch of ours, however big its bodies, but a peer asking for MAX_FETCH at
# once (and not reading) fills its outbox in a few requests and is dropped
FETCH_BYTES = FETCH_BATCH * (MAX_BODY + 1024)


class CatchUp:
    """Fetching and answering fetches (mixed into the log machine)."""

    def _rewind_fetch(self, src: int, below: int, now: float) -> None:
        start = max(1, below - self._rewind + 1)
        self._rewind = min(self._rewind * 2, MAX_FETCH)
        self._fetch(src, start, now, force=True)

    def _fetch(self, src: int, start: int, now: float, force: bool = False) -> None:
        if not force and now < self._fetch_busy_until:
            return
        self._fetch_busy_until = now + min(0.5, self.timeout / 4)
        self._fetch_end = start + FETCH_BATCH - 1
        self._emit(Send(src, {"k": "fetch", "from": start, "n": FETCH_BATCH}))

    def _fetch_again(self, now: float) -> None:
        """(v3) Behind a head some peer showed us, and no fetch under way:
        ask again, each time the next peer whose ack (direct or passed on)
        is past our head. A trigger that came while a fetch was busy is
        otherwise lost, and a seat one entry behind when the table waits
        for it would look away (review 2, A4: the link to the sequencer
        down, the entries only through another seat)."""
        if self._known_head <= self.head or now < self._fetch_busy_until:
            return
        ahead = sorted(s for s, h in self.acks.items() if s != self.me and h.seq > self.head)
        if self.sequencer != self.me and self.sequencer not in ahead:
            ahead.append(self.sequencer)
        if not ahead:
            return
        self._fetch_turn += 1
        self._fetch(ahead[self._fetch_turn % len(ahead)], self.head + 1, now)

    def _on_fetch(self, src: int, start: int, n: int) -> None:
        size = 0  # an answer stops after FETCH_BYTES of bodies (at least one entry)
        for seq in range(start, min(self.head, start + n - 1) + 1):
            if size >= FETCH_BYTES:
                break
            entry = self.chain[seq - 1]
            size += len(entry.event.body) + 256
            self._emit(Send(src, {"k": "entry", "e": entry.to_wire()}))

    def _compare_head(self, src: int, head: Head, now: float) -> None:
        """Another peer's signed head: catch up, or look for a conflict."""
        self._known_head = max(self._known_head, head.seq)
        if head.seq > self.head:
            self._fetch(src, self.head + 1, now)
        elif head.seq >= 1 and head.hash != self.hashes[head.seq]:
            if head.hterm == self.chain[head.seq - 1].term:
                # same term, different entry: fetch it, it may prove equivocation
                self._emit(Send(src, {"k": "fetch", "from": head.seq, "n": 1}))
