"""The engine state after each table body, in memory bounded by checkpoints.

A body may say ``at``: the number of table bodies its author had seen
(protocol.md §6). Whether a body that no longer applies is *stale* (it
applied at ``at``) or names its author is judged against the engine state
after ``at`` bodies, and ``at`` may be any earlier point of the game. Every
state change of a :class:`~table.machine.Table` applies one engine event,
and engines are pure and deterministic, so the state after ``k`` bodies is
the state at the checkpoint before it with the events since re-applied:
this keeps, per body, the number of events applied by then, and a state
every :data:`EVERY` events, instead of every state of the game.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from engines.core import Event, Game

EVERY = 64
"""events between two kept states (a lookup re-applies fewer than this)"""


class StateHistory:
    """The engine state after each body of one table (index: bodies fed)."""

    def __init__(self, game: Game[Any, Any], events: Sequence[Event], state: Any) -> None:
        self._game = game
        self._events = events  # the table's own list: only ever appended to
        self._applied = array("q", [len(events)])
        """events applied after k bodies"""
        self._marks = [len(events)]
        """events applied at each kept state, in order"""
        self._states = [state]

    def __len__(self) -> int:
        return len(self._applied)

    def append(self, state: Any) -> None:
        """The state after one more body (every event of it applied)."""
        applied = len(self._events)
        self._applied.append(applied)
        if applied - self._marks[-1] >= EVERY:
            self._marks.append(applied)
            self._states.append(state)

    def __getitem__(self, k: int) -> Any:
        applied = self._applied[k]
        i = bisect_right(self._marks, applied) - 1
        state = self._states[i]
        for event in self._events[self._marks[i] : applied]:
            state = self._game.apply(state, event)
        return state


__all__ = ["EVERY", "StateHistory"]
