"""ristretto255 through rbcl (its bundled libsodium), as a card group for the
benchmarks only: ``pip install rbcl`` (not a dependency of nodealer). It
shows what the group interface (mental_poker/group_api.py) makes of a third
group in one file, and prices the same deal over it (bench/shuffle.py,
section 0). Not specified for the wire; points are checked only as far
as rbcl's libsodium calls check them.
"""

from __future__ import annotations

import rbcl

from mental_poker.errors import InvalidPoint
from mental_poker.group_api import Group, hash_items, tick

L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = bytes(32)


class Ristretto255(Group):
    name = "ristretto255"
    order = L
    point_bytes = 32
    scalar_bytes = 32
    byteorder = "little"
    identity = IDENTITY
    generator = rbcl.crypto_scalarmult_ristretto255_base((1).to_bytes(32, "little"))
    context_version = 99  # not a protocol version: benchmarks only

    def is_valid_point(self, p: bytes) -> bool:
        tick("check")
        return p != IDENTITY and bool(rbcl.crypto_core_ristretto255_is_valid_point(p))

    def mul(self, k: int, p: bytes) -> bytes:
        k %= L
        if p == IDENTITY:
            return IDENTITY
        if k == 0:
            if not self.is_valid_point(p):
                raise InvalidPoint(f"not a ristretto255 point: {p.hex()}", p)
            return IDENTITY
        tick("var")
        try:
            return rbcl.crypto_scalarmult_ristretto255(k.to_bytes(32, "little"), p)
        except RuntimeError as exc:
            raise InvalidPoint(f"not a ristretto255 point: {p.hex()}", p) from exc

    def base_mul(self, k: int) -> bytes:
        k %= L
        if k == 0:
            return IDENTITY
        tick("base")
        return rbcl.crypto_scalarmult_ristretto255_base(k.to_bytes(32, "little"))

    def add(self, p: bytes, q: bytes) -> bytes:
        tick("add")
        return rbcl.crypto_core_ristretto255_add(p, q)

    def neg(self, p: bytes) -> bytes:
        return rbcl.crypto_core_ristretto255_sub(IDENTITY, p)

    def sub(self, p: bytes, q: bytes) -> bytes:
        tick("add")
        return rbcl.crypto_core_ristretto255_sub(p, q)

    def hash_to_point(self, domain: bytes, *items: bytes) -> bytes:
        tick("map")
        return rbcl.crypto_core_ristretto255_from_hash(hash_items(domain, *items))


RISTRETTO255: Group = Ristretto255()
