"""``nodealer replay LOG``: a saved game on the screen or as text, from a
move (``--at``), or as one web page to share (``--html``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .exits import EXIT_PROBLEM


def run_replay(args: argparse.Namespace) -> int:
    from .games import UnknownGame, find_log

    try:
        path = find_log(args.log)
    except UnknownGame as exc:
        print(f"nodealer replay: {exc} (see nodealer games)", file=sys.stderr)
        return EXIT_PROBLEM
    if not path.is_file():
        print(f"nodealer replay: {path} is not a saved log file", file=sys.stderr)
        return EXIT_PROBLEM
    if args.html:
        return _replay_html(path, args)
    from .moments import BadMoment, moment
    from .replay import replay_log

    me = own_fingerprint()
    replayed = replay_log(path, args.lang, me)
    at = 0
    if args.at is not None:
        try:
            bodies = replayed.table.count if replayed.table is not None else None
            at = moment(replayed.steps, args.at, bodies)
        except BadMoment as exc:
            print(f"nodealer replay: {exc}", file=sys.stderr)
            return EXIT_PROBLEM
    if args.text or not sys.stdout.isatty():
        for line in replayed.lines:
            print(line)
        for step in replayed.steps[at:]:
            print(f"{step.number:4d}  {step.text}")
        return 0
    from .app import ReplayApp

    loaded = (replayed.steps, replayed.lines)
    ReplayApp(path, args.lang, me, at=at, loaded=loaded).run()
    return 0


def _replay_html(path: Path, args: argparse.Namespace) -> int:
    from .html_replay import page_data, page_html
    from .moments import BadMoment, moment
    from .replay import replay_log

    out = Path(args.html)
    replayed = replay_log(path, args.lang, own_fingerprint())
    turn = ""
    if args.at is not None:  # the page opens there through its address
        try:
            bodies = replayed.table.count if replayed.table is not None else None
            turn = f"#turn={replayed.steps[moment(replayed.steps, args.at, bodies)].number}"
        except BadMoment as exc:
            print(f"nodealer replay: {exc}", file=sys.stderr)
            return EXIT_PROBLEM
    html = page_html(page_data(replayed, args.lang, _names_of(replayed))).encode()
    try:
        out.write_bytes(html)
    except OSError as exc:
        print(f"nodealer replay: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_PROBLEM
    print(f"wrote {out} ({len(html)} bytes); open {out.resolve().as_uri()}{turn}")
    return 0


def _names_of(replayed: Any) -> list[str] | None:
    """The seats' names the log's store kept (None: none kept)."""
    names = getattr(replayed, "names", None)
    if names is None or not any(names.known(s) for s in range(len(names))):
        return None
    return [names.name(s) for s in range(len(names))]


def own_fingerprint() -> str | None:
    """This machine's fingerprint, if it has a key (never made just to look)."""
    from p2p.identity import KEY_FILE, Identity, config_dir

    if not (config_dir() / KEY_FILE).is_file():
        return None
    try:
        return Identity.load_or_create(config_dir()).public.fingerprint
    except Exception:  # a damaged key: games and replays still read, without "you"
        return None
