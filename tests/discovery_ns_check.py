"""Advertise and browse tables over real mDNS, inside a private network namespace.

Run only as ``unshare -n -- python tests/discovery_ns_check.py CALLER_NETNS``
where CALLER_NETNS is the caller's ``readlink /proc/self/ns/net``
(tests/test_discovery.py does that). Before anything else the script checks
that its own network namespace differs from the caller's and that loopback is
the ONLY interface it can see, i.e. that it runs in a fresh namespace, and
refuses to run otherwise (exit 3): mDNS must never reach a real network.
Inside the namespace it switches on multicast on lo and adds a veth pair
``nd-host``/``nd-guest`` (IPv6 ``fd00:6e64::1`` / ``::2``), which exist only in
this namespace and vanish with it. Then, with trio:

IPv4 on lo (host and browser bound to 127.0.0.1):
1. open a browser; publish a hostile advert straight through zeroconf (TXT
   seats ``9/2``), which the browser must ignore with a logged reason;
2. advertise a good table and wait for it to appear with the right fields;
3. update the seats taken and wait for the update;
4. close the advertisement and wait for the table to vanish.

IPv6 across the veth pair (host bound to ``nd-host``'s address, browser to
``nd-guest``'s): the table appears and vanishes.

Advertising on an address this machine does not have fails with a clear error.

A host process killed without a goodbye (records with a 3 s TTL) vanishes
from the browser, while a live host with the same TTL stays listed.

Finally the IPv4 appear/vanish again with trio as a guest on an asyncio loop
(as in the TUI): zeroconf must still run on its own loop thread.

It prints one JSON line describing what it saw; the test asserts on it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STEP_TIMEOUT = 15.0
HOST_V6 = "fd00:6e64::1"
GUEST_V6 = "fd00:6e64::2"


def current_netns() -> str:
    return os.readlink("/proc/self/ns/net")


def refusal(outside_netns: str | None, fresh: bool = True) -> str | None:
    """Why this process must not run zeroconf here, or None when it may."""
    if outside_netns is None:
        return "usage: discovery_ns_check.py NETNS_OF_THE_CALLER (from /proc/self/ns/net)"
    if current_netns() == outside_netns:
        return "still in the caller's network namespace; run me inside `unshare -n` only"
    if fresh and [name for _, name in socket.if_nameindex()] != ["lo"]:
        return "interfaces other than lo are visible; run me in a fresh namespace only"
    return None


def set_up_namespace() -> None:
    for cmd in (
        ["ip", "link", "set", "lo", "up"],
        ["ip", "link", "set", "lo", "multicast", "on"],
        ["ip", "route", "add", "224.0.0.0/4", "dev", "lo"],
        ["ip", "link", "add", "nd-host", "type", "veth", "peer", "name", "nd-guest"],
        ["ip", "-6", "addr", "add", f"{HOST_V6}/64", "dev", "nd-host", "nodad"],
        ["ip", "-6", "addr", "add", f"{GUEST_V6}/64", "dev", "nd-guest", "nodad"],
        ["ip", "link", "set", "nd-host", "up"],
        ["ip", "link", "set", "nd-guest", "up"],
    ):
        subprocess.run(cmd, check=True, capture_output=True)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _fields(ad: Any) -> dict[str, object]:
    fields = asdict(ad)
    fields["table_id"] = fields["table_id"].hex()
    return fields


async def _wait_link_local(address: str) -> None:
    """The veth addresses are usable at once (nodad), but the links need a moment."""
    import trio

    for _ in range(100):
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as probe:
                probe.bind((address, 0))
            return
        except OSError:
            await trio.sleep(0.05)


async def ipv4_scenario(result: dict[str, object], t0: float) -> None:
    import trio
    from zeroconf import ServiceInfo

    from p2p import discovery
    from p2p.discovery import Change, TableAd, advertise, browse

    def stamp() -> float:
        return round(time.monotonic() - t0, 3)

    ad = TableAd(
        table_id=bytes.fromhex("00112233445566778899aabbccddeeff"),
        game="bomb",
        seats_taken=1,
        seats_total=5,
        host_fingerprint="K3QF-7ZPA-M2XD-4RTY",
        address="127.0.0.1",
        port=40123,
    )
    async with browse(interface="127.0.0.1") as tables:
        # A hostile advert: well-formed DNS-SD, nonsense TXT.
        hostile_zc = await trio.to_thread.run_sync(discovery._open_zeroconf, "127.0.0.1")
        hostile = ServiceInfo(
            discovery.SERVICE_TYPE,
            f"evil.{discovery.SERVICE_TYPE}",
            port=1,
            properties=(
                b"\x03v=1\x0ctid=ffffffff\x08game=mao\x09seats=9/2\x16fp=AAAA-BBBB-CCCC-DDDD"
            ),
            server="evil.local.",
            parsed_addresses=["127.0.0.1"],
        )
        await trio.to_thread.run_sync(hostile_zc.register_service, hostile)
        result["hostile_registered_at"] = stamp()
        try:
            async with advertise(ad) as advert:
                result["advertised_at"] = stamp()
                with trio.fail_after(STEP_TIMEOUT):
                    event = await tables.__anext__()
                result["appeared"] = {
                    "change": event.change.value,
                    "name": event.name,
                    "ad": _fields(event.ad),
                    "text": str(event.ad),
                    "at": stamp(),
                    "listed": sorted(tables.tables),
                }
                await advert.update(seats_taken=3)
                with trio.fail_after(STEP_TIMEOUT):
                    event = await tables.__anext__()
                result["updated"] = {
                    "change": event.change.value,
                    "ad": _fields(event.ad),
                    "at": stamp(),
                }
            result["closed_at"] = stamp()
            with trio.fail_after(STEP_TIMEOUT):
                event = await tables.__anext__()
            result["vanished"] = {
                "change": event.change.value,
                "ad": _fields(event.ad),
                "at": stamp(),
                "listed": sorted(tables.tables),
            }
            assert event.change is Change.VANISHED
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(hostile_zc.close)
    result["browser_closed_at"] = stamp()


async def ipv6_scenario(result: dict[str, object]) -> None:
    import trio

    from p2p.discovery import TableAd, advertise, browse

    await _wait_link_local(HOST_V6)
    await _wait_link_local(GUEST_V6)
    ad = TableAd(bytes(range(16)), "bluff", 1, 2, "K3QF-7ZPA-M2XD-4RTY", HOST_V6, 40124)
    seen = []
    async with browse(interface=GUEST_V6) as tables:
        async with advertise(ad):
            with trio.fail_after(STEP_TIMEOUT):
                seen.append(await tables.__anext__())
        with trio.fail_after(STEP_TIMEOUT):
            seen.append(await tables.__anext__())
    result["ipv6"] = [{"change": e.change.value, "ad": _fields(e.ad)} for e in seen]


async def nonlocal_scenario(result: dict[str, object]) -> None:
    from p2p.discovery import DiscoveryError, TableAd, advertise

    ad = TableAd(b"\x07" * 8, "mao", 0, 4, "K3QF-7ZPA-M2XD-4RTY", "10.9.9.9", 4000)
    try:
        async with advertise(ad):
            result["nonlocal"] = "advertised on an address we do not have"
    except DiscoveryError as exc:
        result["nonlocal"] = str(exc)


async def guest_scenario(host_loop: Any) -> dict[str, object]:
    """The TUI's way: trio as a guest on an asyncio loop, zeroconf still off-loop."""
    import trio

    from p2p.discovery import TableAd, advertise, browse

    ad = TableAd(b"\x05" * 8, "mao", 2, 6, "K3QF-7ZPA-M2XD-4RTY", "127.0.0.1", 40125)
    seen = []
    async with browse(interface="127.0.0.1") as tables:
        async with advertise(ad) as advert:
            with trio.fail_after(STEP_TIMEOUT):
                seen.append(await tables.__anext__())
            zeroconf_loop = advert._zc.loop
        with trio.fail_after(STEP_TIMEOUT):
            seen.append(await tables.__anext__())
    return {
        "events": [{"change": e.change.value, "ad": _fields(e.ad)} for e in seen],
        "zeroconf_on_host_loop": zeroconf_loop is host_loop,
    }


