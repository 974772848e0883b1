"""Finding tables on the LAN: zeroconf (mDNS / DNS-SD) adverts and the manual ``HOST:PORT``.

Theory of operation
-------------------
A host advertises its open table as one DNS-SD service of type
``_nodealer._tcp.local.`` (protocol.md §4). The SRV record carries the TCP port
the host's peer listens on, the A/AAAA record the ONE address the host chose,
and the TXT record five short keys: protocol version, table id, game, seats
taken/total and the host's identity fingerprint. A :class:`TableAd` is that
advert as a small immutable value; :meth:`TableAd.txt` and
:meth:`TableAd.from_txt` are its exact wire form, and nothing else in the
program reads or writes TXT bytes.

An advert is untrusted: anyone on the LAN can publish anything. Decoding is
strict (every required key present, every value matching its grammar, sizes
bounded) and a bad advert is *ignored with a logged reason*, never shown and
never a crash. Even a well-formed advert proves nothing: the peer that answers
at its address must still prove, in the handshake (protocol.md §2), that it
holds the key whose fingerprint the advert names.

zeroconf is asyncio inside. A ``Zeroconf`` made on a thread with a running
asyncio loop attaches to that loop, otherwise it starts its own loop thread;
its blocking calls (register, update, unregister, resolve, close) must never
run on an event loop thread. So every zeroconf object here is created, used
and closed from a worker thread (``trio.to_thread.run_sync``), where there is
no running asyncio loop. That gives the same behaviour whether trio runs on
its own (headless) or as a guest on Textual's asyncio loop (the TUI, see
:mod:`tui.guest`). Browser callbacks arrive on zeroconf's browser thread;
they resolve the advert there (a blocking call, fine on that thread) and hand
the result to trio through a memory channel with ``trio.from_thread.run``.

The trio-facing API:

* :func:`advertise` — ``async with advertise(ad) as advert:`` publishes the
  table, bound to ``ad.address`` only; ``await advert.update(seats_taken=3)``
  republishes the TXT record; leaving the block sends the mDNS goodbye.
* :func:`browse` — ``async with browse() as tables: async for event in
  tables:`` yields :class:`TableEvent` values (appeared / updated / vanished);
  ``tables.tables`` is the current list, for a lobby screen.
* :func:`find_tables` — browse for a few seconds and return the list.
* :func:`parse_hostport` — ``--connect HOST:PORT`` for networks without
  multicast, with errors a player can act on.
* :func:`local_addresses` — the ``(interface, address)`` pairs a host may
  choose to advertise on.
"""

from __future__ import annotations

import enum
import ipaddress
import logging
import re
import socket
import threading
import unicodedata
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final

import trio
from zeroconf import (
    BadTypeInNameException,
    InterfaceChoice,
    IPVersion,
    ServiceBrowser,
    ServiceInfo,
    ServiceStateChange,
    Zeroconf,
)
from zeroconf import Error as ZeroconfError

from p2p.wire import MAX_SEATS, MAX_TABLE_ID, PROTOCOL_VERSION

logger = logging.getLogger(__name__)

SERVICE_TYPE: Final = "_nodealer._tcp.local."

# Grammar of the TXT values (protocol.md §4). Keys are matched case-insensitively.
MAX_TXT_BYTES: Final = 400
_TABLE_ID_RE: Final = re.compile(r"(?:[0-9a-f]{2}){1,64}")
_GAME_RE: Final = re.compile(r"[a-z][a-z0-9-]{0,15}")
# base32 in dash-separated groups of four, e.g. K3QF-7ZPA-M2XD-4RTY (protocol.md §2.1)
_FINGERPRINT_RE: Final = re.compile(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){1,15}")
_VERSION_RE: Final = re.compile(r"[1-9][0-9]{0,4}")
_SEATS_RE: Final = re.compile(r"(0|[1-9][0-9]?)/([1-9][0-9]?)")
_TXT_KEYS: Final = ("v", "tid", "game", "seats", "fp")

