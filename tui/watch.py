"""``nodealer watch --connect HOST:PORT``: a table on the big screen, as a
spectator (protocol.md §8). The seat's watch port sends its log; every
record is checked and replayed (:mod:`tui.watch_feed`); the screen shows
only what the log made public, the whole screen for it: every seat with
its card count and face-up cards, whose turn, the pile or area, the deal's
progress, the last moves. Once the final reveals are in it shows every hand
and identity, and ``r`` steps through every turn with every card (the
replay's god view, on the spectator's own copy of the log).

A seat serves its table to spectators with ``nodealer play --watch-port``
(:func:`serve_while`)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import trio
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static

from p2p.watch import DEFAULT_MAX, MAX_SPECTATORS, Spectator, WatchError, WatchServer

from .base import NodealerApp
from .exits import EXIT_PROBLEM
from .screens.common import footer, lang_of, relabel
from .watch_feed import LAST_MOVES, FeedError, WatchFeed
from .words import register, t

register(
    {
        "watching {host}:{port} ({n} watching, at most {most})": (
            "观看 {host}:{port}（{n} 人观看，至多 {most} 人）"
        ),
        "the table closed the watch port": "牌桌关闭了观看端口",
        "every turn": "逐步回放",
        "spectator": "观众",
        "nodealer watch: {problem}": "nodealer watch：{problem}",
        "spectators: nodealer watch --connect HOST:{port} (at most {n})": (
            "观众：nodealer watch --connect HOST:{port}（至多 {n} 人）"
        ),
    }
)

T = TypeVar("T")
RETRY = 0.5
"""seconds between two tries at a watch port that is not open (yet)"""
DRAIN = 3.0
"""seconds the spectators get to take the log's last records when the table ends"""
LINGER = 3.0
"""seconds the watch port stays open after the game (a big screen that
connects late still gets the end, every card)"""


class WatchScreen(Screen[None]):
    """The big screen: the table as the log made it public."""

    DEFAULT_CSS = """
    WatchScreen #watch-status { height: 1; padding: 0 1; }
    WatchScreen #watch-body { height: 1fr; }
    WatchScreen #watch-scroll { height: 1fr; }
    WatchScreen #watch-table { height: auto; padding: 0 1; }
    WatchScreen #watch-moves { height: 1fr; width: 1fr; padding: 0 1; display: none; }
    WatchScreen.wide #watch-scroll { width: 1fr; }
    WatchScreen.wide #watch-moves { display: block; }
    """
    WIDE = 120
    """columns from which the last moves stand beside the table (the big screen)"""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "every_turn", "every turn"),
        Binding("q", "app.quit", "quit"),
    ]

    def __init__(self, feed: WatchFeed) -> None:
        super().__init__()
        self.feed = feed
        self.status: str | tuple[str, dict[str, Any]] = ""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Static(id="watch-status", markup=False)
        with Horizontal(id="watch-body"):
            with VerticalScroll(id="watch-scroll"):  # ↑/↓ when a table needs more lines
                yield Static(id="watch-table", markup=False)
            yield Static(id="watch-moves", markup=False)  # beside the table on a wide screen
        yield footer()

    def on_mount(self) -> None:
        self.speak()

    def on_resize(self) -> None:
        self.speak()

    def speak(self) -> None:
        lang = lang_of(self)
        relabel(self, lang)
        wide = self.size.width >= self.WIDE
        self.set_class(wide, "wide")
        status = self.status
        if isinstance(status, tuple):  # (words, their values): said in the language shown
            status = t(status[0], lang, **status[1])
        self.query_one("#watch-status", Static).update(status)
        last = 0 if wide else LAST_MOVES
        self.query_one("#watch-table", Static).update("\n".join(self.feed.lines(lang, last)))
        if wide:  # as many moves as the screen's height holds
            moves = self.feed.moves(lang, max(1, self.size.height - 5))
            self.query_one("#watch-moves", Static).update("\n".join(moves))

    def action_every_turn(self) -> None:
        """Step through every turn with every card, once the game is over."""
        if not self.feed.over() or self.feed.copy is None:
            return
        from .replay import load
        from .screens.replay import ReplayScreen

        self.feed.close()
        steps, verdict = load(self.feed.copy, lang_of(self))
        self.app.push_screen(ReplayScreen(steps, verdict))


