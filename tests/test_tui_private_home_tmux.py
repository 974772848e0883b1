"""A private table from the home screen, in a real terminal (issue 29):
``nodealer`` runs in tmux at 80×24; a person ticks "private table" in the
host form and gets the code box in the waiting room; back home, types a
wrong code in the join form and reads the refusal, then the right one (as a
host elsewhere printed it) and is seated. In Chinese (NODEALER_LANG=zh),
then in English after F2 on home.

Home browses the LAN (mDNS), so everything runs inside a network namespace
of its own with only loopback (COMMON.md's rule); the other host is a
headless ``nodealer host --private`` in the same namespace, on 127.0.0.1."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
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
    typed,
    wait,
)
from tests.test_tui_private_tmux import read_code

PORT = 47391  # inside the test's own namespace: nothing else listens there


def _printed_code(log: Path, timeout: float = 60) -> str:
    """The code the headless host printed (what its person reads aloud)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"private table, code: (\d{4}-[a-z]+)", log.read_text() if
                          log.exists() else "")  # fmt: skip
        if found:
            return found[1]
        time.sleep(0.2)
    raise AssertionError(f"the host printed no code:\n{log.read_text() if log.exists() else ''}")


@pytest.mark.slow
@pytest.mark.netns
def test_a_private_table_from_the_home_screen(tmp_path: Path) -> None:
    need_tmux()
    session = f"nd-private-home-{os.getpid()}"
    hal, log = tmp_path / "hal", tmp_path / "hal.log"
    hal.mkdir()
    python = PYTHON
    inner = (
        f"cd {ROOT} && (NODEALER_HOME={hal} {python} host bluff --players 3 --private "
        f"--headless --no-advertise --interface 127.0.0.1 --port {PORT} --nickname hal "
        f"> {log} 2>&1 &) && NODEALER_LANG=zh NODEALER_HOME={tmp_path / 'ann'} {python}; "
        "echo nodealer-ended-$?; sleep 30"
    )
    start(session, in_namespace(inner))
    try:
        # home in Chinese: the host form, "private table" ticked (seats, 3 tabs, space)
        wait(session, "你：", "开桌")
        keys(session, "h")
        wait(session, "私密牌桌")
        keys(session, "3", "Tab", "Tab", "Tab", "Space", "BTab", "Enter")
        screen = wait(session, "牌桌口令", "座位0", timeout=60)
        read_code(screen)  # the code, big, in its box
        keys(session, "q")

        # home again, in English now; the join form with a wrong code, then the right one
        wait(session, "你：", "开桌", timeout=30)
        keys(session, "F2")
        wait(session, "you:", "host a table")
        code = _printed_code(log)
        digits, word = code.split("-")
        wrong = f"{(int(digits) + 1) % 10000:04d}-{word}"
        keys(session, "j")
        wait(session, "HOST:PORT", "table code")
        typed(session, f"127.0.0.1:{PORT}")
        keys(session, "Tab")
        typed(session, wrong)
        keys(session, "Enter")
        wait(session, "wrong table code — check it with the host", timeout=60)
        keys(session, "q")
        wait(session, "you:", "host a table", timeout=30)
        keys(session, "j")
        wait(session, "HOST:PORT", "table code")
        typed(session, f"127.0.0.1:{PORT}")
        keys(session, "Tab")
        typed(session, code)
        keys(session, "Enter")
        screen = wait(session, "(you)", "hal", "the private table at 127.0.0.1", timeout=60)
        assert "wrong table code" not in screen
        assert "wrong table code (try 1 of 5 from 127.0.0.1)" in log.read_text()
        # leave as a person does: q in the waiting room goes home, q on home ends
        keys(session, "q")
        wait(session, "you:", "host a table", timeout=30)
        keys(session, "q")
        wait(session, "nodealer-ended-0", timeout=30)
    finally:
        kill(session)  # the headless host in the namespace gets the session's SIGHUP


