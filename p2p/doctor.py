"""What a LAN party's "it doesn't see my table" needs: the checks behind
``nodealer doctor`` (the words and the printing are :mod:`tui.doctor`).

Each check returns one :class:`Finding`: what it saw (``says``) and, unless
all is well, what to do (``todo``), both English format strings filled from
``fields`` (so :mod:`tui.doctor` can say them in Chinese too). The checks:

* :func:`python_and_libraries` — versions, and that each library is there;
* :func:`interfaces` — this machine's IPv4 interfaces, which carry multicast
  (Linux says so per interface), and which one mDNS leaves by (the route
  the OS picks for 224.0.0.251: a UDP ``connect`` sends nothing);
* :func:`mdns_self_query` — we advertise a throw-away service
  (``_nodealer-doctor._tcp``, never a table) and query it from a second
  mDNS socket on the same address. The answer coming back shows this
  machine's side works: the sockets bind, and its firewall lets UDP 5353 in
  (a rule dropping it fails this check). It cannot show that the network
  carries multicast to the others (a Wi-Fi that isolates its clients): the
  OS loops its own multicast back even on an interface with multicast off,
  which :func:`interfaces` reports instead;
* :func:`game_port` — a TCP listener on the game's port (as ``nodealer
  host`` makes one), and a connection to it at this machine's LAN address;
* :func:`firewall` — what to open, per OS (and whether ufw is on, on Linux);
* :func:`home_privacy` — the identity key's and the data folder's privacy.

Blocking calls only (sockets, zeroconf's sync API): run from a plain thread
without an asyncio loop, as ``nodealer doctor`` does. Sends packets only on
the interface it is given or the one mDNS would use anyway.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import platform
import secrets
import socket
import stat
import struct
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from p2p.netroute import MDNS_GROUP, MDNS_PORT, multicast_route

DOCTOR_TYPE = "_nodealer-doctor._tcp.local."
LIBRARIES = ("trio", "zeroconf", "ifaddr", "cryptography", "PyNaCl", "msgpack", "textual")
OK, NOTE, WARN, FAIL = "ok", "note", "warn", "fail"
IFF_UP, IFF_LOOPBACK, IFF_MULTICAST = 0x1, 0x8, 0x1000


@dataclass(frozen=True)
class Finding:
    """One check's result: ``status`` is ok, note, warn or fail."""

    check: str
    status: str
    says: str
    todo: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Interface:
    name: str
    address: str
    up: bool | None  # None: this OS does not say (only Linux is read)
    multicast: bool | None
    loopback: bool


# ----------------------------------------------------------------- python


def python_and_libraries() -> Finding:
    versions, missing = [], []
    for name in LIBRARIES:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            missing.append(name)
    python = f"{platform.python_implementation()} {platform.python_version()}"
    where = f"{platform.system() or sys.platform} {platform.machine()}".strip()
    fields = {"python": python, "os": where, "libraries": ", ".join(versions)}
    if missing:
        return Finding("python", FAIL, "{python} on {os}; missing: {missing}",
                       "install nodealer again (pip install .), which brings them",
                       {**fields, "missing": ", ".join(missing)})  # fmt: skip
    try:
        from p2p.identity import check_library

        check_library()
    except Exception as exc:  # LibraryError: a libsodium that checks signatures otherwise
        return Finding("python", FAIL, "{python} on {os}; {problem}",
                       "install a PyNaCl built on a released libsodium (pip install "
                       "--force-reinstall pynacl)",
                       {**fields, "problem": str(exc)[:160]})  # fmt: skip
    return Finding("python", OK, "{python} on {os}; {libraries}", None, fields)


# ------------------------------------------------------------- interfaces


def _linux_flags(name: str) -> int | None:
    """An interface's flags (SIOCGIFFLAGS: of this network namespace, which
    /sys may not show), None if it cannot be read."""
    import fcntl

    request = struct.pack("256s", name.encode()[:15])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            answer = fcntl.ioctl(probe.fileno(), 0x8913, request)  # SIOCGIFFLAGS
        except OSError:
            return None
    return int(struct.unpack_from("H", answer, 16)[0])


