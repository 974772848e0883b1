"""Away is not cheating (protocol v3, protocol.md §6 *Away*): a seat that
owes a body and is silent is waited for; a game the seat left ends
*abandoned* by the present seats' signed word, never by one clock, and
never as a cheating verdict.

Theory of operation
-------------------
*The rules* (:class:`Absence`, pure, one per v3 :class:`~table.machine.Table`;
v2 logs keep ``overdue``). The table already knows, after every body, which
seats owe one and since which body each has owed something without a break
(``Table.owing``). A seat may sign ``{t: "abandon", away: [seats], why:
"patience"|"vote", at}``: "these seats have owed since body ``at`` and I no
longer wait for them". It counts for that exact set while every named seat's
stretch lasts (a seat that answers starts a new stretch: the votes lapse).
One naming a seat whose stretch began after ``at`` is *stale* — dropped,
naming nobody, not even its author (it may have raced the answer). A seat
that owes no body is in the stretch of its silence since its last body (it
owes its acknowledgements of the log: :func:`stretch_of`); the log cannot
show acks, so more than half of the seats not named can name a present
seat that owes no body (a majority's power, protocol.md §6). The game
ends abandoned at the body where every seat not in the set has voted for
exactly that set. From then on (and from
any other stop: a refused body, a refused setup) every body but a final
reveal is stale: recorded, ignored, never named (issue 28 point 5). An
``abandon`` still counts after a stop by a refused body (only final reveals
are owed then: it can only name a seat that withholds one).

*The clock* (:class:`AwayClock`, pure: the caller passes its own time).
Timing is not in the log: each session times, by its own clock, how long
each other seat has owed (per stretch). Past ``duty_wait`` the seat is
*away* (shown on every other screen); past the table's ``patience`` (the
setup's, times the session's ``time_scale``) the session signs ``abandon``
(patience); a person may sign it earlier (vote); once more than half of
the present seats voted for a set, every honest present session follows
(vote). A session never names a seat whose answer it holds
(``Node.held_events``): the caller filters those out.

*The audit after an abandon* (:func:`audit_present`): the leavers' keys are
not all out, so a deal cannot be opened whole; every pass and handover of a
present seat is still re-checked from the keys it revealed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

from mental_poker.errors import Verdict

from .pace import owes_move

PATIENCE = 600
"""(v3) default seconds a table waits for an away seat: a laptop's lid shut
over a coffee or a Wi-Fi drop of several minutes (protocol.md §6 *Away*)"""
MAX_PATIENCE = 86_400
WHY = ("patience", "vote")
ABANDON_KEYS = frozenset({"t", "away", "why", "at"})


def fmt_away(seconds: float) -> str:
    """``1:12`` (minutes:seconds), ``1:02:03`` past an hour."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass(frozen=True)
class Abandoned:
    """How a game ended abandoned: the seats that left, what each owed and
    since which table body, at which table body it ended, and whether it
    took the table's patience or a vote (``why`` of the completing body)."""

    seats: tuple[int, ...]
    owed: tuple[str, ...]
    since: tuple[int, ...]
    at: int
    why: str

    def lines(self, name: Any = None) -> list[str]:
        """One line per leaver (``name(seat)``: how to call a seat)."""
        out = []
        for seat, owed, since in zip(self.seats, self.owed, self.since, strict=True):
            who = f"seat {seat}" if name is None else f"seat {seat} ({name(seat)})"
            how = "the table's patience ran out" if self.why == "patience" else (
                "the present seats voted to stop waiting"
            )  # fmt: skip
            out.append(f"{who} left the table: it owed {owed} since table body {since} ({how})")
        return out

    def __str__(self) -> str:
        return "; ".join(self.lines())


@dataclass
class _Votes:
    since: tuple[int, ...]  # the named seats' stretches the votes are about
    by: dict[int, str] = field(default_factory=dict)  # author -> why


