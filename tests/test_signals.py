"""SIGTERM (kill) and SIGHUP (the terminal closed) end a game like Ctrl-C:
one clean line, exit 128 + the signal, the saved log intact and verifiable
as unfinished (issue 27, item 6). A real ``nodealer play --headless`` in
its own process, stopped mid-game."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from table.verify import EXIT_BAD_INPUT, verify_log
from tui.signals import HANDLED, Stop, signals_as_interrupt

ROOT = Path(__file__).resolve().parent.parent


def test_stop_says_which_signal_and_its_exit_code() -> None:
    assert Stop().exit_code(130) == 130
    assert Stop().said("interrupted") == "interrupted"
    term = Stop(signal.SIGTERM)
    assert term.exit_code(130) == 143
    assert term.said("interrupted") == "stopped by SIGTERM: interrupted"
    assert term.said("已中断", "zh") == "被 SIGTERM 结束：已中断"


def test_a_signal_inside_is_an_interrupt_and_the_handlers_come_back() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, *HANDLED)}
    with pytest.raises(KeyboardInterrupt), signals_as_interrupt() as stop:
        signal.raise_signal(signal.SIGTERM)
    assert stop.signum == signal.SIGTERM
    assert {s: signal.getsignal(s) for s in before} == before


def _play_until_a_move(home: Path) -> tuple[subprocess.Popen[str], list[str]]:
    env = {**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("NODEALER_LANG", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "play", "mao", "--headless", "--unproven"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    seen: list[str] = []
    timer = threading.Timer(120, process.kill)  # a hung start fails the test, never hangs it
    timer.start()
    try:
        for line in process.stdout:
            seen.append(line)
            if line.startswith("  ") and len(seen) > 8:  # moves are being made
                break
    finally:
        timer.cancel()
    return process, seen


@pytest.mark.parametrize("name", [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)])
def test_a_signal_mid_game_keeps_the_log_and_exits_128_plus_it(tmp_path, name) -> None:
    signum = getattr(signal, name)
    process, seen = _play_until_a_move(tmp_path)
    assert process.poll() is None, "the game ended before it could be stopped: " + "".join(seen)
    process.send_signal(signum)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode == 128 + signum, err
    lines = [line for line in err.splitlines() if line.startswith("nodealer play:")]
    assert lines == [f"nodealer play: stopped by {name}: interrupted; saved logs are kept"], err
    assert "Traceback" not in err
    (log,) = (tmp_path / "tables").glob("*/log")
    report = verify_log(log)
    # not corrupt, not cheating: a log that merely stops
    assert report.faults == []
    assert report.exit_code == EXIT_BAD_INPUT
    assert report.problem is not None and "did not finish" in report.problem, report.problem
    assert report.entries > 0


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="a terminal's signals (POSIX)")
def test_sigterm_closes_a_table_screen_cleanly(tmp_path) -> None:
    """On a screen (tmux at 80x24): the app closes, the terminal is given
    back (the shell's next line shows), the one line and exit 143."""
    import shutil
    import time

    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")
    session = f"nodealer-sig-{os.getpid()}"
    pid_file, rc_file = tmp_path / "pid", tmp_path / "rc"
    command = (
        f"cd {ROOT} && echo $$ > {pid_file} && exec env NODEALER_HOME={tmp_path / 'home'} "
        f"PYTHONPATH={ROOT} {sys.executable} -m tui.cli play mao --unproven"
    )
    wrapper = f"bash -c '{command}'; echo rc=$? > {rc_file}; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", wrapper])

    def screen() -> str:
        run = ["tmux", "capture-pane", "-pt", session]
        return subprocess.run(run, capture_output=True, text=True).stdout

    try:
        deadline = time.monotonic() + 60
        while "you are " not in screen():  # the table screen is up ("you are <name>")
            assert time.monotonic() < deadline, screen()
            time.sleep(0.2)
        os.kill(int(pid_file.read_text()), signal.SIGTERM)  # the app (exec'd in that shell)
        deadline = time.monotonic() + 60
        while not rc_file.exists():
            assert time.monotonic() < deadline, screen()
            time.sleep(0.2)
        assert rc_file.read_text().strip() == "rc=143"
        shown = screen()
        assert "nodealer play: stopped by SIGTERM: interrupted; saved logs are kept" in shown
        assert "Traceback" not in shown and "you are seat 0" not in shown, shown
        (log,) = (tmp_path / "home" / "tables").glob("*/log")
        assert verify_log(log).faults == []
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="a terminal's signals (POSIX)")
def test_sighup_after_the_terminal_closed_still_exits_129(tmp_path) -> None:
    """The terminal window closes (the pty's master end goes away, every
    write to it fails), then SIGHUP: the game still ends as interrupted,
    exit 129, and the log is kept (before: exit 1, the message unwritable)."""
    import pty
    import select
    import time

    master, slave = pty.openpty()
    env = {**os.environ, "NODEALER_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "play", "mao", "--headless", "--unproven"],
        cwd=ROOT,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    try:
        # moves are being made: story lines are indented, after a newline or
        # after the erase of the progress line a terminal gets
        while len(re.findall(rb"(?:\n|\x1b\[K)  \S", seen)) < 8:
            assert time.monotonic() < deadline, seen[-2000:]
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 1 << 16)
    finally:
        os.close(master)  # the window closes
    assert process.poll() is None, "the game ended before it could be stopped"
    time.sleep(0.2)
    process.send_signal(signal.SIGHUP)
    try:
        assert process.wait(timeout=60) == 128 + signal.SIGHUP
    finally:
        if process.poll() is None:
            process.kill()
    (log,) = (tmp_path / "tables").glob("*/log")
    report = verify_log(log)
    assert report.faults == [] and report.entries > 0
    assert report.problem is not None and "did not finish" in report.problem