class WatchApp(NodealerApp):
    """``nodealer watch``: a spectator's screen on one seat's watch port."""

    TITLE = "nodealer watch"

    def __init__(self, host: str, port: int, lang: str = "en", copy: Path | None = None) -> None:
        super().__init__(lang)
        self.host, self.port = host, port
        self.feed = WatchFeed(None, copy)
        self.screen_: WatchScreen | None = None
        self.problem: str | None = None

    async def on_mount(self) -> None:
        from .guest import run_trio_guest

        relabel(self, self.lang)
        self.sub_title = t("spectator", self.lang)
        self.screen_ = WatchScreen(self.feed)
        await self.push_screen(self.screen_)
        self.run_worker(run_trio_guest(self._watch), exclusive=True)

    def _say(self, status: str | tuple[str, dict[str, Any]] | None = None) -> None:
        if self.screen_ is None:
            return
        if status is not None:
            self.screen_.status = status
        self.screen_.speak()

    async def _watch(self) -> None:  # trio, on Textual's loop (tui.guest)
        while True:  # a big screen waits for its table to open its port
            spectator = Spectator(self.host, self.port)
            try:
                hello = await spectator.connect()
                break
            except WatchError as exc:
                self._say(("nodealer watch: {problem}", {"problem": str(exc)}))
                if not str(exc).startswith("cannot reach"):
                    self.problem = str(exc)
                    return
            await trio.sleep(RETRY)
        self._say(("watching {host}:{port} ({n} watching, at most {most})",
                   {"host": self.host, "port": self.port, "n": hello.watching,
                    "most": hello.max}))  # fmt: skip
        try:
            async for batch in spectator.batches():
                await trio.to_thread.run_sync(_feed_all, self.feed, batch)
                self._say()
        except (WatchError, FeedError) as exc:
            self.problem = str(exc)
            self._say(("nodealer watch: {problem}", {"problem": str(exc)}))
        else:
            self._say(("the table closed the watch port", {}))
        finally:
            await spectator.aclose()

    def speak(self) -> None:
        self.sub_title = t("spectator", self.lang)


def _feed_all(feed: WatchFeed, records: list[dict[str, Any]]) -> None:
    for record in records:
        feed.feed(record)


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
    if args.watch_port is None:
        return await run_table()

    def serving(server: WatchServer) -> None:
        print(serving_line(server, args.lang), flush=True)

    return await serve_while(run_table, args.watch_port, args.spectators, args.watch_host,
                             serving)  # fmt: skip


def serving_line(server: WatchServer, lang: str = "en") -> str:
    """What a seat says once its watch port is open."""
    assert server.address is not None
    return t("spectators: nodealer watch --connect HOST:{port} (at most {n})", lang,
             port=server.address[1], n=server.max_spectators)  # fmt: skip


def add_command(commands: Any, lang_option: Callable[[argparse.ArgumentParser], None]) -> None:
    """``nodealer watch``."""
    watch = commands.add_parser(
        "watch",
        help="watch a table on the big screen, as a spectator (only what the log made public)",
        description=(
            "Connect to a seat's watch port (nodealer play --watch-port) and show its table "
            "as it is played: every seat with its card count, whose turn, the pile, the "
            "moves; every hand once the final reveals are in. Every record is checked "
            "like nodealer verify does. A spectator sends nothing to the table."
        ),
    )
    watch.add_argument("--connect", metavar="HOST:PORT", required=True,
                       help="the seat's watch port")  # fmt: skip
    watch.add_argument(
        "--keep", metavar="FILE", default=None,
        help="keep the watched log in this file (default: a temporary file)",
    )  # fmt: skip
    lang_option(watch)
    watch.set_defaults(handler=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    host, _, port_text = args.connect.rpartition(":")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        print(f"nodealer watch: --connect {args.connect!r:.60}: expected HOST:PORT",
              file=sys.stderr)  # fmt: skip
        return EXIT_PROBLEM
    folder = None
    if args.keep is not None:
        copy = Path(args.keep)
    else:
        folder = tempfile.TemporaryDirectory(prefix="nodealer-watch-")
        copy = Path(folder.name) / "log"
    app = WatchApp(host.strip("[]"), int(port_text), args.lang, copy)
    try:
        app.run()
    finally:
        app.feed.close()
        if folder is not None:
            folder.cleanup()
    if app.problem is not None:
        print(t("nodealer watch: {problem}", args.lang, problem=app.problem), file=sys.stderr)
        return EXIT_PROBLEM
    return 0


def watch_port_options(play: argparse.ArgumentParser, count: Callable[[str], int]) -> None:
    """``nodealer play --watch-port PORT [--spectators N]``."""
    play.add_argument(
        "--watch-port", type=int, default=None, metavar="PORT",
        help="serve the table to spectators on this TCP port (nodealer watch)",
    )  # fmt: skip

    play.add_argument(
        "--watch-host", default="0.0.0.0", metavar="ADDRESS",
        help="the address the watch port listens on (default: every interface)",
    )  # fmt: skip

    def spectators(text: str) -> int:
        if not text.isdigit() or int(text) > MAX_SPECTATORS:
            raise argparse.ArgumentTypeError(f"0 to {MAX_SPECTATORS}, not {text!r:.20}")
        return int(text)

    play.add_argument("--spectators", type=spectators, default=DEFAULT_MAX, metavar="N",
                      help=f"at most N spectators at once (0-{MAX_SPECTATORS}; "
                           f"default {DEFAULT_MAX})")  # fmt: skip


__all__ = ["WatchApp", "WatchScreen", "add_command", "run_watch", "serve_session", "serve_while",
           "serving_line", "watched"]  # fmt: skip
