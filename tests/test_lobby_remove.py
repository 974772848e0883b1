"""The host removes a seated player before the start (issue 29): with the
lobby messages that exist (``refused closed`` with the reason, then a new
``lobby`` to the others), on 127.0.0.1 only, public and private tables."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from p2p.identity import Identity
from p2p.lobby import Removed, SeatedTable, host_lobby, join_lobby
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
        # Bob's key is not seated again
        with pytest.raises(Removed):
            await _join(lobby.port, bob, "Bob", code=code)
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
