"""``nodealer watch --connect HOST:PORT``: a table on the big screen, as a
spectator (protocol.md §8). The seat's watch port sends its log; every
record is checked and replayed (:mod:`tui.watch_feed`); the screen shows
only what the log made public, the whole screen for it: every seat with
its card count and face-up cards, whose turn, the pile or area, the deal's
progress, the last moves. Once the final reveals are in it shows every hand
and identity, and ``r`` steps through every turn with every card (the
replay's god view, on the spectator's own copy of the log).

A seat serves its table to spectators with ``nodealer host --watch-port``
or ``nodealer play --watch-port`` (:mod:`tui.watch_serve`)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import trio
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static

from p2p.watch import Spectator, WatchError

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
    }
)

RETRY = 0.5
"""seconds between two tries at a watch port that is not open (yet)"""
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


__all__ = ["WatchApp", "WatchScreen", "add_command", "run_watch"]
