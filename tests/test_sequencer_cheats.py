"""The sequencer's cheats (table/sequencer_cheats.py) at a real networked
table: every honest peer proves it against seat 0 (``node.proofs``), keeps
the proof in its log, fails over and finishes the game; ``nodealer verify``
on an honest seat's log names seat 0 from the proof (exit 1), and a proof
that does not hold names nobody."""

from __future__ import annotations

import shutil
import zlib

import msgpack
import pytest
import trio

from p2p.envelope import EquivocationProof, ForgedEventProof, ReplayProof, TableSpec
from p2p.identity import Identity
from p2p.store import read_log
from table.cheats import Cheat, cheating_at
from table.sequencer_cheats import SEQUENCER_CHEATS
from table.session import SessionError, TableSession
from table.verify import verify_log

PROOFS = {
    "forged-signature": ForgedEventProof,
    "replayed-event": ReplayProof,
    "equivocate": EquivocationProof,
}
CHEATS = {c.name: c for c in SEQUENCER_CHEATS}


def test_every_kind_is_a_cheat_with_a_proof() -> None:
    assert set(CHEATS) == set(PROOFS)
    assert all(isinstance(c, Cheat) and c.fits("bluff") and c.fits("mao") for c in CHEATS.values())


async def _play(tmp_path, cheat: Cheat, game: str = "bluff", seats: int = 3):
    from table.bot_table import play_bot_table

    made: dict[int, TableSession] = {}
    factory = cheating_at(0, cheat)

    def make(node, **options):  # a plain factory: the whole table plays in this process
        session = factory(node, **options)
        made[session.me] = session
        return session

    with trio.fail_after(240):
        peers = await play_bot_table(
            game,
            seats,
            tmp_path,
            proven=False,
            seed=1,
            time_scale=0.02,
            node_timeout=1.0,
            make_session=make,
            duty_wait=2.0,
            final_wait=3.0,
            processes=0,
        )
    return peers, made


@pytest.mark.trio
@pytest.mark.parametrize("kind", sorted(PROOFS))
async def test_each_sequencer_cheat_is_proven_and_named(tmp_path, kind: str) -> None:
    peers, made = await _play(tmp_path, CHEATS[kind])
    assert made[0].cheated, f"{kind}: the sequencer never cheated"
    spec = made[0].node.table
    fingerprint = peers[0].fingerprint
    for peer in peers[1:]:
        node = made[peer.seat].node
        (proof,) = node.proofs
        assert isinstance(proof, PROOFS[kind]) and proof.verify(spec) == 0
        assert node.log.banned == {0} and node.log.term > 0  # failed over
        # the game went on to its end; the session names the sequencer
        assert peer.result.outcome is not None, peer.result
        (named,) = peer.result.faults
        assert (named.seat, named.fingerprint) == (0, fingerprint) and not peer.result.clean
        saved = read_log(peer.log_path)
        assert saved.proofs == [proof]
        report = verify_log(peer.log_path)
        assert report.exit_code == 1, report.lines()
        (fault,) = report.faults
        assert (fault.seat, fault.fingerprint) == (0, fingerprint)
        assert f"CHEATING: seat 0 ({fingerprint})" in "\n".join(report.lines())
    assert [p.seat for p in peers] == [0, 1, 2]


@pytest.mark.trio
async def test_a_proof_that_does_not_hold_is_a_note(tmp_path) -> None:
    peers, _ = await _play(tmp_path / "game", CHEATS["replayed-event"])
    log = peers[1].log_path
    (proof,) = read_log(log).proofs
    assert isinstance(proof, ReplayProof)
    # the same log with the proof's two entries made adjacent: it no longer
    # shows that the first is in the chain the second extends
    lie = {"t": "replay", "a": proof.a.to_wire(), "b": proof.b.to_wire(), "links": []}
    if not proof.links:
        lie["links"] = [{"term": 0, "d": b"\x00" * 32}]
    copy = tmp_path / "log"
    shutil.copy(log, copy)
    records = copy.read_bytes()
    payload = msgpack.packb(lie, use_bin_type=True)
    record = len(payload).to_bytes(4, "big") + zlib.crc32(payload).to_bytes(4, "big") + payload
    copy.write_bytes(records + record)
    report = verify_log(copy)
    assert report.exit_code == 1  # the true proof still names seat 0
    assert [f.seat for f in report.faults] == [0]
    assert any("ignored a replay proof that does not verify" in n for n in report.notes)


def test_only_the_sequencer_plays_these_cheats(tmp_path) -> None:
    class FakeNode:
        def __init__(self, seat: int) -> None:
            ids = [Identity.generate() for _ in range(3)]
            self.table = TableSpec(b"t", tuple(i.public for i in ids))
            self.identity = ids[seat]
            self.fingerprint = ids[seat].fingerprint
            self.seat = seat

    for cheat in SEQUENCER_CHEATS:
        with pytest.raises(SessionError, match="seat 0"):
            cheat.session(FakeNode(1), game="bluff")  # type: ignore[arg-type]
