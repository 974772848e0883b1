"""Bot peers in child processes (table.bot_process): play_bot_table keeps
seat 0 here and plays the other seats in child processes, over real TCP on
127.0.0.1; updates and results come back, a cheat crosses by name."""

from __future__ import annotations

import pytest
import trio

from table import bot_process
from table.bot_process import split_seats, workers_for
from table.bot_table import play_bot_table
from table.cheats import CHEATS, cheating_at
from table.session import TableSession
from table.verify import verify_log


def test_seats_are_dealt_round_robin() -> None:
    assert split_seats([1, 2, 3, 4, 5], 2) == [[1, 3, 5], [2, 4]]
    assert split_seats([1, 2], 5) == [[1], [2]]
    assert split_seats([], 2) == []


def test_busy_processes_share_the_cores_among_their_group_threads(monkeypatch) -> None:
    monkeypatch.setattr(bot_process.os, "cpu_count", lambda: 2)
    assert [workers_for(p) for p in (1, 2, 3, 9)] == [2, 1, 1, 1]
    monkeypatch.setattr(bot_process.os, "cpu_count", lambda: 8)
    assert [workers_for(p) for p in (1, 3, 4, 9)] == [8, 2, 2, 1]
    monkeypatch.setattr(bot_process.os, "cpu_count", lambda: 64)
    assert [workers_for(p) for p in (1, 3, 16)] == [8, 8, 4]  # the group's cap
    monkeypatch.setattr(bot_process.os, "cpu_count", lambda: None)
    assert workers_for(3) == 1


@pytest.mark.trio
@pytest.mark.slow
async def test_bots_in_child_processes_play_a_whole_game(tmp_path, monkeypatch) -> None:
    seen: list[tuple[int, str]] = []
    sessions: dict[int, TableSession] = {}
    plans: list[bot_process.PeerPlan] = []
    started = bot_process.PeerProcess.__init__

    def record(self, plan, **kwargs) -> None:
        plans.append(plan)
        started(self, plan, **kwargs)

    monkeypatch.setattr(bot_process.PeerProcess, "__init__", record)
    with trio.fail_after(180):
        peers = await play_bot_table(
            "bluff",
            3,
            tmp_path,
            proven=False,
            seed=2,
            time_scale=0.02,
            on_update=lambda seat, update: seen.append((seat, update.kind)),
            on_session=sessions.__setitem__,
            processes=2,
        )
    assert list(sessions) == [0], "only seat 0 plays in this process"
    # this process and two children share the cores: their group threads too
    assert [p.workers for p in plans] == [workers_for(3)] * 2
    assert [p.seat for p in peers] == [0, 1, 2]
    assert len({str(p.result.outcome) for p in peers}) == 1
    for peer in peers:
        assert peer.result.clean, peer.result
        assert {"setup", "over", "done"} <= {k for s, k in seen if s == peer.seat}
        assert verify_log(peer.log_path).exit_code == 0


@pytest.mark.trio
@pytest.mark.slow
async def test_a_cheat_crosses_into_a_child_process_by_name(tmp_path) -> None:
    with trio.fail_after(180):
        peers = await play_bot_table(
            "bluff",
            3,
            tmp_path,
            proven=False,
            seed=3,
            time_scale=0.02,
            make_session=cheating_at(1, CHEATS["wrong-key"]),
            final_wait=5.0,
            duty_wait=3.0,
            processes=1,
        )
    cheater = peers[1].fingerprint
    for peer in peers:
        assert not peer.result.clean
        if peer.seat != 1:
            assert (1, cheater) in {(f.seat, f.fingerprint) for f in peer.result.faults}
    report = verify_log(peers[0].log_path)
    assert report.exit_code == 1 and report.faults[0].seat == 1
