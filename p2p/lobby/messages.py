"""The lobby's values and messages: errors, settings and their digest,
nicknames, the message schemas and the bytes each signature covers
(protocol.md §4.3)."""

from __future__ import annotations

import enum
import hashlib
import logging
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

from p2p.envelope import TableSpec
from p2p.identity import Identity, PeerKey
from p2p.watch import MAX_SPECTATORS
from p2p.wire import (
    HASH_LEN,
    KEY_LEN,
    MAX_SEATS,
    MAX_TABLE_ID,
    PROTOCOL_VERSION,
    SIG_LEN,
    Check,
    SchemaError,
    bin_field,
    canonical,
    int_field,
    list_field,
    map_field,
    text_field,
    unpack_strict,
)

PAKE_MSG = 33  # spake2: one side byte and a 32-byte point
MAC_LEN = 32

log = logging.getLogger("nodealer.p2p.lobby")

LOBBY_ID = b"nodealer/lobby"  # the table id in every lobby handshake (the real one comes later)
SETTINGS_TAG = b"nodealer/settings/v1\x00"
REQUEST_TAG = "nodealer/v1/seat-request"
SPEC_TAG = "nodealer/lobby-spec"
AGREE_TAG = "nodealer/lobby-agree"

MAX_NICK = 32  # characters
MAX_SETTINGS = 16 * 1024  # bytes of canonical msgpack
MAX_SETTINGS_DEPTH = 32
MAX_CODE = 32
MAX_TEXT = 200
MAX_HOST = 255

CONNECT_TIMEOUT = 5.0  # a joiner's TCP connection
HANDSHAKE_TIMEOUT = 5.0
REQUEST_TIMEOUT = 10.0  # from accept to a joiner's request (host side)
REPLY_TIMEOUT = 10.0  # a joiner waits this long for the host's first lobby and its answer
AGREE_TIMEOUT = 10.0  # from a spec to every seat's agreement
START_TIMEOUT = 30.0  # a joiner's wait for the start after its agreement
PENDING_TOTAL = 64  # lobby connections not yet seated, from every address
PENDING_PER_HOST = 4  # ... and from one remote address (16 addresses to fill the lobby)
HANDSHAKE_FRAME = 1024  # largest frame before the handshake ends
READ_CHUNK = 2048  # bytes the host reads at once from a joiner
JOINER_FRAME = 1024  # largest (sealed) payload a joiner ever sends the host
OUTBOX = 64  # frames queued to one joiner before it counts as not reading
CLOSE_GRACE = 5.0  # the host's wait for its last frames to leave after the start
TICK = 0.05
MAX_ERRORS = 1000

# refusal codes (the ``code`` of a ``refused`` message)
VERSION, TABLE, SIGNATURE, SETTINGS = "version", "table", "signature", "settings"
SEATED, NICKNAME, FULL, CLOSED = "seated", "nickname", "full", "closed"
TIMEOUT, PROTOCOL, SPEC = "timeout", "protocol", "spec"
CODE = "code"  # a private table's code was wrong (or missing)
WRONG_CODE = "wrong table code — check it with the host"
REMOVED = "the host removed you from the table"  # a ``refused closed`` before the start

_FINGERPRINT_RE = re.compile(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){3}")
_BAD_NICK_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


# --------------------------------------------------------------------- errors


class LobbyError(Exception):
    """Something a person can act on went wrong in the lobby.

    ``code`` is the refusal code when the other side refused us (or we
    refused it); ``reply`` is the ``refused`` message to send before closing,
    if any."""

    code = "error"

    def __init__(self, text: str, *, code: str | None = None, reply: dict | None = None) -> None:
        super().__init__(text)
        if code is not None:
            self.code = code
        self.reply = reply


class HostUnreachable(LobbyError):
    """No lobby answered at that address (refused, timed out, not a lobby, busy)."""


class WrongHost(LobbyError):
    """The lobby there is not the advertised one (another key or table id)."""


class HostLeft(LobbyError):
    """The host closed the lobby (or the connection broke) before the start."""


class TableFull(LobbyError):
    """Every seat is taken."""

    code = FULL


class SettingsMismatch(LobbyError):
    """The host's settings are not the ones this joiner agrees to."""

    code = SETTINGS


class VersionMismatch(LobbyError):
    """The host speaks another protocol version."""

    code = VERSION


