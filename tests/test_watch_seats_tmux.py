"""What the seats see of their spectators, in real terminals (tmux, 80×24,
English and Chinese): the waiting room of the host and of a joiner says
the table's setting and how many watch ("spectators: up to 4, 1
watching"), and once the table is played its header, the host's and the
others' (who ask the host's watch port), follows the count ("1/4
watching", then "0/4" when the spectator leaves); ``nodealer play`` on its
screen serves spectators too (``--watch-port``), and its header says how many watch. Everything on
127.0.0.1 (``--no-advertise``, ``--connect``): no mDNS, no namespace."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.terminal import (
    PYTHON,
    ROOT,
    capture,
    free_port,
    keys,
    kill,
    need_tmux,
    start,
    wait,
)

WORDS = {
    "en": {
        "none": "spectators: up to 4, 0 watching",
        "one": "spectators: up to 4, 1 watching",
        "watching": "(1 watching, at most {most})",
        "header0": "0/8 watching",
        "header1": "1/8 watching",
        "header 0/4": "0/4 watching",
        "header 1/4": "1/4 watching",
        "seat header": "≤4 watching",
    },
    "zh": {
        "none": "观众：至多 4 人，0 人在看",
        "one": "观众：至多 4 人，1 人在看",
        "watching": "（1 人观看，至多 {most} 人）",
        "header0": "观众 0/8",
        "header1": "观众 1/8",
        "header 0/4": "观众 0/4",
        "header 1/4": "观众 1/4",
        "seat header": "观众≤4",
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_waiting_room_says_the_spectators(tmp_path: Path, lang: str) -> None:
    need_tmux()
    said = WORDS[lang]
    port, watch = free_port(), free_port()
    tag = f"{os.getpid()}-{lang}"
    host, joiner, screen = f"nd-ws-host-{tag}", f"nd-ws-join-{tag}", f"nd-ws-watch-{tag}"
    try:
        start(host, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'hal'} {PYTHON} host bluff "
                    f"--players 3 --no-advertise --interface 127.0.0.1 --port {port} "
                    f"--watch-port {watch} --watch-host 127.0.0.1 --spectators 4 "
                    f"--nickname hal --lang {lang}; sleep 30")  # fmt: skip
        wait(host, said["none"], "hal")
        start(screen, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'tv'} {PYTHON} watch --connect "
                      f"127.0.0.1:{watch} --lang {lang}; sleep 30")  # fmt: skip
        wait(screen, said["watching"].format(most=4))
        wait(host, said["one"])  # the host's own count, as soon as the port counts it
        start(joiner, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'bob'} {PYTHON} join --connect "
                      f"127.0.0.1:{port} --nickname bob --lang {lang}; sleep 30")  # fmt: skip
        wait(joiner, said["one"], "hal", "bob")  # told by the lobby (watch, watching)
        kill(screen)  # the spectator leaves: both rooms say so
        wait(host, said["none"])
        wait(joiner, said["none"])
        keys(host, "s")  # started with the two seated: the tables' headers say it first
        wait(host, said["header 0/4"], timeout=90)  # the host counts live
        wait(joiner, said["header 0/4"], timeout=90)  # the others ask the host's watch port
        start(screen, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'tv2'} {PYTHON} watch --connect "
                      f"127.0.0.1:{watch} --lang {lang}; sleep 30")  # fmt: skip
        wait(screen, said["watching"].format(most=4), timeout=60)
        wait(host, said["header 1/4"], timeout=30)
        wait(joiner, said["header 1/4"], timeout=30)  # within a few seconds, mid-game
        kill(screen)
        wait(host, said["header 0/4"], timeout=30)
        wait(joiner, said["header 0/4"], timeout=30)
    finally:
        for session in (joiner, screen, host):
            kill(session)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_play_on_its_screen_serves_spectators(tmp_path: Path, lang: str) -> None:
    need_tmux()
    said = WORDS[lang]
    watch = free_port()
    tag = f"{os.getpid()}-{lang}"
    seat, screen = f"nd-wp-seat-{tag}", f"nd-wp-watch-{tag}"
    try:
        start(seat, f"cd {ROOT} && {PYTHON} play bluff --players 3 --unproven --pace quick "
                    f"--watch-port {watch} --watch-host 127.0.0.1 --home {tmp_path / 'me'} "
                    f"--lang {lang}; sleep 30")  # fmt: skip
        wait(seat, said["header0"], timeout=90)  # the header's first words: 80 columns show it
        start(screen, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'tv'} {PYTHON} watch --connect "
                      f"127.0.0.1:{watch} --lang {lang}; sleep 30")  # fmt: skip
        wait(screen, said["watching"].format(most=8), "seat 0: " if lang == "en" else "座位0：",
             timeout=60)  # fmt: skip
        wait(seat, said["header1"], timeout=30)
    finally:
        for session in (screen, seat):
            kill(session)


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_seat_that_cannot_reach_the_watch_port_shows_the_limit(tmp_path: Path, lang: str) -> None:
    """The host's lobby on 127.0.0.2, its watch port on 127.0.0.1 only: the
    joiner, which reached the lobby at 127.0.0.2, cannot ask the count and
    its header shows the limit ("≤4 watching") while the host's counts."""
    if sys.platform != "linux":
        pytest.skip("needs 127.0.0.2 on loopback (Linux)")
    need_tmux()
    said = WORDS[lang]
    port, watch = free_port(), free_port()
    tag = f"{os.getpid()}-{lang}"
    host, joiner = f"nd-wu-host-{tag}", f"nd-wu-join-{tag}"
    try:
        start(host, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'hal'} {PYTHON} host bluff "
                    f"--players 3 --no-advertise --interface 127.0.0.2 --port {port} "
                    f"--watch-port {watch} --watch-host 127.0.0.1 --spectators 4 "
                    f"--nickname hal --lang {lang}; sleep 30")  # fmt: skip
        wait(host, said["none"], "hal")
        start(joiner, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'bob'} {PYTHON} join --connect "
                      f"127.0.0.2:{port} --nickname bob --lang {lang}; sleep 30")  # fmt: skip
        wait(joiner, said["none"], "hal", "bob")
        keys(host, "s")
        wait(host, said["header 0/4"], timeout=90)
        screen = wait(joiner, said["seat header"], timeout=90)
        assert said["header 0/4"] not in screen
        time.sleep(8)  # two more asks, both unanswered: still the limit
        assert said["seat header"] in capture(joiner)
    finally:
        for session in (joiner, host):
            kill(session)