# Record lifetimes. RFC 6762 suggests 75 minutes for PTR/TXT; we use two
# minutes for every record. python-zeroconf browsers clamp a received PTR TTL
# up to 1125 s, so record expiry alone would keep a crashed host's table
# listed for ~19 minutes: the browser therefore re-resolves each listed table
# every LIVENESS_INTERVAL_SECONDS. While its SRV/TXT/A records are fresh that
# is a cache hit (no traffic); once they expire (TTL) it is one query, which a
# live host answers and a crashed one does not, so a crashed host's table
# vanishes about TTL + interval + timeout after its last answer.
AD_TTL_SECONDS: Final = 120
LIVENESS_INTERVAL_SECONDS: Final = 15.0
# find_table: once a wanted table answered, this long more for a second one
FIND_SETTLE_SECONDS: Final = 0.5
LIVENESS_TIMEOUT_MS: Final = 3000
# How long the browser waits for an advert's SRV/TXT/A answers.
RESOLVE_TIMEOUT_MS: Final = 2000
# The most tables one browser lists (a LAN party has a handful).
MAX_TABLES: Final = 256


class DiscoveryError(Exception):
    """Base of every error this module raises."""


class BadAdvertisement(DiscoveryError, ValueError):
    """An advert (TXT record, address or port) that breaks protocol.md §4."""


class BadHostPort(DiscoveryError, ValueError):
    """A manual ``HOST:PORT`` that cannot be used."""


# --------------------------------------------------------------------------- values


def _check_port(port: object, what: str = "port") -> int:
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise BadAdvertisement(f"{what} must be an integer from 1 to 65535, not {port!r}")
    return port


def _check_address(address: object) -> str:
    """A literal unicast IP address, normalised (``fe80::1%eth0`` keeps its zone)."""
    if not isinstance(address, str):
        raise BadAdvertisement(f"address must be an IP address string, not {address!r}")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise BadAdvertisement(f"address {address!r} is not an IPv4 or IPv6 address") from None
    if ip.is_unspecified or ip.is_multicast:
        raise BadAdvertisement(f"address {address} cannot be connected to")
    return str(ip)