def list_interfaces() -> list[Interface]:
    """This machine's IPv4 interfaces (reads the list: sends nothing)."""
    import ifaddr

    found = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if ip.is_IPv6:
                continue
            flags = _linux_flags(adapter.name) if sys.platform == "linux" else None
            loopback = ipaddress.ip_address(str(ip.ip)).is_loopback
            found.append(Interface(
                adapter.nice_name, str(ip.ip),
                None if flags is None else bool(flags & IFF_UP),
                None if flags is None else bool(flags & IFF_MULTICAST),
                loopback,
            ))  # fmt: skip
    return found


def _describe(iface: Interface) -> str:
    if iface.multicast is None:
        return f"{iface.name} {iface.address}"
    tags = [] if iface.up else ["down"]
    tags.append("multicast" if iface.multicast else "no multicast")
    return f"{iface.name} {iface.address} ({', '.join(tags)})"


def interfaces(chosen: str | None = None) -> tuple[list[Finding], str | None]:
    """The interfaces finding, the multicast finding, and the address the
    next checks use: ``chosen`` (``--interface``), else the one mDNS leaves
    by, else None."""
    found = list_interfaces()
    lan = [i for i in found if not i.loopback and i.up is not False]
    listed = ", ".join(_describe(i) for i in found) or "none"
    out: list[Finding] = []
    if not lan:
        out.append(Finding("interfaces", WARN, "only loopback ({listed}): no other laptop can "
                           "reach this one", "join the party's Wi-Fi or cable, then run "
                           "nodealer doctor again", {"listed": listed}))  # fmt: skip
    elif len(lan) > 1:
        out.append(Finding("interfaces", NOTE, "{listed}", "more than one network: if others do "
                           "not see your table, host with --interface and the address on the "
                           "party's network", {"listed": listed}))  # fmt: skip
    else:
        out.append(Finding("interfaces", OK, "{listed}", None, {"listed": listed}))
    source, why = multicast_route()
    by_address = {i.address: i for i in found}
    if chosen is not None and chosen not in ("0.0.0.0", ""):
        use = chosen
        if chosen not in by_address:
            out.append(Finding("multicast", FAIL, "{address} is not an address of this machine",
                               "give --interface one of: {addresses}",
                               {"address": chosen,
                                "addresses": ", ".join(by_address) or "none"}))  # fmt: skip
            return out, None
    else:  # where mDNS leaves; without a route, the first address (to show why)
        use = source or next((i.address for i in lan + found), None)
    iface = by_address.get(use) if use is not None else None
    where = {"name": iface.name if iface else "?", "address": use}
    if iface is not None and iface.multicast is False and not iface.loopback:
        out.append(Finding("multicast", FAIL, "{name} ({address}) has multicast off: the others "
                           "will not hear mDNS from it", "turn multicast on for {name} (sudo ip "
                           "link set {name} multicast on), or join with --connect HOST:PORT",
                           where))  # fmt: skip
    elif source is None:  # nodealer pins its interface (IP_MULTICAST_IF): mDNS may still work
        out.append(Finding("multicast", WARN, "no route for multicast ({group}): {why}; "
                           "nodealer sends by the address it uses, tools that do not choose "
                           "one (dig, avahi) cannot", _no_route_todo(),
                           {"group": MDNS_GROUP, "why": why}))  # fmt: skip
    elif iface is not None and iface.loopback and lan and use == source:
        out.append(Finding("multicast", WARN, "mDNS would leave by {name} ({address}), not by "
                           "your network", "route multicast to the party's network (sudo ip "
                           "route add 224.0.0.0/4 dev IF), or host with --interface ADDRESS",
                           where))  # fmt: skip
    else:
        out.append(Finding("multicast", OK, "mDNS leaves by {name} ({address})", None, where))
    return out, use


def _no_route_todo() -> str:
    if sys.platform == "linux":
        return ("connect to the party's network; on one with no default route: sudo ip route "
                "add 224.0.0.0/4 dev IF; meanwhile join with --connect HOST:PORT")
    return "connect to the party's network; meanwhile join with --connect HOST:PORT"


# ------------------------------------------------------------------- mDNS


