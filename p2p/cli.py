"""The ``nodealer`` command line.

Subcommands are added here as the layers below them become real; every
subcommand does what it says or fails with a clear message (exit code 2 for
a usage error), never a placeholder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version


def _version() -> str:
    try:
        return version("nodealer")
    except PackageNotFoundError:  # running from a source tree without install
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nodealer",
        description="Fair card games for a LAN party with no server and no dealer.",
    )
    parser.add_argument("--version", action="version", version=f"nodealer {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="a whole game between bot seats, dealt with mental poker, audited",
        description=(
            "Play one game between bot seats in this process. Every deal is really "
            "shuffled, locked, dealt and revealed with mental poker (each seat its own "
            "keys), every proof is checked, and at the end every seat reveals its keys "
            "and every deal is audited."
        ),
    )
    demo.add_argument("game", choices=GAMES, help="which game")
    demo.add_argument("--seats", type=int, default=None, help="number of seats")
    demo.add_argument(
        "--seed", type=int, default=0, help="bot seed (never the deal: deals use secrets)"
    )
    demo.add_argument(
        "--unproven", action="store_true", help="skip the zero-knowledge proofs (faster)"
    )
    demo.add_argument("--quiet", action="store_true", help="print only the summary")
    demo.set_defaults(handler=_demo)
    return parser


GAMES = ("bluff", "bomb", "mao")
DEFAULT_SEATS = {"bluff": 2, "bomb": 5, "mao": 4}


def _demo(args: argparse.Namespace) -> int:
    import secrets
    import time

    from engines.bots import sensible_bots
    from engines.core import game

    from .local import LocalTable, TableFault
    from .table import TableSetup

    seats = args.seats or DEFAULT_SEATS[args.game]
    engine = game(args.game)
    if not engine.min_seats <= seats <= engine.max_seats:
        print(
            f"nodealer demo: {args.game} is for {engine.min_seats}-{engine.max_seats} seats, "
            f"not {seats}",
            file=sys.stderr,
        )
        return 2
    setup = TableSetup(b"demo/" + args.game.encode(), args.game, seats, proven=not args.unproven)
    bots = sensible_bots(args.game, seats, args.seed, salt_source=secrets.token_bytes)
    local = LocalTable(setup, bots, seed=args.seed)
    shown = 0

    def show(author: int, body: dict) -> None:
        nonlocal shown
        if args.quiet:
            return
        for event in local.table.events[shown:]:
            print(f"  {event}")
        shown = len(local.table.events)

    local.on_body = show
    mode = "proven" if setup.proven else "unproven"
    print(f"{args.game}: {seats} bot seats, {mode} mental-poker deals")
    start = time.perf_counter()
    try:
        outcome = local.play()
    except TableFault as exc:
        print(f"nodealer demo: refused: {exc}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - start
    table = local.table
    print(f"outcome: {outcome}")
    print(
        f"{len(local.log)} log bodies, {len(table.events)} engine events, "
        f"{len(table.deals)} deals, all keys revealed, audit: {table.audit()}, "
        f"{elapsed:.1f} s"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler = getattr(args, "handler", None)
    if handler is None:  # pragma: no cover - every subparser sets one
        parser.error(f"unknown command {args.command!r}")
    return int(handler(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
