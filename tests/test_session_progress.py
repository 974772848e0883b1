"""Deal progress (issue 12): which seat is making which pass, and how many
of the deal's proofs this peer has checked of how many — its own passes,
which ``DealTable.made_here`` does not verify again, counted as "own", never
as checked. At a real proven table on 127.0.0.1 the counts rise one pass at
a time to the total, on every peer."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest
import trio

from engines.bots import sensible_bots
from mental_poker.context import Context
from mental_poker.deal import DealTable
from mental_poker.deck import Deck
from mental_poker.messages import DealSetup
from mental_poker.seat import DealSecrets, make_lock, make_shuffle
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import Node
from table.progress import ProofCount, proof_count
from table.session import TableSession, Update
from tui.story import update_line
from tui.words import MISSING

LOCAL = "127.0.0.1"
UNDER_WAY = re.compile(
    r"^deal 0: (you|seat (\d)) (shuffle|lock)s? \(proofs: (\d+) checked \+ (\d+) own of (\d+)\)$"
)
DEALT = re.compile(r"^deal 0 dealt \(proofs: (\d+) checked \+ (\d+) own of (\d+)\)$")


def _passes(seats: int, *, made_by: int | None) -> tuple[DealTable, list[DealTable]]:
    """A small proven deal's passes fed to an observer and to each seat's
    tracker (a seat's tracker is told ``made_here`` for its own passes,
    except ``made_by`` None: nobody is)."""
    setup = DealSetup(Context(b"progress", 0), seats, Deck.of(list(range(6))), True)
    observer = DealTable(setup)
    trackers = [DealTable(setup) for _ in range(seats)]
    keys = [DealSecrets.generate(setup, s) for s in range(seats)]
    for make in (make_shuffle, make_lock):
        for seat in range(seats):
            message = make(setup, keys[seat], observer.expected_input())
            if made_by is not None:
                trackers[seat].made_here(message)
            for tracker in (observer, *trackers):
                assert tracker.feed(message).ok
    return observer, trackers


def test_own_passes_are_counted_as_own_and_nothing_else_as_checked_twice() -> None:
    observer, trackers = _passes(3, made_by=0)
    assert proof_count(observer) == ProofCount(6, 0, 0, 6)  # it made nothing: checked all
    for tracker in trackers:
        assert proof_count(tracker) == ProofCount(4, 2, 0, 6)  # its shuffle and its lock
    _, restarted = _passes(2, made_by=None)  # after a restart nothing is "made here"
    assert proof_count(restarted[0]) == ProofCount(4, 0, 0, 4)


def _counts(lines: list[str], me: int, seats: int) -> None:
    """The progress lines of deal 0 at one peer: every pass in turn (seat
    0's shuffle … seat n-1's lock), the count up by one each time, the own
    ones exactly this peer's two passes, and the last line the total."""
    under_way = [m for m in map(UNDER_WAY.match, lines) if m]
    assert len(under_way) == 2 * seats, lines
    for index, m in enumerate(under_way):
        seat = me if m.group(1) == "you" else int(m.group(2))
        assert (m.group(3), seat) == ("shuffle" if index < seats else "lock", index % seats)
        checked, own, total = int(m.group(4)), int(m.group(5)), int(m.group(6))
        assert checked + own == index and total == 2 * seats
        mine_so_far = (index > me) + (index > seats + me)
        assert own == mine_so_far, (me, m.group(0))
    (done,) = [m for m in map(DEALT.match, lines) if m]
    assert tuple(map(int, done.groups())) == (2 * seats - 2, 2, 2 * seats)
    assert lines.index(done.group(0)) > lines.index(under_way[-1].group(0))


@pytest.mark.trio
async def test_a_proven_table_shows_every_proof_checked_up_to_the_total(tmp_path: Path) -> None:
    seats = 3
    ids = [Identity.generate() for _ in range(seats)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))
    bots = sensible_bots("bluff", seats, 3, salt_source=secrets.token_bytes)
    nodes = [Node(ids[s], spec, home=tmp_path / f"p{s}", host=LOCAL) for s in range(seats)]
    lines: dict[int, list[str]] = {s: [] for s in range(seats)}
    dealt = {s: trio.Event() for s in range(seats)}

    def on_update(seat: int):
        def got(update: Update) -> None:
            if update.kind == "progress":
                lines[seat].append(update.text)
                if update.text.startswith("deal 0 dealt"):
                    dealt[seat].set()

        return got

    sessions = [
        TableSession(node, game="bluff", proven=True, player=bots[s], on_update=on_update(s))
        for s, node in enumerate(nodes)
    ]
    try:
        async with trio.open_nursery() as nursery:
            for node in nodes:
                await nursery.start(node.run)
            for node in nodes[1:]:
                await node.connect(*nodes[0].listen_address)
            for session in sessions:
                nursery.start_soon(session.run)
            with trio.fail_after(240):
                for event in dealt.values():
                    await event.wait()
            nursery.cancel_scope.cancel()
    finally:
        for node in nodes:
            node.store.close()
    for seat in range(seats):
        _counts(lines[seat], seat, seats)
        for line in lines[seat]:  # the same line in Chinese, every word of it
            zh = update_line("progress", line, "zh")
            assert "证明" in zh and "proofs" not in zh and "deal" not in zh, zh
    assert not MISSING
