"""Discovery: the TXT wire form, HOST:PORT parsing, event tracking, and real mDNS.

Everything here runs in-process WITHOUT zeroconf, except ``test_mdns_*``, which
runs zeroconf only in a child process inside a fresh network namespace
(``unshare -n``, loopback only; see tests/discovery_ns_check.py).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p.discovery import (
    MAX_SEATS,
    MAX_TXT_BYTES,
    PROTOCOL_VERSION,
    AdReport,
    BadAdvertisement,
    BadHostPort,
    Change,
    DiscoveryError,
    HostPort,
    ReportBridge,
    TableAd,
    TableTracker,
    _check_local,
    decode_txt,
    local_addresses,
    parse_hostport,
)
from tests.terminal import unshare_prefix as _unshare_prefix

HERE = Path(__file__).resolve().parent
NS_CHECK = HERE / "discovery_ns_check.py"

AD = TableAd(
    table_id=bytes.fromhex("1a2b3c4d5e6f7a8b"),
    game="mao",
    seats_taken=2,
    seats_total=5,
    host_fingerprint="K3QF-7ZPA-M2XD-4RTY",
    address="192.168.1.20",
    port=4000,
)


def txt(*items: bytes) -> bytes:
    return b"".join(bytes([len(item)]) + item for item in items)


GOOD_ITEMS = (
    b"txtvers=1",
    b"v=%d" % PROTOCOL_VERSION,
    b"tid=1a2b3c4d5e6f7a8b",
    b"game=mao",
    b"seats=2/5",
    b"fp=K3QF-7ZPA-M2XD-4RTY",
)


def with_item(key: bytes, item: bytes | None) -> bytes:
    """GOOD_ITEMS with the item for ``key`` replaced (or dropped when None)."""
    items = [i for i in GOOD_ITEMS if not i.startswith(key + b"=")]
    if item is not None:
        items.append(item)
    return txt(*items)


# --------------------------------------------------------------------------- TableAd


def test_ad_text_form_and_properties() -> None:
    assert str(AD) == "mao 2/5 seats, table 1a2b3c4d, host K3QF-7ZPA-M2XD-4RTY at 192.168.1.20:4000"
    assert AD.compatible and not AD.is_full
    assert AD.with_seats(5).is_full
    assert AD.hostport == HostPort("192.168.1.20", 4000)
    assert AD.instance_name == "nodealer mao 1a2b3c4d5e6f7a8b._nodealer._tcp.local."
    v6 = TableAd(b"\x01", "bluff", 0, 2, "K3QF-7ZPA", "fe80::1%eth0", 4000)
    assert str(v6.hostport) == "[fe80::1%eth0]:4000"
    later = PROTOCOL_VERSION + 1
    newer = TableAd(b"\x01" * 64, "mao", 0, 2, "K3QF-7ZPA-M2XD-4RTY", "10.0.0.1", 1, later)
    assert not newer.compatible and str(newer).endswith(f"(protocol {later})")


def test_docstring_examples_hold() -> None:
    import doctest

    import p2p.discovery

    assert doctest.testmod(p2p.discovery).failed == 0


def test_real_fingerprints_and_table_ids_fit_the_advert() -> None:
    from p2p.identity import fingerprint

    for _ in range(20):
        fp = fingerprint(os.urandom(32))
        ad = TableAd(os.urandom(64), "mao", 0, 10, fp, "10.0.0.1", 4000)
        assert TableAd.from_txt(ad.txt(), "10.0.0.1", 4000).host_fingerprint == fp


def test_txt_is_the_documented_bytes() -> None:
    assert AD.txt() == txt(*GOOD_ITEMS)
    assert TableAd.from_txt(AD.txt(), "192.168.1.20", 4000) == AD


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"table_id": "1a2b3c4d5e6f7a8b"}, "table id must be 1 to 64 bytes"),
        ({"table_id": b""}, "table id must be 1 to 64 bytes"),
        ({"table_id": b"x" * 65}, "table id must be 1 to 64 bytes"),
        ({"game": "Mao"}, "game"),
        ({"game": ""}, "game"),
        ({"host_fingerprint": "K3QF"}, "host fingerprint"),
        ({"host_fingerprint": "k3qf-7zpa-m2xd-4rty"}, "host fingerprint"),
        ({"host_fingerprint": "K3QF-7ZPA-M2XD-4RT1"}, "host fingerprint"),
        ({"host_fingerprint": b"K3QF-7ZPA"}, "host fingerprint"),
        ({"seats_taken": 6}, "seats taken 6"),
        ({"seats_taken": -1}, "seats taken"),
        ({"seats_total": 1, "seats_taken": 0}, f"2 to {MAX_SEATS} seats"),
        ({"seats_total": MAX_SEATS + 1}, f"2 to {MAX_SEATS} seats"),
        ({"seats_taken": True}, "must be an integer"),
        ({"protocol_version": 0}, "protocol version"),
        ({"address": "lan-box.local"}, "not an IPv4 or IPv6"),
        ({"address": "0.0.0.0"}, "cannot be connected"),
        ({"address": "224.0.0.251"}, "cannot be connected"),
        ({"port": 0}, "port"),
        ({"port": 65536}, "port"),
        ({"port": "4000"}, "port"),
    ],
)
def test_ad_rejects_bad_fields(changes: dict[str, object], message: str) -> None:
    fields = {
        "table_id": AD.table_id,
        "game": AD.game,
        "seats_taken": AD.seats_taken,
        "seats_total": AD.seats_total,
        "host_fingerprint": AD.host_fingerprint,
        "address": AD.address,
        "port": AD.port,
    } | changes
    with pytest.raises(BadAdvertisement, match=message):
        TableAd(**fields)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- TXT decoding


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (with_item(b"fp", None), "lacks fp"),
        (with_item(b"fp", b"fp"), "lacks fp"),  # a boolean key carries no value
        (txt(), "lacks v, tid, game, seats, fp"),
        (b"\x00", "lacks v"),
        (with_item(b"seats", b"seats=9/2"), "seats taken 9"),
        (with_item(b"seats", b"seats=02/5"), "not TAKEN/TOTAL"),
        (with_item(b"seats", b"seats=2 / 5"), "not TAKEN/TOTAL"),
        (with_item(b"seats", b"seats=0/1"), f"2 to {MAX_SEATS} seats"),
        (with_item(b"seats", b"seats=2/0"), "not TAKEN/TOTAL"),
        (with_item(b"v", b"v=0"), "not a protocol version"),
        (with_item(b"v", b"v=01"), "not a protocol version"),
        (with_item(b"v", b"v=99999"), "out of range"),
        (with_item(b"game", b"game=m\xc3\xa3o"), "not ASCII"),
        (with_item(b"game", b"game=<script>"), "game"),
        (with_item(b"tid", b"tid=" + b"a" * 130), "not 1 to 64 bytes in hex"),
        (with_item(b"tid", b"tid=abc"), "not 1 to 64 bytes in hex"),
        (with_item(b"tid", b"tid=1A2B"), "not 1 to 64 bytes in hex"),
        (with_item(b"fp", b"fp=K3QF 7ZPA"), "host fingerprint"),
        (txt(*GOOD_ITEMS) + b"\x10v=1", "truncated"),
        (txt(*GOOD_ITEMS, b"=x"), "empty or not printable"),
        (txt(*GOOD_ITEMS, b"k\x01y=x"), "empty or not printable"),
        (txt(*GOOD_ITEMS, *[b"pad=" + b"x" * 200] * 2), "over the 400 limit"),
    ],
)
def test_bad_txt_is_refused_with_a_reason(text: bytes, message: str) -> None:
    with pytest.raises(BadAdvertisement, match=message):
        TableAd.from_txt(text, "192.168.1.20", 4000)


def test_txt_keys_follow_rfc6763() -> None:
    # keys are case-insensitive, the first occurrence wins, unknown keys are ignored
    text = txt(
        b"V=%d" % PROTOCOL_VERSION,
        b"tid=1a2b3c4d5e6f7a8b",
        b"GAME=mao",
        b"game=bomb",
        b"seats=2/5",
        b"fp=K3QF-7ZPA-M2XD-4RTY",
        b"txtvers=1",
        b"flag",
        b"",
    )
    assert decode_txt(text)["game"] == "mao"
    assert decode_txt(text)["flag"] is None
    assert TableAd.from_txt(text, "192.168.1.20", 4000) == AD


def test_from_txt_checks_address_and_port() -> None:
    with pytest.raises(BadAdvertisement, match="not an IPv4 or IPv6"):
        TableAd.from_txt(AD.txt(), "not-an-ip", 4000)
    with pytest.raises(BadAdvertisement, match="port"):
        TableAd.from_txt(AD.txt(), "192.168.1.20", 0)


ads = st.builds(
    TableAd,
    table_id=st.binary(min_size=1, max_size=64),
    game=st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True),
    seats_taken=st.just(0),
    seats_total=st.integers(2, MAX_SEATS),
    host_fingerprint=st.from_regex(r"[A-Z2-7]{4}(-[A-Z2-7]{4}){1,15}", fullmatch=True),
    address=st.ip_addresses().filter(lambda a: not (a.is_unspecified or a.is_multicast)).map(str),
    port=st.integers(1, 65535),
    protocol_version=st.integers(1, 65535),
)


@settings(max_examples=200, deadline=None)
@given(ads, st.data())
def test_txt_round_trip(ad: TableAd, data: st.DataObject) -> None:
    ad = ad.with_seats(data.draw(st.integers(0, ad.seats_total)))
    text = ad.txt()
    assert len(text) <= MAX_TXT_BYTES
    assert TableAd.from_txt(text, ad.address, ad.port) == ad


def _txt_items() -> st.SearchStrategy[bytes]:
    near_valid = st.sampled_from([*GOOD_ITEMS, b"v=2", b"seats=5/2", b"fp", b"=", b"GAME=bomb"])
    return st.one_of(near_valid, st.binary(max_size=40))


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=600),
        st.lists(_txt_items(), max_size=12).map(lambda items: txt(*(i[:255] for i in items))),
    )
)
def test_untrusted_txt_never_crashes(text: bytes) -> None:
    try:
        ad = TableAd.from_txt(text, "10.1.2.3", 4000)
    except BadAdvertisement as exc:
        assert str(exc)
    else:
        # whatever is accepted re-encodes to an equivalent advert
        assert TableAd.from_txt(ad.txt(), ad.address, ad.port) == ad


# --------------------------------------------------------------------------- tracking


def test_tracker_turns_reports_into_events(caplog: pytest.LogCaptureFixture) -> None:
    tracker = TableTracker()
    name = AD.instance_name
    appeared = tracker.apply(AdReport(name, AD))
    assert appeared is not None and appeared.change is Change.APPEARED and appeared.ad == AD
    assert str(appeared).startswith("appeared: mao 2/5 seats")
    assert tracker.apply(AdReport(name, AD)) is None  # the same advert again: no news
    fuller = AD.with_seats(4)
    updated = tracker.apply(AdReport(name, fuller))
    assert updated is not None and updated.change is Change.UPDATED and updated.ad == fuller
    assert dict(tracker.tables) == {name: fuller}

    # an advert turning bad is dropped (with a logged reason) as if it vanished
    with caplog.at_level(logging.WARNING, logger="p2p.discovery"):
        gone = tracker.apply(AdReport(name, None, "seats taken 9 is not between 0 and 2"))
    assert gone is not None and gone.change is Change.VANISHED and gone.ad == fuller
    assert "seats taken 9" in caplog.text
    assert tracker.tables == {}
    assert tracker.apply(AdReport(name, None)) is None  # removal of an unknown name
    assert tracker.apply(AdReport("other", None, "bad")) is None


def test_tracker_keeps_a_table_through_a_transient_failure() -> None:
    tracker = TableTracker()
    tracker.apply(AdReport("t", AD))
    assert tracker.apply(AdReport("t", None, "no complete answer", transient=True)) is None
    assert dict(tracker.tables) == {"t": AD}
    assert tracker.apply(AdReport("new", None, "no answer", transient=True)) is None
    assert "new" not in tracker.tables


def test_tracker_bounds_the_list_and_logs_each_reason_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tracker = TableTracker(limit=2)
    assert tracker.apply(AdReport("a", AD)) is not None
    assert tracker.apply(AdReport("b", AD.with_seats(1))) is not None
    with caplog.at_level(logging.WARNING, logger="p2p.discovery"):
        for _ in range(5):
            assert tracker.apply(AdReport("c", AD)) is None
            assert tracker.apply(AdReport("evil", None, "TXT record lacks fp")) is None
    assert sorted(tracker.tables) == ["a", "b"]
    assert caplog.text.count("already listing 2 tables") == 1
    assert caplog.text.count("lacks fp") == 1
    # a listed table may still change when the list is full
    updated = tracker.apply(AdReport("b", AD.with_seats(3)))
    assert updated is not None and updated.change is Change.UPDATED


def test_local_address_check_binds_only() -> None:
    _check_local("127.0.0.1")  # loopback is always ours
    with pytest.raises(DiscoveryError, match="not an address of this machine"):
        _check_local("203.0.113.77")  # TEST-NET-3 (RFC 5737), not for real hosts


def test_local_addresses_lists_interfaces() -> None:
    everything = local_addresses(include_loopback=True)
    assert ("lo", "127.0.0.1") in everything
    without = local_addresses()
    assert all(address != "127.0.0.1" for _, address in without)
    assert set(without) <= set(everything)
    for _, address in everything:
        _check_local(address)  # each one can really be bound
    versions = [ipaddress.ip_address(address).version for _, address in everything]
    assert versions == sorted(versions)  # IPv4 first


@pytest.mark.trio
async def test_report_bridge_keeps_order_and_never_deadlocks_on_close() -> None:
    bridge = ReportBridge(buffer=4)
    done = threading.Event()

    def browser_thread() -> None:  # stands in for zeroconf's browser thread
        for i in range(100):
            bridge.deliver(AdReport(f"t{i}", None))
        done.set()

    thread = threading.Thread(target=browser_thread)
    thread.start()
    got = [(await bridge.reports.receive()).name for _ in range(10)]
    assert got == [f"t{i}" for i in range(10)]
    assert not done.is_set()  # the thread is held back by the full channel
    bridge.close()  # the browse block ends while the thread is blocked
    with trio.fail_after(10):
        await trio.to_thread.run_sync(thread.join)
    assert done.is_set()


# --------------------------------------------------------------------------- HOST:PORT


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("192.168.1.20:4000", "192.168.1.20", 4000),
        ("  10.0.0.1:1 ", "10.0.0.1", 1),
        ("[::1]:65535", "::1", 65535),
        ("[FE80::0001%eth0]:4000", "fe80::1%eth0", 4000),
        ("[::ffff:10.0.0.1]:4000", "::ffff:a00:1", 4000),
        ("lan-box.local:4000", "lan-box.local", 4000),
        ("lan-box.local.:4000", "lan-box.local.", 4000),
        ("localhost:4000", "localhost", 4000),
    ],
)
def test_parse_hostport(text: str, host: str, port: int) -> None:
    parsed = parse_hostport(text)
    assert parsed == HostPort(host, port)
    assert parse_hostport(str(parsed)) == parsed


def test_parse_hostport_default_port() -> None:
    assert parse_hostport("10.0.0.1", default_port=4000) == HostPort("10.0.0.1", 4000)
    assert parse_hostport("[::1]", default_port=4000) == HostPort("::1", 4000)
    assert parse_hostport("box", default_port=4000) == HostPort("box", 4000)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty address"),
        ("10.0.0.1", "missing ':PORT'"),
        ("10.0.0.1:", "port '' is not a number"),
        ("10.0.0.1:0", "not between 1 and 65535"),
        ("10.0.0.1:65536", "not between 1 and 65535"),
        ("10.0.0.1:+80", "not a number"),
        ("10.0.0.1:٣٣", "not a number"),
        ("::1:4000", "in brackets"),
        ("[::1", "missing ']'"),
        ("[::1]4000", "expected ':PORT'"),
        ("[10.0.0.1]:4000", "only for IPv6 addresses"),
        ("[lan-box]:4000", "not an IPv6 address"),
        ("1.2.3.999:80", "not an IP address or host name"),
        ("-bad-:80", "not an IP address or host name"),
        ("bad_name:80", "not an IP address or host name"),
        ("a..b:80", "not an IP address or host name"),
        ("0.0.0.0:80", "not an address one can connect to"),
        ("[::]:80", "not an address one can connect to"),
    ],
)
def test_parse_hostport_errors(text: str, message: str) -> None:
    with pytest.raises(BadHostPort, match=re.escape(message)):
        parse_hostport(text)


# HOST:PORT-shaped text, so some of it parses (arbitrary text never did:
# the round-trip branch was never reached)
_HOSTPORT_LIKE = st.builds(
    "{}{}{}".format,
    st.sampled_from(["", " "])
    | st.ip_addresses(v=4).map(str)
    | st.ip_addresses(v=6).map(lambda ip: f"[{ip}]")
    | st.from_regex(r"[a-z0-9][a-z0-9.-]{0,20}", fullmatch=True),
    st.sampled_from(["", ":", "::"]),
    st.integers(-5, 70_000).map(str) | st.text("0123456789x", max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | _HOSTPORT_LIKE)
def test_parse_hostport_never_crashes(text: str) -> None:
    try:
        parsed = parse_hostport(text)
    except BadHostPort as exc:
        assert str(exc)
    else:
        assert 1 <= parsed.port <= 65535
        assert parse_hostport(str(parsed)) == parsed


# --------------------------------------------------------------------------- real mDNS


def _netns() -> str:
    if not os.path.exists("/proc/self/ns/net"):
        pytest.skip("needs Linux network namespaces (/proc/self/ns/net)")
    return os.readlink("/proc/self/ns/net")


@pytest.mark.parametrize("with_netns", [True, False])
def test_ns_check_refuses_to_run_outside_a_namespace(with_netns: bool) -> None:
    args = [_netns()] if with_netns else []
    run = subprocess.run(
        [sys.executable, str(NS_CHECK), *args], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 3
    assert "refusing to run" in run.stderr
    assert ("caller's network namespace" in run.stderr) == with_netns
    assert run.stdout == ""


@pytest.mark.netns
def test_mdns_advertise_browse_update_vanish() -> None:
    prefix = _unshare_prefix()
    run = subprocess.run(
        [*prefix, sys.executable, str(NS_CHECK), _netns()],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE.parent,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # only what the script made inside its own namespace
    assert result["interfaces"] == ["lo", "nd-guest", "nd-host"]

    expected = {
        "table_id": "00112233445566778899aabbccddeeff",
        "game": "bomb",
        "seats_taken": 1,
        "seats_total": 5,
        "host_fingerprint": "K3QF-7ZPA-M2XD-4RTY",
        "address": "127.0.0.1",
        "port": 40123,
        "protocol_version": PROTOCOL_VERSION,
        "name": "",
        "host_name": "",
        "proven": None,
        "private": False,
        "watch_port": None,
        "spectators": 0,
        "playing": False,
    }
    appeared = result["appeared"]
    assert appeared["change"] == "appeared"
    assert appeared["ad"] == expected
    assert appeared["name"] == "nodealer bomb 0011223344556677._nodealer._tcp.local."
    assert appeared["listed"] == [appeared["name"]]  # the hostile advert is not listed
    assert result["updated"] == {
        "change": "updated",
        "ad": expected | {"seats_taken": 3},
        "at": result["updated"]["at"],
    }
    assert result["vanished"]["change"] == "vanished"
    assert result["vanished"]["ad"]["seats_taken"] == 3
    assert result["vanished"]["listed"] == []
    assert result["vanished"]["at"] >= result["closed_at"]
    assert any(
        "evil._nodealer._tcp.local." in line and "seats taken 9" in line
        for line in result["ignored"]
    ), result["ignored"]

    # IPv6 across the namespace's veth pair: host on one end, browser on the other
    assert [e["change"] for e in result["ipv6"]] == ["appeared", "vanished"]
    assert result["ipv6"][0]["ad"]["address"] == "fd00:6e64::1"
    assert result["ipv6"][0]["ad"]["game"] == "bluff"
    assert ["nd-guest", "fd00:6e64::2"] in result["local_addresses"]
    assert ["nd-host", "fd00:6e64::1"] in result["local_addresses"]
    assert all(name != "lo" for name, _ in result["local_addresses"])
    assert result["nonlocal"].startswith("10.9.9.9 is not an address of this machine")

    # a host killed without goodbye vanishes (TTL 3 s + liveness probe), a live one stays
    crash = result["crash"]
    assert [e[1:] for e in crash["events"]] == [
        ["appeared", "bomb"],
        ["appeared", "mao"],
        ["vanished", "mao"],
    ] or [e[1:] for e in crash["events"]] == [
        ["appeared", "mao"],
        ["appeared", "bomb"],
        ["vanished", "mao"],
    ], crash
    assert crash["listed_after"] == ["bomb"]
    assert result["find_tables"] == ["bomb", "mao"]
    assert 1.5 <= crash["vanished_after_kill"] <= 11.5  # no goodbye: TTL + probe
    assert any("host stopped answering" in line for line in result["ignored"])

    # trio hosted on asyncio (the TUI's setup): same events, zeroconf off the host loop
    guest = result["guest"]
    assert [e["change"] for e in guest["events"]] == ["appeared", "vanished"]
    assert guest["events"][0]["ad"]["port"] == 40125
    assert guest["zeroconf_on_host_loop"] is False


def test_the_friendly_name_proofs_and_host_nickname_travel_in_the_txt() -> None:
    """Issue 11: the advert says the table's name (UTF-8), its host's
    nickname and whether deals are proven; a joiner names a table by any."""
    ad = replace(AD, name="Alice's Bluff table · 吹牛", host_name="Alice", proven=True)
    back = TableAd.from_txt(ad.txt(), "192.168.1.20", 4000)
    assert back == ad and b"txtvers=1" in ad.txt()
    assert ad.instance_name.startswith("Alice's Bluff table")
    assert "proven" in str(ad) and "Alice" in str(ad)
    for wanted in ("bluff table", "ALICE", AD.host_fingerprint, "1a2b3c"):
        assert back.matches(wanted), wanted
    assert not back.matches("bob") and not back.matches("")
    with pytest.raises(BadAdvertisement):
        replace(AD, name="x" * 64)
    with pytest.raises(BadAdvertisement):
        replace(AD, host_name="bad\nname")
    with pytest.raises(BadAdvertisement, match="UTF-8"):
        TableAd.from_txt(AD.txt() + b"\x04n=\xff\xfe", "192.168.1.20", 4000)