def _where_it_stands(pid: int) -> str:
    """What a process that did not end is doing (seen once in a loaded run,
    never alone): its state and signals, and its threads' Python stacks
    where py-spy is installed."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:  # it ended after all
        return "(it ended as it was looked at)"
    keep = ("State:", "Threads:", "SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:")
    lines = [line for line in status if line.startswith(keep)]
    if shutil.which("py-spy"):
        dump = subprocess.run(["py-spy", "dump", "--pid", str(pid)], capture_output=True,
                              text=True, timeout=30)  # fmt: skip
        lines.append(dump.stdout or dump.stderr)
    return "\n".join(lines)


@pytest.mark.slow
@pytest.mark.netns
def test_closing_the_terminal_of_a_table_joined_from_home_ends_the_program(
    tmp_path: Path,
) -> None:
    """The terminal of a seat joined from home closes (tmux kill-session:
    SIGHUP): the program ends instead of opening home again on the dead
    terminal and spinning there, an orphan."""
    need_tmux()
    session = f"nd-private-hup-{os.getpid()}"
    pidfile = tmp_path / "pid"
    home = tmp_path / "home.sh"  # the program's pid, then the program itself
    home.write_text(f"echo $$ > {pidfile}\nexec env NODEALER_HOME={tmp_path / 'ann'} "
                    f"PYTHONPATH={ROOT} {sys.executable} -m tui.cli\n")  # fmt: skip
    python = PYTHON
    inner = (
        f"cd {ROOT} && (NODEALER_HOME={tmp_path / 'hal'} {python} host bluff --players 3 "
        f"--headless --no-advertise --interface 127.0.0.1 --port {PORT} --nickname hal "
        f"> /dev/null 2>&1 &) && sh {home}; sleep 30"
    )
    start(session, in_namespace(inner))
    try:
        wait(session, "you:", "host a table")
        keys(session, "j")
        wait(session, "HOST:PORT")
        typed(session, f"127.0.0.1:{PORT}")
        keys(session, "Enter")
        wait(session, "(you)", "hal", timeout=60)
    finally:
        kill(session)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.2)
    alive = Path(f"/proc/{pid}").exists()
    where = _where_it_stands(pid) if alive else ""
    if alive:  # ours: not left behind whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"the program went on after its terminal closed\n{where}"


@pytest.mark.slow
@pytest.mark.netns
def test_a_private_table_found_on_the_lan_list_and_by_its_code(tmp_path: Path) -> None:
    """Over real mDNS in the test's own namespace: the host's TUI advertises
    its private table; on home (Chinese) the LAN list marks it private,
    picking it asks for the code, and the code seats the joiner; `nodealer
    join CODE` alone (no address) finds it and seats another."""
    need_tmux()
    need_second_entry()
    tag = os.getpid()
    host, home, other = f"nd-lan-host-{tag}", f"nd-lan-home-{tag}", f"nd-lan-join-{tag}"
    nspid = tmp_path / "nspid"
    python = PYTHON
    inner = (
        f"echo $$ > {nspid} && cd {ROOT} && NODEALER_HOME={tmp_path / 'ann'} {python} host "
        f"bluff --players 4 --private --interface 127.0.0.1 --port {PORT} --nickname ann "
        "--name annstable; sleep 30"
    )
    start(host, in_namespace(inner))
    try:
        code = read_code(wait(host, "table code", "ann"))
        joined = entered(nspid, f"cd {ROOT} && NODEALER_LANG=zh NODEALER_HOME={tmp_path / 'bob'} "
                                f"{python}; sleep 30")  # fmt: skip
        start(home, joined)
        screen = wait(home, "annstable", timeout=60)
        row = next(ln for ln in screen.splitlines() if "annstable" in ln)
        assert "私密" in row
        keys(home, "l", "Home", "Enter")
        wait(home, "私密牌桌 annstable")
        typed(home, code)
        keys(home, "Enter")
        wait(home, "(你)", "ann", "座位1", timeout=60)
        wait(host, "2/4")

        by_code = entered(nspid, f"cd {ROOT} && NODEALER_HOME={tmp_path / 'cat'} {python} join "
                                 f"{code} --nickname cat; sleep 30")  # fmt: skip
        start(other, by_code)
        wait(other, "(you)", "cat", "ann", timeout=60)
        wait(host, "3/4")
    finally:
        for session in (other, home, host):
            kill(session)
