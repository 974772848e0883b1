"""A seat serves its table to spectators (protocol.md §8): the watch port
of ``nodealer host --watch-port`` / ``--spectators`` and of ``nodealer play
--watch-port``, with or without a screen.

A host's watch port opens with its lobby (:class:`HostWatch`): the table id
is chosen before the lobby opens, so the port can serve the log file the
game will write, and its port and limit go into every ``lobby`` message and
the mDNS advert (§4, §4.1) while spectators can already connect and wait
for the deal. :func:`serve_session` serves a session's log once it exists
(``nodealer play``, whose table has no lobby). When the table ends the port
lingers (:func:`linger`) so a late big screen still gets the end."""

from __future__ import annotations

import argparse
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import trio

from p2p.store import table_dir
from p2p.watch import DEFAULT_MAX, MAX_SPECTATORS, WatchError, WatchServer, ask_count

from .words import register, t

register(
    {
        "spectators: nodealer watch --connect HOST:{port} (at most {n})": (
            "观众：nodealer watch --connect HOST:{port}（至多 {n} 人）"
        ),
    }
)

T = TypeVar("T")
DRAIN = 3.0
"""seconds the spectators get to take the log's last records when the table ends"""
LINGER = 3.0
"""seconds the watch port stays open after the game (a big screen that
connects late still gets the end, every card)"""
COUNT_EVERY = 0.25
"""seconds between two looks at the number of spectators, for the lobby"""
ASK_EVERY = 3.0
"""seconds between two count requests of a seat other than the host's"""


class HostWatch:
    """A host's watch port, open from the lobby on: the table id it serves
    is chosen here (:attr:`table_id`, given to the lobby), the log file is the
    one the host's store will write for it. :meth:`lobby_options` are
    :func:`table.seating.host_table`'s ``table_id`` and ``watch``."""

    def __init__(self, home: Path | None, host: str, port: int, most: int) -> None:
        self.table_id = secrets.token_bytes(16)
        self.server = WatchServer(self.table_id, table_dir(self.table_id, home) / "log",
                                  host=host, port=port, max_spectators=most)  # fmt: skip

    async def open(self, nursery: trio.Nursery) -> WatchServer:
        """Listen (in ``nursery``) and return the server, its port known."""
        await nursery.start(self.server.run)
        return self.server

    @property
    def setting(self) -> tuple[int, int]:
        """(the watch port, at most how many spectators), once open."""
        assert self.server.address is not None, "open first"
        return self.server.address[1], self.server.max_spectators

    def lobby_options(self) -> dict[str, Any]:
        return {"table_id": self.table_id, "watch": self.setting}

    async def tell(self, lobby: Any) -> None:
        """Tell the lobby how many watch, whenever it changes, while it runs
        (every seat's lobby screen shows it: ``watching``, §4.1)."""
        while getattr(lobby.state.phase, "value", "") != "started":
            lobby.set_watching(self.server.stats.watching)
            await trio.sleep(COUNT_EVERY)


async def follow_count(
    host: str, port: int, table: bytes, heard: Callable[[int | None], None]
) -> None:
    """A seat other than the host's follows the spectator count during the
    game: it asks the host's watch port (a count request, protocol.md §8,
    never a spectator and nothing in the log) every :data:`ASK_EVERY` s and
    says what it heard (None: the port cannot be reached or refused)."""
    while True:
        try:
            watching: int | None = (await ask_count(host, port, table=table)).watching
        except WatchError:
            watching = None
        heard(watching)
        await trio.sleep(ASK_EVERY)


def spectators_text(watch: tuple[int, int] | None, watching: int | None, lang: str) -> str:
    """The spectator setting as every seat sees it ("" if none):
    ``spectators: up to 4, 1 watching`` (``watching`` None: not known here).

    >>> spectators_text((4100, 4), 1, "en"), spectators_text((4100, 4), None, "en")
    ('spectators: up to 4, 1 watching', 'spectators: up to 4')
    """
    if watch is None:
        return ""
    if watching is None:
        return t("spectators: up to {most}", lang, most=watch[1])
    return t("spectators: up to {most}, {n} watching", lang, most=watch[1], n=watching)


def spectators_short(watch: tuple[int, int] | None, watching: int | None, lang: str) -> str:
    """The same for a table screen's header, first in it so that 80
    columns show it ("" if none): ``1/4 watching``, or ``≤4 watching``
    where the count is not known (a seat that cannot reach the host's
    watch port).

    >>> spectators_short((4100, 4), 1, "en"), spectators_short((4100, 4), None, "zh")
    ('1/4 watching', '观众≤4')
    """
    if watch is None:
        return ""
    if watching is None:
        return t("≤{most} watching", lang, most=watch[1])
    return t("{n}/{most} watching", lang, n=watching, most=watch[1])


register(
    {
        "≤{most} watching": "观众≤{most}",
        "{n}/{most} watching": "观众 {n}/{most}",
        "spectators: up to {most}": "观众：至多 {most} 人",
        "spectators: up to {most}, {n} watching": "观众：至多 {most} 人，{n} 人在看",
    }
)


