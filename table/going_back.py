"""Going back is whatever the player types: ``nodealer join --connect
HOST:PORT`` to a table this home holds unfinished goes back to it.

A player who crashed or quit mid-game runs the command again from the
shell's history - often ``nodealer join --connect HOST:PORT``, the host's
lobby. That lobby closed when the game began (a lobby seats people, it
does not outlive the start), so connecting there fails, while the table
itself goes on at the seats' game nodes. :func:`held_at` picks the table to
go back to: one of the held tables (:func:`table.seating.held_tables`,
unfinished, most recent first) whose seats listen at HOST:PORT exactly (the
player named a game node); else, when nothing answers at HOST:PORT (the
closed lobby), the table HOST plays at (a seat there), else the most
recent one. When something does answer there, it is a lobby open now (a
new table): the player joins it as asked, and no held table is taken.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

from .seating import HeldTable

PROBE_TIMEOUT = 2.0  # seconds to find out whether anything listens at HOST:PORT


def answers(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether a TCP connection to ``host:port`` opens within ``timeout``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def held_at(host: str, port: int, held: Sequence[HeldTable]) -> list[HeldTable]:
    """The held table ``join --connect host:port`` goes back to (a list of
    none or one, see the module docstring); ``held``: unfinished tables,
    most recent first."""
    for table in held:
        if (host, port) in table.addresses:
            return [table]
    if not held or answers(host, port):
        return []
    there = [table for table in held if any(h == host for h, _ in table.addresses)]
    return [(there or list(held))[0]]


__all__ = ["answers", "held_at"]
