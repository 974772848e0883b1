"""Nicknames never block a seat (issue 30): a name already at the table is
seated with a number, and a guest who gives none is called by the OS's
user name, made presentable. Seats stay told apart by fingerprint."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from p2p.lobby.messages import MAX_NICK, nickname_problem
from p2p.lobby.nicknames import default_nickname, free_nickname, presentable
from table.verify import verify_log
from tests.test_lan import (
    ROOT,
    Proc,
    _namespaces_or_skip,
    _wait_for,
    assert_one_clean_game,
    host,
    join,
)


def test_a_free_name_is_kept_and_a_taken_one_numbered() -> None:
    assert free_nickname("player", ["Alice"]) == "player"
    assert free_nickname("player", ["Alice", "player"]) == "player 2"
    assert free_nickname("PLAYER", ["player", "Player 2"]) == "PLAYER 3"  # alike: case
    assert free_nickname("ｂｏｂ", ["Bob"]) == "ｂｏｂ 2"  # alike: width (NFKC)
    assert free_nickname("Alice", ["Alice 2"]) == "Alice"
    assert free_nickname("Alice 2", ["Alice", "alice 2"]) == "Alice 2 2"
    many = ["pi"] + [f"pi {n}" for n in range(2, 40)]
    assert free_nickname("pi", many) == "pi 40"


def test_a_long_taken_name_is_shortened_to_fit_its_number() -> None:
    long = "Christopher Alexander Montgomery"[:MAX_NICK]
    got = free_nickname(long, [long])
    assert got == "Christopher Alexander Montgome 2" and len(got) == MAX_NICK
    spaced = "a" * 29 + " bc"  # shortening leaves "a…a ", the space is dropped
    assert free_nickname(spaced, [spaced]) == "a" * 29 + " 2"
    assert nickname_problem(free_nickname(spaced, [spaced])) is None


@pytest.mark.parametrize(
    ("user", "shown"),
    [
        ("alice", "Alice"),
        ("pi", "Pi"),
        ("john.doe", "John Doe"),
        ("j_smith-jr", "J Smith Jr"),
        ("McKay", "McKay"),  # a name already cased stays
        ("CORP\\bob", "Bob"),  # Windows DOMAIN\user
        ("bob@EXAMPLE.ORG", "Bob"),
        ("", "player"),
        ("...", "player"),
        ("a\x1bb", "player"),  # not a usable nickname
        ("x" * 40, "X" + "x" * 31),
    ],
)
def test_a_user_name_made_presentable(user: str, shown: str) -> None:
    assert presentable(user) == shown
    assert nickname_problem(presentable(user)) is None


def test_the_default_nickname_is_the_os_user(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("USERNAME", "grace.hopper")  # what Windows sets
    assert default_nickname() == "Grace Hopper"
    monkeypatch.setenv("LOGNAME", "pi")  # getpass looks here first
    assert default_nickname() == "Pi"


def _seated(text: str) -> list[tuple[str, str]]:
    """The last lobby line a command printed: (nickname, fingerprint) by seat."""
    lines = [line for line in text.splitlines() if line.startswith("lobby: ")]
    assert lines, text[-2000:]
    return re.findall(r"\d+: (.+?) \(([A-Z2-7]{4}(?:-[A-Z2-7]{4}){3})\)", lines[-1])


@pytest.mark.slow
def test_two_guests_named_player_sit_at_one_table_by_connect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hosting = host(tmp_path, "bluff", 3, "--unproven")
    first = join(tmp_path, "p1", hosting.port, "--nickname", "player")  # type: ignore[attr-defined]
    _wait_for(lambda: "lobby: 2/3 seated" in hosting.text(), hosting)
    # the second gives no name: the OS user's, which is "player" too
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(name, "player")
    second = Proc(tmp_path / "p2", "join", "--connect", f"127.0.0.1:{hosting.port}",  # type: ignore[attr-defined]
                  "--interface", "127.0.0.1", "--headless", "--time-scale", "0.05")  # fmt: skip
    assert_one_clean_game([hosting, first, second])
    seated = _seated(hosting.text())
    assert [name for name, _ in seated] == ["Alice", "player", "Player 2"], hosting.text()[-2000:]
    assert len({fp for _, fp in seated}) == 3  # told apart by fingerprint too
    assert "is taken" not in second.text()


MDNS_TWO_PLAYERS = r"""
set -eu
ip link set lo up
ip link set lo multicast on
ip route add 224.0.0.0/4 dev lo
export PYTHONPATH="$ROOT"
NODEALER_HOME="$TMP/host" {py} -m tui.cli host bluff --players 3 --interface 127.0.0.1 \
    --nickname player --headless --unproven --time-scale 0.05 > "$TMP/host.txt" 2>&1 &
HOST=$!
sleep 2
for g in 1 2; do
  NODEALER_HOME="$TMP/guest$g" {py} -m tui.cli join --interface 127.0.0.1 --nickname player \
      --headless --time-scale 0.05 --seconds 20 > "$TMP/guest$g.txt" 2>&1 &
  eval "G$g=\$!"
  sleep 1
done
wait $G1
wait $G2
wait $HOST
"""


@pytest.mark.slow
@pytest.mark.netns
def test_three_players_named_player_sit_at_one_table_by_mdns(tmp_path: Path) -> None:
    """Inside a private network namespace (loopback only, multicast routed on
    it): the host and two guests, all "player", find each other by mDNS."""
    _namespaces_or_skip()
    env = {**os.environ, "ROOT": str(ROOT), "TMP": str(tmp_path)}
    run = subprocess.run(["unshare", "-n", "--", "bash", "-c",
                          MDNS_TWO_PLAYERS.format(py=sys.executable)],
                         env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    outputs = {p.name: p.read_text() for p in tmp_path.glob("*.txt")}
    assert run.returncode == 0, (run.stderr[-2000:], outputs)
    seated = _seated(outputs["host.txt"])
    assert sorted(name for name, _ in seated) == ["player", "player 2", "player 3"], outputs
    assert len({fp for _, fp in seated}) == 3
    for name in ("host", "guest1", "guest2"):
        (log,) = (tmp_path / name).glob("tables/*/log")
        assert verify_log(log).exit_code == 0
        assert "verify: clean" in outputs[f"{name}.txt"]