def serve_session(
    nursery: trio.Nursery,
    session: Any,
    port: int,
    max_spectators: int = DEFAULT_MAX,
    host: str = "0.0.0.0",
    on_serving: Callable[[WatchServer], None] | None = None,
) -> WatchServer:
    """Serve a seat's table (its session's log) to spectators on ``port``,
    in ``nursery`` (a hook of a few lines wherever a seat's session starts:
    ``on_session``)."""
    server = WatchServer(session.node.table.table_id, session.node.store.log_path,
                         host=host, port=port, max_spectators=max_spectators)  # fmt: skip

    async def serve() -> None:
        await nursery.start(server.run)
        if on_serving is not None:
            on_serving(server)

    nursery.start_soon(serve)
    return server


async def serve_while(
    run_table: Callable[[Callable[[int, Any], None]], Awaitable[T]],
    port: int,
    max_spectators: int = DEFAULT_MAX,
    host: str = "0.0.0.0",
    on_serving: Callable[[WatchServer], None] | None = None,
) -> T:
    """Run a table (``run_table(on_session)``, e.g. ``play_bot_table``)
    while seat 0 serves its log to spectators on ``port``; the service
    stops with the table (:data:`LINGER` s after it, the last bytes sent)."""
    result: list[T] = []
    servers: list[WatchServer] = []
    async with trio.open_nursery() as nursery:

        def on_session(seat: int, session: Any) -> None:
            if seat == 0:
                servers.append(serve_session(nursery, session, port, max_spectators, host,
                                             on_serving))  # fmt: skip

        result.append(await run_table(on_session))
        await linger(servers)
        nursery.cancel_scope.cancel()
    return result[0]


async def linger(servers: list[WatchServer]) -> None:
    """After the table: the watch ports stay open :data:`LINGER` s (a late
    big screen still gets the end) and the connected spectators get up to
    :data:`DRAIN` s to take the last records (the final reveals)."""
    if not servers:
        return
    await trio.sleep(LINGER)
    for server in servers:
        await server.drain(DRAIN)


async def watched(args: argparse.Namespace, run_table: Callable[..., Awaitable[T]]) -> T:
    """``nodealer play``'s table, served to spectators on ``--watch-port``
    if asked (``run_table(on_session=None)``)."""
    asked = watch_request(args)
    if asked is None:
        return await run_table()

    def serving(server: WatchServer) -> None:
        print(serving_line(server, args.lang), flush=True)

    return await serve_while(run_table, asked[1], asked[2], asked[0], serving)


def serving_line(server: WatchServer, lang: str = "en") -> str:
    """What a seat says once its watch port is open."""
    assert server.address is not None
    return t("spectators: nodealer watch --connect HOST:{port} (at most {n})", lang,
             port=server.address[1], n=server.max_spectators)  # fmt: skip


def watch_request(args: argparse.Namespace) -> tuple[str, int, int] | None:
    """(address, port, at most N) where the seat serves spectators, or None:
    ``--watch-port P`` (0: any free port) or ``--spectators N`` asks for it
    (N defaults to 8; ``--spectators 0``: none)."""
    port, most = getattr(args, "watch_port", None), getattr(args, "spectators", None)
    if port is None and most is None:
        return None
    most = DEFAULT_MAX if most is None else most
    return None if most == 0 else (args.watch_host, port or 0, most)


def watch_port_options(play: argparse.ArgumentParser, count: Callable[[str], int]) -> None:
    """``--watch-port PORT``, ``--spectators N``, ``--watch-host ADDRESS``."""

    def port(text: str) -> int:
        if not text.isdigit() or int(text) > 65535:
            raise argparse.ArgumentTypeError(f"a port 0 to 65535, not {text!r:.20}")
        return int(text)

    play.add_argument(
        "--watch-port", type=port, default=None, metavar="PORT",
        help="serve the table to spectators on this TCP port (nodealer watch; 0: any free "
        "port, advertised by mDNS)",
    )  # fmt: skip

    play.add_argument(
        "--watch-host", default="0.0.0.0", metavar="ADDRESS",
        help="the address the watch port listens on (default: every interface)",
    )  # fmt: skip

    def spectators(text: str) -> int:
        if not text.isdigit() or int(text) > MAX_SPECTATORS:
            raise argparse.ArgumentTypeError(f"0 to {MAX_SPECTATORS}, not {text!r:.20}")
        return int(text)

    play.add_argument("--spectators", type=spectators, default=None, metavar="N",
                      help=f"take spectators, at most N at once (0-{MAX_SPECTATORS}; with "
                           f"--watch-port default {DEFAULT_MAX}; 0: none; alone: any free "
                           "watch port)")  # fmt: skip


__all__ = ["DRAIN", "LINGER", "HostWatch", "follow_count", "linger", "serve_session", "serve_while",
           "serving_line", "spectators_short", "spectators_text", "watch_port_options",
           "watch_request", "watched"]  # fmt: skip