def mdns_self_query(address: str | None, seconds: float = 3.0) -> Finding:
    """Advertise a throw-away service on ``address`` and ask for it from a
    second mDNS socket: does an answer come back?"""
    if address is None:
        return Finding("mdns", FAIL, "not tried: no address to use",
                       "see the multicast line above")  # fmt: skip
    from zeroconf import ServiceInfo, Zeroconf

    token = secrets.token_hex(4)
    name = f"doctor-{token}.{DOCTOR_TYPE}"
    info = ServiceInfo(DOCTOR_TYPE, name, port=9, server=f"nodealer-doctor-{token}.local.",
                       parsed_addresses=[address], properties={"v": "1"})  # fmt: skip
    fields = {"address": address, "seconds": f"{seconds:g}"}
    opened: list[Zeroconf] = []
    try:
        try:
            answering = Zeroconf(interfaces=[address])
            opened.append(answering)
            asking = Zeroconf(interfaces=[address])
            opened.append(asking)
        except (OSError, ValueError) as exc:
            return Finding("mdns", FAIL, "cannot use mDNS (UDP {port}) on {address}: {why}",
                           "another program may hold UDP 5353 for itself; close it, or join "
                           "with --connect HOST:PORT",
                           {**fields, "port": MDNS_PORT, "why": _why(exc)})  # fmt: skip
        start = time.monotonic()
        try:
            answering.register_service(info, cooperating_responders=True)
            got = asking.get_service_info(DOCTOR_TYPE, name, timeout=int(seconds * 1000))
        except Exception as exc:  # zeroconf's errors, or the OS refusing to send
            return Finding("mdns", FAIL, "our own mDNS query failed on {address}: {why}",
                           _blocked_todo(), {**fields, "why": _why(exc)})  # fmt: skip
        if got is None:
            return Finding("mdns", FAIL, "no answer to our own mDNS query on {address} within "
                           "{seconds} s", _blocked_todo(), fields)  # fmt: skip
        ms = round((time.monotonic() - start) * 1000)
        return Finding("mdns", OK, "our own query on {address} was answered in {ms} ms (this "
                       "machine's side works)", None, {**fields, "ms": ms})  # fmt: skip
    finally:
        for zc in reversed(opened):
            with contextlib.suppress(Exception):
                zc.close()


def _blocked_todo() -> str:
    return ("multicast does not come back on this network: open UDP 5353 in the firewall "
            "(see the firewall line), or join with --connect HOST:PORT (the host prints it)")


def _why(exc: BaseException) -> str:
    return (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)[:120]


# ------------------------------------------------------------- game port


def game_port(address: str | None, port: int = 0, seconds: float = 3.0) -> Finding:
    """Listen on ``port`` (0: any free one) on every interface, as ``nodealer
    host`` does, and connect to it at ``address`` (this machine's LAN
    address; 127.0.0.1 when there is none)."""
    target = address or "127.0.0.1"
    fields: dict[str, Any] = {"port": port, "address": target, "seconds": f"{seconds:g}"}
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if os.name != "nt":  # as trio's listeners do; on Windows it would share a busy port
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind(("0.0.0.0", port))
            listener.listen(1)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", -1)):
                return Finding("port", FAIL, "TCP port {port} is in use by another program",
                               "host with another --port, or leave --port out (any free "
                               "port)", fields)  # fmt: skip
            return Finding("port", FAIL, "cannot listen on TCP port {port}: {why}",
                           "choose a port above 1024 with --port, or leave it out",
                           {**fields, "why": _why(exc)})  # fmt: skip
        fields["port"] = listener.getsockname()[1]
        try:
            with socket.create_connection((target, fields["port"]), timeout=seconds):
                pass
        except TimeoutError:
            return Finding("port", FAIL, "a connection to {address}:{port} got no answer in "
                           "{seconds} s: something drops it", "a firewall: allow TCP port "
                           "{port} (see the firewall line), host with --port {port}",
                           fields)  # fmt: skip
        except OSError as exc:
            return Finding("port", FAIL, "a connection to {address}:{port} failed: {why}",
                           "a firewall refuses it: allow TCP port {port} (see the firewall "
                           "line)", {**fields, "why": _why(exc)})  # fmt: skip
        return Finding("port", OK, "TCP port {port} takes connections at {address} (from this "
                       "machine; a firewall may still stop the others: see below)", None,
                       fields)  # fmt: skip
    finally:
        listener.close()


# --------------------------------------------------------------- firewall


