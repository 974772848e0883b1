"""A person plays a whole Bluff game in a real terminal (issue 26):
``nodealer play bluff --players 3`` in tmux at 80×24, keys sent one at a
time, the screen read back. The person raises a claim with ↑, challenges
with ``c``, and sits out their first turns that have a claim before them
for 10.5 s each: the screen must still show their turn, unchanged, for the
first 10 s (no bot challenge or claim preempts it). The terminal's bell
has rung when the turn shows. Then the game is played to the game-over
screen.

The bots run at ``--pace quick`` (they move 0.3 s after the table changes,
so the game is short) — but a person's turn is still theirs for the
human pace's 12 s, and that is what is measured, on the screen."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROMISED = 10.0  # seconds a person's turn is theirs alone, on their screen
SIT_OUT = 10.5  # how long the person sits on a turn to see it held
MEASURED = 2  # turns sat out
RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13}


class Terminal:
    """A tmux session running one command at 80×24."""

    def __init__(self, name: str, command: str) -> None:
        self.name = name
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command],
                       check=True)  # fmt: skip

    def screen(self) -> str:
        run = subprocess.run(["tmux", "capture-pane", "-pt", self.name],
                             capture_output=True, text=True)  # fmt: skip
        return run.stdout

    def press(self, *keys: str) -> None:
        for key in keys:  # one at a time, as a person types
            subprocess.run(["tmux", "send-keys", "-t", self.name, key], check=True)
            time.sleep(0.12)

    def bell(self) -> bool:
        """Whether the terminal's bell has rung (tmux keeps the flag)."""
        run = subprocess.run(["tmux", "display", "-p", "-t", self.name, "#{window_bell_flag}"],
                             capture_output=True, text=True)  # fmt: skip
        return run.stdout.strip() == "1"

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)

    def wait(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never showed:\n{self.screen()}")


def _table(screen: str) -> str:
    """The table panel (status, pile, news, hand, claim), its lines joined."""
    lines = screen.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("╭")), None)
    if start is None:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("╰")), len(lines))
    return "\n".join(ln.strip("│ ") for ln in lines[start + 1 : end])


def _may(table: str) -> str:
    # a long status line (a long name, "challenge (c) or let it stand (a)")
    # wraps right after "you may:": the moves are then on the next line
    found = re.search(r"you may:[ \t]*\n?([^\n]*)", table)
    return found.group(1) if found else ""


def _last(table: str) -> str:
    found = re.search(r"last: ([^\n]*)", table)
    return found.group(1) if found else ""


def _claim(table: str) -> tuple[int, int] | None:
    found = re.search(r"claim: (\d+) × (\w+)", table)
    if not found:
        return None
    rank = found.group(2)
    return int(found.group(1)), RANKS.get(rank) or int(rank)


def _over(screen: str) -> bool:
    """The game-over screen: the table is gone, the outcome is told."""
    words = ("outcome", "won", "lost", "wins", "lose", "log")
    return "Bluff · " not in screen and any(w in screen for w in words)