@dataclass(frozen=True)
class HostPort:
    """Where to open a TCP connection: a host (IP literal or DNS name) and a port."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class TableAd:
    """One open table as advertised: what a lobby shows and where to connect.

    >>> tid = bytes.fromhex("1a2b3c4d5e6f7a8b")
    >>> ad = TableAd(tid, "mao", 2, 5, "K3QF-7ZPA-M2XD-4RTY", "192.168.1.20", 4000)
    >>> str(ad)
    'mao 2/5 seats, table 1a2b3c4d, host K3QF-7ZPA-M2XD-4RTY at 192.168.1.20:4000'
    """

    table_id: bytes
    game: str
    seats_taken: int
    seats_total: int
    host_fingerprint: str
    address: str
    port: int
    protocol_version: int = PROTOCOL_VERSION
    name: str = ""
    """the table's friendly name ("Alice's Bluff table"); UTF-8 in the TXT record"""
    host_name: str = ""
    """the host's nickname"""
    proven: bool | None = None
    """whether the deals carry zero-knowledge proofs (None: not said)"""
    private: bool = False
    """a private table: joining needs its table code (p2p/lobby/table_code.py)"""

    def __post_init__(self) -> None:
        if not isinstance(self.table_id, bytes) or not 1 <= len(self.table_id) <= MAX_TABLE_ID:
            raise BadAdvertisement(
                f"table id must be 1 to {MAX_TABLE_ID} bytes, not {self.table_id!r}"
            )
        for attr, label, pattern in (
            ("game", "game", _GAME_RE),
            ("host_fingerprint", "host fingerprint", _FINGERPRINT_RE),
        ):
            value = getattr(self, attr)
            if not isinstance(value, str) or not pattern.fullmatch(value):
                raise BadAdvertisement(f"{label} {value!r} does not match {pattern.pattern}")
        for name in ("seats_taken", "seats_total", "protocol_version"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadAdvertisement(
                    f"{name.replace('_', ' ')} must be an integer, not {value!r}"
                )
        if not 1 <= self.protocol_version <= 65535:
            raise BadAdvertisement(f"protocol version {self.protocol_version} is out of range")
        if not 2 <= self.seats_total <= MAX_SEATS:
            raise BadAdvertisement(f"a table has 2 to {MAX_SEATS} seats, not {self.seats_total}")
        if not 0 <= self.seats_taken <= self.seats_total:
            raise BadAdvertisement(
                f"seats taken {self.seats_taken} is not between 0 and {self.seats_total}"
            )
        object.__setattr__(self, "address", _check_address(self.address))
        _check_port(self.port)
        for attr in ("name", "host_name"):
            value = getattr(self, attr)
            if not isinstance(value, str) or len(value.encode()) > MAX_NAME_BYTES:
                raise BadAdvertisement(f"{attr} must be text of at most {MAX_NAME_BYTES} bytes")
            if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in value):
                raise BadAdvertisement(f"{attr} {value!r} holds control characters")
        if self.proven is not None and not isinstance(self.proven, bool):
            raise BadAdvertisement(f"proven must be true or false, not {self.proven!r}")
        if not isinstance(self.private, bool):
            raise BadAdvertisement(f"private must be true or false, not {self.private!r}")

    def __str__(self) -> str:
        version = "" if self.compatible else f" (protocol {self.protocol_version})"
        named = f"{self.name}: " if self.name else ""
        host = f"{self.host_name} " if self.host_name else ""
        mode = {None: "", True: ", proven", False: ", unproven"}[self.proven]
        mode += ", private (join --code)" if self.private else ""
        return (
            f"{named}{self.game} {self.seats_taken}/{self.seats_total} seats{mode}, "
            f"table {self.table_id.hex()[:8]}, host {host}{self.host_fingerprint} at "
            f"{self.hostport}{version}"
        )

    def matches(self, wanted: str) -> bool:
        """Whether ``wanted`` names this table: its friendly name or its
        host's nickname (case-insensitive, a part is enough), the host's
        fingerprint, or a prefix of the table id in hex."""
        text = wanted.strip().casefold()
        if not text:
            return False
        return (
            (bool(self.name) and text in self.name.casefold())
            or (bool(self.host_name) and text in self.host_name.casefold())
            or text.upper() == self.host_fingerprint.casefold().upper()
            or self.table_id.hex().startswith(text)
        )

    @property
    def compatible(self) -> bool:
        """Whether this program speaks the table's protocol version."""
        return self.protocol_version == PROTOCOL_VERSION

    @property
    def is_full(self) -> bool:
        return self.seats_taken >= self.seats_total

    @property
    def hostport(self) -> HostPort:
        return HostPort(self.address, self.port)

    @property
    def instance_name(self) -> str:
        """The DNS-SD service instance name: the friendly name if there is one
        (registration makes it unique on the LAN), else one unique per table
        id prefix."""
        if self.name:
            label = self.name.replace(".", "·")
            return f"{label}.{SERVICE_TYPE}"
        return f"nodealer {self.game} {self.table_id.hex()[:16]}.{SERVICE_TYPE}"

    @property
    def server_name(self) -> str:
        """The mDNS host name whose A/AAAA record carries :attr:`address`."""
        return f"nodealer-{self.table_id.hex()[:16]}.local."

    def with_seats(self, seats_taken: int, seats_total: int | None = None) -> TableAd:
        total = self.seats_total if seats_total is None else seats_total
        return replace(self, seats_taken=seats_taken, seats_total=total)

    # ---------------------------------------------------------------- TXT wire form

    def txt(self) -> bytes:
        """The TXT record's RDATA: length-prefixed ``key=value`` strings, in key order."""
        pairs = [
            ("txtvers", "1"),
            ("v", str(self.protocol_version)),
            ("tid", self.table_id.hex()),
            ("game", self.game),
            ("seats", f"{self.seats_taken}/{self.seats_total}"),
            ("fp", self.host_fingerprint),
        ]
        if self.proven is not None:
            pairs.append(("p", "1" if self.proven else "0"))
        if self.private:
            pairs.append(("priv", "1"))
        if self.name:
            pairs.append(("n", self.name))
        if self.host_name:
            pairs.append(("hn", self.host_name))
        out = bytearray()
        for key, value in pairs:
            item = f"{key}={value}".encode()
            out.append(len(item))
            out += item
        return bytes(out)

    @classmethod
    def from_txt(cls, text: bytes, address: str, port: int) -> TableAd:
        """Decode an advert received from the network; :class:`BadAdvertisement` if bad."""
        fields = decode_txt(text)
        missing = [key for key in _TXT_KEYS if fields.get(key) is None]
        if missing:
            raise BadAdvertisement(f"TXT record lacks {', '.join(missing)}")
        version = fields["v"]
        seats = _SEATS_RE.fullmatch(fields["seats"] or "")
        if not _VERSION_RE.fullmatch(version or ""):
            raise BadAdvertisement(f"TXT v={version!r} is not a protocol version")
        if seats is None:
            raise BadAdvertisement(f"TXT seats={fields['seats']!r} is not TAKEN/TOTAL")
        table_id = fields["tid"] or ""
        if not _TABLE_ID_RE.fullmatch(table_id):
            raise BadAdvertisement(f"TXT tid={table_id!r} is not 1 to {MAX_TABLE_ID} bytes in hex")
        proven = {"1": True, "0": False, None: None}.get(fields.get("p"), None)
        return cls(
            table_id=bytes.fromhex(table_id),
            game=fields["game"] or "",
            seats_taken=int(seats.group(1)),
            seats_total=int(seats.group(2)),
            host_fingerprint=fields["fp"] or "",
            address=address,
            port=_check_port(port),
            protocol_version=int(version or "0"),
            name=fields.get("n") or "",
            host_name=fields.get("hn") or "",
            proven=proven,
            private=fields.get("priv") == "1",
        )


