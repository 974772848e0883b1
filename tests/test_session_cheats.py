"""Cheating peers at a real networked table: each cheat is refused by every
honest peer, which names the cheater (seat and fingerprint), stops the game,
still makes its final reveal, and the offline verifier names the same seat
and entry from every peer's saved log."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import trio

from engines.bomb import BombConfig
from engines.core import Reveal, Timer, to_data
from mental_poker.group import ED25519
from table.bot_table import PeerResult, play_bot_table
from table.duty import deal_body
from table.machine import Table
from table.session import TableSession
from table.verify import verify_log
from tests.test_mp_deal import forged_lock


def cheating_at(seat: int, cheat: type[TableSession]):
    """A session factory: ``cheat`` plays ``seat``, honest sessions the rest."""

    def make(node, **options: Any) -> TableSession:
        kind = cheat if node.seat == seat else TableSession
        return kind(node, **options)

    return make


class WrongKey(TableSession):
    """Reveals a made-up key in its first key reveal."""

    cheated = False

    async def _publish(self, body: dict[str, Any]) -> None:
        if not self.cheated and body["t"] == "deal" and body["msg"]["type"] == "keys":
            assert self.table is not None
            group = self.table.deals[body["deal"]].group  # the table's (v3: secp256k1)
            body = copy.deepcopy(body)
            body["msg"]["keys"][0][1] = group.encode_scalar(group.random_scalar())
            self.cheated = True
        await super()._publish(body)


class MovesForAnother(TableSession):
    """Signs its first move as if it were the next seat's."""

    cheated = False

    async def _publish(self, body: dict[str, Any]) -> None:
        if not self.cheated and body["t"] == "move":
            body = copy.deepcopy(body)
            body["event"]["seat"] = (self.me + 1) % self.node.table.n
            self.cheated = True
        await super()._publish(body)


class IllegalMove(TableSession):
    """Lets a claim 'stand' when no hand was emptied (B11 accept, illegal
    in the play phase) instead of its first move."""

    cheated = False

    async def _publish(self, body: dict[str, Any]) -> None:
        if not self.cheated and body["t"] == "move":
            body = {"t": "move", "event": {"kind": "accept", "seat": self.me}, "at": body["at"]}
            self.cheated = True
        await super()._publish(body)


class TimerFromNonSequencer(TableSession):
    """Times out the first pending timer it sees, though it is not the sequencer."""

    cheated = False

    async def _time_out_timer(self, table: Table) -> bool:
        if self.cheated or self.node.is_sequencer:
            return False
        for request in table.pending():
            if isinstance(request, Timer):
                self.cheated = True
                await self._publish({"t": "timer", "purpose": request.purpose, "at": table.count})
                return True
        return False


async def play_with_cheater(tmp_path, game: str, seats: int, seat: int, cheat) -> list[PeerResult]:
    with trio.fail_after(120):
        return await play_bot_table(
            game,
            seats,
            tmp_path,
            proven=False,
            seed=3,
            time_scale=0.02,
            make_session=cheating_at(seat, cheat),
            final_wait=5.0,
        )


def assert_named_everywhere(
    peers: list[PeerResult], seat: int, words: str, *, outcome: bool = False
) -> None:
    """``outcome``: the game may still end (the keys that came with the
    final reveals answered what the table was waiting for)."""
    cheater = peers[seat].fingerprint
    seqs = set()
    for peer in peers:
        result = peer.result
        assert not result.clean
        first = result.faults[0]
        assert (first.seat, first.fingerprint) == (seat, cheater), (peer.seat, first)
        assert words in first.reason, first
        seqs.add(first.seq)
        assert outcome or result.outcome is None, "the game was stopped"
        assert not result.missing_finals, "every seat still made its final reveal"
        assert result.audit.ok, "the deals themselves were fair"
        report = verify_log(peer.log_path)
        assert report.exit_code == 1, report.lines()
        found = report.faults[0]
        assert (found.seat, found.fingerprint, found.seq) == (seat, cheater, first.seq)
        assert words in found.reason
        assert any(line.startswith("CHEATING: seat") for line in report.lines())
    assert len(seqs) == 1, "every peer names the same entry"


