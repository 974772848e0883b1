"""What the deal and its proofs need of a prime-order group: :class:`Group`.

Theory of operation
-------------------
Every card, key and proof lives in one prime-order group, chosen by the
deal's :class:`~mental_poker.context.Context` (``ctx.group``). Two groups
implement this interface:

* :data:`mental_poker.group.ED25519` — the prime-order subgroup of
  edwards25519 through libsodium (PyNaCl): protocol v1/v2, today's tables
  and logs;
* :data:`mental_poker.secp256k1.SECP256K1` — secp256k1 through coincurve
  (libsecp256k1): protocol v3 (protocol.md §1.1, (v3)).

A future group (a compiled ristretto255 with a real multi-scalar
multiplication) is one more file implementing this class.

Representation, the same for every group:

* a **point** is ``bytes``: its canonical encoding (``point_bytes`` long on
  the wire), or the group's ``identity`` (the neutral element, which only
  ever arises as a computed value and is never valid on the wire). An
  implementation may hand out a ``bytes`` subclass that carries a parsed
  form of the point (secp256k1 does); it compares, hashes and encodes as
  the plain bytes;
* a **scalar** is a Python ``int`` in ``[0, order)``, ``scalar_bytes``
  long on the wire in the group's byte order, never reduced on decode.

Validation follows protocol.md §1.1 for every group: single points are
validated by :meth:`Group.decode_point`; points that arrive in bulk (a
deck, a proof) are only *parsed* (:meth:`Group.parse_point`: the length)
and validated by the first :meth:`Group.mul` that uses them, which raises
:class:`~mental_poker.errors.InvalidPoint` naming the point. ``mul`` lets
the identity through (a computed value). ``add`` need not validate: a
parsed point must never reach a result through additions alone.

Sums are exact in the group, the identity included: a partial sum that
hits the identity is the identity, so a sum never depends on the order in
which the worker threads add its terms (every peer must reach the same
verdict whatever its number of cores).

:func:`count_ops` counts the group operations performed inside a ``with``
block (``bench/shuffle.py`` compares measured time with the sum of
per-operation costs).
"""

from __future__ import annotations

import hashlib
import importlib
import secrets
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

from .errors import DecodeError, InvalidPoint, NonCanonicalScalar
from .parallel import run_chunked
from .rand import Rng

# ---------------------------------------------------------------- op counting

_count_lock = threading.Lock()
_counter: Counter[str] | None = None


def tick(kind: str, n: int = 1) -> None:
    """Count ``n`` operations of ``kind`` in the current :func:`count_ops` block."""
    if _counter is not None:
        with _count_lock:
            _counter[kind] += n


@contextmanager
def count_ops() -> Iterator[Counter[str]]:
    """Count group operations inside the block: ``var`` (variable-base
    mult), ``base`` (fixed-base mult), ``add`` (add or sub), ``check``
    (point validation), ``map`` (hash-to-curve)."""
    global _counter
    previous, _counter = _counter, Counter()
    try:
        yield _counter
    finally:
        _counter = previous


# ---------------------------------------------------------------- hashing


def hash_items(*items: bytes) -> bytes:
    """SHA-512 of ``len(item) as u32 big-endian || item`` for every item
    (``Hash`` of protocol.md §1.1; the same for every group)."""
    h = hashlib.sha512()
    for item in items:
        h.update(len(item).to_bytes(4, "big"))
        h.update(item)
    return h.digest()


# ---------------------------------------------------------------- the group


def _named_group(module: str, name: str) -> Group:
    """The group object called ``name`` in ``module`` (unpickling)."""
    found = [
        v
        for v in vars(importlib.import_module(module)).values()
        if isinstance(v, Group) and v.name == name
    ]
    if len(found) != 1:
        raise ValueError(f"no group {name!r} in {module}")
    return found[0]