_UTF8_KEYS: Final = frozenset({"n", "hn"})
MAX_NAME_BYTES: Final = 63


def decode_txt(text: bytes) -> dict[str, str | None]:
    """Split TXT RDATA into ``{key: value}`` (RFC 6763 §6), strictly.

    Keys are lower-cased; a key without ``=`` has the value ``None``; only the
    first occurrence of a key counts (RFC 6763 §6.4); values must be ASCII.
    Raises :class:`BadAdvertisement` for a record that is too long, truncated,
    has an empty or non-printable key, or a non-ASCII value.
    """
    if not isinstance(text, bytes | bytearray):
        raise BadAdvertisement(f"TXT data must be bytes, not {type(text).__name__}")
    if len(text) > MAX_TXT_BYTES:
        raise BadAdvertisement(f"TXT record is {len(text)} bytes, over the {MAX_TXT_BYTES} limit")
    fields: dict[str, str | None] = {}
    pos = 0
    while pos < len(text):
        length = text[pos]
        item = bytes(text[pos + 1 : pos + 1 + length])
        if len(item) != length:
            raise BadAdvertisement("TXT record is truncated")
        pos += 1 + length
        if not item:
            continue  # the empty string (an empty TXT record is one zero byte)
        raw_key, sep, raw_value = item.partition(b"=")
        if not raw_key or any(b < 0x20 or b > 0x7E for b in raw_key):
            raise BadAdvertisement(f"TXT key {raw_key!r} is empty or not printable ASCII")
        key = raw_key.decode("ascii").lower()
        if key in fields:
            continue
        if not sep:
            fields[key] = None
            continue
        try:
            # names (n, hn) are UTF-8 text (RFC 6763 §6.5); everything else ASCII
            fields[key] = raw_value.decode("utf-8" if key in _UTF8_KEYS else "ascii")
        except UnicodeDecodeError:
            want = "UTF-8" if key in _UTF8_KEYS else "ASCII"
            raise BadAdvertisement(f"TXT value of {key!r} is not {want}") from None
    return fields


# --------------------------------------------------------------------------- HOST:PORT

_HOSTNAME_LABEL_RE: Final = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def _valid_hostname(host: str) -> bool:
    name = host[:-1] if host.endswith(".") else host
    if not name or len(name) > 253:
        return False
    labels = name.split(".")
    if labels[-1].isdigit():  # "1.2.3.999" is a mistyped address, not a name
        return False
    return all(_HOSTNAME_LABEL_RE.fullmatch(label) for label in labels)


