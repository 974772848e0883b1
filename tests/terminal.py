"""Shared by the tests that use a real terminal (tmux) or mDNS in a network
namespace of their own: start a program in tmux at a size, send keys, read
the screen back, wait for text; and the ``unshare -n`` prefix with the
loopback-only, multicast-on set-up (COMMON.md's network rule: mDNS never on
a real interface)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON = f"PYTHONPATH={ROOT} {sys.executable} -m tui.cli"
"""``nodealer`` as a shell command, running this worktree's code"""
LOOPBACK_MULTICAST = (
    "ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo"
)
"""inside a new network namespace: only loopback, with multicast routed on it"""


def need_tmux() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux (.ci/run installs it)")


def unshare_prefix() -> list[str]:
    """A command prefix giving a fresh network namespace, or skip the test."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        pytest.skip("needs Linux network namespaces (unshare -n)")
    if shutil.which("ip") is None:
        pytest.skip("needs the `ip` tool to bring up lo inside the namespace")
    for prefix in (["unshare", "-n", "--"], ["unshare", "-rn", "--"]):
        probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10)
        if probe.returncode == 0:
            return prefix
    pytest.skip(
        "cannot create a network namespace here (unshare -n and unshare -rn refused); "
        "mDNS is never tested on real interfaces"
    )


def in_namespace(inner: str) -> str:
    """A shell command running ``inner`` (sh) in a new network namespace
    with only loopback, multicast on (``inner`` must hold no single quote)."""
    assert "'" not in inner
    return " ".join([*unshare_prefix(), "sh", "-c", f"'{LOOPBACK_MULTICAST} && {inner}'"])


def start(session: str, command: str, size: tuple[int, int] = (80, 24)) -> None:
    """Run ``command`` (a shell command line) in a new tmux session."""
    width, height = size
    argv = ["tmux", "new-session", "-d", "-s", session, "-x", str(width), "-y", str(height),
            command]  # fmt: skip
    for _ in range(4):
        # the tmux server exits once a test killed its last session; a new
        # session asked for meanwhile fails ("server exited unexpectedly"):
        # ask again once that server is gone
        run = subprocess.run(argv, capture_output=True, text=True)
        if run.returncode == 0 or "server exited unexpectedly" not in run.stderr:
            break
        time.sleep(0.5)
    if run.returncode != 0:
        raise subprocess.CalledProcessError(run.returncode, argv, run.stdout, run.stderr)


def capture(session: str) -> str:
    run = subprocess.run(["tmux", "capture-pane", "-pt", session], capture_output=True, text=True)
    return run.stdout


def wait(session: str, *texts: str, timeout: float = 60) -> str:
    """The screen once it shows every one of ``texts``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = capture(session)
        if all(text in screen for text in texts):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{texts!r} never showed:\n{capture(session)}")


def keys(session: str, *sent: str) -> None:
    for key in sent:
        subprocess.run(["tmux", "send-keys", "-t", session, key], check=True)
        time.sleep(0.3)


def typed(session: str, text: str) -> None:
    subprocess.run(["tmux", "send-keys", "-l", "-t", session, text], check=True)
    time.sleep(0.3)


def kill(session: str) -> None:
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_file(path: Path, text: str, timeout: float = 60) -> str:
    """``path``'s text once it holds ``text``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        said = path.read_text(errors="replace") if path.exists() else ""
        if text in said:
            return said
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never in {path}:\n{path.read_text() if path.exists() else ''}")


def need_second_entry() -> None:
    """Skip unless a second program can enter the test's namespace
    (``nsenter``, into a plain ``unshare -n`` namespace)."""
    if shutil.which("nsenter") is None:
        pytest.skip("needs nsenter")
    if unshare_prefix() != ["unshare", "-n", "--"]:
        pytest.skip("needs a plain network namespace (unshare -n) to enter a second time")


def entered(pidfile: Path, inner: str) -> str:
    """A shell command running ``inner`` in the namespace whose first shell
    wrote its pid to ``pidfile`` (``echo $$ > pidfile`` first in its inner)."""
    assert "'" not in inner
    pid = wait_for_file(pidfile, "\n", timeout=30).strip()
    return f"nsenter --net=/proc/{pid}/ns/net -- sh -c '{inner}'"