def assert_left_everywhere(peers: list[PeerResult], seat: int, owed: str) -> None:
    """(v3) the game ended abandoned naming ``seat`` as having left, owing
    ``owed``, at every honest peer and in the verifier: no cheating verdict."""
    for peer in peers:
        if peer.seat == seat:
            continue
        result = peer.result
        ended = result.abandoned
        assert not result.clean and not result.faults, str(result)
        assert ended is not None and ended.seats == (seat,) and owed in ended.owed[0], str(result)
        assert result.audit.ok, "what the present seats revealed was fair"
        report = verify_log(peer.log_path)
        assert report.exit_code == 3 and not report.faults, report.lines()
        assert report.to_json()["abandoned"]["left"][0]["seat"] == seat
        assert any(line.startswith(f"ABANDONED: seat {seat} (") for line in report.lines())
        assert not any(line.startswith("CHEATING") for line in report.lines())


@pytest.mark.trio
@pytest.mark.slow
async def test_wrong_key_is_named_by_every_peer_and_the_verifier(tmp_path) -> None:
    peers = await play_with_cheater(tmp_path, "bluff", 3, 1, WrongKey)
    assert_named_everywhere(peers, 1, "does not open")


@pytest.mark.trio
@pytest.mark.slow
async def test_move_for_another_seat_is_named(tmp_path) -> None:
    peers = await play_with_cheater(tmp_path, "bluff", 3, 2, MovesForAnother)
    assert_named_everywhere(peers, 2, "may not submit")


@pytest.mark.trio
@pytest.mark.slow
async def test_illegal_move_is_named(tmp_path) -> None:
    peers = await play_with_cheater(tmp_path, "bluff", 2, 1, IllegalMove)
    assert_named_everywhere(peers, 1, "illegal move")


@pytest.mark.trio
@pytest.mark.slow
async def test_timer_from_a_non_sequencer_is_named_on_a_v2_table(tmp_path, monkeypatch) -> None:
    # Mao's turn timer (M23) runs throughout play: the cheater sees it pending.
    # v2 only: on v3 any seat signs its word (tests/test_timers*.py)
    from tests.test_timers_net import _version

    _version(monkeypatch, 2, __name__)
    peers = await play_with_cheater(tmp_path, "mao", 3, 2, TimerFromNonSequencer)
    assert_named_everywhere(peers, 2, "only the sequencer")


BOMB = to_data(BombConfig(time_limit=600))  # K25 bounds a game: 12 s at time_scale 0.02
ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")


def off_curve(after: int = 0) -> bytes:
    """33 bytes shaped as a compressed secp256k1 point that is none: the
    first x above ``after`` whose x³ + 7 is not a square mod p."""
    from mental_poker.secp256k1 import SECP256K1

    x = after + 1
    while SECP256K1.is_valid_point(b"\x02" + x.to_bytes(32, "big")):
        x += 1
    return b"\x02" + x.to_bytes(32, "big")


class TorsionedShuffle(TableSession):
    """Spoils one card of its first shuffle pass so that the deck leaves the
    prime-order group (v2 logs: adds a point of order 8; v3, secp256k1 has
    cofactor 1: an x off the curve); decks are validated on first use
    (protocol.md §1.1)."""

    cheated = False

    async def _publish(self, body: dict[str, Any]) -> None:
        if not self.cheated and body["t"] == "deal" and body["msg"]["type"] == "shuffle":
            assert self.table is not None
            group = self.table.deals[body["deal"]].group
            body = copy.deepcopy(body)
            deck = body["msg"]["deck"]
            deck[3] = group.add(deck[3], ORDER_8) if group is ED25519 else off_curve()
            self.cheated = True
        await super()._publish(body)


