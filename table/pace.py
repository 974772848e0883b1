"""Bots at a person's pace: when a bot seat may make the move it chose.

Theory of operation
-------------------
A person at a table with bots (``nodealer play``) must be able to read each
move before the next one comes, and must never lose a move only they may
make (their turn) to a bot before they could make it. The engines know
nothing of time and the session nothing of people; this module joins the
two with times passed in (seconds of any monotonic clock), so it is pure
and tested without waiting.

Two numbers make the pace (:class:`Pace`):

* ``read``: a bot move waits until the table has stood still this long.
  That is the time to read the last move ("carol placed 2, claims 2 × 7")
  and decide whether to challenge it before the next seat moves on. The
  human pace is 4 s: a six-word line is read in about 1.5 s, and a look at
  one's own hand and a decision take about as long again.
* ``turn``: a bot move that would take away a move only a person may make
  now (their turn to play, to let a last claim stand, to place the bomb)
  waits until that person has had that move this long. The human pace is
  12 s: the 10 s a person is promised on their screen, plus 2 s for the
  move to reach that screen on a loaded machine (the bot's clock starts
  when *its* peer sees the table change).

A move takes a person's turn away when, applied to the state, it leaves
that person without a kind of move that was theirs alone (:func:`own_kinds`):
in Bluff a challenge made while it is the person's turn to play (B6/B10),
or a challenge or acceptance of a hand-emptying claim the person may let
stand (B11); in the Bomb game nothing a bot may do then. A move everybody
may make (a Bluff challenge of the latest play, the A♠ show, a detonation)
is a window, not a turn: it is held for ``read`` only.

A bot is asked once per table state, at once; its answer is held until the
pace allows it and dropped when the table changes first (it chose for a
table that is gone). Asked once, a bot's chance of speaking out of turn (a
Bluff challenge by a seat that is not next) is per move, not per second of
waiting, as in :class:`engines.bots.Simulator`.

Duties that cost a person nothing and that other seats wait for (a Mao rule
author's verdict, M28; a new rule, M27; a rule's reveal, M30) are not held
(``instant``). Nor does a bot's pace let a game's timer run out on it: a
move that takes no turn is made by the time half of the time left on the
earliest running timer has passed, if that is sooner (with timers scaled
down, ``--time-scale``, a Mao bot still plays within its 10 seconds, M23).

>>> pace = Pace(frozenset({0}), read=4.0, turn=12.0)
>>> pacer = Pacer(pace)
>>> pacer.look(1, 100.0, {0: frozenset({"play"})})
True
>>> pacer.due("challenge", takes_turn=True), pacer.due("play", takes_turn=False)
(112.0, 104.0)
>>> pacer.due("play", takes_turn=False, timer=101.0)  # a 1 s timer: by its half
100.5
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engines.core import EngineError, Event, Game

HUMAN_READ = 4.0
HUMAN_TURN = 12.0
QUICK_READ = 0.3

PACES = ("human", "quick", "off")
"""``--pace`` choices: ``human`` (bots read 4 s, a person's turn is theirs
for 12 s), ``quick`` (bots move after 0.3 s but a person's turn is still
theirs for 12 s: demos and tests that measure it), ``off`` (no waiting:
every seat a bot, tests)."""


@dataclass(frozen=True)
class Pace:
    """How long bots wait for the ``people`` at the table (seats)."""

    people: frozenset[int]
    read: float = HUMAN_READ
    turn: float = HUMAN_TURN
    instant: frozenset[str] = frozenset({"verdict", "add_rule", "reveal_rule"})

    def __post_init__(self) -> None:
        if self.read < 0 or self.turn < 0:
            raise ValueError("a pace waits zero seconds or more")


def pace_named(name: str, people: Iterable[int]) -> Pace | None:
    """The pace ``name`` (one of :data:`PACES`) for ``people``; None: off."""
    if name not in PACES:
        raise ValueError(f"no pace {name!r} (try {', '.join(PACES)})")
    if name == "off":
        return None
    read = HUMAN_READ if name == "human" else QUICK_READ
    return Pace(frozenset(people), read=read, turn=HUMAN_TURN)


def own_kinds(game: Game[Any, Any], state: Any, seats: int, seat: int) -> frozenset[str]:
    """The kinds of move ``seat`` may make now and no other seat may: its turn."""
    others: set[str] = set()
    for other in range(seats):
        if other != seat:
            others |= game.legal_kinds(state, other)
    return frozenset(game.legal_kinds(state, seat) - others)


def people_kinds(
    game: Game[Any, Any], state: Any, seats: int, people: Iterable[int]
) -> dict[int, frozenset[str]]:
    """Each person's own kinds now (:func:`own_kinds`)."""
    return {p: own_kinds(game, state, seats, p) for p in people if 0 <= p < seats}


