"""Randomness of a deal, apart from any group: the ``rng`` argument of the
functions that draw (``n -> n random bytes``; production code always uses
:mod:`secrets`), the seeded stream that reproduces the test vectors
(protocol.md §1.10), and the shuffle permutation (Fisher–Yates)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable

Rng = Callable[[int], bytes]


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
