"""A private table in real terminals (issue 29): ``nodealer host --private``
and ``nodealer join CODE`` each run in tmux at 80×24, keys are sent and the
screens read back. The host's waiting room shows the code big; a person
reads it there and types it: a wrong code is refused on the joiner's screen
("wrong table code — check it with the host") and listed on the host's; the
right one seats the joiner; the host presses ``r`` and ``y`` and the joiner
sees it was removed. Once with the host in English and the joiner in
Chinese, once the other way round.

Everything talks over 127.0.0.1 (``--no-advertise``, ``--connect``): no
mDNS, so no namespace is needed here (the home screen's forms, which browse
the LAN, are tested in a namespace in test_tui_private_home_tmux.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.terminal import ROOT, capture, free_port, keys, kill, typed, wait

__all__ = ["capture", "free_port", "keys", "kill", "typed", "wait"]  # the home test too

WORDS = {
    "en": {
        "code": "table code",
        "wrong": "wrong table code — check it with the host",
        "seated": "(you)",
        "removed": "the host removed you from the table",
        "tried": "wrong table code (try 1 of 5 from 127.0.0.1)",
        "seat 1": "seat 1",
        "open": "open",
        "question": "Remove bob[/] (",
        "gone": "bob[/] was removed from the table",
    },
    "zh": {
        "code": "牌桌口令",
        "wrong": "牌桌口令错误——请向主人核对",
        "seated": "(你)",
        "removed": "主人把你请离了牌桌",
        "tried": "牌桌口令错误（来自 127.0.0.1 的第 1/5 次尝试）",
        "seat 1": "座位1",
        "open": "空位",
        "question": "请离牌桌吗",
        "gone": "bob[/] 已被请离牌桌",
    },
}


def read_code(screen: str) -> str:
    """The code as a person reads it off the host's box (``4 7 2 1 - W A L N U T``)."""
    found = re.search(r"(\d) (\d) (\d) (\d) - ((?:[A-Z] )*[A-Z])\b", screen)
    assert found is not None, f"no table code on the host's screen:\n{screen}"
    return "".join(found.groups()[:4]) + "-" + found[5].replace(" ", "").lower()


def start(session: str, home: Path, args: str, lang: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    command = (
        f"cd {ROOT} && NODEALER_HOME={home} PYTHONPATH={ROOT} {sys.executable} -m tui.cli "
        f"{args} --lang {lang}; echo nodealer-ended-$?; sleep 60"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command],
                   check=True)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("host_lang", "join_lang"), [("en", "zh"), ("zh", "en")])
def test_a_private_table_in_real_terminals(tmp_path: Path, host_lang: str, join_lang: str) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    port = free_port()
    tag = f"{os.getpid()}-{host_lang}"
    host, joiner = f"nd-private-host-{tag}", f"nd-private-join-{tag}"
    said, hears = WORDS[host_lang], WORDS[join_lang]
    where = f"--connect 127.0.0.1:{port}"
    try:
        start(host, tmp_path / "ann", f"host bluff --players 3 --private --no-advertise "
              f"--interface 127.0.0.1 --port {port} --nickname ann", host_lang)  # fmt: skip
        screen = wait(host, said["code"], "ann")
        code = read_code(screen)
        assert f"nodealer join {code} --connect 127.0.0.1:{port}" in screen  # how others join

        # a wrong code: refused on the joiner's screen, listed on the host's, nobody seated
        digits, word = code.split("-")
        wrong = f"{(int(digits) + 1) % 10000:04d}-{word}"
        start(joiner, tmp_path / "bob", f"join {wrong} {where} --nickname bob", join_lang)
        wait(joiner, hears["wrong"])
        wait(host, said["tried"])
        assert "bob" not in capture(host)
        kill(joiner)

        # the right code, typed as read (the word in capitals, first): seated
        shown = code.split("-")[1].upper() + " " + code.split("-")[0]
        start(joiner, tmp_path / "bob", f"join --code '{shown}' {where} --nickname 'bob[/]'",
              join_lang)  # fmt: skip
        wait(joiner, "bob[/]", hears["seated"], "ann")
        wait(host, "bob[/]")  # a nickname that is markup, shown as written

        # the host removes bob (after a yes); bob is told why, his seat is open again
        keys(host, "r")
        wait(host, said["question"])
        keys(host, "y")
        wait(joiner, hears["removed"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and hears["seated"] in capture(joiner):
            time.sleep(0.2)
        # the removed joiner no longer sees the seat list with itself in it
        assert hears["seated"] not in capture(joiner), capture(joiner)
        wait(host, said["gone"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # seat 1 is open again
            seat = next(ln for ln in capture(host).splitlines() if said["seat 1"] in ln)
            if said["open"] in seat:
                break
            time.sleep(0.2)
        assert said["open"] in seat and "bob" not in seat, capture(host)
        keys(joiner, "q")
        wait(joiner, "nodealer-ended-2")  # a problem: the host removed us
    finally:
        kill(joiner)
        kill(host)
