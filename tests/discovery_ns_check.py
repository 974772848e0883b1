"""Advertise and browse a table over real mDNS, inside a private network namespace.

Run only as ``unshare -n -- python tests/discovery_ns_check.py`` (tests/test_discovery.py
does that). Before any zeroconf object exists the script checks that loopback
is the ONLY interface it can see, i.e. that it is in a fresh namespace, and
refuses to run otherwise (exit 3): mDNS must never reach a real network. It
then switches on multicast on lo, and with trio:

1. opens a browser and publishes a hostile advert straight through zeroconf
   (a TXT record with seats ``9/2``), which the browser must ignore;
2. advertises a good table and waits for it to appear with the right fields;
3. updates the seats taken and waits for the update;
4. closes the advertisement and waits for the table to vanish.

It prints one JSON line describing what it saw; the test asserts on it.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP_TIMEOUT = 15.0


def in_private_namespace() -> bool:
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def enable_loopback_multicast() -> None:
    for cmd in (
        ["ip", "link", "set", "lo", "up"],
        ["ip", "link", "set", "lo", "multicast", "on"],
        ["ip", "route", "add", "224.0.0.0/4", "dev", "lo"],
    ):
        subprocess.run(cmd, check=True, capture_output=True)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _ad_fields(ad: object) -> dict[str, object]:
    from dataclasses import asdict

    fields = asdict(ad)  # type: ignore[call-overload]
    fields["table_id"] = fields["table_id"].hex()
    return fields


async def scenario() -> dict[str, object]:
    import trio
    from zeroconf import ServiceInfo

    from p2p import discovery
    from p2p.discovery import Change, TableAd, advertise, browse

    ignored = _Collect()
    logging.getLogger("p2p.discovery").addHandler(ignored)
    result: dict[str, object] = {"interfaces": [n for _, n in socket.if_nameindex()]}
    ad = TableAd(
        table_id=bytes.fromhex("00112233445566778899aabbccddeeff"),
        game="bomb",
        seats_taken=1,
        seats_total=5,
        host_fingerprint="K3QF-7ZPA-M2XD-4RTY",
        address="127.0.0.1",
        port=40123,
    )
    t0 = time.monotonic()

    def stamp() -> float:
        return round(time.monotonic() - t0, 3)

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
                    "ad": _ad_fields(event.ad),
                    "text": str(event.ad),
                    "at": stamp(),
                    "listed": sorted(tables.tables),
                }
                await advert.update(seats_taken=3)
                with trio.fail_after(STEP_TIMEOUT):
                    event = await tables.__anext__()
                result["updated"] = {
                    "change": event.change.value,
                    "ad": _ad_fields(event.ad),
                    "at": stamp(),
                }
            result["closed_at"] = stamp()
            with trio.fail_after(STEP_TIMEOUT):
                event = await tables.__anext__()
            result["vanished"] = {
                "change": event.change.value,
                "ad": _ad_fields(event.ad),
                "at": stamp(),
                "listed": sorted(tables.tables),
            }
            assert event.change is Change.VANISHED
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(hostile_zc.close)
    result["browser_closed_at"] = stamp()
    result["ignored"] = ignored.messages
    return result


def main() -> int:
    if not in_private_namespace():
        print(
            "refusing to run: interfaces other than lo are visible; "
            "run me inside `unshare -n` only",
            file=sys.stderr,
        )
        return 3
    enable_loopback_multicast()
    sys.path.insert(0, str(ROOT))
    import trio

    print(json.dumps(trio.run(scenario)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
