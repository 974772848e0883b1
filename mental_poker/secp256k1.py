"""The card group of protocol v3: secp256k1, through coincurve.

Theory of operation
-------------------
secp256k1 (SEC 2) has prime order ``N`` and cofactor 1: every point of the
curve but the point at infinity is a valid group element. coincurve binds
libsecp256k1 (MIT / Apache-2.0, wheels for Linux, macOS and Windows);
var-mult, add and decode cost about a third, a quarter and an eighth of
edwards25519's through libsodium (bench/README.md has the figures).
protocol.md §1.1 (v3) specifies everything below; ``tests/test_mp_secp256k1.py``
checks it against a pure-Python re-implementation of the curve.

* Point: the 33-byte SEC1 compressed encoding ``02|03 ‖ x`` (prefix: parity
  of y), and nothing else: a point is *valid* iff it is 33 bytes, the prefix
  is 02 or 03, ``x < p`` (canonical) and ``x³ + 7`` is a square mod p (on the
  curve). The point at infinity has no 33-byte encoding, so no valid point
  is the identity. libsecp256k1's parser checks exactly that (after our
  length check: it also takes 65-byte forms, which we never pass it).
* The point at infinity, which coincurve cannot hold, is represented here
  by its SEC1 encoding, the single byte ``00`` (:data:`INFINITY`): ``mul``
  by 0 (mod N) and a sum that cancels give it, every operation takes it, and
  transcripts hash it as that one byte. It is never valid on the wire
  (:meth:`Secp256k1.parse_point` wants 33 bytes).
* Negation: coincurve has none. :meth:`Secp256k1.neg` flips the prefix byte
  (02 ↔ 03: same x, the other y), and the proofs fold signs into scalars
  (``a − e·W`` is computed ``a + (−e mod N)·W``), so no negation is on a
  hot path.
* Hash-to-curve: try-and-increment over SHA-256 with a domain-separation
  tag (:meth:`Secp256k1.hash_to_point`); inputs are public (card and
  generator numbers), so its variable time leaks nothing.
* Scalars: 32 bytes big-endian (SEC1's order), below N; hashes and random
  bytes are read big-endian and reduced mod N.

Points are handed out as :class:`_Point`, a ``bytes`` subclass (equal to,
and hashing and packing as, its 33-byte encoding) that keeps libsecp256k1's
parsed form once it has one, so that using a point again costs no second
parse (a square root, 5 µs; a received deck point is multiplied 2-4 times
by a verifier). A point this process computed carries it from the start;
one received is only shape-checked by :meth:`Secp256k1.parse_point` and
parsed, i.e. validated, by the first operation that uses it (protocol.md
§1.1's order of checks and blame, unchanged), which keeps the result on
that object. Plain ``bytes`` work too (parsed at every use).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from coincurve import PublicKey

from .errors import InvalidPoint
from .group_api import Group, hash_items, tick

P = 2**256 - 2**32 - 977
"""The field prime of secp256k1."""
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
"""The group order of secp256k1."""
POINT_BYTES = 33
INFINITY = b"\x00"
"""The point at infinity (SEC1's encoding): computed values and transcripts only."""
G = bytes.fromhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
"""The standard base point of secp256k1 (SEC 2), compressed."""
H2C_TAG = b"nodealer/v3/secp256k1/try-and-increment"
"""Domain-separation tag of :meth:`Secp256k1.hash_to_point`."""
H2C_MAX_TRIES = 256
"""A try succeeds with probability about 1/2: 256 failures in a row (2**-256)
never happen, and a bound keeps the loop finite."""


class _Point(bytes):
    """A point's encoding, with its parsed ``key`` once known (None before)."""

    key: PublicKey | None

    def __reduce__(self) -> tuple[type[bytes], tuple[bytes]]:
        return bytes, (bytes(self),)  # pickled and copied as its encoding alone


def _wrap(key: PublicKey) -> _Point:
    point = _Point(key.format(compressed=True))
    point.key = key
    return point


def _parse(p: bytes) -> PublicKey:
    """The parsed form of a point (validating it), or InvalidPoint naming it."""
    known = type(p) is _Point
    if known and p.key is not None:
        return p.key
    if not isinstance(p, bytes) or len(p) != POINT_BYTES or p[0] not in (2, 3):
        raise InvalidPoint(f"not a compressed secp256k1 point: {p!r:.80}", p)
    try:
        key = PublicKey(bytes(p))
    except ValueError as exc:  # x >= p, or x³ + 7 is no square mod p
        raise InvalidPoint(f"not a point of secp256k1: {p.hex()}", p) from exc
    if known:
        p.key = key  # type: ignore[union-attr]  # parsed once, for every later use
    return key


class Secp256k1(Group):
    """secp256k1 as the :class:`~mental_poker.group_api.Group` of a deal."""

    name = "secp256k1"
    order = N
    point_bytes = POINT_BYTES
    scalar_bytes = 32
    byteorder = "big"
    identity = INFINITY
    generator = G
    context_version = 3

    def parse_point(self, data: object) -> bytes:
        """Shape check only (33 bytes); the first use validates (and keeps
        the parsed form on the returned object)."""
        point = _Point(super().parse_point(data))
        point.key = None
        return point

    def is_valid_point(self, p: bytes) -> bool:
        tick("check")
        try:
            _parse(p)
        except InvalidPoint:
            return False
        return True

    def mul(self, k: int, p: bytes) -> bytes:
        k %= N
        if p == INFINITY:
            return INFINITY
        key = _parse(p)  # validates p, even for a zero k
        if k == 0:
            return INFINITY
        tick("var")
        return _wrap(key.multiply(k.to_bytes(32, "big")))

    def base_mul(self, k: int) -> bytes:
        k %= N
        if k == 0:
            return INFINITY
        tick("base")
        return _wrap(PublicKey.from_valid_secret(k.to_bytes(32, "big")))

    def add(self, p: bytes, q: bytes) -> bytes:
        if p == INFINITY:
            return q
        if q == INFINITY:
            return p
        return self.point_sum((p, q))

    def point_sum(self, points: Sequence[bytes]) -> bytes:
        """One libsecp256k1 ``combine`` over every term (counted as one
        addition per term after the first): it accumulates in Jacobian
        coordinates, exact through partial sums at infinity, and refuses
        only a total at infinity, which is then :data:`INFINITY`."""
        terms = [p for p in points if p != INFINITY]
        if len(terms) <= 1:
            return terms[0] if terms else INFINITY
        keys = [_parse(p) for p in terms]
        tick("add", len(keys) - 1)
        try:
            return _wrap(PublicKey.combine_keys(keys))
        except ValueError:  # the sum is the point at infinity
            return INFINITY

    def neg(self, p: bytes) -> bytes:
        if p == INFINITY:
            return INFINITY
        _parse(p)
        return bytes([p[0] ^ 1]) + p[1:]  # 02 <-> 03: the same x, the other y

    def hash_to_point(self, domain: bytes, *items: bytes) -> bytes:
        """Try-and-increment: ``h = Hash(domain, items…)``; for ``ctr = 0,
        1, …`` the first ``x = int_be(SHA-256(H2C_TAG ‖ h ‖ u32(ctr)))``
        with ``x < p`` and ``x³ + 7`` a square mod p gives the point
        ``02 ‖ x`` (the one of even y)."""
        tick("map")
        h = hash_items(domain, *items)
        for ctr in range(H2C_MAX_TRIES):
            x = hashlib.sha256(H2C_TAG + h + ctr.to_bytes(4, "big")).digest()
            if int.from_bytes(x, "big") >= P:
                continue
            try:
                return _wrap(PublicKey(b"\x02" + x))
            except ValueError:
                continue
        raise InvalidPoint("hash-to-curve found no point")  # pragma: no cover - 2**-256


SECP256K1: Group = Secp256k1()
"""The card group of protocol v3 (v2 logs: edwards25519)."""