def firewall(subnet: str | None = None, system: str | None = None,
             root: Path = Path("/")) -> Finding:
    """What to open, in this OS's words (``system``: platform.system()'s).
    Every laptop at the table takes connections (the lobby, then the game's
    mesh, on ports chosen free each time) and mDNS (UDP 5353): on Linux the
    simple rule is to let the party's network in (``subnet``, e.g.
    192.168.1.0/24), for the evening."""
    system = system or platform.system()
    fields = {"subnet": subnet or "192.168.1.0/24"}
    if system == "Windows":
        return Finding("firewall", NOTE, "Windows Defender Firewall asks the first time you "
                       "host", "allow Python on Private networks; if this network is Public, "
                       "make it Private (Settings > Network > Properties)", fields)  # fmt: skip
    if system == "Darwin":
        return Finding("firewall", NOTE, "macOS asks whether Python may accept incoming "
                       "connections the first time you host", "click Allow (System Settings "
                       "> Network > Firewall > Options lists it)", fields)  # fmt: skip
    ufw = root / "etc" / "ufw" / "ufw.conf"
    with contextlib.suppress(OSError):
        if any(line.strip() == "ENABLED=yes" for line in ufw.read_text().splitlines()):
            return Finding("firewall", WARN, "ufw is on: it stops the others' connections and "
                           "mDNS", "let the party's network in: sudo ufw allow from {subnet} "
                           "(afterwards: sudo ufw delete allow from {subnet})",
                           fields)  # fmt: skip
    if (root / "etc" / "firewalld").is_dir():
        return Finding("firewall", NOTE, "firewalld is installed", "if it runs, let the "
                       "party's network in: sudo firewall-cmd --zone=trusted "
                       "--add-source={subnet}", fields)  # fmt: skip
    return Finding("firewall", OK, "no ufw or firewalld here", None, fields)


# ------------------------------------------------------------ home folder


def home_privacy(config: Path, data: Path) -> Finding:
    """The identity key (where it lives) and the data folder: private?"""
    from p2p import disk
    from p2p.identity import KEY_FILE

    key = Path(config) / KEY_FILE
    fields: dict[str, Any] = {"key": str(key), "data": str(data)}
    if not key.exists():
        return Finding("home", OK, "no identity key yet ({key}): it is made, private, the "
                       "first time you play", None, fields)  # fmt: skip
    problem = disk.private_problem(key)
    if problem is not None:
        return Finding("home", FAIL, "your identity key {key} is {problem}",
                       "chmod 600 {key}; chmod 700 {folder}",
                       {**fields, "problem": problem, "folder": str(key.parent)})  # fmt: skip
    if disk.WINDOWS:
        inside = _inside(key, Path.home())
        if not inside:
            return Finding("home", WARN, "your identity key {key} is outside your user profile",
                           "keep it under your profile (unset NODEALER_HOME), where only you "
                           "and administrators can read it", fields)  # fmt: skip
        return Finding("home", OK, "your identity key {key} is in your user profile (its "
                       "privacy is the profile's)", None, fields)  # fmt: skip
    for folder in (Path(config), Path(data) / "tables"):
        if folder.is_dir():
            mode = stat.S_IMODE(folder.stat().st_mode)
            if mode & 0o077 and disk.keeps_modes(folder):
                return Finding("home", WARN, "others may look into {folder} (mode {mode})",
                               "chmod 700 {folder}",
                               {**fields, "folder": str(folder), "mode": f"{mode:o}"})  # fmt: skip
    return Finding("home", OK, "your identity key {key} and saved games are private", None,
                   fields)  # fmt: skip


def _inside(path: Path, folder: Path) -> bool:
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except OSError:
        return False


# -------------------------------------------------------------------- all


def _subnet(address: str | None) -> str | None:
    """The network (e.g. 192.168.1.0/24) of this machine's ``address``."""
    import ifaddr

    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if not ip.is_IPv6 and str(ip.ip) == address:
                return str(ipaddress.ip_network(f"{address}/{ip.network_prefix}", strict=False))
    return None


def run_all(
    *,
    interface: str | None = None,
    port: int = 0,
    seconds: float = 3.0,
    config: Path,
    data: Path,
    mdns: bool = True,
) -> list[Finding]:
    """Every check, in the order a person would fix things."""
    found = [python_and_libraries()]
    network, address = interfaces(interface)
    found += network
    if mdns:
        found.append(mdns_self_query(address, seconds))
    found.append(game_port(address, port, seconds))
    found.append(firewall(_subnet(address)))
    found.append(home_privacy(config, data))
    return found
