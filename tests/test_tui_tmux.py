"""A real terminal (issue 12): ``nodealer play bluff --players 2`` runs in
tmux, keys are sent, the captured screen shows the hand and a claim made."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _capture(session: str) -> str:
    run = subprocess.run(["tmux", "capture-pane", "-pt", session], capture_output=True, text=True)
    return run.stdout


def _wait(session: str, text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _capture(session)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never showed:\n{_capture(session)}")


@pytest.mark.slow
def test_bluff_in_a_real_terminal(tmp_path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    session = f"nodealer-{os.getpid()}"
    command = (
        f"cd {ROOT} && NODEALER_HOME={tmp_path} PYTHONPATH={ROOT} {sys.executable} -m tui.cli "
        "play bluff --players 2 --unproven --time-scale 0.05 --name ann; sleep 30"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", command])
    try:
        screen = _wait(session, "you may:")
        assert "Bluff · ann · " in screen and "bob: " in screen and "cards" in screen
        assert any(s in screen for s in "♠♥♦♣"), screen  # the hand, with suits
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            may = next((ln for ln in _capture(session).splitlines() if "you may:" in ln), "")
            if "show" in may:  # we hold A♠: show it to start (B3)
                subprocess.run(["tmux", "send-keys", "-t", session, "s"])
            elif "play" in may:
                break
            time.sleep(0.3)
        subprocess.run(["tmux", "send-keys", "-t", session, "Space"])
        time.sleep(0.3)
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"])
        _wait(session, "you place 1, claim")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
