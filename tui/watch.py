"""``nodealer watch [TABLE]`` (found by mDNS: :func:`find_watchable`) or
``nodealer watch --connect HOST:PORT``: a table on the big screen, as a
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

    def __init__(
        self,
        host: str,
        port: int,
        lang: str = "en",
        copy: Path | None = None,
        table: bytes | None = None,
    ) -> None:
        super().__init__(lang)
        self.host, self.port, self.table = host, port, table  # table: the advertised id
        self.feed = WatchFeed(table, copy)
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
            spectator = Spectator(self.host, self.port, table=self.table)
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
            "Find a table that takes spectators on the LAN (mDNS; TABLE names one: its "
            "name, host, table id prefix, or its number in the list), or connect to a "
            "seat's watch port (--connect), and show its table as it is played: every seat "
            "with its card count, whose turn, the pile, the moves; every hand once the "
            "final reveals are in. Every record is checked like nodealer verify does. A "
            "spectator sends nothing to the table."
        ),
    )
    watch.add_argument("table", nargs="?", default=None,
                       help="which table (name, host, table id prefix, or number in the "
                            "list nodealer watch prints when several answer)")  # fmt: skip
    watch.add_argument("--connect", metavar="HOST:PORT", default=None,
                       help="the seat's watch port (no mDNS)")  # fmt: skip
    watch.add_argument("--table-id", metavar="HEX", default=None,
                       help="the watch port must serve this table (as advertised)")  # fmt: skip
    watch.add_argument("--seconds", type=float, default=4.0,
                       help="at most how long to look on the LAN (watches once found)")
    watch.add_argument("--interface", default=None, help="look on this local address only")
    watch.add_argument(
        "--keep", metavar="FILE", default=None,
        help="keep the watched log in this file (default: a temporary file)",
    )  # fmt: skip
    lang_option(watch)
    watch.set_defaults(handler=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    from p2p.discovery import BadHostPort, parse_hostport

    table = None
    if args.table_id is not None:
        try:
            table = bytes.fromhex(args.table_id)
        except ValueError:
            print(f"nodealer watch: --table-id {args.table_id!r:.60}: not a table id in hex",
                  file=sys.stderr)  # fmt: skip
            return EXIT_PROBLEM
    if args.connect is not None:
        try:
            where = parse_hostport(args.connect)
        except BadHostPort as exc:
            print(f"nodealer watch: --connect {args.connect!r:.60}: {exc}", file=sys.stderr)
            return EXIT_PROBLEM
        host, port = where.host, where.port
    else:
        found = trio.run(find_watchable, args)
        if isinstance(found, str):
            print(t("nodealer watch: {problem}", args.lang, problem=found), file=sys.stderr)
            return EXIT_PROBLEM
        assert found.watch_port is not None
        print(t("watching {table} at {where}", args.lang, table=found,
                where=found.watch_hostport), flush=True)  # fmt: skip
        host, port, table = found.address, found.watch_port, found.table_id
    folder = None
    if args.keep is not None:
        copy = Path(args.keep)
    else:
        folder = tempfile.TemporaryDirectory(prefix="nodealer-watch-")
        copy = Path(folder.name) / "log"
    app = WatchApp(host, port, args.lang, copy, table)
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


async def find_watchable(args: argparse.Namespace) -> Any:
    """The table ``nodealer watch`` asks for on the LAN (a TableAd), or a
    problem (str). Watched as soon as the wanted table answers (then
    :data:`SETTLE` s more, to see whether another answers too); a number
    (its place in the list) waits for the whole list (``--seconds``)."""
    from p2p.discovery import FIND_SETTLE_SECONDS, browse

    number = int(args.table) if args.table and args.table.isdigit() and len(args.table) < 3 else 0

    def wanted(ad: Any) -> bool:
        if not ad.compatible or ad.watch_port is None:
            return False
        if args.table_id is not None and ad.table_id.hex() != args.table_id.lower():
            return False
        return number > 0 or args.table is None or ad.matches(args.table)

    async with browse(args.interface) as tables:
        with trio.move_on_after(args.seconds) as looking:
            async for _ in tables:
                if not number and any(wanted(ad) for ad in tables.tables.values()):
                    settle = trio.current_time() + FIND_SETTLE_SECONDS
                    looking.deadline = min(looking.deadline, settle)
        found = sorted((ad for ad in tables.tables.values() if wanted(ad)),
                       key=lambda ad: (ad.playing, ad.game, ad.name, ad.table_id))  # fmt: skip
    if number:
        if number > len(found):
            return t("no table number {n} takes spectators here ({count} found)", args.lang,
                     n=number, count=len(found))  # fmt: skip
        return found[number - 1]
    if not found:
        return t("no table that takes spectators found on the LAN (a host takes them with "
                 "--spectators N; or use --connect HOST:PORT)", args.lang)  # fmt: skip
    if len(found) > 1 and args.table is None:
        listed = "\n".join(f"  {i}. {ad}" for i, ad in enumerate(found, start=1))
        return t("several tables take spectators; name one (nodealer watch NAME or "
                 "NUMBER):", args.lang) + "\n" + listed  # fmt: skip
    return found[0]


register(
    {
        "watching {table} at {where}": "观看 {table}，地址 {where}",
        "no table number {n} takes spectators here ({count} found)": (
            "这里没有第 {n} 张接受观众的牌桌（找到 {count} 张）"
        ),
        "no table that takes spectators found on the LAN (a host takes them with "
        "--spectators N; or use --connect HOST:PORT)": (
            "局域网上没有找到接受观众的牌桌（主人用 --spectators N 接受观众；"
            "或者用 --connect HOST:PORT）"
        ),
        "several tables take spectators; name one (nodealer watch NAME or NUMBER):": (
            "有几张牌桌接受观众；请指定一张（nodealer watch 名称或编号）："
        ),
    }
)


__all__ = ["WatchApp", "WatchScreen", "add_command", "find_watchable", "run_watch"]
