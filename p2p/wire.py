"""Bytes on the wire: length-prefixed msgpack frames and their strict schema.

Theory of operation
-------------------
A connection carries *frames*: a 4-byte big-endian length, then that many
bytes of msgpack. A length above :data:`MAX_FRAME` is refused as soon as the
prefix arrives, before any body is buffered. :class:`FrameDecoder` is sans-I/O:
feed it whatever ``recv`` returned and take whole frames out. After the
handshake every frame's bytes are sealed (:class:`p2p.handshake.Channel`);
the msgpack inside is what follows here.

Every frame decodes to one *message*: a msgpack map whose ``"k"`` names its
kind. :func:`decode_message` accepts a message only if it is exactly one of the
shapes in :data:`SCHEMAS` - every field present, no extra field, every value of
the right type and size (bools are not integers, text is valid UTF-8, no
msgpack extension types, no trailing bytes; map keys are text or bytes, and a
message's own maps only have the text keys of their schema). Anything else raises a
:class:`WireError` subclass saying what was wrong; the caller logs it and
closes that one connection. Nothing here knows about keys or the log; the
meaning of the messages is in :mod:`p2p.handshake` and :mod:`p2p.log`, their
layout in protocol.md §2.3.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

import msgpack

PROTOCOL_VERSION = 3  # what new tables speak (protocol.md)
READABLE_VERSIONS = (2, 3)  # whose saved logs verify and replay
MAX_FRAME = 1 << 20  # bytes of msgpack in one frame
MAX_BODY = 256 * 1024  # bytes of an event body (two fit in one proof frame)
MAX_TABLE_ID = 64
MAX_SEATS = 64
MAX_SEQ = (1 << 63) - 1
HASH_LEN = 32
SIG_LEN = 64
KEY_LEN = 32
NONCE_LEN = 32
MAX_FETCH = 4096
MAX_LINKS = 4096  # entries between the two of a replay proof (two bodies and these fit a frame)
SEAL_OVERHEAD = 16  # a sealed frame (after the handshake) carries a 16-byte tag

_LENGTH = struct.Struct(">I")


class WireError(Exception):
    """Something a peer sent could not be accepted; close that connection."""


class FrameTooLarge(WireError):
    """A frame's length prefix is above the limit."""


class MalformedFrame(WireError):
    """The frame is not one well-formed msgpack value."""


class SchemaError(WireError):
    """Well-formed msgpack, but not a message this protocol version knows."""


# --------------------------------------------------------------------- frames


def encode_payload(message: dict[str, Any]) -> bytes:
    """The msgpack bytes of ``message`` (at most :data:`MAX_FRAME`)."""
    payload = msgpack.packb(message, use_bin_type=True)
    if len(payload) > MAX_FRAME:
        raise FrameTooLarge(f"outgoing frame of {len(payload)} bytes exceeds {MAX_FRAME}")
    return payload


def frame_of(payload: bytes) -> bytes:
    """``payload`` with its length prefix."""
    return _LENGTH.pack(len(payload)) + payload


def encode_frame(message: dict[str, Any]) -> bytes:
    """One length-prefixed frame carrying ``message`` (unsealed: the handshake)."""
    return frame_of(encode_payload(message))


class FrameDecoder:
    """Reassembles frames from a byte stream (sans-I/O)."""

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._buffer = bytearray()
        self._max = max_frame

    @property
    def limit(self) -> int:
        """The largest frame accepted now (a handshake allows far less)."""
        return self._max

    @limit.setter
    def limit(self, max_frame: int) -> None:
        self._max = max_frame

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next_frame(self) -> bytes | None:
        """The next complete frame's payload, or None until more bytes arrive.
        Raises :class:`FrameTooLarge` as soon as a too-long prefix is seen."""
        if len(self._buffer) < 4:
            return None
        (length,) = _LENGTH.unpack_from(self._buffer)
        if length > self._max:
            raise FrameTooLarge(f"frame of {length} bytes announced; the limit is {self._max}")
        if len(self._buffer) < 4 + length:
            return None
        payload = bytes(self._buffer[4 : 4 + length])
        del self._buffer[: 4 + length]
        return payload

    def has_frame(self) -> bool:
        """Whether a whole frame is buffered (or a too-long prefix, which
        :meth:`next_frame` refuses)."""
        if len(self._buffer) < 4:
            return False
        (length,) = _LENGTH.unpack_from(self._buffer)
        return length > self._max or len(self._buffer) >= 4 + length

    def frames(self) -> Iterator[bytes]:
        """Yield every complete frame buffered so far; raise on a bad prefix."""
        while (payload := self.next_frame()) is not None:
            yield payload

    @property
    def buffered(self) -> int:
        return len(self._buffer)


