"""What a table's advert says, and where to connect: :class:`TableAd` (one
advert as a small immutable value, with its exact TXT wire form,
protocol.md §4), :class:`HostPort` and :func:`parse_hostport` (the manual
``HOST:PORT``), and the errors of discovery. No I/O: :mod:`p2p.discovery`
publishes and browses these on the LAN.

An advert is untrusted: anyone on the LAN can publish anything. Decoding is
strict (every required key present, every value matching its grammar, sizes
bounded); a bad advert is a :class:`BadAdvertisement`.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Final

from p2p.wire import MAX_SEATS, MAX_TABLE_ID, PROTOCOL_VERSION

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
    watch_port: int | None = None
    """the host's watch port (protocol.md §8), if the table takes spectators"""
    spectators: int = 0
    """at most this many spectators at once (0: the table takes none)"""
    playing: bool = False
    """the game has started: no seat to take, still there to watch"""

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
        if not isinstance(self.private, bool) or not isinstance(self.playing, bool):
            raise BadAdvertisement("private and playing must be true or false")
        if (self.watch_port is None) != (self.spectators == 0):
            raise BadAdvertisement("a watch port and a number of spectators go together")
        if self.watch_port is not None:
            _check_port(self.watch_port, "watch port")
        if type(self.spectators) is not int or not 0 <= self.spectators <= MAX_SEATS:
            raise BadAdvertisement(f"spectators must be 0 to {MAX_SEATS}, not {self.spectators!r}")

    def __str__(self) -> str:
        version = "" if self.compatible else f" (protocol {self.protocol_version})"
        named = f"{self.name}: " if self.name else ""
        host = f"{self.host_name} " if self.host_name else ""
        mode = {None: "", True: ", proven", False: ", unproven"}[self.proven]
        mode += ", private (join --code)" if self.private else ""
        mode += ", playing" if self.playing else ""
        if self.watch_port is not None:
            mode += f", spectators: up to {self.spectators} (watch port {self.watch_port})"
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
    def takes_seats(self) -> bool:
        """Whether a joiner may try this table: open, not full, same protocol."""
        return self.compatible and not self.is_full and not self.playing

    @property
    def hostport(self) -> HostPort:
        return HostPort(self.address, self.port)

    @property
    def watch_hostport(self) -> HostPort | None:
        """Where spectators connect (the advert's address), if anywhere."""
        return None if self.watch_port is None else HostPort(self.address, self.watch_port)

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
        if self.watch_port is not None:
            pairs += [("w", str(self.watch_port)), ("wmax", str(self.spectators))]
        if self.playing:
            pairs.append(("play", "1"))
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
        watch_port, spectators = _watch_keys(fields)
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
            watch_port=watch_port,
            spectators=spectators,
            playing=fields.get("play") == "1",
        )


_PORT_RE: Final = re.compile(r"[1-9][0-9]{0,4}")
_SPECTATORS_RE: Final = re.compile(r"[1-9][0-9]?")


def _watch_keys(fields: dict[str, str | None]) -> tuple[int | None, int]:
    """The watch port and the most spectators (``w``, ``wmax``): both or none."""
    port, most = fields.get("w"), fields.get("wmax")
    if port is None and most is None:
        return None, 0
    if not _PORT_RE.fullmatch(port or "") or not _SPECTATORS_RE.fullmatch(most or ""):
        raise BadAdvertisement(f"TXT w={port!r} wmax={most!r} is not a watch port and a limit")
    return int(port or "0"), int(most or "0")


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
    if host in ("0.0.0.0", "::"):  # a name like "0.a" is a host name, not an address
        raise BadHostPort(f"{spec!r}: {host} is not an address one can connect to")
    return HostPort(host, port)
