"""Private tables (issue 29): the table code and its PAKE, on 127.0.0.1 only,
plus the sans-I/O rules (a look-alike host, a relay, the guess limit)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import trio

from p2p.identity import Identity
from p2p.lobby import (
    BadCode,
    BadHostMessage,
    HostUnreachable,
    LobbyHostMachine,
    LobbyJoinerMachine,
    PrivateTable,
    SeatedTable,
    WrongCode,
    WrongHost,
    host_lobby,
    join_lobby,
    new_code,
    parse_code,
)
from p2p.lobby.machines import Close, Send
from p2p.lobby.messages import WRONG_CODE, decode_lobby_message, lobby_message
from p2p.lobby.table_code import (
    CODE_BLOCK,
    CODE_TRIES,
    CODE_TRIES_TOTAL,
    CODE_WINDOW,
    WORDS,
    GuessLimit,
    attempt_line,
)
from p2p.wire import encode_payload
from tui.lan import print_attempts

LOCAL = "127.0.0.1"
SETTINGS = {"game": "bluff", "seats": 2, "config": None, "proven": True, "name": "Alice's table"}
CODE = "4721-walnut"
WRONG = "4721-walrus"


async def _host(nursery: trio.Nursery, out: dict, **kw: Any) -> Any:
    identity = kw.pop("identity", None) or Identity.generate()

    async def run(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        out["host"] = await host_lobby(
            identity, SETTINGS, 2, node_port=40000, nickname="Alice", task_status=task_status, **kw
        )

    return await nursery.start(run)


async def _join(port: int, **kw: Any) -> SeatedTable:
    identity = kw.pop("identity", None) or Identity.generate()
    with trio.fail_after(10):
        return await join_lobby(
            identity, LOCAL, port, nickname="Bob", node_port=41000, expect_settings=SETTINGS, **kw
        )


# --------------------------------------------------------------------- over TCP


@pytest.mark.trio
async def test_the_right_code_seats_a_joiner() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _host(nursery, out, code=CODE)
        table = await _join(lobby.port, code="WALNUT 4721")  # as a person types it
    assert out["host"].table == table.table and table.seat == 1
    assert table.nicknames == ("Alice", "Bob")


@pytest.mark.trio
async def test_a_wrong_code_is_refused_and_nothing_is_seated() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _host(nursery, out, code=CODE)
        with pytest.raises(WrongCode) as caught:
            await _join(lobby.port, code=WRONG)
        assert str(caught.value) == "wrong table code — check it with the host"
        with trio.fail_after(5):  # the host closes that connection right after its refusal
            while lobby.pending:
                await trio.sleep(0.01)
        assert lobby.state.taken == 1
        assert any("wrong table code (try 1 of 5 from 127.0.0.1)" in e for e in lobby.errors)
        # no code at all: told the table is private, nothing seated
        with pytest.raises(PrivateTable, match="private: ask the host"):
            await _join(lobby.port)
        assert lobby.state.taken == 1
        # the right code still works afterwards
        await _join(lobby.port, code=CODE)
    assert out["host"].n == 2


@pytest.mark.trio
async def test_the_guess_limit_holds() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _host(nursery, out, code=CODE)
        for _ in range(CODE_TRIES):
            with pytest.raises(WrongCode):
                await _join(lobby.port, code=WRONG)
        # from this address nothing is answered now, not even the right code
        with pytest.raises(HostUnreachable):
            await _join(lobby.port, code=CODE)
        assert lobby.state.taken == 1 and lobby.dropped == 1
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_look_alike_public_host_cannot_seat_a_joiner_with_a_code() -> None:
    """A fake host advertising the same name and settings, but without the
    code, is public: the joiner who typed the real code refuses it."""
    out: dict = {}
    async with trio.open_nursery() as nursery:
        fake = await _host(nursery, out)  # same settings and name, no code
        with pytest.raises(WrongHost, match="not private, so it is not the table"):
            await _join(fake.port, code=CODE)
        assert fake.state.taken == 1
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_look_alike_private_host_with_another_code_seats_nobody() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        fake = await _host(nursery, out, code=new_code())
        with pytest.raises(WrongCode):  # an honest program refuses the code it cannot match
            await _join(fake.port, code=CODE)
        assert fake.state.taken == 1
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_public_table_is_unchanged() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _host(nursery, out)
        table = await _join(lobby.port)
    assert out["host"].table == table.table


# --------------------------------------------------------------------- sans-I/O


def _sent(effects: list) -> list[dict]:
    return [e.msg for e in effects if isinstance(e, Send)]


def test_a_fake_host_that_claims_the_code_is_caught_by_the_joiner() -> None:
    """A malicious look-alike accepts any reply and answers pake-ok: its MAC
    cannot be right without the code, and the joiner says so."""
    fake = Identity.generate()
    host = LobbyHostMachine(fake, SETTINGS, 2, node_port=40000, code=new_code())
    bob = Identity.generate()
    joiner = LobbyJoinerMachine(bob, fake.public, nickname="Bob", node_port=41000, code=CODE)
    (pake,) = _sent(host.connected(1, bob.public, LOCAL, LOCAL, 10.0))
    (reply,) = joiner.receive(encode_payload(pake))
    assert reply["k"] == "pake-reply"
    with pytest.raises(WrongHost, match="does not know the table code") as caught:
        joiner.receive(encode_payload(lobby_message("pake-ok", mac=bytes(32))))
    assert caught.value.reply is not None and caught.value.reply["code"] == "code"
    assert joiner.result is None and joiner.stage == "proving"


def test_a_relay_to_the_real_host_fails() -> None:
    """A machine in the middle forwards the PAKE between a joiner and the
    real host: the exchange is bound to both ends' keys, so it fails."""
    real, relay, bob = Identity.generate(), Identity.generate(), Identity.generate()
    host = LobbyHostMachine(real, SETTINGS, 2, node_port=40000, code=CODE)
    joiner = LobbyJoinerMachine(bob, relay.public, nickname="Bob", node_port=41000, code=CODE)
    (pake,) = _sent(host.connected(1, relay.public, LOCAL, LOCAL, 10.0))
    (reply,) = joiner.receive(encode_payload(pake))  # the relay forwards both ways
    effects = host.receive(1, encode_payload(reply), now=0.0)
    (refusal,) = _sent(effects)
    assert refusal == lobby_message(
        "refused", code="code", text="wrong table code — check it with the host"
    )
    assert any(isinstance(e, Close) for e in effects) and host.taken == 1


