"""``nodealer watch`` in a real terminal at 80×24 and 160×45, in English
and Chinese, for a Bluff, a Bomb and a Mao table: the big screen waits for
the table's watch port, follows a bot table that ``nodealer play --headless
--watch-port`` serves on 127.0.0.1, ends with every hand, and ``r`` steps
through every turn with every card."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.terminal import ROOT, free_port, kill, need_tmux, start, wait

WORDS = {
    "en": ("waiting for the table", "{game}: {n} seats", "seat 1: ", "game over: ",
           "every card (final reveals in):", "every turn", "event "),
    "zh": ("等待牌桌", "{game}：{n} 个座位", "座位1：", "游戏结束：", "所有牌（最终揭示已齐）：",
           "逐步回放", "第 "),
}  # fmt: skip
GAMES = {  # game: (players, extra arguments of nodealer play)
    "bluff": (3, []),
    "bomb": (4, []),
    "mao": (3, ["--rounds", "1"]),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "lang", "size"),
    [("bluff", "en", (80, 24)), ("bluff", "zh", (80, 24)), ("bomb", "zh", (80, 24)),
     ("mao", "en", (80, 24)), ("bomb", "en", (160, 45)), ("mao", "zh", (160, 45))],
)  # fmt: skip
def test_watch_a_table_in_a_real_terminal(
    tmp_path: Path, game: str, lang: str, size: tuple[int, int]
) -> None:
    from tui.story import game_name

    need_tmux()
    waiting, header, seat, over, every, key, stepping = WORDS[lang]
    players, extra = GAMES[game]
    header = header.format(game=game_name(game, lang), n=players)
    port = free_port()
    session = f"nodealer-watch-{os.getpid()}-{game}-{lang}"
    env = f"NODEALER_HOME={tmp_path}/watcher PYTHONPATH={ROOT} LANG=C.UTF-8"
    command = (
        f"cd {ROOT} && {env} {sys.executable} -m tui.cli watch --connect 127.0.0.1:{port} "
        f"--lang {lang}; sleep 30"
    )
    start(session, command, size)
    try:
        wait(session, waiting)  # no table yet: the big screen waits for it
        play = subprocess.run(
            [sys.executable, "-m", "tui.cli", "play", game, "--headless", "--unproven",
             "--players", str(players), *extra, "--quiet", "--watch-port", str(port),
             "--watch-host", "127.0.0.1", "--home", str(tmp_path / "seat")],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
            text=True, timeout=400,
        )  # fmt: skip
        assert play.returncode == 0, play.stderr
        screen = wait(session, every)
        assert header in screen and seat in screen and over in screen, screen
        assert key in screen  # the footer offers every turn
        subprocess.run(["tmux", "send-keys", "-t", session, "r"])
        wait(session, stepping)  # the replay's steps, every card
    finally:
        kill(session)
