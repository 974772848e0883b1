"""``nodealer games``: this machine's saved games, and finding one by a
table id prefix (``nodealer verify`` / ``replay`` accept either a path or a
prefix from that list)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from engines.core import Outcome
from p2p.identity import data_dir
from table.names import SeatNames, names_of_log
from table.verify import Report, verify_log

from .story import fault_text, game_name, outcome_text, reason_text
from .words import register, t

register(
    {
        "CHEATING: {fault}": "作弊：{fault}",
        "unfinished: {problem}": "未完成：{problem}",
        "{game} with {names}": "{game}，玩家：{names}",
    }
)


@dataclass(frozen=True)
class SavedGame:
    path: Path
    report: Report
    me: str | None = None
    """This machine's fingerprint (its seat reads "you"), if known."""

    @property
    def table_id(self) -> str:
        return self.path.parent.name

    @property
    def names(self) -> SeatNames:
        """The seats' names, seen from this machine's seat."""
        spec = self.report.spec
        seat = None
        if spec is not None and self.me is not None:
            seat = next((s for s, k in enumerate(spec.seats) if k.fingerprint == self.me), None)
        return names_of_log(self.path, me=seat)

    def line(self, lang: str = "en") -> str:
        """One line of ``nodealer games``: when, what, who, how it ended.

        ``9aa1caf97c1c  2026-12-04 21:07  bluff with you, bob and carol  you won — bob
        and carol lost: …`` (a game that ended cleanly; else what was caught,
        or why it cannot be verified)
        """
        when = datetime.datetime.fromtimestamp(self.path.stat().st_mtime)
        report, names = self.report, self.names
        game = game_name(report.setup.game, lang) if report.setup is not None else "?"
        seats = report.spec.n if report.spec is not None else 0
        who = t("{game} with {names}", lang, game=game, names=names.listed(range(seats), lang))
        outcome = report.outcome
        if report.exit_code == 0 and outcome is not None:
            said = outcome_text(str(outcome), lang, names, past=True)
            if names.me is not None and names.me in (*outcome.winners, *outcome.losers):
                said = _yours(outcome, names, lang)
        elif report.exit_code == 1:
            said = t("CHEATING: {fault}", lang, fault=fault_text(str(report.faults[0]), lang))
        else:
            said = t("unfinished: {problem}", lang, problem=report.problem)
        return f"{self.table_id[:12]}  {when:%Y-%m-%d %H:%M}  {who}  {said}"


def _yours(outcome: Outcome, names: SeatNames, lang: str) -> str:
    """How a game ended for this machine's seat: "you won — bob and carol
    lost: …" or "you lost — carol won: …"."""
    won = names.me in outcome.winners
    others = [s for s in (outcome.losers if won else outcome.winners) if s != names.me]
    reason = reason_text(outcome.reason, lang, names)
    if lang == "zh":
        head = "你赢了" if won else "你输了"
        rest = f"{names.listed(others, 'zh')} {'输' if won else '赢'}：" if others else ""
        return f"{head} — {rest}{reason}"
    head = "you won" if won else "you lost"
    rest = f"{names.listed(others)} {'lost' if won else 'won'}: " if others else ""
    return f"{head} — {rest}{reason}"


def saved_logs(home: Path | None = None) -> list[Path]:
    """Every saved log under the data folder, newest first."""
    base = (home or data_dir()) / "tables"
    logs = [p for p in base.glob("*/log") if p.is_file()] if base.is_dir() else []
    return sorted(logs, key=lambda p: -p.stat().st_mtime)


def saved_games(home: Path | None = None, me: str | None = None) -> list[SavedGame]:
    """The saved games, newest first; ``me``: this machine's fingerprint."""
    return [SavedGame(path, verify_log(path), me) for path in saved_logs(home)]


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
