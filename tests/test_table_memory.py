"""Memory bounded by the table, not the game: what the table keeps of the
past answers exactly as keeping everything would (the engine state after any
earlier body), and a replay that keeps no entries reaches the same table."""

from __future__ import annotations

from engines.bots import sensible_bots
from p2p.envelope import TableSpec
from p2p.identity import Identity
from table import history
from table.local import LocalTable
from table.machine import Table, TableSetup
from table.replay import Replay, setup_body


def test_the_state_after_every_earlier_body_is_the_one_the_game_had(monkeypatch) -> None:
    monkeypatch.setattr(history, "EVERY", 5)  # many checkpoints and re-applied stretches
    setup = TableSetup(b"history", "mao", 3, proven=False)
    local = LocalTable(setup, sensible_bots("mao", 3, 7))
    table = Table(setup)
    states = [table.game.encode(table.state)]
    for _ in range(400):
        if not local.step():
            break
        while len(states) <= len(local.log):
            author, body = local.log[len(states) - 1]
            assert table.feed(author, body).ok
            states.append(table.game.encode(table.state))
    assert len(states) > 100, "a game long enough to cross many checkpoints"
    assert len(table._history) == len(states) == table.count + 1
    for k, encoded in enumerate(states):
        assert table.game.encode(table._history[k]) == encoded, k
    kept = len(table._history._states)
    assert kept <= len(table.events) // 5 + 1 < len(states)


def test_a_replay_that_keeps_no_entries_reaches_the_same_table() -> None:
    setup = TableSetup(b"no-items", "bluff", 2, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 2, 2))
    while local.step():
        pass
    ids = [Identity.generate() for _ in range(2)]
    spec = TableSpec(b"no-items", tuple(i.public for i in ids))
    kept, lean = Replay(spec), Replay(spec, keep=False)
    for replay in (kept, lean):
        replay.feed(1, 0, 0, setup_body("bluff", 2, None, False))
        for seq, (author, body) in enumerate(local.log, start=2):
            assert replay.feed(seq, 0, author, body) is None
    assert len(kept.items) == kept.fed == lean.fed == len(local.log) + 1 and not lean.items
    assert lean.table is not None and kept.table is not None
    assert lean.table.game.encode(lean.table.state) == kept.table.game.encode(kept.table.state)
    assert lean.audit().ok and str(lean.outcome()) == str(kept.outcome())
