"""Which local address the party's network is: the one multicast (mDNS)
leaves by. Asked of the routing table with a UDP ``connect`` to the mDNS
group, which sends nothing; on Linux a route with no source address is
looked up in ``/proc/net/route`` (this network namespace's)."""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path

MDNS_GROUP = "224.0.0.251"
MDNS_PORT = 5353


def route_device(address: str) -> str | None:
    """The device of the longest route to ``address`` (Linux), else None."""
    target = int(ipaddress.IPv4Address(address))
    best: tuple[int, str] | None = None
    try:
        rows = Path("/proc/net/route").read_text().splitlines()[1:]
    except OSError:
        return None
    for row in rows:
        cols = row.split()
        if len(cols) < 8:
            continue
        dest = int.from_bytes(bytes.fromhex(cols[1]), "little")
        mask = int.from_bytes(bytes.fromhex(cols[7]), "little")
        if target & mask == dest and (best is None or mask.bit_count() > best[0]):
            best = (mask.bit_count(), cols[0])
    return None if best is None else best[1]


def multicast_route() -> tuple[str | None, str | None]:
    """(the local IPv4 address mDNS leaves by, None), or (None, why there is
    none). Sends nothing."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((MDNS_GROUP, MDNS_PORT))
            source = probe.getsockname()[0]
        except OSError as exc:
            return None, exc.strerror or str(exc)
    if source == "0.0.0.0" and sys.platform == "linux":  # a route with no source address
        import ifaddr

        device = route_device(MDNS_GROUP)
        for adapter in ifaddr.get_adapters():
            if adapter.name == device:
                for ip in adapter.ips:
                    if not ip.is_IPv6:
                        return str(ip.ip), None
    return source, None


def lan_address(addresses: list[str]) -> str | None:
    """Of this machine's non-loopback ``addresses`` (in their usual order),
    the one multicast leaves by, else the first, else None. A laptop with
    Docker, a VPN or two networks has several: the first by name (docker0
    before wlan0) is often not the party's."""
    source, _ = multicast_route()
    if source in addresses:
        return source
    return addresses[0] if addresses else None