def run_guest_scenario() -> dict[str, object]:
    import asyncio

    from tui.guest import run_trio_guest

    async def host() -> dict[str, object]:
        return await run_trio_guest(guest_scenario, asyncio.get_running_loop())

    return asyncio.run(host())


CRASH_TTL = 3  # seconds; short so the test sees a crashed host vanish quickly


async def crashing_host() -> None:
    """Child process: advertise until SIGKILLed (no goodbye ever sent)."""
    import trio

    from p2p.discovery import TableAd, advertise

    ad = TableAd(b"\xcc" * 8, "mao", 1, 3, "K3QF-7ZPA-M2XD-4RTY", "127.0.0.1", 40126)
    async with advertise(ad, ttl=CRASH_TTL):
        await trio.sleep_forever()


async def crash_scenario(result: dict[str, object], outside_netns: str) -> None:
    """A host killed without goodbye vanishes; a live host with the same TTL stays."""
    import trio

    from p2p.discovery import Change, TableAd, advertise, browse, find_tables

    live = TableAd(b"\xdd" * 8, "bomb", 2, 4, "K3QF-7ZPA-M2XD-4RTY", "127.0.0.1", 40127)
    events: list[tuple[float, str, str]] = []
    async with browse(interface="127.0.0.1", liveness_interval=1.0) as tables:
        async with advertise(live, ttl=CRASH_TTL):
            child = await trio.lowlevel.open_process(
                [sys.executable, __file__, outside_netns, "--crashing-host"]
            )
            try:
                with trio.fail_after(STEP_TIMEOUT):
                    while len(tables.tables) < 2:
                        event = await tables.__anext__()
                        events.append((0.0, event.change.value, event.ad.game))
                # a second, one-shot browser sees both tables too
                found = await find_tables(2.0, interface="127.0.0.1")
                result["find_tables"] = [ad.game for ad in found]
                child.kill()
                await child.wait()
                killed = time.monotonic()
                # watch for 3 TTLs and more: the dead host must go, the live one must stay
                with trio.move_on_after(4 * CRASH_TTL):
                    async for event in tables:
                        at = round(time.monotonic() - killed, 1)
                        events.append((at, event.change.value, event.ad.game))
            finally:
                if child.returncode is None:
                    child.kill()
                    await child.wait()
            result["crash"] = {
                "events": events,
                "listed_after": sorted(ad.game for ad in tables.tables.values()),
                "vanished_after_kill": next(
                    (at for at, change, game in events if change == Change.VANISHED.value),
                    None,
                ),
            }


