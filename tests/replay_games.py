"""Saved games for the replay tests: a real 3-seat game played by bots on
127.0.0.1 (``nodealer play GAME --headless``, unproven deals, timers at 2 %
speed, Mao bounded to 2 rounds), its log kept in a folder of the test's.
Each game is played once per test process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_PLAYED: dict[tuple[str, str | None], Path] = {}


def saved_game(game: str, folder: Path, cheat: str | None = None) -> Path:
    """The log of one finished ``game`` (seed 1), played into ``folder``;
    ``cheat``: seat 1 cheats that way (``nodealer play --cheat``)."""
    key = (game, cheat)
    if key in _PLAYED and _PLAYED[key].is_file():
        return _PLAYED[key]
    log = folder / f"{game}{'-' + cheat if cheat else ''}.log"
    argv = [sys.executable, "-m", "tui.cli", "play", game, "--headless", "--unproven",
            "--players", "3", "--time-scale", "0.02", "--seed", "1", "--quiet",
            "--home", str(folder / f"home-{game}"), "--log", str(log)]  # fmt: skip
    if game == "mao":
        argv += ["--rounds", "2"]
    if cheat:
        argv += ["--cheat", cheat]
    env = {**os.environ, "NODEALER_LANG": "en"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert log.is_file(), f"no log from {' '.join(argv)}: {done.stdout[-500:]}{done.stderr[-2000:]}"
    _PLAYED[key] = log
    return log
