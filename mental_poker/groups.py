"""Which card group a table of a given protocol version deals over.

Theory of operation
-------------------
The group is a property of the protocol version (protocol.md §1.1): tables
of version 3 deal over secp256k1 (:data:`mental_poker.secp256k1.SECP256K1`),
logs of versions 1 and 2 over edwards25519 (:data:`mental_poker.group.ED25519`).
Everything that makes or decodes a deal's :class:`~mental_poker.context.Context`,
deck or secrets for a table asks :func:`group_for` with the table's version
(the log header's ``v``), so a v2 log keeps verifying and replaying in its
own group while new tables deal in the new one.

>>> group_for(2).name, group_for(3).name
('edwards25519', 'secp256k1')
"""

from __future__ import annotations

from .group import ED25519
from .group_api import Group
from .secp256k1 import SECP256K1

FIRST_SECP256K1_VERSION = 3
"""The first protocol version whose deals run over secp256k1."""


def group_for(version: int) -> Group:
    """The card group of a table speaking protocol ``version``."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"no protocol version {version!r:.40}")
    if version >= FIRST_SECP256K1_VERSION:
        return SECP256K1
    return ED25519  # v1/v2 logs


__all__ = ["FIRST_SECP256K1_VERSION", "group_for"]