def parse_hostport(text: str, default_port: int | None = None) -> HostPort:
    """Parse ``HOST:PORT`` as typed after ``--connect``.

    HOST is an IPv4 address, an IPv6 address in brackets (``[fe80::1%eth0]``)
    or a host name; PORT is 1 to 65535 and may be left out only when
    ``default_port`` is given.

    >>> str(parse_hostport("[::1]:4000")), str(parse_hostport("lan-box.local:4000"))
    ('[::1]:4000', 'lan-box.local:4000')
    """
    if not isinstance(text, str):
        raise BadHostPort(f"expected HOST:PORT text, not {type(text).__name__}")
    spec = text.strip()
    if not spec:
        raise BadHostPort("empty address; expected HOST:PORT, e.g. 192.168.1.20:4000")
    port_text: str | None
    if spec.startswith("["):
        end = spec.find("]")
        if end < 0:
            raise BadHostPort(f"{spec!r}: missing ']' after the IPv6 address")
        host, rest = spec[1:end], spec[end + 1 :]
        if rest and not rest.startswith(":"):
            raise BadHostPort(f"{spec!r}: expected ':PORT' after ']'")
        port_text = rest[1:] if rest else None
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            raise BadHostPort(f"{spec!r}: {host!r} is not an IPv6 address") from None
        if ip.version != 6:
            raise BadHostPort(f"{spec!r}: brackets are only for IPv6 addresses")
        host = str(ip)
    else:
        if spec.count(":") > 1:
            raise BadHostPort(f"{spec!r}: put an IPv6 address in brackets, e.g. [::1]:4000")
        host, sep, port_text_raw = spec.partition(":")
        port_text = port_text_raw if sep else None
        try:
            host = str(ipaddress.IPv4Address(host))
        except ValueError:
            if not _valid_hostname(host):
                raise BadHostPort(f"{spec!r}: {host!r} is not an IP address or host name") from None
    if port_text is None:
        if default_port is None:
            raise BadHostPort(f"{spec!r}: missing ':PORT'")
        port = default_port
    elif not port_text.isascii() or not port_text.isdigit():
        raise BadHostPort(f"{spec!r}: port {port_text!r} is not a number")
    else:
        port = int(port_text)
    if not 1 <= port <= 65535:
        raise BadHostPort(f"{spec!r}: port {port} is not between 1 and 65535")
    if host.startswith(("0.", "::")) and ipaddress.ip_address(host).is_unspecified:
        raise BadHostPort(f"{spec!r}: {host} is not an address one can connect to")
    return HostPort(host, port)


# --------------------------------------------------------------------------- advertise


def local_addresses(include_loopback: bool = False) -> list[tuple[str, str]]:
    """``(interface, address)`` pairs this machine could advertise on, IPv4 first.

    Reads the interface list only (no packets). IPv6 link-local addresses carry
    their zone (``fe80::1%eth0``). For a ``--advertise-on`` choice in the CLI/TUI.
    """
    import ifaddr  # zeroconf's own dependency for the same job

    found: list[tuple[int, str, str]] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if ip.is_IPv6:
                host, _flow, scope = ip.ip  # type: ignore[misc]
                text = f"{host}%{adapter.nice_name}" if scope else host
            else:
                text = str(ip.ip)
            try:
                parsed = ipaddress.ip_address(text)
            except ValueError:
                continue
            if parsed.is_loopback and not include_loopback:
                continue
            found.append((parsed.version, adapter.nice_name, str(parsed)))
    return [(name, address) for _, name, address in sorted(found)]


def _check_local(address: str) -> None:
    """Fail clearly unless ``address`` belongs to this machine (binds, sends nothing)."""
    ip = ipaddress.ip_address(address)
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        # getaddrinfo turns a zone ("%eth0") into the scope id bind() needs
        sockaddr = socket.getaddrinfo(
            address, 0, family, socket.SOCK_DGRAM, flags=socket.AI_NUMERICHOST
        )[0][4]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind(sockaddr)
    except (OSError, UnicodeError) as exc:
        raise DiscoveryError(f"{address} is not an address of this machine: {exc}") from None


def _open_zeroconf(interface: str | None) -> Zeroconf:
    """Open zeroconf on one address (or every interface). Blocking: worker thread only."""
    if interface is None:
        return Zeroconf(interfaces=InterfaceChoice.All)
    _check_local(interface)
    try:
        return Zeroconf(interfaces=[interface])
    except (OSError, ValueError) as exc:
        raise DiscoveryError(f"cannot use {interface} for mDNS: {exc}") from exc