@pytest.mark.trio
@pytest.mark.slow
async def test_an_invalid_point_draws_a_complaint_that_names_its_author(tmp_path) -> None:
    # unproven deal: nobody checks the deck on arrival; seat 2 cannot
    # multiply it, complains instead of shuffling, and everyone names seat 1
    peers = await play_with_cheater(tmp_path, "bluff", 3, 1, TorsionedShuffle)
    assert_named_everywhere(peers, 1, "point 3 of its deck is not a valid point")


class KeepsItsKeys(TableSession):
    """Plays fair but never makes its final reveal (the audit cannot run)."""

    async def _publish(self, body: dict[str, Any]) -> None:
        if body["t"] == "deal" and body["msg"]["type"] == "final":
            return
        await super()._publish(body)


@pytest.mark.trio
@pytest.mark.slow
async def test_a_seat_refusing_its_final_reveal_has_left_the_table(tmp_path) -> None:
    with trio.fail_after(60):
        peers = await play_bot_table(
            "bluff",
            3,  # v3: a game of two seats never ends abandoned (protocol.md §6)
            tmp_path,
            proven=False,
            time_scale=0.02,
            make_session=cheating_at(1, KeepsItsKeys),
            # v3: the honest seat waits the table's patience (100 s at
            # time_scale 0.02: 2 s), then signs `abandon`: the seat left
            final_wait=5.0,
            duty_wait=2.0,
            patience=100,
        )
    honest = peers[0].result
    assert honest.outcome is not None and honest.missing_finals == [1] and not honest.clean
    assert_left_everywhere(peers, 1, "final reveal")


class ReadsAnIdentityInTheLockPass(TableSession):
    """Issue 9 §1 at a real table: seat 0's lock pass of deal 0 publishes
    ``locked[0] = s·X[1]``, ``stripped[0] = X[1]`` so that the others' key
    reveals for its own identity (position 0, K2) would decrypt seat 1's
    identity (position 1) for it; the best lock proof it can make goes
    with it."""

    async def _publish(self, body: dict[str, Any]) -> None:
        if body["t"] == "deal" and body["deal"] == 0 and body["msg"]["type"] == "lock":
            assert self.seat is not None and self.table is not None
            deal = self.table.deals[0]
            forged = forged_lock(deal.setup, self.seat.secrets[0], deal.expected_input(), 0, 1)
            body = deal_body(0, forged)
        await super()._publish(body)


@pytest.mark.trio
@pytest.mark.slow
async def test_a_lock_pass_reading_another_identity_is_named(tmp_path) -> None:
    with trio.fail_after(120):
        peers = await play_bot_table(
            "bomb",
            3,
            tmp_path,
            config=BOMB,
            proven=True,
            seed=3,
            time_scale=0.02,
            make_session=cheating_at(0, ReadsAnIdentityInTheLockPass),
            final_wait=5.0,
        )
    assert_named_everywhere(peers, 0, "lock proof does not verify")


class KeepsItsIdentityKey(TableSession):
    """Plays fair until the Bomb game's end, then never reveals its key for
    the identities (K18-K24 judging cannot run): the table must not stall,
    the seat must be named."""

    async def _publish(self, body: dict[str, Any]) -> None:
        table = self.table
        judging = table is not None and any(
            isinstance(r, Reveal) and r.purpose == "identities" for r in table.pending()
        )
        if judging and body["t"] == "deal" and body["msg"]["type"] == "keys":
            return
        await super()._publish(body)


@pytest.mark.trio
@pytest.mark.slow
async def test_a_seat_keeping_the_key_the_judging_needs_has_left(tmp_path) -> None:
    with trio.fail_after(240):
        peers = await play_bot_table(
            "bomb",
            3,
            tmp_path,
            config=BOMB,
            proven=False,
            seed=3,
            time_scale=0.02,
            make_session=cheating_at(2, KeepsItsIdentityKey),
            final_wait=3.0,
            duty_wait=1.0,
            patience=100,
        )
    # v3: after the table's patience the present seats end the game
    # abandoned; the seat that kept the judging waiting has left, owing its
    # keys (never named a cheater: away is not cheating)
    assert_left_everywhere(peers, 2, "its keys")
