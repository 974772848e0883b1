"""Spectators as a lobby setting (protocol.md §4, §4.1, §8): the host's
watch port and limit in every ``lobby``, the spectator count in
``watching``, and both in the mDNS advert's TXT. Real TCP on 127.0.0.1."""

from __future__ import annotations

from functools import partial

import pytest
import trio

from p2p.advert import BadAdvertisement, TableAd
from p2p.lobby import SettingsChanged
from p2p.lobby.messages import decode_lobby_message, lobby_message
from p2p.wire import SchemaError, encode_payload
from tests.test_lobby import SETTINGS, _run_join, _start_host, wait_until

FP = "K3QF-7ZPA-M2XD-4RTY"


@pytest.mark.trio
async def test_every_seat_sees_the_spectator_setting_and_count_in_the_lobby() -> None:
    out: dict = {}
    seen: dict[str, list] = {"bob": [], "carol": []}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 4, watch=(4100, 4))
        assert lobby.state.watch == (4100, 4) and lobby.state.watching == 0
        for count, name in enumerate(("bob", "carol"), start=1):
            nursery.start_soon(partial(_run_join, out, name, lobby.port, name.title(),
                                       on_change=seen[name].append))  # fmt: skip
            await wait_until(lambda c=count: lobby.state.taken == c + 1)
            lobby.set_watching(count)  # one more spectator came
            assert lobby.state.watching == count
            await wait_until(lambda n=name, c=count: seen[n][-1].watching == c)
        lobby.start()
        await wait_until(lambda: "bob" in out and "carol" in out, 10)
    assert seen["carol"][0].taken == 2 and seen["carol"][0].watching == 0  # the offer
    for name in ("bob", "carol"):
        assert not isinstance(out[name], Exception), out[name]
        states = seen[name]
        assert all(s.watch == (4100, 4) for s in states)
        assert any(s.watching >= 1 for s in states)  # told while seated
    assert seen["carol"][-1].watching == 2
    assert any(st.watching == 1 for st in seen["carol"])  # seated after Bob's spectator came
    # the host's count never goes out after the start
    assert lobby.machine.set_watching(3) == []


@pytest.mark.trio
async def test_a_table_without_spectators_says_nothing_of_them() -> None:
    out: dict = {}
    seen: list = []
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 2)
        assert lobby.machine.lobby_msg().keys() == {"k", "v", "table", "settings", "total",
                                                     "min", "players"}  # fmt: skip
        assert lobby.machine.set_watching(1) == []
        nursery.start_soon(partial(_run_join, out, "bob", lobby.port, "Bob",
                                   on_change=seen.append))  # fmt: skip
        await wait_until(lambda: "bob" in out, 10)
    assert all(s.watch is None and s.watching == 0 for s in seen)


@pytest.mark.trio
async def test_a_host_that_changes_the_spectator_setting_after_a_seat_requested_is_left() -> None:
    out: dict = {}
    async with trio.open_nursery() as nursery:
        lobby = await _start_host(nursery, out, 4, watch=(4100, 4))
        nursery.start_soon(partial(_run_join, out, "bob", lobby.port, "Bob"))
        await wait_until(lambda: lobby.state.taken == 2)
        lobby.machine.watch = (4100, 64)  # an audience bigger than the one Bob sat down with
        nursery.start_soon(partial(_run_join, out, "carol", lobby.port, "Carol"))
        await wait_until(lambda: "bob" in out)  # Carol's seat sends Bob a new lobby
        nursery.cancel_scope.cancel()
    assert isinstance(out["bob"], SettingsChanged)


def test_the_lobby_messages_check_the_watch_fields() -> None:
    fields = {"v": 2, "table": b"t" * 16, "settings": SETTINGS, "total": 3, "min": 2,
              "players": [{"seat": 0, "nick": "Alice", "fp": FP}]}  # fmt: skip
    ok = lobby_message("lobby", **fields, watch={"port": 4100, "max": 4})
    assert decode_lobby_message(encode_payload(ok))["watch"] == {"port": 4100, "max": 4}
    for bad in ({"port": 0, "max": 4}, {"port": 4100, "max": 0}, {"port": 4100, "max": 65},
                {"port": 4100}, {"port": 4100, "max": 4, "n": 1}, 4100):  # fmt: skip
        with pytest.raises(SchemaError):
            lobby_message("lobby", **fields, watch=bad)
    assert lobby_message("watching", n=3)["n"] == 3
    for bad_n in (-1, 65, "1"):
        with pytest.raises(SchemaError):
            lobby_message("watching", n=bad_n)
    with pytest.raises(SchemaError):  # only a lobby carries the setting
        lobby_message("watching", n=1, watch={"port": 4100, "max": 4})


def test_the_advert_carries_the_watch_port_the_limit_and_whether_it_plays() -> None:
    ad = TableAd(b"\x01" * 8, "bluff", 3, 3, FP, "10.0.0.2", 4000, watch_port=4100, spectators=4)
    back = TableAd.from_txt(ad.txt(), "10.0.0.2", 4000)
    assert back == ad and back.watch_hostport is not None
    assert str(back.watch_hostport) == "10.0.0.2:4100"
    assert b"\x06w=4100\x06wmax=4" in ad.txt()
    playing = TableAd.from_txt(ad.__class__(**{**ad.__dict__, "playing": True}).txt(),
                               "10.0.0.2", 4000)  # fmt: skip
    assert playing.playing and not playing.takes_seats
    plain = TableAd(b"\x01" * 8, "bluff", 1, 3, FP, "10.0.0.2", 4000)
    assert b"w=" not in plain.txt() and plain.watch_hostport is None and plain.takes_seats
    base = plain.txt()
    for extra in (
        b"\x06w=4100",
        b"\x06wmax=4",
        b"\x03w=0\x06wmax=4",
        b"\x07w=99999\x06wmax=4",
        b"\x06w=4100\x07wmax=99",
        b"\x06w=4100\x06wmax=0",
    ):
        with pytest.raises(BadAdvertisement):
            TableAd.from_txt(base + extra, "10.0.0.2", 4000)
    assert TableAd.from_txt(base + b"\x06play=0", "10.0.0.2", 4000).playing is False
