"""The card group of protocol v1/v2: the prime-order subgroup of edwards25519,
through libsodium.

Theory of operation
-------------------
Every card, key and proof of nodealer lives in the subgroup of order
``L = 2**252 + 27742317777372353535851937790883648493`` of the edwards25519
curve. Points travel as 32-byte canonical encodings (``bytes``); scalars are
Python ``int`` in ``[0, L)`` inside this package and 32-byte little-endian
strings on the wire.

Only libsodium's ``_noclamp`` scalar multiplications are used (clamping
would change the scalar and break commutativity), through PyNaCl's public
bindings. Scalar arithmetic (sums, products, inverses mod L) is done with
Python integers, which is faster than a libsodium call for one operation.

Every point received from another peer is validated before anything
depends on it: canonical encoding, on the curve, in the prime-order
subgroup, not of small order (``crypto_core_ed25519_is_valid_point``).
Either at once, by :func:`decode_point`, or when it is first used: libsodium's
``crypto_scalarmult_ed25519_noclamp`` runs exactly that check on its input
point, so :func:`mul` (and :func:`msm`) raise :class:`InvalidPoint` (carrying
the point) instead of multiplying an invalid one. A point that arrives in
bulk (a deck, a proof) is only *parsed* (:func:`parse_point`: 32 bytes, not
the identity's encoding) and validated by the first multiplication that uses
it (:func:`mul` lets the identity through, as a value computed by a sum may
be the identity); whoever parses it keeps track of its author so that the
error names that seat (``deal.DealTable``).
This avoids a second, separate check of every point before the
multiplication that checks it anyway (a check costs half a multiplication).
``add``/``sub`` only check that a point is on the curve, so a parsed point
must never reach a result through additions alone. Every scalar received
goes through :func:`decode_scalar` (exactly 32 bytes, value < L).

Randomness comes only from :mod:`secrets` (64 bytes reduced mod L, so the
bias is below 2**-250). Functions that draw randomness accept an ``rng``
(``n -> n random bytes``) so that test vectors can be reproduced with
:class:`SeededRng`; production code always uses the default.

The module-level functions are this group's operations; :data:`ED25519`
is the same as a :class:`~mental_poker.group_api.Group` object (what the deal
and its proofs take from their context). The worker threads
(:mod:`mental_poker.parallel`), the op counter and the transcript hash
(:mod:`mental_poker.group_api`) and the seeded test stream
(:mod:`mental_poker.rand`) are re-exported here under their old names.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence

import nacl.bindings as _sodium
import nacl.exceptions

from .errors import DecodeError, InvalidPoint, NonCanonicalScalar
from .group_api import Group, count_ops, hash_items, tick
from .parallel import MAX_WORKERS, _mark_worker, pmap, run_chunked, set_workers, workers
from .rand import Rng, SeededRng, random_permutation

L = 2**252 + 27742317777372353535851937790883648493
"""Order of the prime-order subgroup of edwards25519."""

POINT_BYTES = 32
SCALAR_BYTES = 32
IDENTITY = b"\x01" + bytes(31)
"""Encoding of the neutral element (never valid on the wire)."""
G = _sodium.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))
"""The standard base point of edwards25519."""

# ---------------------------------------------------------------- scalars


def random_scalar(rng: Rng | None = None) -> int:
    """A uniform scalar in ``[1, L-1]`` from 64 random bytes reduced mod L."""
    draw = rng or secrets.token_bytes
    while True:
        k = int.from_bytes(draw(64), "little") % L
        if k:
            return k


def encode_scalar(k: int) -> bytes:
    """32 bytes little-endian; ``k`` must already be reduced mod L."""
    if not 0 <= k < L:
        raise ValueError(f"scalar not reduced mod L: {k}")
    return k.to_bytes(SCALAR_BYTES, "little")


def decode_scalar(data: object, *, nonzero: bool = False) -> int:
    """Strictly decode a scalar: exactly 32 bytes, value below L (and not
    zero when ``nonzero``)."""
    if not isinstance(data, bytes) or len(data) != SCALAR_BYTES:
        raise NonCanonicalScalar(f"a scalar is exactly {SCALAR_BYTES} bytes, got {data!r:.80}")
    k = int.from_bytes(data, "little")
    if k >= L:
        raise NonCanonicalScalar("scalar is not canonical (value >= L)")
    if nonzero and k == 0:
        raise NonCanonicalScalar("scalar must not be zero")
    return k


def inverse(k: int) -> int:
    """Inverse mod L of a non-zero scalar."""
    if k % L == 0:
        raise ZeroDivisionError("zero scalar has no inverse")
    return pow(k, -1, L)


def hash_to_scalar(*items: bytes) -> int:
    """SHA-512 over length-prefixed items, read little-endian, reduced mod L."""
    return int.from_bytes(hash_items(*items), "little") % L


# ---------------------------------------------------------------- points


def is_valid_point(p: bytes) -> bool:
    """Canonical, on the curve, in the prime-order subgroup, not small order."""
    tick("check")
    if not isinstance(p, bytes) or len(p) != POINT_BYTES:
        return False
    return _sodium.crypto_core_ed25519_is_valid_point(p)


def parse_point(data: object) -> bytes:
    """Shape check only (exactly 32 bytes, not the identity's encoding):
    for points that will be validated by the first :func:`mul` that uses
    them (see the module docstring). Raises InvalidPoint."""
    if not isinstance(data, bytes) or len(data) != POINT_BYTES:
        raise InvalidPoint(f"a point is exactly {POINT_BYTES} bytes, got {data!r:.80}")
    if data == IDENTITY:  # mul() passes the identity through (a derived value)
        raise InvalidPoint("the identity is not a valid point", data)
    return data


def parse_points(value: object, n: int, what: str) -> tuple[bytes, ...]:
    """A list of ``n`` points, parsed only (32 bytes, not the identity): a
    deck or a proof's points, validated by the multiplication that first
    uses each (``mul``), which names its author."""
    if not isinstance(value, list | tuple) or len(value) != n:
        raise DecodeError(f"{what}: expected a list of {n} points")
    return tuple(parse_point(p) for p in value)


def decode_point(data: object) -> bytes:
    """Strictly decode and validate a point received from anyone at once
    (raises InvalidPoint)."""
    point = parse_point(data)
    if not is_valid_point(point):
        raise InvalidPoint(f"not a valid prime-order point: {point.hex()}", point)
    return point


def mul(k: int, p: bytes) -> bytes:
    """``k·p``; raises InvalidPoint (naming ``p``) unless ``p`` is a valid
    point or the identity (which only arises as a computed value, e.g. a sum:
    :func:`parse_point` refuses it on the wire). libsodium checks ``p`` as
    part of the multiplication; a zero scalar (which never calls libsodium)
    still gets the check."""
    _sized(p)
    k %= L
    if p == IDENTITY:
        return IDENTITY
    if k == 0:
        if not is_valid_point(p):
            raise InvalidPoint(f"not a valid prime-order point: {p.hex()}", p)
        return IDENTITY
    tick("var")
    try:
        return _sodium.crypto_scalarmult_ed25519_noclamp(k.to_bytes(32, "little"), p)
    except nacl.exceptions.RuntimeError as exc:  # libsodium rejected the point
        raise InvalidPoint(f"scalar multiplication rejected point {p.hex()}", p) from exc


def base_mul(k: int) -> bytes:
    """``k·G``."""
    k %= L
    if k == 0:
        return IDENTITY
    tick("base")
    return _sodium.crypto_scalarmult_ed25519_base_noclamp(k.to_bytes(32, "little"))


def _sized(p: object) -> None:
    """Refuse anything but 32 bytes before libsodium sees it: another group's
    point (secp256k1's are 33 bytes) in this process is an InvalidPoint,
    never libsodium's TypeError escaping a verifier."""
    if not isinstance(p, bytes) or len(p) != POINT_BYTES:
        raise InvalidPoint(f"a point is exactly {POINT_BYTES} bytes, got {p!r:.80}", p)


def _on_curve(op: Callable[[bytes, bytes], bytes], p: bytes, q: bytes) -> bytes:
    _sized(p)
    _sized(q)
    try:
        return op(p, q)
    except nacl.exceptions.RuntimeError as exc:  # libsodium: not on the curve
        try:
            _sodium.crypto_core_ed25519_add(p, G)
            bad = q
        except nacl.exceptions.RuntimeError:
            bad = p
        raise InvalidPoint(f"not a point of the curve: {bad.hex()}", bad) from exc


def add(p: bytes, q: bytes) -> bytes:
    """``p + q``. Only checks that both are on the curve (see module docstring)."""
    tick("add")
    return _on_curve(_sodium.crypto_core_ed25519_add, p, q)


def sub(p: bytes, q: bytes) -> bytes:
    """``p − q``. Only checks that both are on the curve (see module docstring)."""
    tick("add")
    return _on_curve(_sodium.crypto_core_ed25519_sub, p, q)


def hash_to_point(domain: bytes, *items: bytes) -> bytes:
    """Hash-to-curve: ``from_uniform`` (Elligator 2, then cofactor clearing)
    over the first 32 bytes of the length-prefixed SHA-512 of the domain
    label and items. Nobody knows a discrete-log relation between two such
    points. Raises if the result is not a valid point (the identity)."""
    tick("map")
    point = _sodium.crypto_core_ed25519_from_uniform(hash_items(domain, *items)[:32])
    if not _sodium.crypto_core_ed25519_is_valid_point(point):  # pragma: no cover - 2**-250
        raise InvalidPoint("hash-to-curve produced the identity")
    return point


# ---------------------------------------------------------------- sums


def point_sum(points: Sequence[bytes]) -> bytes:
    """Sum of points (the identity for none)."""
    if not points:
        return IDENTITY
    acc = points[0]
    for p in points[1:]:
        acc = add(acc, p)
    return acc


def msm(pairs: Sequence[tuple[int, bytes]]) -> bytes:
    """``Σ k·P`` over ``(k, P)`` pairs, split across the worker threads.
    libsodium has no multi-scalar multiplication: this is one variable-base
    multiplication and one addition per term."""

    def partial(chunk: Sequence[tuple[int, bytes]]) -> bytes:
        return point_sum([p for p in (mul(k, q) for k, q in chunk) if p != IDENTITY])

    return point_sum([p for p in run_chunked(partial, pairs) if p != IDENTITY])


def neg(p: bytes) -> bytes:
    """``−p`` (``identity − p``). Only checks that ``p`` is on the curve."""
    return sub(IDENTITY, p)


# ---------------------------------------------------------------- the group object


class Edwards25519(Group):
    """The prime-order subgroup of edwards25519 (the functions above, as
    the :class:`~mental_poker.group_api.Group` the deal uses)."""

    name = "edwards25519"
    order = L
    point_bytes = POINT_BYTES
    scalar_bytes = SCALAR_BYTES
    byteorder = "little"
    identity = IDENTITY
    generator = G
    context_version = 1

    random_scalar = staticmethod(random_scalar)  # type: ignore[assignment]
    encode_scalar = staticmethod(encode_scalar)  # type: ignore[assignment]
    decode_scalar = staticmethod(decode_scalar)  # type: ignore[assignment]
    inverse = staticmethod(inverse)  # type: ignore[assignment]
    hash_to_scalar = staticmethod(hash_to_scalar)  # type: ignore[assignment]
    is_valid_point = staticmethod(is_valid_point)  # type: ignore[assignment]
    parse_point = staticmethod(parse_point)  # type: ignore[assignment]
    parse_points = staticmethod(parse_points)  # type: ignore[assignment]
    decode_point = staticmethod(decode_point)  # type: ignore[assignment]
    mul = staticmethod(mul)  # type: ignore[assignment]
    base_mul = staticmethod(base_mul)  # type: ignore[assignment]
    add = staticmethod(add)  # type: ignore[assignment]
    sub = staticmethod(sub)  # type: ignore[assignment]
    neg = staticmethod(neg)  # type: ignore[assignment]
    hash_to_point = staticmethod(hash_to_point)  # type: ignore[assignment]
    point_sum = staticmethod(point_sum)  # type: ignore[assignment]
    msm = staticmethod(msm)  # type: ignore[assignment]


ED25519: Group = Edwards25519()
"""The card group of protocol v1/v2 (every table and log today)."""

__all__ = [
    "ED25519",
    "IDENTITY",
    "MAX_WORKERS",
    "POINT_BYTES",
    "SCALAR_BYTES",
    "Edwards25519",
    "G",
    "L",
    "Rng",
    "SeededRng",
    "_mark_worker",
    "add",
    "base_mul",
    "count_ops",
    "decode_point",
    "decode_scalar",
    "encode_scalar",
    "hash_items",
    "hash_to_point",
    "hash_to_scalar",
    "inverse",
    "is_valid_point",
    "msm",
    "mul",
    "neg",
    "parse_point",
    "parse_points",
    "pmap",
    "point_sum",
    "random_permutation",
    "random_scalar",
    "run_chunked",
    "set_workers",
    "sub",
    "workers",
]
