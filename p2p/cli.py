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
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


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
