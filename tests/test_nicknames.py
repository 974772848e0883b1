"""Nicknames never block a seat (issue 30): a name already at the table is
seated with a number, and a guest who gives none is called by the OS's
user name, made presentable. Seats stay told apart by fingerprint."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import p2p.lobby.machines as machines
from p2p.identity import Identity
from p2p.lobby import BadHostMessage, LobbyError, NicknameTaken
from p2p.lobby.machines import LobbyHostMachine, LobbyJoinerMachine, Send
from p2p.lobby.messages import MAX_NICK, nickname_problem
from p2p.lobby.nicknames import (
    default_nickname,
    free_nickname,
    given_for,
    numbered,
    presentable,
)
from p2p.wire import MAX_SEATS, encode_payload
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
from tui.lan import _nickname


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


# --------------------------------------------------------------------- the joiner's checks


class _Table:
    """The real host machine and joiner machines, wired in memory."""

    def __init__(self, host_nick: str = "Alice", seats: int = 4) -> None:
        self.host_id = Identity.generate()
        self.host = LobbyHostMachine(
            self.host_id, {"game": "bluff"}, seats, node_port=40000, nickname=host_nick,
            address="127.0.0.1",
        )  # fmt: skip
        self.joiners: dict[int, LobbyJoinerMachine] = {}
        self.errors: dict[int, LobbyError] = {}  # why a joiner left

    def join(self, nick: str) -> int:
        """A joiner asks for ``nick`` (sent as is: a peer need not check it)."""
        conn, identity = len(self.joiners) + 1, Identity.generate()
        joiner = LobbyJoinerMachine(
            identity, self.host_id.public, nickname="x", node_port=41000 + conn
        )
        joiner.nickname = nick
        self.joiners[conn] = joiner
        self.run(self.host.connected(conn, identity.public, "127.0.0.1", "127.0.0.1", 10.0))
        return conn

    def run(self, effects: list) -> None:
        queue = list(effects)
        while queue:
            effect = queue.pop(0)
            if not isinstance(effect, Send) or effect.conn in self.errors:
                continue
            try:
                answers = self.joiners[effect.conn].receive(encode_payload(effect.msg))
            except LobbyError as exc:
                self.errors[effect.conn] = exc
                if exc.reply is None:
                    queue += self.host.disconnected(effect.conn, 0.0)
                else:
                    queue += self.host.receive(effect.conn, encode_payload(exc.reply), 0.0)
                continue
            for answer in answers:
                queue += self.host.receive(effect.conn, encode_payload(answer), 0.0)

    def names(self) -> list[str]:
        return [p.nickname for p in self.host.players()]


def test_given_for_is_exactly_the_hosts_numbering() -> None:
    long = "Christopher Alexander Montgomery"
    for asked in ("Bob", "player 2", long, "a" * 29 + " bc", "李雷"):
        assert given_for(asked, asked)
        for n in range(2, MAX_SEATS + 2):
            assert given_for(asked, numbered(asked, n))
        taken = [asked] + [numbered(asked, n) for n in range(2, MAX_SEATS)]
        for count in range(1, len(taken) + 1):
            assert given_for(asked, free_nickname(asked, taken[:count]))
    assert given_for(long, "Christopher Alexander Montgome 2")
    for given in ("Alice", "bob", "Bob 1", "Bob 02", "Bob ２", "Bob  2", "Bob 2 2", "Bob 2x",
                  f"Bob {MAX_SEATS + 2}", "Bob -2", "Bo 2", "Bob\u00a02"):  # fmt: skip
        assert not given_for("Bob", given), given
    assert not given_for(long, long + " 2")  # not shortened: 34 characters


def test_the_honest_host_numbers_and_every_seat_signs() -> None:
    table = _Table("player", seats=4)
    for nick in ("player", "PLAYER", "Player 2"):
        table.join(nick)
    assert table.names() == ["player", "player 2", "PLAYER 3", "Player 2 2"]
    assert table.errors == {} and table.host.result is not None
    for conn, joiner in table.joiners.items():
        assert joiner.result is not None and joiner.result.table == table.host.result.table
        assert joiner.given == table.names()[conn]
    long = "Christopher Alexander Montgomery"
    table = _Table(long, seats=3)
    table.join(long)
    table.join(long)
    assert table.names() == [long, long[:30] + " 2", long[:30] + " 3"]
    assert table.errors == {} and table.host.result is not None


def test_a_joiner_refuses_a_host_that_renames_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of the numbering: the host seated Bob as "Alice" and Bob signed
    the table (its key agreeing that seat is called Alice)."""
    real = machines.free_nickname
    for other in ("Mallory", "Alice", "Bob 1", "Bob 66"):

        def rename(nick: str, taken: list[str], other: str = other) -> str:
            return other if nick == "Bob" else real(nick, taken)

        monkeypatch.setattr(machines, "free_nickname", rename)
        table = _Table("host", seats=3)
        table.join("Alice")
        bob = table.join("Bob")
        error = table.errors[bob]
        assert isinstance(error, BadHostMessage), (other, table.errors)
        assert error.reply is not None and error.reply["code"] == "nickname"
        if other == "Alice":  # alike names at two seats: Alice leaves too
            assert "same nickname" in str(error) and len(table.errors) == 2
        else:
            assert f"calls you {other!r}, you asked for 'Bob'" in str(error)
        assert table.joiners[bob].stage == "requested" and table.joiners[bob].result is None
        assert table.host.result is None and bob not in table.host.seated