class Absence:
    """The v3 absence rules of one table (see the module docstring)."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self.votes: dict[tuple[int, ...], _Votes] = {}
        self.ended: Abandoned | None = None
        # seat -> the body count after its last body the table took (not
        # stale: a stale body answers nothing; Table.feed keeps it)
        self.spoke: dict[int, int] = {}

    def silent_since(self, seat: int) -> int:
        """The body count since which ``seat`` has sent no body (0: never):
        the stretch of a seat that owes no body but its acknowledgements
        (protocol.md §6 *Away*: a seat the final point waits for)."""
        return self.spoke.get(seat, 0)

    # ------------------------------------------------------------ feeding
    def dispatch(self, author: int, body: Mapping[str, Any]) -> Verdict | None:
        """Judge ``body`` if the v3 absence rules decide it (None: the
        table's other rules do)."""
        table = self.table
        kind = body["t"]
        if kind == "abandon" and self.ended is None and table.refusal is None:
            return self._abandon(author, body)
        if (table.faults or table.refusal is not None or self.ended is not None) and not (
            _is_final(body)
        ):
            # v3: after a stop only final reveals count; whatever else an
            # honest seat signed before it saw the stop names nobody
            return table.drop_stale(author, f"{kind!r:.20} body after the game stopped")
        return None

    def _abandon(self, author: int, body: Mapping[str, Any]) -> Verdict:
        table, seats = self.table, self.table.setup.seats
        away, why, at = body.get("away"), body.get("why"), body.get("at")
        if (
            set(body) != ABANDON_KEYS
            or not isinstance(away, list | tuple)
            or why not in WHY
            or type(at) is not int
        ):
            return Verdict.cheat(author, "abandon body: expected t, away, why, at")
        if (
            not away
            or any(type(s) is not int or not 0 <= s < seats for s in away)
            or list(away) != sorted(set(away))
            or author in away
        ):
            return Verdict.cheat(author, "abandon body: 'away' lists other seats, in order, once")
        if not 0 <= at <= table.count:
            return Verdict.cheat(author, f"abandon body: 'at' must be 0…{table.count}")
        if not named_few(len(away), seats):
            # (v3) the seats not named must be more than half the table: a
            # side no larger than the named one cannot show it is the
            # present one (one seat naming every other, any seat at 2 seats)
            return table.drop_stale(
                author, f"abandon naming {len(away)} of {seats} seats: not fewer than half"
            )
        stretch = tuple(stretch_of(table, s) for s in away)
        for seat, since in zip(away, stretch, strict=True):
            if since > at:
                # it answered (or spoke) after the body the vote cites: the
                # vote raced it — nobody named
                return table.drop_stale(
                    author, f"abandon naming seat {seat}, which owes nothing since body {at}"
                )
        key = tuple(away)
        votes = self.votes.get(key)
        if votes is None or votes.since != stretch:
            votes = self.votes[key] = _Votes(stretch)  # a new stretch: earlier votes lapse
        votes.by[author] = why
        if all(s in votes.by for s in range(seats) if s not in key):
            owed = tuple(owed_text(table, s) for s in key)
            self.ended = Abandoned(key, owed, stretch, table.count, why)
            self.votes.clear()
        return Verdict.good()

    # ------------------------------------------------------------ reading
    def vote_majority(
        self, seats: Iterable[int], stretches: Mapping[int, int]
    ) -> list[tuple[int, ...]]:
        """Sets for which more than half of the ``seats`` not in them voted
        (why "vote") in the named seats' current ``stretches`` (votes cast
        for an earlier stretch lapsed when a named seat answered): an honest
        present seat then signs too, if it sees them away itself."""
        out = []
        seats = list(seats)
        for key, votes in self.votes.items():
            if votes.since != tuple(stretches.get(s, -1) for s in key):
                continue  # a named seat answered since (review 3, A4c)
            others = [s for s in seats if s not in key]
            voted = sum(1 for s, why in votes.by.items() if why == "vote" and s in others)
            if others and voted * 2 > len(others):
                out.append(key)
        return out


def named_few(named: int, seats: int) -> bool:
    """(v3) Whether an ``abandon`` may name ``named`` of ``seats`` seats: the
    seats not named must be more than half of the table (so never at two
    seats; protocol.md §6 *Ending a game someone left*)."""
    return 0 < named and (seats - named) * 2 > seats


def _owing(table: Any, acks: Iterable[int]) -> dict[int, int]:
    """``table.owing()`` and (v3) the seats that owe only their
    acknowledgements, each with its stretch (:func:`stretch_of`)."""
    owing = table.owing()
    for seat in acks:
        owing.setdefault(seat, stretch_of(table, seat))
    return owing


def stretch_of(table: Any, seat: int) -> int:
    """(v3) Since which body count ``seat`` has been in the stretch an
    ``abandon`` cites: owing a body without a break, or else (it owes only
    its acknowledgements of the log, so the final point waits for it)
    sending no body at all."""
    since = table.owing().get(seat)
    return table.absence.silent_since(seat) if since is None else since


def owed_text(table: Any, seat: int) -> str:
    """What a leaver owed, in words (its duties, or its acknowledgements)."""
    if seat not in table.owing():
        move = owes_move(table, seat)
        if move:  # its turn: the table could not go on without its move
            return f"its move ({', '.join(sorted(move))}: its turn)"
        return "its acknowledgement of the log (it owed no body)"
    return "; ".join(str(d) for d in table.duties(seat)) or "a body"


def ending_ahead(table: Any, items: Sequence[Any]) -> Abandoned | None:
    """(v3) The abandoned end that the tentative entries ``items`` (the
    entries right after the last one ``table`` was fed: ``seq``, ``term``,
    ``author``, ``body``) complete, if they do; judged by these same rules on
    a copy of ``table`` fed them up to the last ``abandon`` (without one,
    nothing is copied). ``table`` itself does not change. protocol.md §3.5
    *The ending rule*: a peer tells its log who left only from this."""
    absence = table.absence
    last = max((k for k, it in enumerate(items) if _is_abandon(it.body)), default=None)
    if absence is None or absence.ended is not None or last is None:
        return None
    ahead = deepcopy(table)
    for item in items[: last + 1]:
        try:
            ahead.feed(item.author, item.body, item.term, getattr(item, "hash", b""))
        except ValueError:  # TableError: an author not at the table (a fault, as in a replay)
            continue
        if ahead.absence.ended is not None:
            return ahead.absence.ended
    return None


def _is_abandon(body: Any) -> bool:
    return isinstance(body, Mapping) and body.get("t") == "abandon"


def _is_final(body: Mapping[str, Any]) -> bool:
    msg = body.get("msg")
    return body.get("t") == "deal" and isinstance(msg, Mapping) and msg.get("type") == "final"


def feed_overdue(
    table: Any, votes_of: dict[int, set[int]], author: int, body: Mapping[str, Any]
) -> Verdict:
    """(v2 logs) ``overdue``: the author has waited for ``seat`` since body
    ``at``. Once more than half of the other seats have signed that about
    one unbroken stretch of owing, the seat is named (protocol.md §6
    *Overdue*). ``votes_of``: the table's votes per seat (it lapses them)."""
    seat, at = body.get("seat"), body.get("at")
    if set(body) != {"t", "seat", "at"} or type(seat) is not int:
        return Verdict.cheat(author, "overdue body: expected t, seat, at")
    if not 0 <= seat < table.setup.seats or seat == author:
        return Verdict.cheat(author, f"overdue body about seat {seat!r:.20}: not another seat")
    if type(at) is not int or not 0 <= at <= table.count:
        return Verdict.cheat(author, f"overdue body: 'at' must be 0…{table.count}")
    since = table.owing().get(seat)
    if since is None or at < since:
        if seat in table.owing_after(at):
            return table.drop_stale(author, f"overdue complaint about seat {seat} (it has acted)")
        return Verdict.cheat(author, f"overdue complaint about seat {seat}, which owed nothing")
    votes = votes_of.setdefault(seat, set())
    votes.add(author)
    others = table.setup.seats - 1
    if len(votes) * 2 <= others:
        return Verdict.good()
    votes_of.pop(seat)
    what = "; ".join(str(d) for d in table.duties(seat)) or "a body"
    return Verdict.cheat(
        seat,
        f"kept the table waiting: owes {what} since table body {since} "
        f"(overdue: {len(votes)} of the {others} other seats signed that they waited)",
    )


# ---------------------------------------------------------------- the clock


@dataclass(frozen=True)
class Away:
    """A seat this peer waits for: since which table body it has owed,
    for how long (seconds, this peer's clock) and what it owes."""

    seat: int
    since: int
    seconds: float
    owed: str


def waiting_text(away: Away) -> str:
    """The waiting line (``waiting`` update; the screens put the seat's name
    and translate it, tui/story.py)."""
    seat = f"seat {away.seat}"
    return (
        f"waiting for {seat}, away {fmt_away(away.seconds)}: the game goes on when {seat} is back"
    )


def back_text(seat: int) -> str:
    """The line said when a seat the table waited for is back."""
    return f"seat {seat} is back: the game goes on"


class AwayClock:
    """How long each other seat has owed, by this peer's clock (pure: the
    caller passes ``now``). ``duty_wait``: owing that long, a seat is away;
    ``patience``: owing that long, the table may stop waiting for it."""

    JUMP = 5.0
    """seconds between two looks past which this peer itself was away (its
    process stopped: a laptop's lid shut; the session looks every second)"""

    def __init__(self, me: int, duty_wait: float, patience: float) -> None:
        self.me, self.duty_wait, self.patience = me, duty_wait, patience
        self.notes: list[str] = []  # why a person's "stop waiting" named nobody (one line each)
        self.first_seen: dict[tuple[int, int], float] = {}  # (seat, since) -> first seen
        self._last: float | None = None  # when this peer last looked
        self.signed: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()  # (set, stretches)

    def look(self, owing: Mapping[int, int], now: float, table: Any = None) -> dict[int, float]:
        """Each other owing seat -> when this peer first saw its stretch.
        Time this peer itself was stopped does not count against the others:
        a sleeper that wakes does not find everyone away. (v3, ``table``
        given) A seat whose stretch changes without a body of its own in
        between (a gone seat owing its acknowledgement, then a body another
        seat's entry asked of it) keeps the time its first stretch was seen:
        it did not come back (review of 30e17a1, #6)."""
        if self._last is not None and now - self._last > self.JUMP:
            gap = now - self._last
            self.first_seen = {key: start + gap for key, start in self.first_seen.items()}
        self._last = max(now, self._last or now)
        absence = None if table is None else table.absence
        seen = {}
        for seat, since in owing.items():
            if seat == self.me:
                continue
            start = self.first_seen.get((seat, since))
            if start is None and absence is not None:
                silent = absence.silent_since(seat)
                carried = [
                    at for (s, was), at in self.first_seen.items() if s == seat and silent <= was
                ]
                start = min(carried, default=None)
            seen[(seat, since)] = now if start is None else start
        self.first_seen = seen
        return {seat: at for (seat, _), at in seen.items()}

    def oldest(self) -> float | None:
        """When the longest stretch seen at the last look was first seen
        (None: nobody owed)."""
        return min(self.first_seen.values(), default=None)

    def away(self, table: Any, now: float, acks: Iterable[int] = ()) -> list[Away]:
        """The seats owing for ``duty_wait`` or longer (table order).
        ``acks``: (v3) seats the final point has waited for (their
        acknowledgement) although they owe no body: they owe that."""
        owing = _owing(table, acks)
        out = []
        for seat, start in sorted(self.look(owing, now, table).items()):
            if now - start >= self.duty_wait:
                out.append(Away(seat, owing[seat], now - start, owed_text(table, seat)))
        return out

    def overdue(self, table: Any, now: float) -> dict[str, Any] | None:
        """(v2 logs only) the ``overdue`` body due now: a seat owing for
        ``duty_wait``, once per stretch."""
        owing = table.owing()
        for seat, start in sorted(self.look(owing, now).items(), key=lambda kv: kv[1]):
            key = ((seat,), (owing[seat],))
            if now - start >= self.duty_wait and key not in self.signed:
                self.signed.add(key)
                return {"t": "overdue", "seat": seat, "at": table.count}
        return None

    def next_due(self, table: Any, now: float, acks: Iterable[int] = ()) -> float | None:
        """When the next seat becomes away or runs out of patience."""
        due = []
        for start in self.look(_owing(table, acks), now, table).values():
            for wait in (self.duty_wait, self.patience):
                if start + wait > now:
                    due.append(start + wait)
        return min(due, default=None)

    def to_sign(
        self,
        table: Any,
        now: float,
        holds: Callable[[int], bool],
        voted: Iterable[int] = (),
        acks: Iterable[int] = (),
    ) -> dict[str, Any] | None:
        """The ``abandon`` body this peer signs now, if any: the seats past
        the table's patience (why "patience"), a set a majority of the
        present seats voted for, or the seats in ``voted`` (a person said
        "stop waiting"; both why "vote"). ``holds(seat)``: this peer holds
        an answer of that seat not yet in the log (it is never named)."""
        absence = table.absence
        if absence is None or absence.ended is not None or table.refusal is not None:
            if voted:
                self.notes.append("not signed: the game is over or stopped")
            return None
        owing, seats = _owing(table, acks), table.setup.seats
        starts = self.look(owing, now, table)
        asks: list[tuple[tuple[int, ...], str]] = []
        person = tuple(sorted(s for s in set(voted) if s in owing and s != self.me))
        if voted and not person:
            self.notes.append(f"not signed: seat {min(voted)} owes nothing now")
        if person:
            asks.append((person, "vote"))
        for key in absence.vote_majority(range(seats), owing):
            # followed only for seats this peer itself sees away (owing for
            # duty_wait on its own clock): two seats of four cannot recruit
            # it against a seat that is busy with its duty (review 3, A4)
            seen = all(s in starts and now - starts[s] >= self.duty_wait for s in key)
            if seen and self.me not in key:
                asks.append((key, "vote"))
        patient = tuple(s for s, start in sorted(starts.items()) if now - start >= self.patience)
        if patient:
            asks.append((patient, "patience"))
        for k, (key, why) in enumerate(asks):
            answered = [s for s in key if holds(s)]
            key = tuple(s for s in key if s not in answered)
            if not key or not named_few(len(key), seats):
                if k == 0 and person:  # the person's own vote: say why it names nobody
                    self.notes.append(_why_nobody(key, answered, seats))
                continue
            stretch = tuple(owing[s] for s in key)
            if (key, stretch) in self.signed:
                continue
            self.signed.add((key, stretch))
            return {"t": "abandon", "away": list(key), "why": why, "at": table.count}
        return None


def _why_nobody(key: tuple[int, ...], answered: Sequence[int], seats: int) -> str:
    """One line: why a person's "stop waiting" was signed for nobody."""
    if answered and not key:
        held = ", ".join(f"seat {s}" for s in answered)
        return f"not signed: this peer holds an answer of {held}, or its acks show it is there"
    if seats <= 2:
        return "not signed: at two seats one seat's word cannot end the game (it waits)"
    return (
        f"not signed: the seats not named must be more than half of the {seats} "
        f"(it would name {len(key)})"
    )


# ---------------------------------------------------------------- the audit


def audit_present(table: Any, leavers: Iterable[int]) -> Verdict:
    """After an abandon: every dealt deal re-checked as far as the present
    seats' keys go — each shuffle and lock pass of a present seat whose
    proof was not checked (unproven deals), from its revealed shuffle key,
    and each handover of a present seat. The first failure names its seat."""
    gone = set(leavers)
    for deal in table.deals:
        if not deal.dealt:
            continue
        g = deal.group
        deck_in = deal.setup.deck.points
        for shuffle in deal.shuffles:
            seat = shuffle.seat
            key = deal.shuffle_keys.get(seat)
            if seat not in gone and key is not None and ("shuffle", seat) not in deal.proof_checked:
                s_inv = g.inverse(key)
                if sorted(g.mul(s_inv, y) for y in shuffle.deck) != sorted(deck_in):
                    why = "shuffle output is not its input permuted under one key"
                    return Verdict.cheat(seat, why)
            deck_in = shuffle.deck
        for lock in deal.locks:
            seat = lock.seat
            key = deal.shuffle_keys.get(seat)
            if seat in gone or key is None or ("lock", seat) in deal.proof_checked:
                continue
            if [g.mul(key, x) for x in lock.stripped] != list(lock.locked):
                return Verdict.cheat(seat, "stripped deck is not its locked deck unkeyed")
        for handover in deal.handovers:
            if handover.seat in gone or handover.layer.key is None:
                continue
            if g.mul(handover.layer.key, handover.after) != handover.before:
                return Verdict.cheat(handover.seat, "handover took off another key than its own")
    return Verdict.good()


__all__ = [
    "PATIENCE",
    "Abandoned",
    "Absence",
    "Away",
    "AwayClock",
    "audit_present",
    "back_text",
    "ending_ahead",
    "feed_overdue",
    "fmt_away",
    "waiting_text",
]