def test_the_joiner_checks_the_table_id_it_proved_the_code_for() -> None:
    alice, bob = Identity.generate(), Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    joiner = LobbyJoinerMachine(bob, alice.public, nickname="Bob", node_port=41000, code=CODE)
    (pake,) = _sent(host.connected(1, bob.public, LOCAL, LOCAL, 10.0))
    (reply,) = joiner.receive(encode_payload(pake))
    ok, offer = _sent(host.receive(1, encode_payload(reply), now=0.0))
    assert ok["k"] == "pake-ok" and offer["k"] == "lobby"
    assert joiner.receive(encode_payload(ok)) == []
    with pytest.raises(WrongHost, match="proven for"):
        copy.copy(joiner).receive(encode_payload({**offer, "table": b"another"}))
    # a second pake, now that the code is proven, is out of turn
    with pytest.raises(BadHostMessage, match="out of turn"):
        copy.copy(joiner).receive(encode_payload(pake))
    (request,) = joiner.receive(encode_payload(offer))
    assert request["k"] == "request"


def test_what_a_stranger_without_the_code_sees() -> None:
    """Only the table id and a PAKE message: no settings, names or seats."""
    alice = Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    (pake,) = _sent(host.connected(1, Identity.generate().public, LOCAL, LOCAL, 10.0))
    assert set(pake) == {"k", "table", "m"} and decode_lobby_message(encode_payload(pake))
    assert b"Alice" not in encode_payload(pake)


