"""Whole games between real peers: each its own identity and store, a real TCP
mesh on 127.0.0.1, every seat a sensible bot, every deal really shuffled
through mental poker. Every peer ends with the same clean outcome, and every
peer's saved log verifies offline to that same outcome."""

from __future__ import annotations

import msgpack
import pytest
import trio

from engines.bomb import BombConfig
from engines.core import to_data
from engines.mao_events import MaoConfig
from p2p.store import read_log
from table.bot_table import play_bot_table
from table.session import SECRETS_NAME
from table.verify import verify_log


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "seats", "proven", "config"),
    [
        ("bluff", 2, True, None),
        ("bluff", 3, False, None),
        # K25: a game the bots cannot decide ends at the time limit (6 s here)
        ("bomb", 4, False, to_data(BombConfig(time_limit=300))),
        ("mao", 3, False, to_data(MaoConfig(hand_size=3))),  # shorter rounds
    ],
)
async def test_whole_game_between_real_peers_verifies_clean(
    tmp_path, game: str, seats: int, proven: bool, config: object
) -> None:
    seen: list[tuple[int, str]] = []
    with trio.fail_after(180):
        peers = await play_bot_table(
            game,
            seats,
            tmp_path,
            proven=proven,
            config=config,
            seed=5,
            time_scale=0.02,
            on_update=lambda seat, update: seen.append((seat, update.kind)),
        )
    assert [p.seat for p in peers] == list(range(seats))
    assert len({p.fingerprint for p in peers}) == seats, "every peer its own identity"
    outcomes = {str(p.result.outcome) for p in peers}
    assert len(outcomes) == 1, outcomes
    for peer in peers:
        result = peer.result
        assert result.clean, result
        assert result.outcome is not None and result.outcome.reason
        assert not result.faults and result.audit.ok and not result.missing_finals
        # every seat saw the setup, the outcome and the audit
        kinds = {kind for seat, kind in seen if seat == peer.seat}
        assert {"setup", "event", "over", "done"} <= kinds
    # one log, held identically by every peer, each in its own home
    chains = [read_log(p.log_path).entries for p in peers]
    assert len({p.log_path.parent.parent.parent for p in peers}) == seats
    # (a stale body sequenced as the peers shut down may reach only some)
    shortest = min(chains, key=len)
    assert all(chain[: len(shortest)] == shortest for chain in chains)
    for peer in peers:
        report = verify_log(peer.log_path)
        assert report.exit_code == 0, report.lines()
        assert str(report.outcome) == str(peers[0].result.outcome)
        assert report.setup is not None and report.setup.game == game
        assert report.setup.proven is proven and report.setup.config == config
        assert report.entries >= peer.result.entries and report.entries >= len(shortest)
    # the seats' deal secrets were kept on disk (crash safety)
    from p2p.store import Store

    for peer in peers:
        saved = read_log(peer.log_path)
        store = Store.open(saved.table, peer.home)
        try:
            blob = store.get_secret(SECRETS_NAME)
        finally:
            store.close()
        assert blob is not None
        kept = msgpack.unpackb(blob)
        assert kept["deals"], "at least deal 0's secrets"