@pytest.mark.slow
def test_a_whole_bluff_game_at_80x24_with_a_fair_turn(tmp_path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    rc = tmp_path / "rc"
    command = (
        f"cd {ROOT} && NODEALER_HOME={tmp_path / 'home'} PYTHONPATH={ROOT} {sys.executable} "
        "-m tui.cli play bluff --players 3 --unproven --pace quick --time-scale 1; "
        f"echo $? > {rc}; sleep 60"
    )
    term = Terminal(f"nodealer-bluff-{os.getpid()}", command)
    held: list[float] = []  # seconds each sat-out turn stayed the person's, on screen
    sat: set[str] = set()  # the turns sat out (the claim before them)
    raised = challenged = placed = 0
    rang: bool | None = None  # the bell, when the person's first turn showed
    try:
        term.wait("Bluff · ", timeout=90)  # the table screen's status line
        deadline = time.monotonic() + 170
        while True:
            assert time.monotonic() < deadline, f"the game did not end:\n{term.screen()}"
            screen = term.screen()
            if _over(screen):
                break
            table = _table(screen)
            may = _may(table)
            turn = _last(table) + "|" + _pile(table)
            if "you hold A♠" in table:
                term.press("s")  # B3: show it and start
            elif "let it stand" in may:
                term.press("a")  # B11: a last claim stands, the game ends
            elif "your turn" in table and "place" in may:
                rang = term.bell() if rang is None else rang
                if "challenge" in may and len(held) < MEASURED and turn not in sat:
                    sat.add(turn)
                    held.append(_sit_out(term, table))
                elif "challenge" in may and not challenged:
                    challenged += _challenge(term)
                else:
                    raised += _place(term, raise_claim=not raised)
                    placed += 1
            time.sleep(0.25)
        for keys in (["q"], ["C-q"], ["y"], ["Enter"]):  # leave, confirming if asked
            term.press(*keys)
            for _ in range(25):
                if rc.exists():
                    break
                time.sleep(0.2)
            if rc.exists():
                break
    finally:
        last_screen = term.screen()
        term.close()
    assert len(held) == MEASURED and min(held) >= PROMISED, held
    assert rang, "the bell did not ring when the person's turn came"
    assert raised == 1 and challenged == 1 and placed >= 1, (raised, challenged, placed)
    assert rc.exists() and rc.read_text().strip() == "0", last_screen
    (log,) = (tmp_path / "home").glob("tables/*/log")
    assert log.exists()


def _sit_out(term: Terminal, table: str) -> float:
    """The person thinks for 10.5 s: how long the screen kept showing their
    turn, the claim before it unchanged (a bot's challenge or claim would
    change it)."""
    began = time.monotonic()
    last = _last(table)
    while time.monotonic() - began < SIT_OUT:
        now = _table(term.screen())
        if "your turn" not in now or "place" not in _may(now) or _last(now) != last:
            return time.monotonic() - began
        time.sleep(0.2)
    return time.monotonic() - began


def _challenge(term: Terminal) -> int:
    """``c``: the claim before the person's turn is turned up (B7) and the
    result is told in words, on the table and in the story."""
    before = _result(_table(term.screen()))
    term.press("c")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        shown = term.screen()
        table = _table(shown)
        told = _result(table)
        if told and told != before and "pile: 0 card" in table:
            # in the story too, within a moment (the table and the story are
            # two widgets: a capture can fall between their redraws)
            seen = time.monotonic() + 3
            while not any(told in line for line in _story(shown)):
                assert time.monotonic() < seen, shown
                time.sleep(0.2)
                shown = term.screen()
            return 1
        time.sleep(0.2)
    raise AssertionError(f"no challenge result:\n{term.screen()}")


def _result(table: str) -> str:
    """The challenge result on the table, if one shows."""
    return next((ln for ln in table.splitlines() if "was honest" in ln or "bluffed" in ln), "")


def _story(screen: str) -> list[str]:
    """The story panel's lines (the second box)."""
    lines = screen.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("╭")]
    if len(starts) < 2:
        return []
    out = []
    for line in lines[starts[1] + 1 :]:
        if line.startswith("╰"):
            break
        out.append(line.strip("│ ▁▂▃▄▅▆▇█"))
    return out


def _until(term: Terminal, shows: Callable[[str], bool], timeout: float = 5) -> str:
    """The table panel once ``shows`` holds for it (keys take a redraw to show)."""
    deadline = time.monotonic() + timeout
    while True:
        table = _table(term.screen())
        if shows(table) or time.monotonic() > deadline:
            return table
        time.sleep(0.1)


def _pile(table: str) -> str:
    found = re.search(r"pile: ([^\n]*)", table)
    return found.group(1) if found else ""


def _place(term: Terminal, raise_claim: bool) -> int:
    """Pick two cards (one if that is all) and place them with the claim
    shown, raised once with ↑; 1 if it was raised."""
    table = _table(term.screen())
    found = re.search(r"your hand: (\d+) card", table)
    cards = int(found.group(1)) if found else 1
    picks = min(2, max(1, cards))
    for _ in range(picks):
        term.press("Space", "Right")
    _until(term, lambda table: f"picked {picks}" in table)
    raised = 0
    if raise_claim:
        before = _claim(_table(term.screen()))
        term.press("Up")
        shown = _until(term, lambda table: _claim(table) != before)
        after = _claim(shown)
        assert before is not None and after is not None and after > before, (before, after)
        raised = 1
    term.press("Enter")
    deadline = time.monotonic() + 20
    while "place" in _may(_table(term.screen())):
        assert time.monotonic() < deadline, f"the play never went out:\n{term.screen()}"
        time.sleep(0.2)
    return raised