def test_a_seated_joiner_refuses_a_later_rename() -> None:
    table = _Table("host", seats=4)
    carol, dave = table.join("Carol"), table.join("Dave")
    assert table.joiners[carol].given == "Carol"
    table.host.guests[carol].nick = "Carol 2"  # a number it could have been given, but later
    table.run(table.host.disconnected(dave, 0.0))  # Dave leaves: a new lobby for Carol
    error = table.errors[carol]
    assert isinstance(error, BadHostMessage) and error.reply is not None
    assert "renamed you from 'Carol' to 'Carol 2'" in str(error)
    assert error.reply["code"] == "nickname" and table.names() == ["host"]


def test_a_lobby_showing_two_alike_names_is_refused() -> None:
    table = _Table("Alice", seats=3)
    offer = table.host.lobby_msg()
    other = Identity.generate().fingerprint
    offer["players"].append({"seat": 1, "nick": "ＡＬＩＣＥ", "fp": other})  # NFKC, case-folded
    joiner = LobbyJoinerMachine(Identity.generate(), table.host_id.public, nickname="Bob",
                                node_port=41000)  # fmt: skip
    with pytest.raises(BadHostMessage, match="same nickname") as caught:
        joiner.receive(encode_payload(offer))
    assert caught.value.reply is not None and caught.value.reply["code"] == "nickname"


# --------------------------------------------------------------------- invisible characters

# Unicode's Default_Ignorable_Code_Point, and the Khitan filler (protocol.md §4)
INVISIBLE = [
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x16FE4, 0x16FE4), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
]  # fmt: skip


@pytest.mark.parametrize(("lo", "hi"), INVISIBLE, ids=[f"U+{lo:04X}" for lo, _ in INVISIBLE])
def test_invisible_characters_are_refused(lo: int, hi: int) -> None:
    for cp in range(lo, hi + 1):
        for nick in (f"player{chr(cp)}", f"pla{chr(cp)}yer", f"player 2{chr(cp)}"):
            assert nickname_problem(nick) is not None, f"U+{cp:04X}"


def test_a_name_with_an_invisible_mark_gets_no_seat() -> None:
    """Review: "player 2" + VARIATION SELECTOR-17 took a seat, and a genuine
    second "player" was then numbered "player 2": two seats drawn alike."""
    table = _Table("player", seats=4)
    mark = table.join("player 2\U000e0100")
    table.join("player")
    assert isinstance(table.errors[mark], NicknameTaken)
    assert "invisible" in str(table.errors[mark])
    assert table.names() == ["player", "player 2"]


# --------------------------------------------------------------------- --nickname


def test_the_nickname_option_is_cut_or_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert _nickname("x" * 31 + " yz", "join") == "x" * 31  # cut to 32, no space left at the end
    assert _nickname("Zoë", "host") == "Zoë"
    assert _nickname(None, "join") == default_nickname()
    assert capsys.readouterr().err == ""
    assert _nickname("a\x1bb", "join") is None
    assert capsys.readouterr().err == (
        "nodealer join: --nickname 'a\\x1bb': "
        "a nickname cannot contain control or invisible characters\n"
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("command", "nick", "problem"),
    [
        ("join", "a\x1bb", "control or invisible"),
        ("join", "ABCD-EFGH-IJKL-MNOP", "look like a fingerprint"),
        ("host", "player\U000e0100", "control or invisible"),
        ("host", "", "1 to 32 characters"),
    ],
)
def test_a_bad_nickname_option_is_one_line(
    tmp_path: Path, command: str, nick: str, problem: str
) -> None:
    """Review: a bad --nickname crashed nodealer join and host with a traceback."""
    home = tmp_path / "home"
    where = (
        ["join", "--connect", f"127.0.0.1:{_closed_port()}"]
        if command == "join"
        else ["host", "bluff", "--no-advertise"]  # nothing multicasts
    )
    run = subprocess.run(
        [sys.executable, "-m", "tui.cli", *where, "--interface", "127.0.0.1", "--headless",
         "--nickname", nick],
        env={**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT)},
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"nodealer {command}: --nickname {nick!r}: ") and problem in line
    assert not home.exists()  # nothing changed: no identity, no folder