@pytest.mark.netns
@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="a terminal's signals (POSIX)")
def test_the_home_screen_ends_when_its_terminal_closes(tmp_path) -> None:
    """``nodealer`` alone (the home screen, browsing the LAN: in a private
    network namespace here) whose terminal window closes: SIGHUP ends it
    with 129, like every command (it had no handler of its own)."""
    import pty
    import select
    import time

    from tests.test_discovery import _unshare_prefix

    prefix = _unshare_prefix()
    inner = ("ip link set lo up && ip link set lo multicast on && "
             f"ip route add 224.0.0.0/4 dev lo && exec {sys.executable} -m tui.cli")  # fmt: skip
    master, slave = pty.openpty()
    env = {**os.environ, "NODEALER_HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "TERM": "xterm-256color"}  # fmt: skip
    env.pop("NODEALER_LANG", None)
    process = subprocess.Popen([*prefix, "sh", "-c", inner], stdin=slave, stdout=slave,
                               stderr=slave, env=env, cwd=ROOT, start_new_session=True)  # fmt: skip
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 60
    try:
        while b"host a table" not in seen:
            assert time.monotonic() < deadline, seen[-2000:]
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 1 << 16)
    finally:
        os.close(master)  # the window closes
    time.sleep(0.3)
    os.killpg(process.pid, signal.SIGHUP)
    try:
        assert process.wait(timeout=60) == 128 + signal.SIGHUP
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="a terminal's signals (POSIX)")
def test_a_program_stuck_after_sighup_is_ended_129_after_the_grace() -> None:
    """After SIGHUP the unwinding may block on the dead terminal (Textual's
    shutdown once slept for good, its writes queued behind a writer that
    no longer ran): past ``HUP_GRACE`` the program exits 129 anyway."""
    stuck = (
        "import sys, time\n"
        "import tui.signals as s\n"
        "s.HUP_GRACE = 1.0\n"
        "with s.signals_as_interrupt():\n"
        "    try:\n"
        "        print('ready', flush=True)\n"
        "        time.sleep(60)\n"
        "    except KeyboardInterrupt:\n"
        "        time.sleep(60)  # stuck in its unwinding, as on a dead terminal\n"
        "sys.exit(0)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-c", stuck], stdout=subprocess.PIPE, text=True,
                               env=env, cwd=ROOT)  # fmt: skip
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGHUP)
        assert process.wait(timeout=30) == 128 + signal.SIGHUP
    finally:
        process.kill()
