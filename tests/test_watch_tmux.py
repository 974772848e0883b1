"""``nodealer watch`` in a real terminal at 80×24, in English and Chinese:
the big screen waits for the table's watch port, follows a bot table that
``nodealer play --headless --watch-port`` serves on 127.0.0.1, ends with
every hand, and ``r`` steps through every turn with every card."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _capture(session: str) -> str:
    run = subprocess.run(["tmux", "capture-pane", "-pt", session], capture_output=True, text=True)
    return run.stdout


def _wait(session: str, text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _capture(session)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never showed:\n{_capture(session)}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


WORDS = {
    "en": ("waiting for the table", "bluff: 3 seats", "seat 1: ", "game over: ",
           "every card (final reveals in):", "every turn", "event "),
    "zh": ("等待牌桌", "吹牛：3 个座位", "座位1：", "游戏结束：", "所有牌（最终揭示已齐）：",
           "逐步回放", "第 "),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_watch_a_bluff_table_in_a_real_terminal(tmp_path: Path, lang: str) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    waiting, header, seat, over, every, key, stepping = WORDS[lang]
    port = _free_port()
    session = f"nodealer-watch-{os.getpid()}-{lang}"
    env = f"NODEALER_HOME={tmp_path}/watcher PYTHONPATH={ROOT} LANG=C.UTF-8"
    command = (
        f"cd {ROOT} && {env} {sys.executable} -m tui.cli watch --connect 127.0.0.1:{port} "
        f"--lang {lang}; sleep 30"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command])
    try:
        _wait(session, waiting)  # no table yet: the big screen waits for it
        play = subprocess.run(
            [sys.executable, "-m", "tui.cli", "play", "bluff", "--headless", "--unproven",
             "--players", "3", "--quiet", "--watch-port", str(port), "--watch-host",
             "127.0.0.1", "--home", str(tmp_path / "seat")],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
            text=True, timeout=240,
        )  # fmt: skip
        assert play.returncode == 0, play.stderr
        screen = _wait(session, every)
        assert header in screen and seat in screen and over in screen, screen
        assert any(s in screen for s in "♠♥♦♣"), screen  # every hand, faces shown
        assert key in screen  # the footer offers every turn
        subprocess.run(["tmux", "send-keys", "-t", session, "r"])
        _wait(session, stepping)  # the replay's steps, every card
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