def _service_info(ad: TableAd, name: str | None = None, ttl: int = AD_TTL_SECONDS) -> ServiceInfo:
    return ServiceInfo(
        SERVICE_TYPE,
        name or ad.instance_name,
        port=ad.port,
        properties=ad.txt(),
        server=ad.server_name,
        host_ttl=ttl,
        other_ttl=ttl,
        parsed_addresses=[ad.address],
    )


class Advertisement:
    """A table being advertised; made by :func:`advertise`."""

    def __init__(self, zc: Zeroconf, info: ServiceInfo, ad: TableAd, ttl: int) -> None:
        self._zc = zc
        self._info = info
        self._ad = ad
        self._ttl = ttl
        self._lock = trio.Lock()

    @property
    def ad(self) -> TableAd:
        """The advert as currently published."""
        return self._ad

    @property
    def instance_name(self) -> str:
        """The DNS-SD name in use (zeroconf renames on a clash, e.g. ``… (2)``)."""
        return self._info.name

    async def update(self, seats_taken: int, seats_total: int | None = None) -> None:
        """Republish the advert with new seat counts (e.g. when a player sits down)."""
        new = self._ad.with_seats(seats_taken, seats_total)
        async with self._lock:
            if new == self._ad:
                return
            info = _service_info(new, self._info.name, self._ttl)
            try:
                await trio.to_thread.run_sync(self._zc.update_service, info)
            except ZeroconfError as exc:
                raise DiscoveryError(f"cannot update the advert of {new}: {exc!r}") from exc
            self._info, self._ad = info, new


@asynccontextmanager
async def advertise(ad: TableAd, *, ttl: int = AD_TTL_SECONDS) -> AsyncIterator[Advertisement]:
    """Advertise ``ad`` on the LAN, on ``ad.address`` only, until the block ends.

    Registration probes the network for a name clash first (about a second).
    On exit the goodbye records are sent so browsers drop the table at once.
    ``ttl`` (seconds) is the lifetime of the published records.
    """
    if not isinstance(ad, TableAd):
        raise TypeError(f"advertise() takes a TableAd, not {type(ad).__name__}")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or not 1 <= ttl <= 4500:
        raise DiscoveryError(f"ttl must be 1 to 4500 seconds, not {ttl!r}")
    with trio.CancelScope(shield=True):  # a cancel must not strand zeroconf's thread
        zc = await trio.to_thread.run_sync(_open_zeroconf, ad.address)
    try:
        info = _service_info(ad, ttl=ttl)
        try:
            await trio.to_thread.run_sync(lambda: zc.register_service(info, allow_name_change=True))
        except (ZeroconfError, BadTypeInNameException) as exc:
            raise DiscoveryError(f"cannot advertise {ad}: {exc!r}") from exc
        logger.info("advertising %s as %r", ad, info.name)
        yield Advertisement(zc, info, ad, ttl)
    finally:
        with trio.CancelScope(shield=True):
            # close() unregisters (goodbye packets) and stops zeroconf's thread.
            await trio.to_thread.run_sync(zc.close)


# --------------------------------------------------------------------------- browse


class Change(enum.Enum):
    APPEARED = "appeared"
    UPDATED = "updated"
    VANISHED = "vanished"


@dataclass(frozen=True)
class TableEvent:
    """A change in the list of tables on the LAN."""

    change: Change
    name: str  # the DNS-SD instance name: the key of the browser's table list
    ad: TableAd  # for VANISHED, the last advert seen

    def __str__(self) -> str:
        return f"{self.change.value}: {self.ad}"


@dataclass(frozen=True)
class AdReport:
    """What the browser thread learned about one instance name.

    ``ad`` is None when the advert is gone (goodbye or expiry, ``reason`` None)
    or unusable (``reason`` says why). A ``transient`` failure (no answer in
    time) leaves an already listed table alone; a bad advert drops it.
    """

    name: str
    ad: TableAd | None
    reason: str | None = None
    transient: bool = False