class SettingsChanged(LobbyError):
    """The host changed the settings after this joiner agreed to them."""

    code = SETTINGS


class NicknameTaken(LobbyError):
    """The host refused the nickname as unusable (one already at the table is
    seated with a number, never refused: :mod:`p2p.lobby.nicknames`)."""

    code = NICKNAME


class AlreadySeated(LobbyError):
    """This key already holds a seat at that table."""

    code = SEATED


class Refused(LobbyError):
    """The other side refused us for another reason (``code`` says which)."""


class BadHostMessage(LobbyError):
    """The host sent something malformed or against the lobby's rules."""

    code = PROTOCOL


class BadSpec(BadHostMessage):
    """The host's table does not match what it showed (seats, keys, signatures)."""

    code = SPEC


class WrongCode(LobbyError):
    """The host of a private table refused our table code."""

    code = CODE


class PrivateTable(LobbyError):
    """The table is private and we have no code for it."""

    code = CODE


class Removed(LobbyError):
    """The host removed us from the table before it started."""

    code = CLOSED


class NotEnoughPlayers(LobbyError):
    """:meth:`LobbyHost.start` with fewer than ``min_seats`` seated."""


_REFUSALS: dict[str, type[LobbyError]] = {
    FULL: TableFull,
    SETTINGS: SettingsMismatch,
    VERSION: VersionMismatch,
    NICKNAME: NicknameTaken,
    SEATED: AlreadySeated,
}


def _refusal_error(code: str, text: str) -> LobbyError:
    if code == CODE:
        # the wrong-code line, or the host's own reason (a paused table)
        return WrongCode(
            WRONG_CODE if text == WRONG_CODE else f"the host refused: {text}", code=code
        )
    if (code, text) == (CLOSED, REMOVED):
        return Removed(REMOVED)
    cls = _REFUSALS.get(code, Refused)
    return cls(f"the host refused: {text} ({code})", code=code)


# --------------------------------------------------------------------- settings


def _normalise(value: Any, depth: int, where: str) -> Any:
    if depth > MAX_SETTINGS_DEPTH:
        raise ValueError(f"{where}: nested deeper than {MAX_SETTINGS_DEPTH}")
    if value is None or type(value) in (bool, str, bytes, float):
        return value
    if type(value) is int:
        if not -(1 << 63) <= value < 1 << 64:
            raise ValueError(f"{where}: integer {value} does not fit msgpack")
        return value
    if type(value) in (list, tuple):
        return [_normalise(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        for key in value:
            if type(key) is not str:
                raise ValueError(f"{where}: map key {key!r} is not text")
        return {k: _normalise(value[k], depth + 1, f"{where}.{k}") for k in sorted(value)}
    raise ValueError(f"{where}: {type(value).__name__} is not a msgpack value")


def canonical_settings(settings: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a settings map: msgpack (``use_bin_type``), every
    map's keys text and sorted (by code point, i.e. by UTF-8 bytes), tuples as
    arrays, at most ``MAX_SETTINGS`` bytes. Raises ``ValueError`` otherwise."""
    if not isinstance(settings, Mapping):
        raise ValueError(f"settings must be a map, not {type(settings).__name__}")
    data = msgpack.packb(_normalise(settings, 0, "settings"), use_bin_type=True)
    if len(data) > MAX_SETTINGS:
        raise ValueError(f"settings are {len(data)} bytes of msgpack; at most {MAX_SETTINGS}")
    return data


def settings_digest(settings: Mapping[str, Any]) -> bytes:
    """SHA-256(``"nodealer/settings/v1" ‖ 0x00 ‖ canonical_settings(settings)``)."""
    return hashlib.sha256(SETTINGS_TAG + canonical_settings(settings)).digest()


def _canonical_copy(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings exactly as a joiner decodes them (sorted keys, lists)."""
    return unpack_strict(canonical_settings(settings))


def _show(settings: Mapping[str, Any], limit: int = 160) -> str:
    """Settings for an error message: repr (control characters escaped), cut short."""
    text = repr(settings)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def nickname_problem(nick: object) -> str | None:
    """Why ``nick`` cannot be a nickname, or None: 1 to 32 characters, no
    control, format, private-use, unassigned, line-separator or invisible
    (default-ignorable) characters, no space at either end."""
    if type(nick) is not str:
        return "a nickname is text"
    if not 1 <= len(nick) <= MAX_NICK:
        return f"a nickname has 1 to {MAX_NICK} characters"
    if nick != nick.strip():
        return "a nickname cannot start or end with a space"
    if any(unicodedata.category(ch) in _BAD_NICK_CATEGORIES or _invisible(ch) for ch in nick):
        return "a nickname cannot contain control or invisible characters"
    if any(ch in _BLANK_LOOKING for ch in nick) or not any(ch.isalnum() for ch in nick):
        return "a nickname must show letters or digits (no blank-looking fillers)"
    if _COMBINING_RUN.search(unicodedata.normalize("NFC", nick)):
        return "a nickname cannot stack combining marks"
    scripts = {_script(ch) for ch in nick if ch.isalpha()} - {None}
    if len(scripts) > 1:
        return "a nickname cannot mix Latin, Greek and Cyrillic letters (they look alike)"
    if _FINGERPRINT_RE.search(nick.upper()):
        return "a nickname cannot look like a fingerprint"
    return None


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt) and the
# Khitan small script filler: drawn as nothing, so "player" and "player" with
# one of these would show alike while their keys differ (protocol.md §4)
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors, vowel separator
    (0x200B, 0x200F),  # zero width space, joiners, directional marks
    (0x202A, 0x202E),  # directional embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, isolates
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors 1-16
    (0xFEFF, 0xFEFF),  # zero width no-break space
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # reserved
    (0x16FE4, 0x16FE4),  # Khitan small script filler (not in the list, as blank)
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE0FFF),  # tags, variation selectors 17-256, reserved
)