def test_the_guess_limit_per_address_and_in_all() -> None:
    limit = GuessLimit()
    for i in range(CODE_TRIES):
        assert limit.blocked("10.0.0.1", float(i)) is None
        limit.wrong("10.0.0.1", float(i))
    assert "tries from 10.0.0.1" in (limit.blocked("10.0.0.1", 10.0) or "")
    assert limit.blocked("10.0.0.2", 10.0) is None  # another address is still answered
    assert limit.blocked("10.0.0.1", CODE_TRIES + CODE_BLOCK) is None  # for a while only
    limit = GuessLimit()
    for i in range(CODE_TRIES_TOTAL):
        limit.wrong(f"10.0.1.{i}", 1.0)
    assert "paused" in (limit.blocked("10.0.2.1", 2.0) or "")
    assert limit.blocked("10.0.2.1", 1.0 + CODE_WINDOW) is None


def test_the_host_machine_does_not_answer_a_blocked_address() -> None:
    alice = Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    for conn in range(1, CODE_TRIES + 1):
        stranger = LobbyJoinerMachine(
            Identity.generate(), alice.public, nickname="Eve", node_port=1, code=WRONG
        )
        (pake,) = _sent(host.connected(conn, stranger.identity.public, LOCAL, LOCAL, 10.0))
        (reply,) = stranger.receive(encode_payload(pake))
        assert _sent(host.receive(conn, encode_payload(reply), now=1.0))[0]["code"] == "code"
    assert host.answers(LOCAL, 2.0) is not None
    assert host.connected(99, alice.public, LOCAL, LOCAL, 10.0, now=2.0) == [Close(99)]
    assert host.answers("10.0.0.9", 2.0) is None


def test_codes() -> None:
    assert len(WORDS) == 256  # 10 000 x 256 codes: about 2^21.3
    code = new_code()
    assert parse_code(code) == code and parse_code(code.upper().replace("-", "  ")) == code
    assert parse_code("walnut-4721") == "4721-walnut"
    for bad in ("", "4721", "walnut", "472-walnut", "4721-notaword", "4721 walnut x"):
        with pytest.raises(BadCode):
            parse_code(bad)
    with pytest.raises(ValueError):
        LobbyHostMachine(Identity.generate(), SETTINGS, 2, node_port=1, code="nope")


# --------------------------------------------------------------------- the commands


@pytest.mark.slow
def test_host_private_and_join_code_on_the_command_line(tmp_path) -> None:
    """``nodealer host --private`` prints a code; ``join --code`` with a wrong
    one is one line and seats nothing (the host shows the try); the right one
    plays the game. Processes on 127.0.0.1 only (--no-advertise, --connect)."""
    import os
    import re
    import subprocess
    import sys
    import time
    from pathlib import Path

    from table.seating import free_port

    root = Path(__file__).resolve().parent.parent
    port = free_port(LOCAL)

    def run(name: str, *args: str) -> tuple[subprocess.Popen, Path]:
        home = tmp_path / name
        home.mkdir()
        out = home / "out.txt"
        env = {**os.environ, "NODEALER_HOME": str(home), "PYTHONPATH": str(root)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui.cli", *args, "--headless", "--time-scale", "0.05"],
            env=env,
            cwd=root,
            stdout=out.open("w"),
            stderr=subprocess.STDOUT,
        )
        return proc, out

    host, host_out = run(
        "host", "host", "bluff", "--players", "2", "--interface", LOCAL, "--port", str(port),
        "--no-advertise", "--nickname", "Alice", "--unproven", "--private",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"code: (\d{4}-[a-z]+)", host_out.read_text())):
            assert time.monotonic() < deadline and host.poll() is None, host_out.read_text()
            time.sleep(0.2)
        code = found[1]
        digits, word = code.split("-")
        wrong = f"{(int(digits) + 1) % 10000:04d}-{word}"
        where = f"{LOCAL}:{port}"
        guest, guest_out = run("wrong", "join", "--connect", where, "--code", wrong)
        assert guest.wait(60) == 2
        lines = guest_out.read_text().strip().splitlines()
        assert lines[-1] == "nodealer join: wrong table code — check it with the host", lines
        deadline = time.monotonic() + 10
        while "wrong table code (try 1 of 5 from 127.0.0.1)" not in host_out.read_text():
            assert time.monotonic() < deadline, host_out.read_text()
            time.sleep(0.2)
        bad, bad_out = run("bad", "join", "--connect", where, "--code", "12-walnut")
        assert bad.wait(60) == 2 and "4 digits and a word" in bad_out.read_text()
        guest, guest_out = run("right", "join", "--connect", where, "--code", code.upper())
        assert guest.wait(240) == 0, guest_out.read_text()[-2000:]
        assert host.wait(240) == 0, host_out.read_text()[-2000:]
    finally:
        for proc in (host, guest):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