def takes_turn(game: Game[Any, Any], state: Any, seats: int, people: Iterable[int],
               event: Event) -> bool:  # fmt: skip
    """Whether ``event`` leaves a person without a move that was theirs alone."""
    before = people_kinds(game, state, seats, people)
    if not any(before.values()):
        return False
    try:
        after_state = game.apply(state, event)
    except EngineError:
        return False  # refused anyway: it takes nothing
    for person, own in before.items():
        if own - game.legal_kinds(after_state, person):
            return True
    return False


class Pacer:
    """One bot seat's side of a :class:`Pace`: what it saw when, and the
    move it holds. The session calls :meth:`look` with every table it acts
    on, asks its bot when ``look`` says the table is new, hands the answer
    to :meth:`hold` and makes the move :meth:`ready` returns."""

    def __init__(self, pace: Pace) -> None:
        self.pace = pace
        self._count: int | None = None
        self._changed = 0.0
        self._turns: dict[int, tuple[frozenset[str], float]] = {}  # person -> (own, since)
        self._held: tuple[Event, float] | None = None

    def look(self, count: int, now: float, own: dict[int, frozenset[str]]) -> bool:
        """The table after ``count`` bodies, at ``now``, with each person's own
        kinds (:func:`people_kinds`); True when it is new (ask the bot)."""
        if count == self._count:
            return False
        self._count, self._changed, self._held = count, now, None
        for person, kinds in own.items():
            seen = self._turns.get(person)
            if not kinds:
                self._turns.pop(person, None)
            elif seen is None or seen[0] != kinds:
                self._turns[person] = (kinds, now)
        return True

    def due(self, kind: str, *, takes_turn: bool, timer: float | None = None) -> float:
        """When a move of ``kind`` chosen for the table now may be made;
        ``timer``: when the earliest running timer runs out (if one runs)."""
        if kind in self.pace.instant:
            return self._changed
        at = self._changed + self.pace.read
        if takes_turn:
            for _kinds, since in self._turns.values():
                at = max(at, since + self.pace.turn)
        elif timer is not None:
            at = min(at, max(self._changed, (self._changed + timer) / 2))
        return at

    def hold(self, event: Event | None, *, takes_turn: bool, timer: float | None = None) -> None:
        """The bot's answer for the table last looked at (None: it waits)."""
        if event is None:
            self._held = None
            return
        self._held = (event, self.due(event.KIND, takes_turn=takes_turn, timer=timer))

    def ready(self, now: float) -> Event | None:
        """The held move if its time has come (it is then no longer held)."""
        if self._held is None or self._held[1] > now:
            return None
        event, self._held = self._held[0], None
        return event

    def wake_at(self) -> float | None:
        """When the held move may be made (None: nothing held)."""
        return None if self._held is None else self._held[1]


__all__ = [
    "AUTHOR_KINDS",
    "PACES",
    "Pace",
    "Pacer",
    "owes_move",
    "own_kinds",
    "pace_named",
    "people_kinds",
    "takes_turn",
]


AUTHOR_KINDS = frozenset({"verdict", "add_rule", "reveal_rule"})
"""Moves a Mao rule author's own peer owes (M27–M30): never a bot's to make."""


def owes_move(table: Any, seat: int) -> frozenset[str]:
    """The kinds of move only ``seat`` may make now (its turn), a rule
    author's duties left out; empty when it owes none. In a game where
    every seat may play at any time and a play out of turn is a penalty,
    not a refusal (Mao, M4/M23), the seat whose turn the state names owes
    its play."""
    if table.over:
        return frozenset()
    game, state, seats = table.game, table.state, table.setup.seats
    owed = own_kinds(game, state, seats, seat) - AUTHOR_KINDS
    if not owed and getattr(state, "turn", None) == seat:
        mine = game.legal_kinds(state, seat)
        if "play" in mine and any("play" in game.legal_kinds(state, s) for s in range(seats)
                                  if s != seat):  # fmt: skip
            owed = frozenset({"play"})
    return owed
