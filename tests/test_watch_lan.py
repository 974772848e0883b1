"""Spectators found on the LAN (issue 25, the host's choice): a headless
``nodealer host mao --spectators 4`` advertises its watch port and limit by
mDNS; ``nodealer watch`` with no address finds it and follows the game in a
real terminal (tmux, 80×24); the seats' lobby says "spectators: up to 4, 1
watching"; once the game runs the advert stays (playing): ``nodealer join``
finds no seat there, a second ``nodealer watch NAME`` joins mid-game, and
home's LAN list (in Chinese) offers it to watch with w. Real processes and
real mDNS inside a network namespace this test creates (loopback only).

The game is held mid-game while it is looked for: one seat (bob) is stopped
(SIGSTOP) once the story begins, so that the table waits for his acks
(v3: nothing is final without every seat's), and let go once home has found
it. A game of a few rounds is then always found mid-game, whatever its
length (an 8-round game once ended in 13 s, a 24-round one took 200 s)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.terminal import (
    PYTHON,
    ROOT,
    entered,
    in_namespace,
    keys,
    kill,
    need_second_entry,
    need_tmux,
    start,
    wait,
    wait_for_file,
)

WORDS = {
    "en": ("watching ", "at most 4", "every card (final reveals in):"),
    "zh": ("观看 ", "至多 4 人", "所有牌（最终揭示已齐）："),
}


@pytest.mark.slow
@pytest.mark.netns
# zh under ``-m long`` (CI time): the Chinese screens of watching are in the
# tmux tests (test_watch_seats_tmux, test_watch_tmux) of the default run
@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.long)])
def test_spectators_find_a_table_by_mdns_before_and_during_the_game(
    tmp_path: Path, lang: str
) -> None:
    need_tmux()
    need_second_entry()
    watching, most, every = WORDS[lang]
    tag = f"{tmp_path.name[-12:]}-{lang}"
    first, second, home = f"nd-wl-1-{tag}", f"nd-wl-2-{tag}", f"nd-wl-home-{tag}"
    nspid, host_log = tmp_path / "nspid", tmp_path / "host.txt"
    # the host (headless, bots at a slow pace), then the first big screen, found by mDNS
    inner = (
        f"echo $$ > {nspid} && cd {ROOT} && (NODEALER_HOME={tmp_path / 'hal'} {PYTHON} host "
        "mao --players 3 --rounds 6 --headless --unproven --interface 127.0.0.1 --watch-host "
        f"127.0.0.1 --spectators 4 --nickname hal --name halstable --time-scale 0.3 "
        f"> {host_log} 2>&1 &) "
        f"&& sleep 2 && NODEALER_HOME={tmp_path / 'w1'} {PYTHON} watch --seconds 60 "
        f"--lang {lang}; sleep 60"
    )
    start(first, in_namespace(inner))
    procs: list[subprocess.Popen[str]] = []
    try:
        wait_for_file(host_log, "lobby open", timeout=60)
        wait(first, watching, most, timeout=90)  # found, connected, waiting for the deal
        # two seats join by mDNS (headless): their lobby says the setting and the count
        for name in ("bob", "carol"):
            joined = entered(nspid, f"cd {ROOT} && NODEALER_HOME={tmp_path / name} {PYTHON} "
                                    f"join --headless --interface 127.0.0.1 --seconds 60 "
                                    f"--nickname {name} --time-scale 0.3 "
                                    f"> {tmp_path / name}.txt 2>&1")  # fmt: skip
            # a session of its own: the whole tree (sh, nsenter, python) is
            # stopped and let go at once
            procs.append(subprocess.Popen(["sh", "-c", joined], text=True,
                                          start_new_session=True))  # fmt: skip
            wait_for_file(tmp_path / f"{name}.txt", "lobby:", timeout=90)
        bob = wait_for_file(tmp_path / "bob.txt", "spectators: up to 4, 1 watching", timeout=60)
        assert "spectators: up to 4" in bob
        wait_for_file(host_log, "spectators: up to 4, 1 watching", timeout=30)
        # the game runs: the advert stays (playing), no seat is offered there
        wait_for_file(host_log, "lobby: 3/3 seated", timeout=120)
        wait_for_file(host_log, "\n  ", timeout=120)  # the story has begun
        os.killpg(procs[0].pid, signal.SIGSTOP)  # bob asleep: the game holds
        listing = subprocess.run(["sh", "-c", entered(nspid, f"cd {ROOT} && {PYTHON} tables "
                                  "--seconds 4 --interface 127.0.0.1")],
                                 capture_output=True, text=True, timeout=60)  # fmt: skip
        assert "halstable" in listing.stdout and "playing" in listing.stdout, listing.stdout
        assert "spectators: up to 4 (watch port" in listing.stdout
        late = subprocess.run(["sh", "-c", entered(nspid, f"cd {ROOT} && NODEALER_HOME="
                               f"{tmp_path / 'dan'} {PYTHON} join --headless --interface "
                               "127.0.0.1 --seconds 4 --nickname dan")],
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert late.returncode == 2 and "no open table found" in late.stderr, late.stderr
        # a second big screen, mid-game, by the table's name
        start(second, entered(nspid, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'w2'} {PYTHON} "
                                     f"watch halstable --seconds 30 --lang {lang}; sleep 60"))
        wait(second, watching, most, timeout=90)
        # home's LAN list (Chinese) offers the table being played to watch: l, w
        start(home, entered(nspid, f"cd {ROOT} && NODEALER_LANG=zh NODEALER_HOME="
                                   f"{tmp_path / 'eve'} {PYTHON}; sleep 60"))  # fmt: skip
        screen = wait(home, "halstable", timeout=60)
        assert "观众：至多 4 人" in screen and "对局中：按 w 观看" in screen, screen
        keys(home, "l", "Home", "w")
        wait(home, "观看 127.0.0.1:", timeout=60)
        os.killpg(procs[0].pid, signal.SIGCONT)  # bob back: the game goes on
        for proc in procs:
            assert proc.wait(timeout=600) == 0
        for session in (first, second):  # both big screens end with every card
            wait(session, every, timeout=120)
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for session in (home, second, first):
            kill(session)
    assert "spectators: nodealer watch --connect HOST:" in host_log.read_text()
