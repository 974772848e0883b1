"""``nodealer games``: this machine's saved games, and finding one by a
table id prefix (``nodealer verify`` / ``replay`` accept either a path or a
prefix from that list)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from p2p.identity import data_dir
from table.verify import Report, verify_log


@dataclass(frozen=True)
class SavedGame:
    path: Path
    report: Report

    @property
    def table_id(self) -> str:
        return self.path.parent.name

    def line(self) -> str:
        when = datetime.datetime.fromtimestamp(self.path.stat().st_mtime)
        report = self.report
        game = report.setup.game if report.setup is not None else "?"
        seats = report.spec.n if report.spec is not None else 0
        if report.exit_code == 0:
            result = f"clean: {report.outcome}"
        elif report.exit_code == 1:
            result = f"CHEATING: {report.faults[0]}"
        else:
            result = f"unfinished: {report.problem}"
        return f"{self.table_id[:12]}  {when:%Y-%m-%d %H:%M}  {game} {seats} seats  {result}"


def saved_logs(home: Path | None = None) -> list[Path]:
    """Every saved log under the data folder, newest first."""
    base = (home or data_dir()) / "tables"
    logs = [p for p in base.glob("*/log") if p.is_file()] if base.is_dir() else []
    return sorted(logs, key=lambda p: -p.stat().st_mtime)


def saved_games(home: Path | None = None) -> list[SavedGame]:
    return [SavedGame(path, verify_log(path)) for path in saved_logs(home)]


class UnknownGame(LookupError):
    """No saved game (or more than one) matches a table id prefix."""


def find_log(text: str, home: Path | None = None) -> Path:
    """``text`` as a path if it names a file, else the one saved game whose
    table id starts with it."""
    path = Path(text)
    if path.exists():
        return path
    prefix = text.strip().lower()
    found = [p for p in saved_logs(home) if prefix and p.parent.name.startswith(prefix)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise UnknownGame(f"no file {text} and no saved game whose table id starts with it")
    raise UnknownGame(f"{len(found)} saved games start with {text!r}: give more of the id")
