"""A session's side of absence (protocol v3, :mod:`table.absence`): who
this peer waits for and since when by its own clock, what it signs about
it (``abandon``; ``overdue`` on v2 logs), the news it gives its player
(``waiting`` updates) and the person's "stop waiting for <name>".

Runs on the session's trio thread, between feeds (the table does not
change under it). ``node``: the session's :class:`~p2p.node.Node`, whose
``held_events(seat)`` says whether this peer holds an answer of that seat
not yet in the log (such a seat is never named) and whose
``set_leavers(seats)`` is told once the game ended abandoned (its log then
stops waiting for the leavers' acknowledgements).

(v3) The session is fed only *final* entries (acknowledged by every seat),
and a seat that left acknowledges nothing: the ``abandon`` bodies that end
the game stay tentative (``node.tentative()``). So the watch also looks
past the final point: when the tentative entries complete an abandoned end
by the table's own rules (:func:`table.absence.ending_ahead`, on a copy of
the table; this peer's own ``abandon`` among them, since it is one of the
seats not named), it tells the node the leavers; those entries then become
final and the session replays them as any other.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import replace
from typing import Any

import trio

from .absence import Away, AwayClock, back_text, ending_ahead, waiting_text
from .pace import owes_move
from .reports import Update

CATCH_UP = 8
"""Entries the kept table past the final point may have fallen behind the
replay and still be fed them rather than copied afresh (a 9-seat entry
costs about a millisecond to feed, a copy of the table ten)."""


class NotWaiting(ValueError):
    """The table is not waiting for that seat (nothing was signed)."""


class AwayWatch:
    """One peer's watch over the seats the table waits for."""

    def __init__(self, node: Any, me: int, duty_wait: float, time_scale: float) -> None:
        self.node, self.me = node, me
        self.duty_wait, self.time_scale = duty_wait, time_scale
        self.v3 = node.table.version >= 3
        self.clock: AwayClock | None = None  # made with the table (its patience)
        self._asked: set[int] = set()  # seats a person said to stop waiting for
        self._said: tuple[int, ...] = ()  # the away seats last reported
        self._told = False  # the game's abandoned end was reported
        self._leavers: frozenset[int] | None = None  # told to the node
        self._ahead: tuple[int, int, bytes | None] | None = None  # ending judged: fed, head, hash
        self._ahead_table: tuple[Any, int, bytes | None] | None = None  # (table, fed to seq, hash)
        self._away: list[tuple[Away, float]] = []  # (away seat, since when: trio time)
        self._said_acks: tuple[str, ...] = ()  # the missing-acknowledgement lines last said
        self._stuck: tuple[int, float] | None = None  # (final point, since when) while below head

    def start(self, table: Any) -> None:
        """The table is set up: its patience (seconds, times ``time_scale``;
        never less than ``duty_wait``: a seat is away before it is left)."""
        if self.clock is None:
            patience = max(table.setup.patience * self.time_scale, self.duty_wait)
            self.clock = AwayClock(self.me, self.duty_wait, patience)

    def body(self, table: Any, stopped: bool) -> dict[str, Any] | None:
        """What this peer signs about absence now, if anything: (v3) an
        ``abandon`` past the table's patience, for a person's vote or
        following the present seats' majority; (v2 logs) an ``overdue``."""
        clock = self.clock
        if clock is None:
            return None
        now = trio.current_time()
        if not self.v3:
            return None if stopped and not table.faults else clock.overdue(table, now)
        owing = table.owing()

        def spared(seat: int) -> bool:
            return self._holds(seat) or (seat in owing and self._acking(seat, owing[seat]))

        body = clock.to_sign(table, now, spared, self._asked, self._gone_on_turn(table))
        self._asked.clear()
        return body

    def _gone_on_turn(self, table: Any) -> tuple[int, ...]:
        """(v3) Seats on their own turn (a move owed, no body) whose link is
        gone, judged on ``table`` (the replay's, or the one past the final
        point: :meth:`_owing_acks`), none whose answer this peer holds."""
        owing, connected = table.owing(), self.node.connected
        return tuple(
            s
            for s in range(table.setup.seats)
            if s != self.me
            and s not in owing
            and s not in connected
            and owes_move(table, s)
            and not self._holds(s)
        )

    def body_ahead(self, replay: Any, own_fed: int) -> dict[str, Any] | None:
        """(v3) The ``abandon`` this peer signs while its replay stands at the
        final point and the entries past it stay tentative (a seat away
        acknowledges nothing, so they cannot become final): judged on a copy
        of the table fed those entries (the ``abandon`` is sequenced after
        them), naming only seats that do not acknowledge past the final
        point (a seat that does is there, held up by the missing acks as
        this peer is).
        None unless a seat is away (:meth:`look`), and unless every
        body this peer signed is in its chain (``own_fed``: those replayed)."""
        clock, final = self.clock, replay.table
        if clock is None or not self.v3 or final is None or replay.broken:
            return None
        if not self._away and not self._asked:
            return None
        items = self.node.tentative(after=replay.fed)
        mine = sum(1 for it in items if it.author == self.me)
        if self.node.next_own_counter > own_fed + mine:
            return None  # a body of ours is not sequenced yet
        ahead = self._ahead_of(replay)
        if ahead is None:
            return None

        owing = ahead.owing()

        def holds(seat: int) -> bool:
            # a seat acking past the final point is there, held up by the acks as we are
            if self.node.acked(seat) > replay.fed or self._holds(seat):
                return True
            return seat in owing and self._acking(seat, owing[seat])

        now = trio.current_time()
        body = clock.to_sign(ahead, now, holds, self._asked, self._owing_acks(ahead, now))
        self._asked.clear()
        return body

    def _ahead_of(self, replay: Any) -> Any:
        """(v3) The table fed the tentative entries right after the replayed
        ones, or None. Made only when it can matter: the node saw the final
        point stand still at one of its ticks (every 50 ms or less: a seat
        owing only its acknowledgement, or a body past the final point, is
        then seen away at most that much later), or a seat has owed for
        half of ``duty_wait`` (so every look that could show a seat away
        judges on this table: one whose answer is sequenced but not final
        is not away). Every new entry waits a moment for its acks, and in
        that moment the final table says who owes as well as any.

        The table is kept and fed only the entries new since, while this
        peer's chain still has, at the last seq fed to it, the hash it had
        then and the replay has not passed it by more than a few entries
        (feeding those costs less than a copy; a table the replay passed by
        more is let go at once); otherwise it is a copy of the replay's
        table. A 9-seat peer spent most of its CPU copying the
        whole table for every new entry (cProfile of bench/table.py)."""
        table, node, clock = replay.table, self.node, self.clock
        kept = self._ahead_table
        if kept is not None and replay.fed - kept[1] > CATCH_UP:
            kept = self._ahead_table = None  # a copy would be made: free its memory now
        if table is None or clock is None or replay.fed < node.final or node.head <= replay.fed:
            return None
        now, oldest = trio.current_time(), clock.oldest()
        if node.stalled_since() is None and (oldest is None or now - oldest < self.duty_wait / 2):
            return None
        if kept is not None and node.chain_hash(kept[1]) == kept[2]:
            ahead, at = kept[0], kept[1]
        else:
            ahead, at = deepcopy(table), replay.fed
        for item in node.items_after(at):
            try:  # as the replay feeds it (its chain hash: what a later `seen` names)
                ahead.feed(item.author, item.body, item.term, item.hash)
            except ValueError:  # TableError: an author not at the table (the replay skips it)
                pass
            at = item.seq
        self._ahead_table = (ahead, at, node.chain_hash(at))
        if self._stuck is None or self._stuck[0] != node.final:
            self._stuck = (node.final, now)  # judged past the final point from here
        return ahead

    def _holds(self, seat: int) -> bool:
        # (v3) only events that can enter the chain now (Node.held_events:
        # the author's next counter and on): a decoy past a gap answers nothing
        return bool(self.node.held_events(seat))

    def _acking(self, seat: int, since: int) -> bool:
        """(v3) Whether ``seat``, owing since table body ``since`` (made
        owing by the entry at seq ``since + 1``), acknowledged every entry
        this peer holds, one sequenced after that entry among them, is
        connected to this peer, and this peer cannot show it every
        acknowledgement: it is there, and
        what may keep it from answering is an acknowledgement it lacks (it
        cannot see its duty final), not its absence. It is neither away nor
        named; the peer that lacks the acknowledgement shows whose it is
        (:meth:`_ack_lines`).

        This peer can show it every acknowledgement when its node relays
        acks (``Node.waiting_for_acks``) and none is missing here: the seat
        then holds them too and sees its duty final, so its silence is its
        own (a seat that acks and withholds its keys is still named)."""
        acked = self.node.acked(seat)
        if acked < self.node.head or acked <= since + 1 or seat not in self.node.connected:
            return False  # (a lid shut: its link goes silent and is closed)
        missing = getattr(self.node, "waiting_for_acks", None)  # relayed acks (p2p)
        # relayed: only while an ack has been missing here too for duty_wait
        # (not the moment every new entry waits for its acks)
        return missing is None or (bool(missing()) and self._stuck_long(trio.current_time()))

    def _stuck_long(self, now: float) -> bool:
        """Whether this peer's final point has stood still below its head
        for ``duty_wait`` or longer, counted from the first look that saw
        the node's stall (the look that also begins to judge on the table
        past the final point, :meth:`_ahead_of`: a seat gone is then away
        before anyone is said to lack its acknowledgement)."""
        final, head = self.node.final, self.node.head
        if final >= head:
            self._stuck = None
            return False
        if self._stuck is None or self._stuck[0] != final:
            if self.node.stalled_since() is None:
                return False  # not yet: a look that saw no stall begins no count
            self._stuck = (final, now)
        return now - self._stuck[1] >= self.duty_wait

    def look(self, replay: Any) -> list[Update]:
        """(v3) who the table waits for now; news when that changes (a seat
        away, or back). Once the game ended abandoned, tells the node."""
        table, clock = replay.table, self.clock
        if table is None or clock is None or not self.v3 or replay.broken:
            return []
        ended = replay.abandoned
        news = [Update("waiting", line) for line in clock.notes]
        clock.notes.clear()
        if ended is not None and not self._told:
            self._told = True
            if self.me not in ended.seats:  # never on an ending that names this seat
                self._tell_leavers(ended.seats)
            news += [Update("abandoned", line) for line in ended.lines()]
        elif ended is None and self._leavers is None:
            self._look_ahead(replay)
        if ended is None and self._leavers is not None:
            return news  # the end is known (the ending rule): its entries are on their way
        now = trio.current_time()
        ahead = None if ended is not None else self._ahead_of(replay)
        acks = (
            ()
            if ended is not None
            else self._gone_on_turn(table)
            if ahead is None
            else self._owing_acks(ahead, now)
        )
        away = [] if ended is not None else clock.away(ahead or table, now, acks)
        # (v3) a seat acking past the final point is there: held up, as this
        # peer is, by a seat that acknowledges nothing (not away itself); so is
        # one that acknowledged all this peer holds since it began to owe
        # (only once the final point has stood still for duty_wait: every new
        # entry waits a moment for its acks, and the line would flicker)
        stuck = self._stuck_long(now)
        away = [
            a
            for a in away
            if not (stuck and self.node.acked(a.seat) > self.node.final)
            and not self._acking(a.seat, a.since)
            # its answer is here, the log lacks it: the seat is there (third
            # review: a censoring coalition's victim was shown away)
            and not self._holds(a.seat)
        ]
        self._away = [(a, now - a.seconds) for a in away]
        seats = tuple(a.seat for a in away)
        lines = () if ended is not None else self._ack_lines(now, seats)
        if lines != self._said_acks:
            self._said_acks = lines
            news += [Update("waiting", line) for line in lines]
        if seats == self._said:
            return news
        back = [s for s in self._said if s not in seats and ended is None]
        self._said = seats
        out = [Update("waiting", waiting_text(a)) for a in away]
        return news + out + [Update("waiting", back_text(seat)) for seat in back]

    def _owing_acks(self, ahead: Any, now: float) -> tuple[int, ...]:
        """(v3) The seats that owe no duty on the table past the final point
        but whose acknowledgement the final point waits for (a seat gone
        right after its answer was sequenced: it owes only its
        acknowledgement), or that owe a move and whose link is gone (a seat
        gone on its own turn). They are away as any
        seat owing a body (:class:`~table.absence.AwayClock`: missing at
        every look for ``duty_wait``; a present seat's ack is missing for
        milliseconds per entry), never while this peer holds an answer of
        theirs."""
        owing = ahead.owing()
        missing = getattr(self.node, "waiting_for_acks", None)  # relayed acks (p2p)
        lacking = {
            s
            for s in (() if missing is None else missing())
            if s != self.me and s not in owing and not self._holds(s)
        }
        # and a seat on its turn (it owes a move, no duty) whose link is
        # gone: a seat gone on its own turn would otherwise leave the table
        # waiting without a word (a CI run stopped one so); a person thinking
        # keeps its link (beats), and is never away for taking its time
        return tuple(sorted(lacking.union(self._gone_on_turn(ahead))))

    def _ack_lines(self, now: float, away: tuple[int, ...]) -> tuple[str, ...]:
        """(v3) Whose acknowledgement this peer has lacked for ``duty_wait``
        or longer (its final point stands still below its head): the seats,
        not already shown away, whose latest ack does not reach past the
        final point — the table waits for them, not for a seat that owes."""
        final = self.node.final
        if not self._stuck_long(now):
            return ()
        missing = getattr(self.node, "waiting_for_acks", None)  # relayed acks (p2p)
        if missing is not None:
            lacking = [s for s in missing() if s != self.me and s not in away]
        else:
            lacking = [
                s
                for s in range(self.node.table.n)
                if s != self.me and s not in away and self.node.acked(s) <= final
            ]
        return tuple(
            f"waiting for seat {s} to acknowledge entry {final + 1}: the game goes on when it does"
            for s in lacking
        )

    def _tell_leavers(self, seats: tuple[int, ...]) -> None:
        if self._leavers != frozenset(seats):
            self._leavers = frozenset(seats)
            self.node.set_leavers(set(seats))

    def _look_ahead(self, replay: Any) -> None:
        """(v3) The ending rule: tentative entries right after the replayed
        ones that end the game abandoned make their leavers known to the
        node (judged again only when those entries change)."""
        node = self.node
        if replay.fed < node.final or node.head <= replay.fed:
            return  # the replay lags behind the final point (it is fed first), or none
        key = (replay.fed, node.head, node.chain_hash(node.head))
        if key == self._ahead:
            return
        self._ahead = key
        ended = ending_ahead(replay.table, node.tentative(after=replay.fed))
        if ended is not None and self.me not in ended.seats:
            # (v3) never on an ending that names this seat: it is here
            self._tell_leavers(ended.seats)

    def waiting(self) -> list[Away]:
        """The seats the table waits for, with how long they have been away."""
        now = trio.current_time()
        return [replace(a, seconds=now - start) for a, start in self._away]

    def stop_waiting(self, seat: int) -> None:
        """A person's "stop waiting for <seat>" (raises :class:`NotWaiting`)."""
        if not self.v3:
            raise NotWaiting("this table (protocol v2) has no vote to stop waiting")
        if seat not in {a.seat for a, _ in self._away}:
            raise NotWaiting(f"the table is not waiting for seat {seat}")
        self._asked.add(seat)

    def next_due(self, table: Any) -> float | None:
        """When a seat next becomes away or runs out of patience."""
        if self.clock is None:
            return None
        acks = self._gone_on_turn(table) if self.v3 else ()
        return self.clock.next_due(table, trio.current_time(), acks)

    def end_wait(self, final_wait: float) -> float:
        """How long the log may stand still, the game over, before the peer
        ends with a final reveal missing: ``final_wait``; (v3) at least the
        table's patience, so that the present seats end it abandoned first."""
        if self.clock is None or not self.v3:
            return final_wait
        return max(final_wait, self.clock.patience + self.duty_wait)


__all__ = ["AwayWatch", "NotWaiting"]
