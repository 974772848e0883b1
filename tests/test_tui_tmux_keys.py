"""F1, F2 and F3 in a real terminal (issue 26): ``NODEALER_LANG=zh nodealer``
runs in tmux at 80×24; on home, at a Bluff table started from home and in a
saved game's replay opened from home, a person presses F1 (help), F2 (the
other language) and F3 (light/dark) and the screen read back shows each;
``^q`` at the table asks first and, answered yes, goes back home; ``q`` in
the replay goes back home; ``q`` on home ends the program.

Home browses the LAN (mDNS), so the program runs inside a network namespace
of its own with only loopback (COMMON.md's rule: never multicast on a real
interface)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_discovery import _unshare_prefix

ROOT = Path(__file__).resolve().parent.parent
VECTOR = ROOT / "tests" / "vectors" / "bluff-2-proven.log"


def _capture(session: str, escapes: bool = False) -> str:
    args = ["tmux", "capture-pane", "-pt", session, *(["-e"] if escapes else [])]
    return subprocess.run(args, capture_output=True, text=True).stdout


def _wait(session: str, *texts: str, timeout: float = 60) -> str:
    """The screen once it shows every one of ``texts``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _capture(session)
        if all(text in screen for text in texts):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{texts!r} never showed:\n{_capture(session)}")


def _keys(session: str, *keys: str) -> None:
    for key in keys:
        subprocess.run(["tmux", "send-keys", "-t", session, key], check=True)
        time.sleep(0.3)


def _footer(session: str) -> str:
    return _capture(session).rstrip("\n").split("\n")[-1]


def _theme_flips(session: str) -> None:
    """F3: other colours, the same keys (the footer, once it has settled)."""
    footer = _footer(session)
    for _ in range(20):
        time.sleep(0.5)
        if _footer(session) == footer:
            break
        footer = _footer(session)
    before = _capture(session, escapes=True)
    _keys(session, "F3")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _capture(session, escapes=True) == before:
        time.sleep(0.2)
    assert _capture(session, escapes=True) != before, "F3 changed no colour"
    assert _footer(session) == footer
    _keys(session, "F3")  # and back to dark


@pytest.mark.slow
@pytest.mark.netns
def test_f1_f2_f3_on_home_table_and_replay_in_a_real_terminal(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    prefix = _unshare_prefix()
    saved = tmp_path / "tables" / "5d085dd2491f7890" / "log"
    saved.parent.mkdir(parents=True)
    shutil.copyfile(VECTOR, saved)
    session = f"nodealer-keys-{os.getpid()}"
    inner = (
        "ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo && "
        f"cd {ROOT} && NODEALER_LANG=zh NODEALER_HOME={tmp_path} PYTHONPATH={ROOT} "
        f"{sys.executable} -m tui.cli; echo nodealer-ended-$?; sleep 30"
    )
    command = " ".join([*prefix, "sh", "-c", f"'{inner}'"])
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command],
                   check=True)  # fmt: skip
    try:
        # home, in Chinese from NODEALER_LANG; every key in the footer
        screen = _wait(session, "你：", "开桌")
        footer = screen.rstrip("\n").split("\n")[-1]
        assert "F1" in footer and "F2" in footer and "English" in footer
        _keys(session, "F1")
        _wait(session, "nodealer——没有庄家的公平纸牌游戏")
        _keys(session, "Escape")
        _keys(session, "F2")
        _wait(session, "you:", "host a table")
        _theme_flips(session)

        # a Bluff table started from home (the first choice), in English
        _keys(session, "Enter")
        screen = _wait(session, "Bluff: you and bob", "you may:", timeout=120)
        footer = screen.rstrip("\n").split("\n")[-1]
        assert all(key in footer for key in ("F1", "^q", "F2")), footer
        _keys(session, "F1")
        _wait(session, "Bluff — the public rules", "B1")
        _keys(session, "Escape")
        _wait(session, "you may:")
        _keys(session, "F2")
        _wait(session, "吹牛：你、bob", "你可以")
        _theme_flips(session)
        _keys(session, "F2")
        _wait(session, "Bluff: you and bob")
        _keys(session, "C-q")
        _wait(session, "Leave this game?", "y yes")
        _keys(session, "n")
        _wait(session, "you may:")
        assert "Leave this game?" not in _capture(session)
        _keys(session, "C-q")
        _wait(session, "Leave this game?")
        _keys(session, "y")

        # home again (the game was started there); the saved game's replay
        screen = _wait(session, "you:", "5d085dd2", timeout=60)
        # the saved game (the game just left is listed too); a long option
        # wraps, so count options, not lines
        starts = [ln[2:] for ln in screen.split("\n") if ln.startswith("▊ ")
                  and ln[2:].startswith(("play ", "replay ", "host ", "join "))]  # fmt: skip
        below = next(i for i, ln in enumerate(starts) if "5d085dd2" in ln)
        _keys(session, *["Down"] * below, "Enter")
        _wait(session, "event 1/", "next")
        _keys(session, "Right", "F1")
        _wait(session, "Bluff — the public rules")
        _keys(session, "Escape")
        _keys(session, "F2")
        _wait(session, "下一步", "第 2/")  # the same step, in Chinese
        _theme_flips(session)
        _keys(session, "q")

        # q in the replay went home; q on home ends the program
        _wait(session, "host a table")
        _keys(session, "q")
        _wait(session, "nodealer-ended-0")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