@dataclass
class TableTracker:
    """Turns browser reports into appear/update/vanish events (no I/O; tested alone).

    At most ``limit`` tables are listed, so a flood of adverts cannot grow
    memory without bound; each distinct rejection is logged once.
    """

    limit: int = MAX_TABLES
    tables: dict[str, TableAd] = field(default_factory=dict)
    _logged: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def _ignore(self, name: str, reason: str) -> None:
        if (name, reason) in self._logged:
            return
        if len(self._logged) >= 4 * self.limit:
            self._logged.clear()
        self._logged.add((name, reason))
        logger.warning("ignoring advert %r: %s", name, reason)

    def apply(self, report: AdReport) -> TableEvent | None:
        known = self.tables.get(report.name)
        if report.ad is None:
            if report.reason is not None:
                self._ignore(report.name, report.reason)
            if known is None or report.transient:
                return None
            del self.tables[report.name]
            return TableEvent(Change.VANISHED, report.name, known)
        if known is None and len(self.tables) >= self.limit:
            self._ignore(report.name, f"already listing {self.limit} tables")
            return None
        self.tables[report.name] = report.ad
        if known is None:
            return TableEvent(Change.APPEARED, report.name, report.ad)
        if known != report.ad:
            return TableEvent(Change.UPDATED, report.name, report.ad)
        return None


def _resolve(zc: Zeroconf, service_type: str, name: str) -> AdReport:
    """Fetch and decode one advert. Blocking: runs on zeroconf's browser thread."""
    try:
        info = ServiceInfo(service_type, name)
        if not info.request(zc, RESOLVE_TIMEOUT_MS):
            return AdReport(name, None, "no complete answer (SRV, TXT, address)", transient=True)
        addresses = info.parsed_addresses(IPVersion.V4Only) or info.parsed_scoped_addresses(
            IPVersion.V6Only
        )
        if not addresses:
            return AdReport(name, None, "no address")
        if info.port is None:
            return AdReport(name, None, "no port")
        return AdReport(name, TableAd.from_txt(info.text or b"", addresses[0], info.port))
    except BadAdvertisement as exc:
        return AdReport(name, None, str(exc))
    except Exception as exc:  # a callback on the browser thread must never raise
        return AdReport(name, None, f"cannot resolve: {exc!r}", transient=True)