def _invisible(ch: str) -> bool:
    """Whether ``ch`` is one of :data:`_INVISIBLE_RANGES`."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _INVISIBLE_RANGES)


_BLANK_LOOKING = frozenset("\u2800")  # braille blank: drawn, but as nothing
_COMBINING_RUN = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff]{3,}")


def _script(ch: str) -> str | None:
    """Latin, Greek or Cyrillic for a letter of those scripts (the ones whose
    letters are confused with each other), else None."""
    name = unicodedata.name(ch, "")
    for script in ("LATIN", "GREEK", "CYRILLIC"):
        if name.startswith(script):
            return script
    return None


def _nick_key(nick: str) -> str:
    """Nicknames that look alike count as taken: NFKC, case-folded."""
    return unicodedata.normalize("NFKC", nick).casefold()


# --------------------------------------------------------------------- messages


def _nick(value: Any, where: str) -> None:
    problem = nickname_problem(value)
    if problem is not None:
        raise SchemaError(f"{where}: {problem}")


def _fingerprint(value: Any, where: str) -> None:
    if type(value) is not str or not _FINGERPRINT_RE.fullmatch(value):
        raise SchemaError(f"{where}: not a fingerprint (XXXX-XXXX-XXXX-XXXX)")


def _settings(value: Any, where: str) -> None:
    if type(value) is not dict:
        raise SchemaError(f"{where}: expected a map, got {type(value).__name__}")
    try:
        canonical_settings(value)
    except ValueError as exc:
        raise SchemaError(f"{where}: {exc}") from None


VERSION_FIELD = int_field(0, 0xFFFF)
TABLE_FIELD = bin_field(1, MAX_TABLE_ID)
SIG_FIELD = bin_field(SIG_LEN, SIG_LEN)
ROUND_FIELD = int_field(0, (1 << 32) - 1)
PLAYER = map_field({"seat": int_field(0, MAX_SEATS - 1), "nick": _nick, "fp": _fingerprint})
SPEC_SEAT = map_field(
    {
        "key": bin_field(KEY_LEN, KEY_LEN),
        "nick": _nick,
        "host": text_field(1, MAX_HOST),
        "port": int_field(1, 0xFFFF),
    }
)

LOBBY_SCHEMAS: dict[str, dict[str, Check]] = {
    # joiner -> host
    "request": {
        "v": VERSION_FIELD,
        "table": TABLE_FIELD,
        "digest": bin_field(HASH_LEN, HASH_LEN),
        "nick": text_field(0, MAX_NICK),  # a bad nickname is refused as such, not as malformed
        "port": int_field(1, 0xFFFF),
        "s": SIG_FIELD,
    },
    "agree": {"round": ROUND_FIELD, "s": SIG_FIELD},
    # host -> joiner
    "lobby": {
        "v": VERSION_FIELD,
        "table": TABLE_FIELD,
        "settings": _settings,
        "total": int_field(2, MAX_SEATS),
        "min": int_field(2, MAX_SEATS),
        "players": list_field(PLAYER, 1, MAX_SEATS),
    },  # and, at a table that takes spectators, "watch" (OPTIONAL below)
    "spec": {
        "v": VERSION_FIELD,
        "table": TABLE_FIELD,
        "round": ROUND_FIELD,
        "digest": bin_field(HASH_LEN, HASH_LEN),
        "seats": list_field(SPEC_SEAT, 2, MAX_SEATS),
        "s": SIG_FIELD,
    },
    "start": {"agreements": list_field(SIG_FIELD, 2, MAX_SEATS)},
    # a private table's code (table_code.py): host, joiner, host
    "pake": {"table": TABLE_FIELD, "m": bin_field(PAKE_MSG, PAKE_MSG)},
    "pake-reply": {"m": bin_field(PAKE_MSG, PAKE_MSG), "mac": bin_field(MAC_LEN, MAC_LEN)},
    "pake-ok": {"mac": bin_field(MAC_LEN, MAC_LEN)},
    "watching": {"n": int_field(0, MAX_SPECTATORS)},  # spectators now (protocol.md §4.1)
    # either way
    "refused": {"code": text_field(1, MAX_CODE), "text": text_field(0, MAX_TEXT)},
}


WATCH = map_field({"port": int_field(1, 0xFFFF), "max": int_field(1, MAX_SPECTATORS)})
OPTIONAL: dict[str, dict[str, Check]] = {"lobby": {"watch": WATCH}}
"""Fields a message may carry or not: the host's watch port and at most how
many spectators (protocol.md §4.1, §8), only at a table that takes them."""


def check_lobby_message(msg: Any) -> dict[str, Any]:
    """``msg`` if it is exactly one of :data:`LOBBY_SCHEMAS`, else :class:`SchemaError`."""
    if type(msg) is not dict:
        raise SchemaError(f"a message is a map, got {type(msg).__name__}")
    kind = msg.get("k")
    if type(kind) is not str:
        raise SchemaError("message has no text field 'k' naming its kind")
    fields = LOBBY_SCHEMAS.get(kind)
    if fields is None:
        raise SchemaError(f"unknown lobby message kind {kind[:40]!r}")
    present = {k: c for k, c in OPTIONAL.get(kind, {}).items() if k in msg}
    map_field({"k": text_field(1, 16), **fields, **present})(msg, kind)
    return msg


def decode_lobby_message(payload: bytes) -> dict[str, Any]:
    """Decode and validate one (opened) lobby frame; raises :class:`WireError`."""
    return check_lobby_message(unpack_strict(payload))


def lobby_message(kind: str, **fields: Any) -> dict[str, Any]:
    """Build a lobby message (checked, so our own bugs never reach the wire)."""
    return check_lobby_message({"k": kind, **fields})


def refused(code: str, text: str) -> dict[str, Any]:
    return lobby_message("refused", code=code, text=text[:MAX_TEXT])


def request_bytes(table_id: bytes, digest: bytes, nick: str, port: int) -> bytes:
    """What a joiner signs to ask for a seat."""
    return canonical(REQUEST_TAG, table_id, digest, nick, port)


def request_message(
    identity: Identity,
    table_id: bytes,
    digest: bytes,
    nick: str,
    port: int,
    version: int = PROTOCOL_VERSION,
) -> dict[str, Any]:
    """A signed ``request`` for a seat."""
    sig = identity.sign(request_bytes(table_id, digest, nick, port))
    return lobby_message(
        "request", v=version, table=table_id, digest=digest, nick=nick, port=port, s=sig
    )


def spec_bytes(
    version: int, table_id: bytes, digest: bytes, seats: list[tuple[bytes, str, str, int]]
) -> bytes:
    """What the host signs as the table: every seat's (key, nick, host, port)."""
    return canonical(SPEC_TAG, version, table_id, digest, [list(s) for s in seats])


