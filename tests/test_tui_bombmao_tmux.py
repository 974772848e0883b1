"""The Bomb game and Mao in a real terminal at 80×24 under plain
``nodealer play`` (no ``--time-scale``: timers in real seconds, issue 26).

* Bomb: the person plays their turns by keys, reading the screen (which
  kinds their pick allows) as a person would, never passes, and the
  detonation window stays on the screen for its 10 seconds (K16) — measured
  from the first capture that shows it to the first that does not.
* Mao: on the person's turn the hand is unchanged after 8 seconds of
  thinking (M23's 10 seconds are real seconds), and the help (F1) held open
  longer than the time left does not cost a card either (the table's timer
  holds while the help is open under ``play``).

Each game is bounded: a deadline per wait, and at most ``ATTEMPTS`` Bomb
games (a bot may detonate in the first window: then that window is short by
right, and a new game is started).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ATTEMPTS = 3

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run)")


def _tmux(session: str, *args: str) -> list[str]:
    """A tmux command on the session's own server (``-L``): another test's
    server going away cannot take this one with it."""
    return ["tmux", "-L", session, *args]


def _capture(session: str) -> str:
    run = subprocess.run(_tmux(session, "capture-pane", "-pt", session), capture_output=True,
                         text=True)  # fmt: skip
    return run.stdout


def _keys(session: str, *keys: str) -> None:
    for key in keys:
        subprocess.run(_tmux(session, "send-keys", "-t", session, key))
        time.sleep(0.25)


def _wait(session: str, what: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = _capture(session)
        if what in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{what!r} never showed:\n{_capture(session)}")


def _start(tmp_path: Path, name: str, args: str) -> str:
    session = f"nodealer-{name}-{os.getpid()}"
    command = (
        f"cd {ROOT} && NODEALER_HOME={tmp_path} PYTHONPATH={ROOT} {sys.executable} -m tui.cli "
        f"play {args}; sleep 60"
    )
    subprocess.run(_tmux(session, "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                         command))  # fmt: skip
    return session


def _stop(session: str) -> None:
    subprocess.run(_tmux(session, "kill-server"), capture_output=True)


def _line(screen: str, marker: str) -> str:
    return next((ln for ln in screen.splitlines() if marker in ln), "")


# ---------------------------------------------------------------- the Bomb game


def _my_cards(screen: str) -> int:
    found = re.search(r"you: (\d+)", screen)
    return int(found.group(1)) if found else 0


def _play_my_turn(session: str) -> None:
    """K12 through the screen: one card the pick line allows as kind A, else
    the whole hand as kind B or C."""
    cards = _my_cards(_capture(session))
    for _ in range(cards):
        _keys(session, "Space")
        if "A (" in _line(_capture(session), "picked"):
            _keys(session, "a")
            return
        _keys(session, "Space", "Right")
    for _ in range(cards):
        _keys(session, "Space", "Right")
    picked = _line(_capture(session), "picked")
    for kind in "BC":
        if f"{kind} (" in picked:
            _keys(session, kind.lower())
            return
    raise AssertionError(f"no kind for the whole hand:\n{_capture(session)}")


def _detonated(session: str, screen: str) -> bool:
    """Whether the window on ``screen`` ended by a detonation (K17): the
    shout itself (under v3 the shouts that cross are drawn by lot first, and
    the screen says who shouted while it waits) or, within a few seconds,
    the game's end."""
    deadline = time.monotonic() + 5
    while True:
        if re.search(r"💣 .+ detonated[!:]", screen) or any(
            end in screen for end in ("You won", "You lost", "game over")
        ):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
        screen = _capture(session)


def _one_bomb_window(tmp_path: Path, attempt: int) -> float | None:
    """Seconds the first detonation window stayed on the screen; None when
    a bot detonated in it (the game ended)."""
    session = _start(tmp_path / f"bomb{attempt}", f"bomb{attempt}", "bomb --players 3 --unproven")
    try:
        _wait(session, " · round ", timeout=90)  # the Bomb table's status line
        deadline = time.monotonic() + 150
        opened = None
        while time.monotonic() < deadline:
            screen = _capture(session)
            window = "detonate?" in screen
            if opened is None and window:
                opened = time.monotonic()
            elif opened is not None and not window:
                closed = time.monotonic() - opened
                if _detonated(session, screen):
                    return None  # a bot detonated: the window ended by right
                return closed
            elif opened is None and "your turn" in screen:
                _play_my_turn(session)
            elif opened is None and "place the bomb" in screen:
                _keys(session, "Right", "Enter")  # K15: before the next seat
            time.sleep(0.05)
        raise AssertionError(f"no detonation window ended in 150 s:\n{_capture(session)}")
    finally:
        _stop(session)


@pytest.mark.slow
def test_the_bomb_detonation_window_lasts_ten_real_seconds(tmp_path) -> None:
    for attempt in range(ATTEMPTS):
        seconds = _one_bomb_window(tmp_path, attempt)
        if seconds is not None:
            # K16: 10 s; the first capture may come up to a poll late, the
            # last one as much: 9.5 s is the floor the issue asks for
            assert 9.5 <= seconds <= 14, seconds
            return
    pytest.fail(f"a bot detonated in the first window of all {ATTEMPTS} games")


# ---------------------------------------------------------------- Mao


@pytest.mark.slow
def test_a_mao_turn_waits_for_a_thinking_person(tmp_path) -> None:
    session = _start(tmp_path, "mao", "mao --players 2 --unproven")
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            screen = _capture(session)
            status = _line(screen, "Mao ·")
            if "your turn" in status and ("⏱ 10 s" in status or "⏱ 9 s" in status):
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the person's turn never came:\n{_capture(session)}")
        hand = _line(screen, "you:")
        assert re.search(r"you: \d+ cards", hand), screen
        time.sleep(8)  # thinking
        screen = _capture(session)
        status = _line(screen, "Mao ·")
        assert "your turn" in status, screen
        assert _line(screen, "you:") == hand, screen  # no card drawn or given
        left = int(re.search(r"⏱ (\d+) s", status).group(1))  # type: ignore[union-attr]
        assert left <= 3, status  # real seconds ran: 10 - 8
        _keys(session, "F1")
        time.sleep(left + 4)  # reading the help for longer than the time left
        _keys(session, "Escape")
        screen = _capture(session)
        status = _line(screen, "Mao ·")
        assert "your turn" in status and _line(screen, "you:") == hand, screen
        assert "time up" not in screen, screen
    finally:
        _stop(session)