class ReportBridge:
    """Carries reports from foreign threads (zeroconf's) into trio, in order.

    :meth:`deliver` blocks the calling thread while the channel is full
    (backpressure on the browser thread, never on an event loop), never
    raises, and returns at once for good after :meth:`close`.
    """

    def __init__(self, buffer: int = 64) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._send, self.reports = trio.open_memory_channel[AdReport](buffer)

    def deliver(self, report: AdReport) -> None:
        """Thread side: hand one report to trio."""
        try:
            trio.from_thread.run(self._send.send, report, trio_token=self._token)
        except (trio.RunFinishedError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the browse block has ended; nobody is listening any more
        except trio.Cancelled:
            pass  # the trio run is shutting down

    def close(self) -> None:
        """Trio side: stop listening; blocked and later deliveries return at once."""
        self.reports.close()


class _LivenessProber:
    """A thread that re-resolves every listed table and reports those that went silent."""

    def __init__(self, zc: Zeroconf, deliver: Callable[[AdReport], None], interval: float) -> None:
        self._zc = zc
        self._deliver = deliver
        self._interval = interval
        self._names: set[str] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="nodealer-discovery-liveness", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def watch(self, name: str, listed: bool) -> None:
        with self._lock:
            if listed:
                self._names.add(name)
            else:
                self._names.discard(name)

    def stop(self) -> None:
        """Blocking (up to one resolve timeout): worker thread only."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stopping.wait(self._interval):
            with self._lock:
                names = sorted(self._names)
            for name in names:
                if self._stopping.is_set():
                    return
                try:
                    answered = ServiceInfo(SERVICE_TYPE, name).request(
                        self._zc, LIVENESS_TIMEOUT_MS
                    )
                except Exception:  # zeroconf shutting down under us: stop quietly
                    return
                if not answered:
                    self.watch(name, False)
                    self._deliver(AdReport(name, None, "host stopped answering"))


class TableBrowser:
    """The tables on the LAN: ``async for event in browser`` and ``browser.tables``.

    Reports from the browser thread are folded into :attr:`tables` as the
    events are read, so the list and the events never disagree.
    """

    def __init__(self, reports: trio.MemoryReceiveChannel[AdReport]) -> None:
        self._reports = reports
        self._tracker = TableTracker()

    @property
    def tables(self) -> Mapping[str, TableAd]:
        """Every table seen so far and not vanished, by DNS-SD instance name (read-only)."""
        return MappingProxyType(self._tracker.tables)

    def __aiter__(self) -> TableBrowser:
        return self

    async def __anext__(self) -> TableEvent:
        while True:
            try:
                report = await self._reports.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                raise StopAsyncIteration from None
            event = self._tracker.apply(report)
            if event is not None:
                return event

    async def next_event(self, timeout: float) -> TableEvent | None:
        """The next event, or ``None`` after ``timeout`` seconds (handy in lobbies)."""
        with trio.move_on_after(timeout):
            return await self.__anext__()
        return None


@asynccontextmanager
async def browse(
    interface: str | None = None, *, liveness_interval: float = LIVENESS_INTERVAL_SECONDS
) -> AsyncIterator[TableBrowser]:
    """Watch the LAN for tables until the block ends.

    ``interface`` restricts mDNS to one local address; the default listens on
    every interface. Events come in the order the network showed them; a bad
    advert produces no event, only a log line. Every ``liveness_interval``
    seconds each listed table is re-resolved, so a host that crashed without
    a goodbye vanishes too (see AD_TTL_SECONDS).
    """
    if interface is not None:
        interface = _check_address(interface)
    if not liveness_interval > 0:
        raise DiscoveryError(f"liveness_interval must be positive, not {liveness_interval!r}")
    bridge = ReportBridge()
    deliver = bridge.deliver

    def on_change(
        zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:
        if state_change is ServiceStateChange.Removed:
            report = AdReport(name, None)
        else:
            report = _resolve(zeroconf, service_type, name)
        if not report.transient:
            prober.watch(name, report.ad is not None)
        deliver(report)

    # Opening is shielded so a cancel cannot strand a started zeroconf thread.
    with trio.CancelScope(shield=True):
        zc = await trio.to_thread.run_sync(_open_zeroconf, interface)
    prober = _LivenessProber(zc, deliver, liveness_interval)
    browser: ServiceBrowser | None = None
    try:
        with trio.CancelScope(shield=True):
            browser = await trio.to_thread.run_sync(
                lambda: ServiceBrowser(zc, SERVICE_TYPE, handlers=[on_change])
            )
            prober.start()
        yield TableBrowser(bridge.reports)
    finally:
        # Close the bridge first: a thread blocked handing us a report then
        # returns at once instead of deadlocking the joins below.
        bridge.close()
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(prober.stop)
            if browser is not None:
                await trio.to_thread.run_sync(browser.cancel)
            await trio.to_thread.run_sync(zc.close)


async def find_tables(seconds: float = 3.0, interface: str | None = None) -> list[TableAd]:
    """Browse for ``seconds`` and return the tables seen, e.g. for a one-shot listing."""
    async with browse(interface) as tables:
        with trio.move_on_after(seconds):
            async for _ in tables:
                pass
        return sorted(tables.tables.values(), key=lambda ad: (ad.game, ad.table_id))


async def find_table(
    wanted: Callable[[TableAd], bool],
    seconds: float = 4.0,
    interface: str | None = None,
    *,
    settle: float = FIND_SETTLE_SECONDS,
    first: Callable[[TableAd], object] | None = None,
) -> TableAd | None:
    """The first table (in :func:`find_tables`' order) that ``wanted``
    accepts, browsing at most ``seconds``: once one answers, only ``settle``
    seconds more (a second wanted table answering meanwhile is weighed
    too), not the whole browse - ``nodealer join`` goes to its table as soon
    as it is found. None when no wanted table answered in time. ``first``:
    a sort key putting the tables to prefer first (before game and id)."""
    async with browse(interface) as tables:
        deadline = trio.current_time() + seconds
        with trio.move_on_at(deadline) as looking:
            async for _ in tables:
                if any(wanted(ad) for ad in tables.tables.values()):
                    looking.deadline = min(looking.deadline, trio.current_time() + settle)
        found = [ad for ad in tables.tables.values() if wanted(ad)]
        rank = first or (lambda ad: 0)
        return min(found, key=lambda ad: (rank(ad), ad.game, ad.table_id), default=None)