def agree_bytes(version: int, table_id: bytes, spec: bytes) -> bytes:
    """What every seat (the host too) signs to agree to the spec ``spec``."""
    return canonical(AGREE_TAG, version, table_id, hashlib.sha256(spec).digest())


# --------------------------------------------------------------------- values


@dataclass(frozen=True)
class Player:
    """A seated player as the lobby shows it."""

    seat: int
    nickname: str
    fingerprint: str

    def __str__(self) -> str:
        return f"seat {self.seat}: {self.nickname} ({self.fingerprint})"


class Phase(enum.Enum):
    OPEN = "open"  # taking seats
    AGREEING = "agreeing"  # a spec is out, waiting for every agreement
    STARTED = "started"


@dataclass(frozen=True)
class LobbyState:
    """What a lobby screen shows: the table, its settings and who sits where."""

    table_id: bytes
    settings: dict[str, Any]
    seats: int
    min_seats: int
    players: tuple[Player, ...]
    phase: Phase = Phase.OPEN
    watch: tuple[int, int] | None = None
    """(the host's watch port, at most how many spectators): the table takes
    spectators (protocol.md §8); None: it takes none"""
    watching: int = 0
    """spectators watching now, as the host last said"""

    @property
    def taken(self) -> int:
        return len(self.players)

    @property
    def digest(self) -> bytes:
        return settings_digest(self.settings)

    def __str__(self) -> str:
        return (
            f"table {self.table_id.hex()[:8]}: {self.taken}/{self.seats} seats "
            f"({self.phase.value}): " + ", ".join(p.nickname for p in self.players)
        )