NAMESPACE_SCRIPT = r"""
set -eu
ip link set lo up
ip link set lo multicast on
ip route add 224.0.0.0/4 dev lo
test "$(ip -o link show | wc -l)" = 1   # nothing but loopback in here
export PYTHONPATH="$ROOT"
NODEALER_HOME="$TMP/fake" {py} -m tui.cli host bluff --players 2 --interface 127.0.0.1 \
    --name Party --nickname Alice --headless --unproven --time-scale 0.05 \
    > "$TMP/fake.txt" 2>&1 &
FAKE=$!
NODEALER_HOME="$TMP/host" {py} -m tui.cli host bluff --players 2 --interface 127.0.0.1 \
    --name Party --nickname Alice --headless --unproven --time-scale 0.05 --private \
    > "$TMP/host.txt" 2>&1 &
HOST=$!
for i in $(seq 100); do grep -q "code: " "$TMP/host.txt" && break; sleep 0.2; done
CODE=$(sed -n 's/^private table, code: \([0-9]*-[a-z]*\).*/\1/p' "$TMP/host.txt")
sleep 1
NODEALER_HOME="$TMP/guest" {py} -m tui.cli tables --seconds 3 --interface 127.0.0.1 \
    > "$TMP/tables.txt" 2>&1
NODEALER_HOME="$TMP/guest" {py} -m tui.cli join Party --code "$CODE" --interface 127.0.0.1 \
    --nickname Bob --headless --time-scale 0.05 > "$TMP/guest.txt" 2>&1
wait $HOST
kill $FAKE
"""


