"""Going back is whatever the player types (issue 27, item 8): a seat
killed mid-game that runs the same ``nodealer join --connect HOST:PORT``
again (the host's lobby, closed since the game began) goes back to the
table it holds, and the game ends clean for everyone."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
import trio

from p2p.envelope import TableSpec
from p2p.identity import Identity
from table.going_back import answers, held_at
from table.seating import GameSettings, HeldTable, free_port
from tests.test_lan import _wait_for, assert_one_clean_game, host, join


def _held(addresses: list[tuple[str, int]], name: str) -> HeldTable:
    ids = [Identity.generate() for _ in addresses]
    spec = TableSpec(secrets.token_bytes(8), tuple(i.public for i in ids))
    return HeldTable(spec, 1, GameSettings("bluff", 2, name=name), tuple(addresses), Path(name))


def test_the_held_table_is_found_by_a_seat_address_or_its_host() -> None:
    gone = free_port("127.0.0.1")  # nothing listens there: a lobby that closed
    newer = _held([("10.9.9.9", 4000), ("10.9.9.8", 4001)], "newer")
    older = _held([("127.0.0.1", 5000), ("127.0.0.2", 5001)], "older")
    # a game node's own address: that table, whatever answers
    assert held_at("10.9.9.8", 4001, [newer, older]) == [newer]
    # the closed lobby of the host at 127.0.0.1: the table played there
    assert held_at("127.0.0.1", gone, [newer, older]) == [older]
    # an address no held table knows, nothing there: the most recent table
    assert held_at("127.0.0.3", gone, [newer, older]) == [newer]
    assert held_at("127.0.0.1", gone, []) == []


@pytest.mark.trio
async def test_a_lobby_open_there_is_joined_not_a_held_table() -> None:
    (listener,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listener.socket.getsockname()[1]
    older = _held([("127.0.0.1", 5000), ("127.0.0.2", 5001)], "older")
    assert await trio.to_thread.run_sync(answers, "127.0.0.1", port)
    assert await trio.to_thread.run_sync(held_at, "127.0.0.1", port, [older]) == []
    await listener.aclose()


@pytest.mark.slow
def test_join_connect_again_goes_back_to_the_held_table(tmp_path) -> None:
    hosting = host(tmp_path, "bluff", 3, "--unproven")
    port = hosting.port  # type: ignore[attr-defined]
    joiners = [join(tmp_path, f"p{i}", port) for i in (1, 2)]
    victim = joiners[1]
    _wait_for(lambda: victim.text().count("\n  ") >= 8, victim)  # some moves were made
    victim.kill()
    again = join(tmp_path, victim.home.name, port)  # the same command, from the history
    assert_one_clean_game([hosting, joiners[0], again])
    text = again.text()
    assert "going back to" in text and "cannot reach" not in text, text[-2000:]