@dataclass(frozen=True)
class SeatedTable:
    """The table every seat agreed to: what a :class:`p2p.node.Node` needs.

    ``table`` holds the keys in seat order; ``addresses[s]`` is where seat
    ``s``'s game node listens; ``seat`` is our own. ``agreements[s]`` is seat
    ``s``'s signature over the spec (:func:`agree_bytes`), ``spec_signature``
    the host's over :func:`spec_bytes`: evidence that everyone agreed."""

    table: TableSpec
    seat: int
    addresses: tuple[tuple[str, int], ...]
    nicknames: tuple[str, ...]
    settings: dict[str, Any]
    digest: bytes
    spec_signature: bytes
    agreements: tuple[bytes, ...]

    @property
    def table_id(self) -> bytes:
        return self.table.table_id

    @property
    def n(self) -> int:
        return self.table.n

    @property
    def fingerprints(self) -> tuple[str, ...]:
        return tuple(k.fingerprint for k in self.table.seats)

    @property
    def own_address(self) -> tuple[str, int]:
        """Where our game node must listen (``addresses[seat]``)."""
        return self.addresses[self.seat]

    def peers(self) -> dict[int, tuple[str, int]]:
        """Every other seat's address, for :meth:`p2p.node.Node.add_address`."""
        return {s: a for s, a in enumerate(self.addresses) if s != self.seat}

    def spec_bytes(self) -> bytes:
        seats = [
            (k.raw, nick, host, port)
            for k, nick, (host, port) in zip(
                self.table.seats, self.nicknames, self.addresses, strict=True
            )
        ]
        return spec_bytes(self.table.version, self.table_id, self.digest, seats)

    def verify(self) -> None:
        """Check the host's and every seat's signature (raises :class:`BadSpec`)."""
        spec = self.spec_bytes()
        if not self.table.seats[0].verify(self.spec_signature, spec):
            raise BadSpec("the table is not signed by its host (seat 0)")
        if len(self.agreements) != self.n:
            raise BadSpec(f"{len(self.agreements)} agreements for {self.n} seats")
        agreed = agree_bytes(self.table.version, self.table_id, spec)
        for seat, (key, sig) in enumerate(zip(self.table.seats, self.agreements, strict=True)):
            if not key.verify(sig, agreed):
                raise BadSpec(f"seat {seat} ({key}) did not agree to this table")

    def __str__(self) -> str:
        return f"{self.table}, seat {self.seat} of " + ", ".join(self.nicknames)


def _seated(
    version: int,
    table_id: bytes,
    seats: list[tuple[bytes, str, str, int]],
    seat: int,
    settings: dict[str, Any],
    digest: bytes,
    spec_signature: bytes,
    agreements: list[bytes],
) -> SeatedTable:
    return SeatedTable(
        table=TableSpec(table_id, tuple(PeerKey(s[0]) for s in seats), version),
        seat=seat,
        addresses=tuple((s[2], s[3]) for s in seats),
        nicknames=tuple(s[1] for s in seats),
        settings=settings,
        digest=digest,
        spec_signature=spec_signature,
        agreements=tuple(agreements),
    )
