"""A session's news about its connections to the other seats: who
dropped and who is back (``dropped`` / ``back`` updates), from the node's
connections (the node redials on its own). ``self`` is the
:class:`~table.session.TableSession` (its node, its report, who may leave).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import trio

from .reports import Update

log = logging.getLogger("nodealer.table")


async def watch_peers(self: Any) -> None:
    """Say when this peer loses its connection to another seat
    (``dropped``) and when it has it again (``back``), from the node's
    connections (the node redials on its own). A connection back within
    ``peer_grace`` seconds is no news (nor a flood of news from a seat
    that keeps reconnecting), and neither is a seat that goes once the
    game is over or stopped owing no final reveal: peers leave when they
    are done. A seat this peer has never been connected to is news
    ``absent_grace`` seconds after the start (the table would otherwise
    wait on it with nothing said), and so is its arrival after that. No
    seat is news before the log this peer held is read back (until then
    who may have gone home is not known)."""
    seen: set[int] = set()
    reported: set[int] = set()
    start = trio.current_time()
    # seat -> when its connection went (the others: never there, since the start)
    gone = {seat: start for seat in range(self.node.table.n) if seat != self.node.seat}
    failed = False
    while True:
        moved = self.node.connections_moved
        try:
            due = _peer_news(self, seen, reported, gone)
        except Exception:  # a bug in the news must not take the table down
            if not failed:  # said once, not every second
                log.exception("watching the connections to the other seats")
            failed = True
            due = trio.current_time() + 1.0
        with trio.move_on_at(due):
            await moved.wait()


def _peer_news(self: Any, seen: set[int], reported: set[int], gone: dict[int, float]) -> float:
    """One look at the connections for :meth:`_watch_peers`: reports
    what is news and returns when to look again."""
    connected = self.node.connected
    ever = self.node.ever_connected | connected  # a connection that came and went counts
    now = trio.current_time()
    updates: list[Update] = []
    try:
        for seat in sorted(reported & connected):
            again = "connected again to" if seat in seen else "connected to"
            updates.append(Update("back", f"{again} {self.node.peer_name(seat)}"))
            reported.discard(seat)
        for seat in ever - seen:
            gone.pop(seat, None)  # its absence since the start is over
        seen |= ever
        for seat in seen - connected:
            gone.setdefault(seat, now)
        for seat in connected:
            gone.pop(seat, None)
        due = math.inf
        for seat, since in sorted(gone.items()):
            if seat in reported:
                continue
            if seat in self._may_leave:  # look again: a rewound log may take it back
                due = min(due, now + self.peer_grace)
                continue
            grace = self.peer_grace if seat in seen else self.absent_grace
            if now < since + grace:
                due = min(due, since + grace)
            elif not self._read_back:
                due = min(due, now + 0.5)  # whether it may have gone home is not known yet
            else:
                name = self.node.peer_name(seat)
                text = f"lost the connection to {name}" if seat in seen else (
                    f"no connection to {name} yet"
                )  # fmt: skip
                updates.append(Update("dropped", text))
                reported.add(seat)
    finally:  # what was found before a failure is still said
        self._report(updates)
    return due


__all__ = ["watch_peers"]