async def scenario(outside_netns: str) -> dict[str, object]:
    ignored = _Collect()
    logging.getLogger("p2p.discovery").addHandler(ignored)
    result: dict[str, object] = {"interfaces": sorted(n for _, n in socket.if_nameindex())}
    t0 = time.monotonic()
    await ipv4_scenario(result, t0)
    await ipv6_scenario(result)
    from p2p.discovery import local_addresses

    result["local_addresses"] = local_addresses()
    await nonlocal_scenario(result)
    await crash_scenario(result, outside_netns)
    result["ignored"] = ignored.messages
    result["total_seconds"] = round(time.monotonic() - t0, 3)
    return result


def main() -> int:
    args = sys.argv[1:]
    if len(args) == 2 and args[1] == "--crashing-host":
        # spawned by crash_scenario inside the namespace it already set up
        reason = refusal(args[0], fresh=False)
    else:
        reason = refusal(args[0] if len(args) == 1 else None)
    if reason is not None:
        print(f"refusing to run: {reason}", file=sys.stderr)
        return 3
    sys.path.insert(0, str(ROOT))
    import trio

    if len(args) == 2:
        trio.run(crashing_host)
        return 0
    set_up_namespace()
    result = trio.run(scenario, args[0])
    result["guest"] = run_guest_scenario()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
