"""The card group follows the table's protocol version (protocol.md §1.1):
v3 tables deal over secp256k1, v2 logs over edwards25519, wherever a table
makes or decodes a deal (the table machine, verify's read-ahead, a seat's
saved secrets)."""

from __future__ import annotations

import secrets

import pytest

from engines.bots import sensible_bots
from mental_poker.batch import verify_batch
from mental_poker.errors import DecodeError
from mental_poker.group import ED25519
from mental_poker.groups import group_for
from mental_poker.seat import DealSecrets
from mental_poker.secp256k1 import SECP256K1
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.wire import PROTOCOL_VERSION
from table.local import LocalTable
from table.machine import TableSetup
from table.precheck import pass_checks
from table.replay import parse_setup, setup_body


def test_the_version_chooses_the_group() -> None:
    assert PROTOCOL_VERSION == 3
    assert group_for(3) is SECP256K1
    assert group_for(2) is ED25519 and group_for(1) is ED25519
    for bad in (0, -1, True, "3", None):
        with pytest.raises(ValueError):
            group_for(bad)  # type: ignore[arg-type]


def _spec(version: int, seats: int = 2) -> TableSpec:
    keys = tuple(Identity.generate().public for _ in range(seats))
    return TableSpec(secrets.token_bytes(16), keys, version)


@pytest.mark.parametrize(("version", "group", "size"), [(3, SECP256K1, 33), (2, ED25519, 32)])
def test_a_table_deals_in_its_versions_group(version: int, group: object, size: int) -> None:
    spec = _spec(version)
    setup = parse_setup(spec, setup_body("bluff", 2, None, True))
    assert setup.version == version and setup.group is group
    local = LocalTable(setup, sensible_bots("bluff", 2, 3), seed=3)
    for _ in range(2000):
        if local.table.deals and local.table.deals[0].dealt:
            break
        local.step()
    deal = local.table.deals[0]
    assert deal.dealt and deal.group is group and deal.setup.context.group is group
    assert {len(p) for p in deal.current} == {size}
    passes = [b for _, b in local.log if b.get("t") == "deal" and b["msg"]["type"] == "shuffle"]
    assert passes and all(len(p) == size for p in passes[0]["msg"]["deck"])
    # verify's read-ahead states the same proofs in the same group, and they hold
    bodies = [setup_body("bluff", 2, None, True)] + [body for _, body in local.log]
    checks = pass_checks(spec, bodies)
    assert len(checks) == 4  # 2 shuffle and 2 lock proofs of the first deal
    assert all(c.ctx.group is group for c in checks)
    assert verify_batch(checks) is None


def test_a_log_read_in_the_other_group_states_no_proof() -> None:
    """A v3 log's passes under a v2 header: 33-byte points do not decode in
    edwards25519, so the read-ahead leaves them to the replay, which refuses
    them (it never checks a proof in the wrong group)."""
    setup = TableSetup(b"groups", "bluff", 2, proven=True, version=3)
    local = LocalTable(setup, sensible_bots("bluff", 2, 5), seed=5)
    while not (local.table.deals and local.table.deals[0].dealt):
        local.step()
    bodies = [setup_body("bluff", 2, None, True)] + [body for _, body in local.log]
    assert pass_checks(_spec(2), bodies) == []


def test_saved_secrets_are_read_in_the_tables_group() -> None:
    setup = TableSetup(b"saved", "bluff", 2, proven=True, version=3)
    local = LocalTable(setup, sensible_bots("bluff", 2, 1), seed=1)
    while not local.seats[0].secrets:
        local.step()
    blob = local.seats[0].secrets[0].to_bytes()
    assert DealSecrets.from_bytes(blob, group_for(3)) == local.seats[0].secrets[0]
    with pytest.raises(DecodeError):
        DealSecrets.from_bytes(blob, group_for(2))