def _no_ext(code: int, data: bytes) -> Any:
    raise MalformedFrame(f"msgpack extension type {code} is not allowed")


MAX_DEPTH = 64
"""Nesting a msgpack value may have (the value itself is level 1). Counted
here, not left to the msgpack build: its C extension and its pure-Python
fallback refuse different depths, and two peers must agree on what is valid."""


def _no_repeats(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise MalformedFrame("a msgpack map repeats a key")
    return out


def _depth_ok(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        inner = [c for c in children if type(c) in (dict, list)]
        if inner and depth >= MAX_DEPTH:
            return False  # a container one level too deep, even an empty one
        # only non-empty containers can go deeper: a million empty lists
        # cost one pass over them, not a million stack entries
        stack.extend((c, depth + 1) for c in inner if c)
    return True


def unpack_strict(payload: bytes) -> Any:
    """One msgpack value, strictly: UTF-8 text, map keys only str or bytes
    and never repeated in one map, no extensions, nothing after it, at most
    :data:`MAX_DEPTH` levels deep (protocol.md §2.3)."""
    try:
        value = msgpack.unpackb(
            payload,
            raw=False,
            use_list=True,
            strict_map_key=True,
            ext_hook=_no_ext,
            object_pairs_hook=_no_repeats,
        )
    except MalformedFrame:
        raise
    except (ValueError, TypeError, UnicodeDecodeError, msgpack.UnpackException) as exc:
        raise MalformedFrame(f"not a msgpack value: {exc.__class__.__name__}: {exc}") from exc
    if isinstance(value, (dict, list)) and not _depth_ok(value):
        raise MalformedFrame(f"a msgpack value nested more than {MAX_DEPTH} levels deep")
    return value


# --------------------------------------------------------------------- schema

Check = Callable[[Any, str], None]


def int_field(lo: int, hi: int) -> Check:
    """An integer (never a boolean) in ``lo..hi``."""

    def check(value: Any, where: str) -> None:
        if type(value) is not int:
            raise SchemaError(f"{where}: expected an integer, got {type(value).__name__}")
        if not lo <= value <= hi:
            raise SchemaError(f"{where}: {value} is outside {lo}..{hi}")

    return check


def bin_field(lo: int, hi: int) -> Check:
    """Bytes, ``lo..hi`` of them."""

    def check(value: Any, where: str) -> None:
        if type(value) is not bytes:
            raise SchemaError(f"{where}: expected bytes, got {type(value).__name__}")
        if not lo <= len(value) <= hi:
            raise SchemaError(f"{where}: {len(value)} bytes, expected {lo}..{hi}")

    return check


def text_field(lo: int, hi: int) -> Check:
    """Text, ``lo..hi`` characters."""

    def check(value: Any, where: str) -> None:
        if type(value) is not str:
            raise SchemaError(f"{where}: expected text, got {type(value).__name__}")
        if not lo <= len(value) <= hi:
            raise SchemaError(f"{where}: {len(value)} characters, expected {lo}..{hi}")

    return check


def map_field(fields: dict[str, Check]) -> Check:
    """A map with exactly ``fields``, each checked."""

    def check(value: Any, where: str) -> None:
        if type(value) is not dict:
            raise SchemaError(f"{where}: expected a map, got {type(value).__name__}")
        missing = fields.keys() - value.keys()
        extra = value.keys() - fields.keys()
        if missing:
            raise SchemaError(f"{where}: missing field(s) {sorted(missing)}")
        if extra:
            raise SchemaError(f"{where}: unknown field(s) {sorted(map(str, extra))}")
        for name, field_check in fields.items():
            field_check(value[name], f"{where}.{name}")

    return check


def list_field(item: Check, lo: int, hi: int) -> Check:
    """A list of ``lo..hi`` items, each checked."""

    def check(value: Any, where: str) -> None:
        if type(value) is not list:
            raise SchemaError(f"{where}: expected a list, got {type(value).__name__}")
        if not lo <= len(value) <= hi:
            raise SchemaError(f"{where}: {len(value)} items, expected {lo}..{hi}")
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")

    return check


SEAT = int_field(0, MAX_SEATS - 1)
SEQ = int_field(0, MAX_SEQ)
TERM = int_field(0, (1 << 32) - 1)
HASH = bin_field(HASH_LEN, HASH_LEN)
SIG = bin_field(SIG_LEN, SIG_LEN)

EVENT = map_field({"a": SEAT, "c": int_field(0, MAX_SEQ), "b": bin_field(0, MAX_BODY), "s": SIG})
ENTRY = map_field({"seq": int_field(1, MAX_SEQ), "term": TERM, "prev": HASH, "ev": EVENT, "s": SIG})
HEAD = {"term": TERM, "seq": SEQ, "hterm": TERM, "h": HASH, "s": SIG}
# a replay proof's hash links: (term, event digest) of each entry between its two
LINK = map_field({"term": TERM, "d": HASH})
# a newterm's certificate: the signed votes of a majority for that term
VOTE = map_field({"seat": SEAT, "seq": SEQ, "hterm": TERM, "h": HASH, "s": SIG})

SCHEMAS: dict[str, dict[str, Check]] = {
    # handshake (p2p.handshake)
    "hello": {
        "v": int_field(0, 0xFFFF),
        "table": bin_field(1, MAX_TABLE_ID),
        "key": bin_field(KEY_LEN, KEY_LEN),
        "nonce": bin_field(NONCE_LEN, NONCE_LEN),
        "eph": bin_field(KEY_LEN, KEY_LEN),
        "port": int_field(0, 0xFFFF),
    },
    "auth": {"s": SIG},
    # the ordered log (p2p.log)
    "submit": {"ev": EVENT},
    "entry": {"e": ENTRY},
    "ack": dict(HEAD),
    "beat": dict(HEAD),
    "vote": dict(HEAD),
    "prevote": dict(HEAD),  # (v3) asks for a pre-vote for `term` (protocol.md §3.5)
    "grant": dict(HEAD),  # (v3) grants one
    # (v3) other seats' latest acks, passed on (protocol.md §3.5 *Relayed acks*)
    "acks": {"of": list_field(map_field({"seat": SEAT, **HEAD}), 1, MAX_SEATS)},
    "newterm": {**HEAD, "votes": list_field(VOTE, 0, MAX_SEATS)},
    "fetch": {"from": int_field(1, MAX_SEQ), "n": int_field(1, MAX_FETCH)},
    "proof": {"a": ENTRY, "b": ENTRY},  # proofs against a sequencer (protocol.md §3.5)
    "forged": {"e": ENTRY},
    "replay": {"a": ENTRY, "b": ENTRY, "links": list_field(LINK, 0, MAX_LINKS)},
    # mesh (p2p.node)
    "addrs": {
        "peers": list_field(
            map_field({"seat": SEAT, "host": text_field(0, 255), "port": int_field(1, 0xFFFF)}),
            0,
            MAX_SEATS,
        )
    },
}


def check_message(message: Any) -> dict[str, Any]:
    """``message`` if it matches its kind's schema, else :class:`SchemaError`."""
    if type(message) is not dict:
        raise SchemaError(f"a message is a map, got {type(message).__name__}")
    kind = message.get("k")
    if type(kind) is not str:
        raise SchemaError("message has no text field 'k' naming its kind")
    fields = SCHEMAS.get(kind)
    if fields is None:
        raise SchemaError(f"unknown message kind {kind[:40]!r}")
    map_field({"k": text_field(0, 16), **fields})(message, kind)
    return message


def decode_message(payload: bytes) -> dict[str, Any]:
    """Decode and validate one frame's payload (raises :class:`WireError`)."""
    return check_message(unpack_strict(payload))


def message(kind: str, **fields: Any) -> dict[str, Any]:
    """Build a message (checked, so our own bugs never reach the wire)."""
    return check_message({"k": kind, **fields})


def canonical(*items: Any) -> bytes:
    """The canonical bytes that get signed or hashed: the msgpack array of
    ``items`` (shortest forms, bytes as bin, text as str); protocol.md §2.2."""
    return msgpack.packb(list(items), use_bin_type=True)
