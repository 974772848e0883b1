"""The card group: the prime-order subgroup of edwards25519, through libsodium.

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

Heavy loops (one libsodium call per card) go through :func:`pmap` /
:func:`msm`, which split the work into one contiguous chunk per worker
thread. libsodium runs with the GIL released, so on two cores this gives
close to 2x (measured on 2 idle cores, n = 54: shuffle proof made in 29 ->
17 ms, checked in 34 -> 20 ms; when other processes already load both cores
there is no gain). They are plain blocking functions: call them from
``trio.to_thread.run_sync`` in an event-loop program.

:func:`count_ops` counts the group operations performed inside a ``with``
block (used by ``bench/shuffle.py`` to compare measured time with the sum of
per-operation costs).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

import nacl.bindings as _sodium
import nacl.exceptions

from .errors import DecodeError, InvalidPoint, NonCanonicalScalar

L = 2**252 + 27742317777372353535851937790883648493
"""Order of the prime-order subgroup of edwards25519."""

POINT_BYTES = 32
SCALAR_BYTES = 32
IDENTITY = b"\x01" + bytes(31)
"""Encoding of the neutral element (never valid on the wire)."""
G = _sodium.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))
"""The standard base point of edwards25519."""

Rng = Callable[[int], bytes]

T = TypeVar("T")
R = TypeVar("R")

# ---------------------------------------------------------------- op counting

_count_lock = threading.Lock()
_counter: Counter[str] | None = None


def _tick(kind: str, n: int = 1) -> None:
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


def hash_items(*items: bytes) -> bytes:
    """SHA-512 of ``len(item) as u32 big-endian || item`` for every item."""
    h = hashlib.sha512()
    for item in items:
        h.update(len(item).to_bytes(4, "big"))
        h.update(item)
    return h.digest()


# ---------------------------------------------------------------- points


def is_valid_point(p: bytes) -> bool:
    """Canonical, on the curve, in the prime-order subgroup, not small order."""
    _tick("check")
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
    k %= L
    if p == IDENTITY:
        return IDENTITY
    if k == 0:
        if not is_valid_point(p):
            raise InvalidPoint(f"not a valid prime-order point: {p.hex()}", p)
        return IDENTITY
    _tick("var")
    try:
        return _sodium.crypto_scalarmult_ed25519_noclamp(k.to_bytes(32, "little"), p)
    except nacl.exceptions.RuntimeError as exc:  # libsodium rejected the point
        raise InvalidPoint(f"scalar multiplication rejected point {p.hex()}", p) from exc


def base_mul(k: int) -> bytes:
    """``k·G``."""
    k %= L
    if k == 0:
        return IDENTITY
    _tick("base")
    return _sodium.crypto_scalarmult_ed25519_base_noclamp(k.to_bytes(32, "little"))


def _on_curve(op: Callable[[bytes, bytes], bytes], p: bytes, q: bytes) -> bytes:
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
    _tick("add")
    return _on_curve(_sodium.crypto_core_ed25519_add, p, q)


def sub(p: bytes, q: bytes) -> bytes:
    """``p − q``. Only checks that both are on the curve (see module docstring)."""
    _tick("add")
    return _on_curve(_sodium.crypto_core_ed25519_sub, p, q)


def hash_to_point(domain: bytes, *items: bytes) -> bytes:
    """Hash-to-curve: ``from_uniform`` (Elligator 2, then cofactor clearing)
    over the first 32 bytes of the length-prefixed SHA-512 of the domain
    label and items. Nobody knows a discrete-log relation between two such
    points. Raises if the result is not a valid point (the identity)."""
    _tick("map")
    point = _sodium.crypto_core_ed25519_from_uniform(hash_items(domain, *items)[:32])
    if not _sodium.crypto_core_ed25519_is_valid_point(point):  # pragma: no cover - 2**-250
        raise InvalidPoint("hash-to-curve produced the identity")
    return point


# ---------------------------------------------------------------- parallelism

_MIN_PARALLEL = 8
"""Below this many items a loop stays on the calling thread (a hand-off costs
about as much as a few group operations)."""

MAX_WORKERS = 8
"""The most threads heavy loops use by default (one per core up to this)."""

_workers = max(1, min(multiprocessing.cpu_count(), MAX_WORKERS))
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_on_worker = threading.local()
"""``_on_worker.active`` is set on the pool's threads: a loop started there
runs inline (a worker waiting on the pool it belongs to could deadlock)."""


def _mark_worker() -> None:
    _on_worker.active = True


def set_workers(n: int) -> None:
    """Number of threads used by heavy loops (1 = all on the calling thread)."""
    global _workers, _pool
    if n < 1:
        raise ValueError("need at least one worker")
    with _pool_lock:
        _workers = n
        if _pool is not None:
            _pool.shutdown(wait=True)
            _pool = None


def workers() -> int:
    return _workers


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                _workers - 1, thread_name_prefix="mental-poker", initializer=_mark_worker
            )
        return _pool


def _chunks(items: Sequence[T], n: int) -> list[Sequence[T]]:
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(items[start:end])
        start = end
    return out


def run_chunked(fn: Callable[[Sequence[T]], R], items: Sequence[T]) -> list[R]:
    """Apply ``fn`` to one contiguous chunk of ``items`` per worker, the first
    chunk on the calling thread; results in chunk order. Inside a worker
    (a nested loop) everything stays on that thread."""
    n = _workers
    if n <= 1 or len(items) < _MIN_PARALLEL or getattr(_on_worker, "active", False):
        return [fn(items)]
    parts = _chunks(items, n)
    pool = _get_pool()
    futures = [pool.submit(fn, part) for part in parts[1:]]
    first = fn(parts[0])
    return [first, *(f.result() for f in futures)]


def pmap(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]``, split across the worker threads."""
    results: list[R] = []
    for part in run_chunked(lambda chunk: [fn(x) for x in chunk], items):
        results.extend(part)
    return results


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


# ---------------------------------------------------------------- test vectors


class SeededRng:
    """Deterministic byte stream (SHA-512 in counter mode over a seed) that
    stands in for ``secrets.token_bytes`` ONLY to reproduce the test vectors
    of protocol.md. Never use it for a real deal."""

    def __init__(self, seed: bytes) -> None:
        self._seed = bytes(seed)
        self._counter = 0
        self._buffer = b""

    def __call__(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = hashlib.sha512(
                b"nodealer/v1/test-rng" + self._seed + self._counter.to_bytes(8, "big")
            ).digest()
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out


def random_permutation(n: int, rng: Rng | None = None) -> tuple[int, ...]:
    """A uniformly random permutation of ``range(n)`` (Fisher–Yates, with
    unbiased draws by rejection from ``rng`` / :mod:`secrets`)."""
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = _below(i + 1, rng)
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


def _below(bound: int, rng: Rng | None) -> int:
    if rng is None:
        return secrets.randbelow(bound)
    nbytes = (bound.bit_length() + 7) // 8 + 1
    limit = (256**nbytes // bound) * bound
    while True:
        x = int.from_bytes(rng(nbytes), "big")
        if x < limit:
            return x % bound
