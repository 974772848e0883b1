"""The host removes a seated player before the start (issue 29): with the
lobby messages that exist (``refused closed`` with the reason, then a new
``lobby`` to the others), on 127.0.0.1 only, public and private tables."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from p2p.identity import Identity
from p2p.lobby import LobbyError, Refused, Removed, SeatedTable, host_lobby, join_lobby
from p2p.lobby.machines import Close, LobbyHostMachine, Send
from p2p.lobby.messages import REMOVED, decode_lobby_message, lobby_message, request_message
from p2p.wire import encode_payload

LOCAL = "127.0.0.1"
SETTINGS = {"game": "bomb", "seats": 3, "config": None, "proven": True, "name": "Ann's table"}
CODE = "4721-walnut"


async def _wait_for(check: Any, timeout: float = 10) -> None:
    with trio.fail_after(timeout):
        while not check():
            await trio.sleep(0.02)


async def _join(port: int, identity: Identity, nick: str, **kw: Any) -> SeatedTable:
    with trio.fail_after(20):
        return await join_lobby(
            identity, LOCAL, port, nickname=nick, node_port=41000, expect_settings=SETTINGS, **kw
        )


@pytest.mark.trio
@pytest.mark.parametrize("code", [None, CODE])
async def test_the_host_removes_a_seated_player_who_is_told_why(code: str | None) -> None:
    bob, carol, dave = Identity.generate(), Identity.generate(), Identity.generate()
    out: dict[str, Any] = {}
    seen: dict[str, list[Any]] = {"carol": []}
    async with trio.open_nursery() as nursery:

        async def host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            out["host"] = await host_lobby(
                Identity.generate(), SETTINGS, 4, node_port=40000, nickname="Ann",
                code=code, task_status=task_status,
            )  # fmt: skip

        lobby = await nursery.start(host)

        async def bob_joins() -> None:
            try:
                await _join(lobby.port, bob, "Bob", code=code)
            except Removed as exc:
                out["bob"] = exc

        async def carol_joins() -> None:
            out["carol"] = await _join(
                lobby.port, carol, "Carol", code=code, on_change=seen["carol"].append
            )

        nursery.start_soon(bob_joins)
        await _wait_for(lambda: lobby.state.taken == 2)
        nursery.start_soon(carol_joins)
        await _wait_for(lambda: lobby.state.taken == 3 and len(seen["carol"]) > 0)
        assert lobby.remove(bob.public.fingerprint)
        await _wait_for(lambda: "bob" in out)
        assert isinstance(out["bob"], Removed)
        assert str(out["bob"]) == "the host removed you from the table"
        assert [p.nickname for p in lobby.state.players] == ["Ann", "Carol"]
        # Carol moved up to seat 1 and was told so
        await _wait_for(lambda: [p.nickname for p in seen["carol"][-1].players] == ["Ann", "Carol"])
        assert not lobby.remove(bob.public.fingerprint)  # gone already
        # Bob's key is not seated again: refused before any code or offer (at
        # a private table he cannot believe who said it: nothing was proven)
        with pytest.raises(LobbyError) as again:
            await _join(lobby.port, bob, "Bob", code=code)
        if code is None:
            assert isinstance(again.value, Removed)
        else:
            assert isinstance(again.value, Refused)
            assert "before proving it knows the table code" in str(again.value)
        assert lobby.state.taken == 2
        assert sum("the host removed you from the table" in e for e in lobby.errors) == 2
        # someone else takes the seat and the host starts with the three
        nursery.start_soon(lambda: _join(lobby.port, dave, "Dave", code=code))
        await _wait_for(lambda: lobby.state.taken == 3)
        lobby.start()
    assert out["host"].nicknames == ("Ann", "Carol", "Dave")
    assert out["carol"].seat == 1


def test_remove_is_a_refusal_and_a_new_lobby_on_the_wire() -> None:
    """No new message: the removed joiner gets ``refused closed`` with the
    reason and is closed; the others get a ``lobby`` without it."""
    ann, bob, carol = Identity.generate(), Identity.generate(), Identity.generate()
    host = LobbyHostMachine(ann, SETTINGS, 3, node_port=40000, nickname="Ann")
    for conn, who, nick in ((1, bob, "Bob"), (2, carol, "Carol")):
        (offer,) = [e.msg for e in host.connected(conn, who.public, LOCAL, LOCAL, 10.0)]
        request = request_message(who, offer["table"], host.digest, nick, 41000)
        host.receive(conn, encode_payload(request), 0.0)
    assert host.taken == 3 and host.spec is not None  # full: the spec is out
    effects = host.remove(bob.public.fingerprint, 1.0)
    sends = [(e.conn, e.msg) for e in effects if isinstance(e, Send)]
    assert sends[0] == (1, lobby_message("refused", code="closed", text=REMOVED))
    assert any(isinstance(e, Close) and e.conn == 1 for e in effects)
    (to_carol,) = [m for c, m in sends if c == 2]
    assert decode_lobby_message(encode_payload(to_carol))["k"] == "lobby"
    assert [p["nick"] for p in to_carol["players"]] == ["Ann", "Carol"]
    assert host.spec is None and host.taken == 2  # the spec in flight is void
    # an unknown fingerprint, or one removed already, changes nothing
    assert host.remove(bob.public.fingerprint, 2.0) == []
    assert host.remove(ann.public.fingerprint, 2.0) == []  # the host holds no removable seat
    assert host.taken == 2


def _seat(host: LobbyHostMachine, conn: int, who: Identity, nick: str, now: float = 0.0) -> None:
    effects = host.connected(conn, who.public, LOCAL, LOCAL, now + 10.0, now)
    offer = next(e.msg for e in effects if isinstance(e, Send))
    request = request_message(who, offer["table"], host.digest, nick, 41000)
    host.receive(conn, encode_payload(request), now)


def test_a_removal_disarms_the_start_the_host_asked_for() -> None:
    """The host pressed s, then removed a player: whoever sits down next
    (the removed person with a new key, or anyone) does not start the table
    on their own; the waiting room says s starts it again."""
    from tui.screens.lobby import LobbyScreen

    ann, bob, carol = Identity.generate(), Identity.generate(), Identity.generate()
    host = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", min_seats=2)
    _seat(host, 1, bob, "Bob")
    host.request_start(0.5)
    assert host.spec is not None  # the start is under way: Bob stalls
    host.remove(bob.public.fingerprint, 1.0)
    assert not host.start_requested and host.spec is None
    _seat(host, 2, carol, "Carol", 1.1)
    assert host.taken == 2 and host.spec is None and host.phase.value == "open"
    screen = type("Fake", (), {"lang": "en", "hosting": True})()
    said = LobbyScreen._status_text(screen, host.state()).plain  # type: ignore[arg-type]
    assert "press s to start with the 2 seated" in said
    host.request_start(1.2)  # asked again: it starts
    assert host.spec is not None


def test_a_removal_disarms_the_start_even_with_enough_left() -> None:
    ann, bob, carol, dave = (Identity.generate() for _ in range(4))
    host = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", min_seats=2)
    _seat(host, 1, bob, "Bob")
    _seat(host, 2, carol, "Carol")
    host.request_start(0.5)
    host.remove(bob.public.fingerprint, 1.0)
    assert host.taken == 2 and host.spec is None and not host.start_requested
    _seat(host, 3, dave, "Dave", 1.1)
    assert host.taken == 3 and host.spec is None


def test_a_seat_lost_below_the_minimum_disarms_the_start() -> None:
    """A seat that leaves (not removed) while the start is under way: with
    ``min`` left the start goes on without it; with fewer it is forgotten."""
    ann, bob, carol, dave = (Identity.generate() for _ in range(4))
    host = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", min_seats=2)
    _seat(host, 1, bob, "Bob")
    _seat(host, 2, carol, "Carol")
    host.request_start(0.5)
    host.disconnected(2, 1.0)  # Carol leaves: Ann and Bob are enough, a new spec
    assert host.spec is not None and host.start_requested
    host.disconnected(1, 1.5)  # Bob leaves: Ann alone, the start is void
    assert host.spec is None and not host.start_requested
    _seat(host, 3, dave, "Dave", 2.0)
    assert host.taken == 2 and host.spec is None


@pytest.mark.parametrize("code", [None, CODE])
def test_a_removed_key_is_refused_before_the_code_and_the_offer(code: str | None) -> None:
    ann, bob = Identity.generate(), Identity.generate()
    host = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", code=code)
    first = host.connected(1, bob.public, LOCAL, LOCAL, 10.0)
    assert first[0].msg["k"] == ("lobby" if code is None else "pake")  # type: ignore[union-attr]
    if code is None:
        request = request_message(bob, host.table_id, host.digest, "Bob", 41000)
        host.receive(1, encode_payload(request), 0.0)
    else:  # seat him by hand: the code exchange is tested in test_private_table
        host.guests[1].pake, host.guests[1].nick = None, "Bob"
        host.seated.append(1)
    host.remove(bob.public.fingerprint, 1.0)
    tries = len(host.guesses.recent)
    again = host.connected(2, bob.public, LOCAL, LOCAL, 12.0, 2.0)
    assert again == [Send(2, lobby_message("refused", code="closed", text=REMOVED)), Close(2)]
    assert 2 not in host.guests and len(host.guesses.recent) == tries  # no try counted


def test_a_joiner_believes_removed_only_from_a_host_that_proved_the_code() -> None:
    """A look-alike without the code can send "the host removed you": at a
    private table the joiner believes it only after ``pake-ok``."""
    from p2p.lobby.machines import LobbyJoinerMachine
    from p2p.lobby.messages import refused

    ann, bob = Identity.generate(), Identity.generate()
    said = encode_payload(refused("closed", REMOVED))
    joiner = LobbyJoinerMachine(bob, ann.public, nickname="Bob", node_port=41000, code=CODE)
    with pytest.raises(LobbyError) as before:
        joiner.receive(said)
    assert not isinstance(before.value, Removed)
    assert "before proving it knows the table code" in str(before.value)
    # the real exchange, then the same words are believed
    host = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", code=CODE)
    joiner = LobbyJoinerMachine(bob, ann.public, nickname="Bob", node_port=41000, code=CODE)
    (pake,) = [e.msg for e in host.connected(1, bob.public, LOCAL, LOCAL, 10.0)]
    (reply,) = joiner.receive(encode_payload(pake))
    assert joiner.stage == "proving"
    with pytest.raises(LobbyError) as proving:
        joiner.receive(said)  # still proving: not believed
    assert not isinstance(proving.value, Removed)
    joiner = LobbyJoinerMachine(bob, ann.public, nickname="Bob", node_port=41000, code=CODE)
    host = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", code=CODE)
    (pake,) = [e.msg for e in host.connected(1, bob.public, LOCAL, LOCAL, 10.0)]
    (reply,) = joiner.receive(encode_payload(pake))
    ok = [e.msg for e in host.receive(1, encode_payload(reply), 0.0) if isinstance(e, Send)]
    for msg in ok:
        joiner.receive(encode_payload(msg))
    assert joiner.stage == "requested"
    with pytest.raises(Removed):
        joiner.receive(said)
    # a public table proves nothing either way: the words are taken as said
    joiner = LobbyJoinerMachine(bob, ann.public, nickname="Bob", node_port=41000)
    with pytest.raises(Removed):
        joiner.receive(said)


@pytest.mark.parametrize("started", [False, True])
def test_the_hosts_waiting_room_says_a_removal_called_the_start_off(started: bool) -> None:
    """The host's TUI (TableApp) notes the removal, and that its start is
    off when it had pressed s (the real host machine decides)."""
    from types import SimpleNamespace

    from tui.table_app import CALLED_OFF, TableApp

    ann, bob, carol = Identity.generate(), Identity.generate(), Identity.generate()
    machine = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", min_seats=2)
    _seat(machine, 1, bob, "Bob")
    _seat(machine, 2, carol, "Carol")
    if started:
        machine.request_start(0.5)
    class Lobby:  # p2p.lobby.LobbyHost's two calls, on the real machine
        @property
        def start_requested(self) -> bool:
            return machine.start_requested

        def remove(self, fingerprint: str) -> bool:
            return bool(machine.remove(fingerprint, 1.0))

    lobby = Lobby()
    notes: list[Any] = []
    app = SimpleNamespace(lobby=lobby, lobby_screen=SimpleNamespace(note=notes.append),
                          notify=lambda text: None, lang="en")  # fmt: skip
    TableApp._remove_in_trio(app, machine.players()[1])  # type: ignore[arg-type]
    said = [note("en") for note in notes]
    assert said == ["Bob was removed from the table"] + ([CALLED_OFF] if started else [])
    assert [note("zh") for note in notes][-1] == (
        "开始已取消：按 s 以剩下的人开始" if started else "Bob 已被请离牌桌"
    )


@pytest.mark.parametrize("code", [None, CODE])
def test_a_removal_closes_the_same_keys_other_connections(code: str | None) -> None:
    """A second connection with the removed key, offered the table (or
    proving the code) before the removal, is refused with it: it is never
    shown the table again, nor seated."""
    ann, bob, carol = Identity.generate(), Identity.generate(), Identity.generate()
    host = LobbyHostMachine(ann, SETTINGS, 4, node_port=40000, nickname="Ann", code=code)
    host.connected(1, bob.public, LOCAL, LOCAL, 10.0)
    if code is None:
        request = request_message(bob, host.table_id, host.digest, "Bob", 41000)
        host.receive(1, encode_payload(request), 0.0)
    else:  # seated by hand: the code exchange is tested in test_private_table
        host.guests[1].pake, host.guests[1].nick = None, "Bob"
        host.seated.append(1)
    host.connected(2, bob.public, LOCAL, LOCAL, 10.0)  # offered, or proving the code
    host.connected(3, carol.public, LOCAL, LOCAL, 10.0)  # someone else, not seated yet
    effects = host.remove(bob.public.fingerprint, 1.0)
    refusal = lobby_message("refused", code="closed", text=REMOVED)
    assert Send(2, refusal) in effects and Close(2) in effects
    assert set(host.guests) == {3} and host.taken == 1
    assert not any(isinstance(e, (Send, Close)) and e.conn == 3 for e in effects)