class Group(ABC):
    """A prime-order group as the deal uses it. Subclasses set the class
    attributes and implement the abstract point operations; scalar
    arithmetic, sums and the decoding rules are shared."""

    name: str
    """Short name (``"edwards25519"``, ``"secp256k1"``)."""
    order: int
    """The (prime) group order: scalars live mod this."""
    point_bytes: int
    """Length of a point's encoding on the wire."""
    scalar_bytes: int = 32
    byteorder: Literal["little", "big"]
    """How scalars are written (and how hashes and random bytes are read)."""
    identity: bytes
    """The neutral element's encoding inside this package and in
    transcripts; never valid on the wire."""
    generator: bytes
    """The standard base point G."""
    context_version: int
    """The version number every transcript of this group binds (§1.2)."""

    def __repr__(self) -> str:
        return f"<group {self.name}>"

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        """A group is a singleton (compared with ``is``): pickled by name."""
        return _named_group, (type(self).__module__, self.name)

    # ------------------------------------------------------------ scalars

    def random_scalar(self, rng: Rng | None = None) -> int:
        """A uniform scalar in ``[1, order-1]`` from 64 random bytes reduced
        mod the order (bias below 2**-250)."""
        draw = rng or secrets.token_bytes
        while True:
            k = int.from_bytes(draw(64), self.byteorder) % self.order
            if k:
                return k

    def encode_scalar(self, k: int) -> bytes:
        """``scalar_bytes`` bytes; ``k`` must already be reduced."""
        if not 0 <= k < self.order:
            raise ValueError(f"scalar not reduced mod the group order: {k}")
        return k.to_bytes(self.scalar_bytes, self.byteorder)

    def decode_scalar(self, data: object, *, nonzero: bool = False) -> int:
        """Strictly decode a scalar: exactly ``scalar_bytes`` bytes, value
        below the order (and not zero when ``nonzero``)."""
        if not isinstance(data, bytes) or len(data) != self.scalar_bytes:
            raise NonCanonicalScalar(
                f"a scalar is exactly {self.scalar_bytes} bytes, got {data!r:.80}"
            )
        k = int.from_bytes(data, self.byteorder)
        if k >= self.order:
            raise NonCanonicalScalar("scalar is not canonical (value >= the group order)")
        if nonzero and k == 0:
            raise NonCanonicalScalar("scalar must not be zero")
        return k

    def inverse(self, k: int) -> int:
        """Inverse mod the order of a non-zero scalar."""
        if k % self.order == 0:
            raise ZeroDivisionError("zero scalar has no inverse")
        return pow(k, -1, self.order)

    def hash_to_scalar(self, *items: bytes) -> int:
        """``HashS``: :func:`hash_items` read in the group's byte order,
        reduced mod the order."""
        return int.from_bytes(hash_items(*items), self.byteorder) % self.order

    # ------------------------------------------------------------ points

    @abstractmethod
    def is_valid_point(self, p: bytes) -> bool:
        """A canonical encoding of a group element other than the identity."""

    def parse_point(self, data: object) -> bytes:
        """Shape check only (exactly ``point_bytes`` bytes, not the
        identity): for points validated by the first :meth:`mul` that uses
        them. Raises InvalidPoint."""
        if not isinstance(data, bytes) or len(data) != self.point_bytes:
            raise InvalidPoint(f"a point is exactly {self.point_bytes} bytes, got {data!r:.80}")
        if data == self.identity:
            raise InvalidPoint("the identity is not a valid point", data)
        return data

    def parse_points(self, value: object, n: int, what: str) -> tuple[bytes, ...]:
        """A list of ``n`` points, parsed only (:meth:`parse_point`)."""
        if not isinstance(value, list | tuple) or len(value) != n:
            raise DecodeError(f"{what}: expected a list of {n} points")
        return tuple(self.parse_point(p) for p in value)

    def decode_point(self, data: object) -> bytes:
        """Strictly decode and validate a point at once (raises InvalidPoint)."""
        point = self.parse_point(data)
        if not self.is_valid_point(point):
            raise InvalidPoint(f"not a valid prime-order point: {point.hex()}", point)
        return point

    @abstractmethod
    def mul(self, k: int, p: bytes) -> bytes:
        """``k·p``; raises InvalidPoint (naming ``p``) unless ``p`` is a
        valid point or the identity, whatever ``k`` (zero included)."""

    @abstractmethod
    def base_mul(self, k: int) -> bytes:
        """``k·G``."""

    @abstractmethod
    def add(self, p: bytes, q: bytes) -> bytes:
        """``p + q`` (the identity included)."""

    @abstractmethod
    def neg(self, p: bytes) -> bytes:
        """``−p``."""

    def sub(self, p: bytes, q: bytes) -> bytes:
        """``p − q``."""
        return self.add(p, self.neg(q))

    @abstractmethod
    def hash_to_point(self, domain: bytes, *items: bytes) -> bytes:
        """A point nobody knows a discrete log of, from a domain label and
        items (public inputs only)."""

    def point_sum(self, points: Sequence[bytes]) -> bytes:
        """Sum of points (the identity for none)."""
        if not points:
            return self.identity
        acc = points[0]
        for p in points[1:]:
            acc = self.add(acc, p)
        return acc

    def msm(self, pairs: Sequence[tuple[int, bytes]]) -> bytes:
        """``Σ k·P`` over ``(k, P)`` pairs, split across the worker threads:
        one variable-base multiplication and one addition per term (neither
        library has a multi-scalar multiplication)."""
        identity, mul = self.identity, self.mul

        def partial(chunk: Sequence[tuple[int, bytes]]) -> bytes:
            return self.point_sum([p for p in (mul(k, q) for k, q in chunk) if p != identity])

        return self.point_sum([p for p in run_chunked(partial, pairs) if p != identity])
