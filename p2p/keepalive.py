"""TCP keepalive and ``TCP_USER_TIMEOUT`` on a peer connection.

The node watches its connections for silence itself (:mod:`p2p.node`); the
kernel's keepalive probes and user timeout are a second line behind it, set
as far as the platform has them: Linux all of them, macOS keepalive with
``TCP_KEEPALIVE`` for the idle time, Windows keepalive.
"""

from __future__ import annotations

import logging
import socket

import trio

log = logging.getLogger("nodealer.p2p")

KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 5, 2, 3  # seconds idle, between, probes
USER_TIMEOUT_MS = 10_000  # TCP_USER_TIMEOUT: unacknowledged data this long ends the connection


def keep_alive(stream: trio.SocketStream) -> None:
    """TCP keepalive and ``TCP_USER_TIMEOUT`` on a connection, as far as the
    platform has them (Linux all; macOS keepalive with ``TCP_KEEPALIVE`` for
    the idle time; Windows keepalive). Best effort: the node's own watch on
    silence (:meth:`Node._watch_connections`) does not depend on them."""
    sock = stream.socket
    tcp = socket.IPPROTO_TCP
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    idle = getattr(socket, "TCP_KEEPIDLE", None) or getattr(socket, "TCP_KEEPALIVE", None)
    if idle is not None:
        options.append((tcp, idle, KEEPALIVE_IDLE))
    if hasattr(socket, "TCP_KEEPINTVL"):
        options.append((tcp, socket.TCP_KEEPINTVL, KEEPALIVE_INTERVAL))
    if hasattr(socket, "TCP_KEEPCNT"):
        options.append((tcp, socket.TCP_KEEPCNT, KEEPALIVE_COUNT))
    if hasattr(socket, "TCP_USER_TIMEOUT"):
        options.append((tcp, socket.TCP_USER_TIMEOUT, USER_TIMEOUT_MS))
    for level, option, value in options:
        try:
            sock.setsockopt(level, option, value)
        except OSError as exc:  # an option this system refuses: the rest still apply
            log.debug("socket option %s: %s", option, exc)


__all__ = [
    "KEEPALIVE_COUNT",
    "KEEPALIVE_IDLE",
    "KEEPALIVE_INTERVAL",
    "USER_TIMEOUT_MS",
    "keep_alive",
]
