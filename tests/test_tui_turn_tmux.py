"""The turn timer on a person's screen (issue 27 point 7), in a real
terminal: ``nodealer play bluff --turn-time 5`` in tmux at 80×24. The person
never presses a move key: the header counts down ("auto-move in 4 s") on
their turn, their move is then made for them and the story says so
("you place 1, claim 1 × 2 (auto)"); after F2 the same in Chinese
("3 秒后自动出牌", "（自动）")."""

from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

from tests.test_tui_bluff_tmux import ROOT, Terminal


def _header(screen: str) -> str:
    return screen.splitlines()[0] if screen else ""


def _story(screen: str) -> list[str]:
    """The story panel's lines (the second box)."""
    lines = screen.splitlines()
    tops = [i for i, ln in enumerate(lines) if ln.startswith("╭")]
    if len(tops) < 2:
        return []
    out = []
    for ln in lines[tops[1] + 1 :]:
        if ln.startswith("╰"):
            break
        out.append(ln.strip("│ ▸▇"))
    return out


@pytest.mark.slow
def test_idle_turn_counts_down_and_is_played_auto_at_80x24(tmp_path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    command = (
        f"cd {ROOT} && NODEALER_HOME={tmp_path / 'home'} PYTHONPATH={ROOT} {sys.executable} "
        "-m tui.cli play bluff --players 3 --unproven --pace quick --time-scale 1 "
        "--turn-time 5; sleep 60"
    )
    term = Terminal(f"nodealer-turn-{os.getpid()}", command)
    try:
        shown = term.wait("auto-move in", timeout=120)
        found = re.search(r"auto-move in (\d+) s", _header(shown))
        assert found and 1 <= int(found.group(1)) <= 5, _header(shown)
        assert "your turn" in shown or "you may" in shown
        shown = term.wait(" (auto)", timeout=30)
        auto = [ln for ln in _story(shown) if ln.endswith("(auto)")]
        assert auto and all(ln.startswith("you ") for ln in auto), _story(shown)
        term.press("F2")
        shown = term.wait("秒后自动出牌", timeout=60)
        found = re.search(r"(\d+) 秒后自动出牌", _header(shown))
        assert found and 0 <= int(found.group(1)) <= 5, _header(shown)
        shown = term.wait("（自动）", timeout=30)
        auto = [ln for ln in _story(shown) if ln.endswith("（自动）")]
        assert auto and all(ln.startswith("你") for ln in auto), _story(shown)
    finally:
        term.close()
