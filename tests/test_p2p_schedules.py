"""(v3) The log's safety under schedules, not only hand-picked scenarios:
seeded nemesis runs (tests/p2p_chaos.py) that reorder, drop, duplicate,
partition, kill and restart, with and without a seat that lies in its
votes; every step checks the invariants, and once the faults stop every
honest seat must finish. ``NODEALER_SCHEDULES=N`` runs N seeds of each
(default 25 in CI; run once at length with a large N)."""

from __future__ import annotations

import os

import pytest

from tests.p2p_chaos import Chaos

SCHEDULES = int(os.environ.get("NODEALER_SCHEDULES", "25"))
STEPS = 400


@pytest.mark.parametrize("liar", [None, 2])
@pytest.mark.parametrize("n", [3, 4])
def test_seeded_schedules_keep_the_invariants_and_finish(n: int, liar) -> None:
    for seed in range(SCHEDULES):
        net = Chaos(seed * 7919 + n, n=n, liar=liar)
        net.run()
        for _ in range(STEPS):
            net.nemesis_step()
        net.settle()


def test_the_nemesis_catches_acting_on_what_only_a_majority_acknowledged(monkeypatch) -> None:
    # the v2 rule (Raft's commitment) in place of every seat's: the nemesis
    # must find a schedule where an honest seat loses an entry it acted on
    import p2p.log

    def majority_final(self) -> None:
        self.final = max(self.final, self.committed)

    monkeypatch.setattr(p2p.log.LogMachine, "_update_final", majority_final)
    broken = 0
    for seed in range(10):
        net = Chaos(seed * 7919 + 3, n=3)
        net.run()
        try:
            for _ in range(STEPS):
                net.nemesis_step()
            net.settle()
        except AssertionError:
            broken += 1
    assert broken >= 1
