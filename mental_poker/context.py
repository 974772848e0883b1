"""The context every Fiat–Shamir transcript binds, and the group it lives in.

A proof is only valid in the context it was made for: protocol version, table
id, deal number (a new deal for every shuffle, including a reshuffle of a
discard pile), the protocol step (``"shuffle"``, ``"lock"``, ``"identity"``,
``"handover"``)
and the prover's seat. A proof replayed into another table, deal, step or seat
hashes to another challenge and fails.

The context also chooses the deal's group (``group``: edwards25519 by
default, :data:`mental_poker.secp256k1.SECP256K1` for v3 tables, chosen by
:func:`mental_poker.groups.group_for`); the
version it binds defaults to the group's (1 for edwards25519, 3 for
secp256k1), so that a transcript of one group never reads as one of another.

>>> ctx = Context(b"table-1", deal=3)
>>> str(ctx.at("shuffle", 2))
'v1/7461626c652d31/deal 3/shuffle/seat 2'
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .errors import DecodeError
from .group import ED25519
from .group_api import Group

PROTOCOL_VERSION = 1
CTX_LABEL = b"nodealer/v1/ctx"
MAX_TABLE_ID = 64
STEPS = ("", "shuffle", "lock", "identity", "handover")


def u64(n: int) -> bytes:
    """Unsigned 64-bit big-endian (how integers enter transcripts)."""
    return n.to_bytes(8, "big")


@dataclass(frozen=True, slots=True)
class Context:
    """Where a proof belongs. ``step``/``seat`` are filled in with :meth:`at`."""

    table_id: bytes
    deal: int
    step: str = ""
    seat: int = 0
    version: int = 0
    """0: the group's own version (``group.context_version``)."""
    group: Group = ED25519

    def __post_init__(self) -> None:
        if not isinstance(self.group, Group):
            raise DecodeError(f"not a group: {self.group!r:.40}")
        if self.version == 0 and type(self.version) is int:
            object.__setattr__(self, "version", self.group.context_version)
        if not isinstance(self.table_id, bytes) or not 1 <= len(self.table_id) <= MAX_TABLE_ID:
            raise DecodeError(f"table id must be 1..{MAX_TABLE_ID} bytes")
        for name in ("deal", "seat", "version"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
                raise DecodeError(f"context {name} must be a non-negative int, not {value!r}")
        if self.step not in STEPS:
            raise DecodeError(f"unknown step {self.step!r}")

    def at(self, step: str, seat: int) -> Context:
        """The same table and deal, for one step and prover seat."""
        return replace(self, step=step, seat=seat)

    def items(self) -> tuple[bytes, ...]:
        """The transcript items that open every hash of this context."""
        return (
            CTX_LABEL,
            u64(self.version),
            self.table_id,
            u64(self.deal),
            self.step.encode(),
            u64(self.seat),
        )

    def __str__(self) -> str:
        return (
            f"v{self.version}/{self.table_id.hex()}/deal {self.deal}/{self.step}/seat {self.seat}"
        )