@pytest.mark.slow
@pytest.mark.netns
def test_join_code_finds_the_private_table_by_mdns_not_its_look_alike(tmp_path) -> None:
    """In a network namespace of its own (loopback only): a public look-alike
    with the same name and a private table are advertised; the listing says
    which is private, and ``join Party --code`` sits at the private one."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    if sys.platform != "linux" or shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs Linux network namespaces (unshare, ip)")
    probe = subprocess.run(["unshare", "-n", "--", "true"], capture_output=True, timeout=10)
    if probe.returncode != 0:
        pytest.skip("cannot create a network namespace here (unshare -n refused)")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "ROOT": str(root), "TMP": str(tmp_path)}
    run = subprocess.run(
        ["unshare", "-n", "--", "bash", "-c", NAMESPACE_SCRIPT.format(py=sys.executable)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    outputs = {p.name: p.read_text() for p in tmp_path.glob("*.txt")}
    assert run.returncode == 0, (run.stderr[-2000:], outputs)
    listed = outputs["tables.txt"].splitlines()
    assert sum("private (join --code)" in line for line in listed) == 1, outputs
    assert sum("Party" in line for line in listed) == 2, outputs
    assert "verify: clean" in outputs["guest.txt"] and "verify: clean" in outputs["host.txt"]
    assert "2/2 seated" not in outputs["fake.txt"], outputs  # the look-alike seated nobody


def test_the_advert_says_private_and_never_the_code() -> None:
    from p2p.discovery import TableAd

    ad = TableAd(b"\x01" * 16, "bluff", 1, 2, Identity.generate().fingerprint, LOCAL, 4000)
    private = TableAd(**{**ad.__dict__, "private": True})
    assert b"priv=1" in private.txt() and b"priv" not in ad.txt()
    assert TableAd.from_txt(private.txt(), LOCAL, 4000).private
    assert not TableAd.from_txt(ad.txt(), LOCAL, 4000).private
    assert "private (join --code)" in str(private) and "private" not in str(ad)


def _stranger(host_key: Any, code: str = WRONG) -> LobbyJoinerMachine:
    return LobbyJoinerMachine(Identity.generate(), host_key, nickname="Eve", node_port=1, code=code)


def test_parallel_connections_get_no_more_tries_than_the_limit() -> None:
    """B1: a try is counted when the host sends pake, so six connections
    opened together from one address before any reply get five pake (five
    wrong-code refusals at most) and the sixth no pake at all."""
    alice = Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    strangers, pakes = {}, {}
    for conn in range(1, CODE_TRIES + 2):
        strangers[conn] = _stranger(alice.public)
        effects = host.connected(conn, strangers[conn].identity.public, LOCAL, LOCAL, 60.0, 1.0)
        pakes[conn] = [m for m in _sent(effects) if m["k"] == "pake"]
    assert all(len(pakes[c]) == 1 for c in range(1, CODE_TRIES + 1))
    assert pakes[CODE_TRIES + 1] == []  # the sixth: no pake
    refusals = 0
    for conn in range(1, CODE_TRIES + 1):
        (reply,) = strangers[conn].receive(encode_payload(pakes[conn][0]))
        sent = _sent(host.receive(conn, encode_payload(reply), now=2.0))
        refusals += sent == [lobby_message("refused", code="code", text=WRONG_CODE)]
    assert refusals == CODE_TRIES and host.guesses.total == CODE_TRIES
    # no more from there, however the connections are timed
    assert host.answers(LOCAL, 3.0) is not None


def test_a_right_code_gives_its_try_back_and_an_unfinished_one_keeps_it() -> None:
    alice, bob = Identity.generate(), Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    # four connections that never answer: each keeps its try
    for conn in range(1, CODE_TRIES):
        assert _sent(host.connected(conn, Identity.generate().public, LOCAL, LOCAL, 5.0, 1.0))
    host.disconnected(1, 2.0)
    host.tick(6.0)  # the other three time out mid-exchange
    assert [a.outcome for a in host.guesses.attempts] == ["unfinished"] * (CODE_TRIES - 1)
    # the fifth knows the code: its try is given back, the address is still answered
    joiner = LobbyJoinerMachine(bob, alice.public, nickname="Bob", node_port=41000, code=CODE)
    (pake,) = _sent(host.connected(9, bob.public, LOCAL, LOCAL, 60.0, 7.0))
    assert host.answers(LOCAL, 7.0) is not None  # spent while the exchange runs
    (reply,) = joiner.receive(encode_payload(pake))
    ok, offer = _sent(host.receive(9, encode_payload(reply), now=8.0))
    assert ok["k"] == "pake-ok" and offer["k"] == "lobby"
    assert host.answers(LOCAL, 8.0) is None and host.guesses.total == CODE_TRIES - 1
    host.disconnected(9, 9.0)  # after the code was proven: no try counted
    assert host.guesses.total == CODE_TRIES - 1


def _spend_every_try(host: LobbyHostMachine, host_key: Any, now: float = 1.0) -> None:
    """CODE_TRIES_TOTAL wrong codes, CODE_TRIES from each of a few addresses."""
    conn = 100
    for i in range(CODE_TRIES_TOTAL):
        conn += 1
        address = f"10.0.9.{i // CODE_TRIES}"
        stranger = _stranger(host_key)
        (pake,) = _sent(
            host.connected(conn, stranger.identity.public, address, LOCAL, now + 60, now)
        )
        (reply,) = stranger.receive(encode_payload(pake))
        assert _sent(host.receive(conn, encode_payload(reply), now=now))[0]["code"] == "code"


def test_a_paused_table_says_so_to_a_friend_with_the_right_code() -> None:
    """B2: every address's tries spent, a friend from a fresh address is told
    the table is paused and for how long (not a closed connection)."""
    alice, bob = Identity.generate(), Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    _spend_every_try(host, alice.public)
    assert host.answers("10.0.8.1", 61.0) is None  # the handshake is answered ...
    effects = host.connected(1, bob.public, "10.0.8.1", LOCAL, 90.0, 61.0)
    (refusal,) = _sent(effects)  # ... and the paused table says so
    assert refusal == lobby_message(
        "refused",
        code="code",
        text="this table is paused after too many wrong codes: try again in 240 s",
    )
    assert effects[-1] == Close(1) and host.guesses.total == CODE_TRIES_TOTAL
    joiner = LobbyJoinerMachine(bob, alice.public, nickname="Bob", node_port=41000, code=CODE)
    with pytest.raises(WrongCode, match="paused after too many wrong codes: try again in 240 s"):
        joiner.receive(encode_payload(refusal))
    # once the window has passed, the friend is answered again
    (pake,) = _sent(host.connected(2, bob.public, "10.0.8.1", LOCAL, 400.0, 1.0 + CODE_WINDOW))
    assert pake["k"] == "pake"


@pytest.mark.trio
async def test_a_paused_table_over_tcp_tells_the_joiner() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _host(nursery, out, code=CODE)
        _spend_every_try(lobby.machine, lobby.machine.identity.public, trio.current_time())
        with pytest.raises(WrongCode, match="paused after too many wrong codes: try again in"):
            await _join(lobby.port, code=CODE)
        assert lobby.state.taken == 1
        nursery.cancel_scope.cancel()


def test_the_host_screen_lists_counted_tries_only(capsys: pytest.CaptureFixture[str]) -> None:
    """B4: a malformed PAKE point is a counted try and is printed; a
    ``refused`` whose text mimics the wrong-code line is not."""
    alice = Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    assert _sent(host.connected(1, Identity.generate().public, "10.0.0.5", LOCAL, 60.0, 1.0))
    bad = lobby_message("pake-reply", m=b"\x00" * 33, mac=bytes(32))  # not a point
    assert _sent(host.receive(1, encode_payload(bad), now=2.0))[0]["code"] == "code"
    shown = print_attempts(host.guesses, 0)
    first = capsys.readouterr().err
    assert first == "lobby: wrong table code (try 1 of 5 from 10.0.0.5)\n"
    # a connection that mimics the line in its own refusal: nothing printed
    # as a wrong code (its unfinished exchange is counted, and said so)
    _sent(host.connected(2, Identity.generate().public, "10.0.0.6", LOCAL, 60.0, 3.0))
    fake = lobby_message("refused", code="code", text="wrong table code (try 1 of 5 from 10.0.0.7)")
    host.receive(2, encode_payload(fake), now=4.0)
    assert any("10.0.0.7" in e for e in host.errors)  # in the log, as what they said
    shown = print_attempts(host.guesses, shown)
    second = capsys.readouterr().err
    assert "10.0.0.7" not in second and "wrong table code" not in second
    assert second == f"lobby: {attempt_line(host.guesses.attempts[-1])}\n"
    assert "not finished (try 1 of 5 from 10.0.0.6)" in second and shown == 2


def test_the_joiner_takes_only_the_code_exchange_while_proving() -> None:
    """While the code is being proven a lobby is out of turn (it would skip
    the host's proof), whatever table id it names."""
    alice, bob = Identity.generate(), Identity.generate()
    host = LobbyHostMachine(alice, SETTINGS, 2, node_port=40000, code=CODE)
    joiner = LobbyJoinerMachine(bob, alice.public, nickname="Bob", node_port=41000, code=CODE)
    (pake,) = _sent(host.connected(1, bob.public, LOCAL, LOCAL, 10.0))
    joiner.receive(encode_payload(pake))
    assert joiner.stage == "proving"
    with pytest.raises(BadHostMessage, match="out of turn"):
        copy.copy(joiner).receive(encode_payload(host.lobby_msg()))
    with pytest.raises(BadHostMessage, match="out of turn"):
        copy.copy(joiner).receive(encode_payload(pake))  # a second pake
