"""The replay screen at a moment (``nodealer replay LOG --at N``) and its
search for a seat's moves (``/`` then a seat, ``n``/``N`` again), driven by
Pilot and in a real terminal (tmux, 80×24, English and Chinese)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tui.app import ReplayApp
from tui.moments import moment
from tui.replay import replay_log
from tui.screens.replay import ReplayScreen

VECTOR = Path(__file__).resolve().parent / "vectors" / "bluff-2-proven.log"
ROOT = Path(__file__).resolve().parent.parent


def test_the_screen_opens_at_a_move_and_finds_a_seats_moves() -> None:
    replayed = replay_log(VECTOR)
    steps = replayed.steps
    at = moment(steps, "20")
    seat0 = [i for i, s in enumerate(steps) if s.seat == 0]
    after = [i for i in seat0 if i > at]

    async def run() -> list[int]:
        app = ReplayApp(VECTOR, at=at, loaded=(steps, replayed.lines))
        seen = []
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.2)
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            seen.append(screen.at)
            await pilot.press("right")  # the arrow keys step, as before
            seen.append(screen.at)
            await pilot.press("slash", "0", "enter")
            seen.append(screen.at)
            await pilot.press("n")
            seen.append(screen.at)
            await pilot.press("N")
            seen.append(screen.at)
            await pilot.press("slash", "s", "e", "a", "t", "space", "1", "escape")
            seen.append(screen.at)  # escape: no search, nothing moved
            assert not screen.query("#seek")
            await pilot.press("right")
            seen.append(screen.at)
            await pilot.press("slash", "9", "enter")  # no seat 9: said, nothing moves
            seen.append(screen.at)
        return seen

    seen = asyncio.run(run())
    first = next(i for i in after if i > at + 1)
    assert seen == [at, at + 1, first, after[after.index(first) + 1], first, first, first + 1,
                    first + 1]  # fmt: skip
    assert all(steps[i].seat == 0 for i in seen[2:5])


def _capture(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-pt", session], capture_output=True,
                          text=True).stdout  # fmt: skip


def _wait(session: str, text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _capture(session)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never showed:\n{_capture(session)}")


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_replay_at_a_move_in_a_real_terminal(lang: str) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    steps = replay_log(VECTOR, lang).steps
    session = f"nodealer-at-{os.getpid()}-{lang}"
    command = (f"cd {ROOT} && PYTHONPATH={ROOT} {sys.executable} -m tui.cli replay {VECTOR} "
               f"--at 30 --lang {lang}; sleep 30")  # fmt: skip
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command])
    try:
        where = "event 30/" if lang == "en" else "第 30/"
        screen = _wait(session, where)
        assert f"  30  {steps[29].text[:30]}" in screen
        subprocess.run(["tmux", "send-keys", "-t", session, "/"])
        _wait(session, "seat (number" if lang == "en" else "座位（编号")
        subprocess.run(["tmux", "send-keys", "-t", session, "1", "Enter"])
        target = next(s for s in steps[30:] if s.seat == 1)
        _wait(session, "event" if lang == "en" else "件事")
        _wait(session, f"{target.number}/" if lang == "en" else f"第 {target.number}/")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
