"""(v3, review finding 1) Presence is judged by acknowledgements too, not by
held events only (table/waiting.py ``AwayWatch``): a seat that owes a body
and acknowledged every entry this peer holds, one sequenced after it began
to owe among them, is there — what keeps it from answering is an ack it
lacks (one seat withholding its acks from it, or a link down between two
others) — so it is neither shown away nor named by the table's patience,
while this peer cannot show it every ack. The peer whose final point
stands still shows whose acknowledgement the table waits for."""

from __future__ import annotations

from types import SimpleNamespace

import trio
import trio.testing

from table.absence import AwayClock
from table.waiting import AwayWatch
from tests.test_absence import _stalled


class _Node:
    """The part of :class:`p2p.node.Node` the watch reads."""

    def __init__(self, head: int, final: int, acks: dict[int, int], relay=None) -> None:
        self.head, self.final, self.acks = head, final, acks
        self.table = SimpleNamespace(version=3, n=3)
        self.next_own_counter = 0
        self.connected = {1, 2}
        if relay is not None:
            self.waiting_for_acks = relay

    def acked(self, seat: int) -> int:
        return self.acks.get(seat, 0)

    def held_events(self, seat: int) -> list:
        return []

    def tentative(self, after: int = 0) -> list:
        return []

    def items_after(self, seq: int) -> list:
        return []

    def stalled_since(self) -> float | None:
        return None if self.final >= self.head else float("-inf")

    def chain_hash(self, seq: int) -> bytes | None:
        return None if seq > self.head else seq.to_bytes(32, "big")

    def set_leavers(self, seats) -> None:
        raise AssertionError("nobody left")


def _watch(node: _Node, table) -> AwayWatch:
    watch = AwayWatch(node, me=0, duty_wait=1.0, time_scale=1.0)
    watch.clock = AwayClock(0, duty_wait=1.0, patience=3.0)
    return watch


def _run(fn) -> None:
    trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_seat_that_acks_everything_since_it_owes_is_not_named() -> None:
    """Seat 1 owes its body since table body ``since`` (entry since + 1);
    entries after it (the others' answers) are in this peer's log and seat 1
    acknowledged them all: after the patience, nothing is signed about it
    and it is not shown away. Once its acks stop short of the head (it left
    while others acted), it is named as before."""
    local = _stalled(3, holdout=1)
    table = local.table
    since = table.owing()[1]
    replay = SimpleNamespace(table=table, broken=False, abandoned=None, fed=since + 3)

    async def main() -> None:
        node = _Node(head=since + 3, final=since + 3, acks={1: since + 3, 2: since + 3})
        watch = _watch(node, table)
        for _ in range(6):
            watch.look(replay)
            assert watch.body(table, False) is None, "a present seat was named"
            await trio.sleep(1.0)
        assert watch.waiting() == []
        # its link goes silent and is closed (a lid shut): away, named
        node.connected.discard(1)
        shut = _watch(node, table)
        bodies = []
        for _ in range(6):
            shut.look(replay)
            bodies.append(shut.body(table, False))
            await trio.sleep(1.0)
        assert [b["away"] for b in bodies if b is not None] == [[1]]
        node.connected.add(1)
        # it acknowledged only up to the entry that made it owe: away, named
        node.acks[1] = since + 1
        gone = _watch(node, table)
        bodies = []
        for _ in range(6):
            gone.look(replay)
            bodies.append(gone.body(table, False))
            await trio.sleep(1.0)
        signed = [b for b in bodies if b is not None]
        assert signed and signed[0]["away"] == [1] and signed[0]["why"] == "patience"

    _run(main)


def test_with_relayed_acks_a_seat_that_acks_and_withholds_is_still_named() -> None:
    """When the node relays acks (``waiting_for_acks``) and this peer holds
    every ack, the owing seat holds them too and sees its duty final: acking
    everything while withholding its body is its own doing (review 2b: the
    table is not its hostage). While an ack is missing here, it is spared."""
    local = _stalled(3, holdout=1)
    table = local.table
    since = table.owing()[1]
    replay = SimpleNamespace(table=table, broken=False, abandoned=None, fed=since + 3)

    async def main() -> None:
        missing: list[int] = []
        node = _Node(since + 3, since + 3, {1: since + 3, 2: since + 3}, relay=lambda: missing)
        watch = _watch(node, table)
        bodies = []
        for _ in range(6):
            watch.look(replay)
            bodies.append(watch.body(table, False))
            await trio.sleep(1.0)
        signed = [b for b in bodies if b is not None]
        assert signed and signed[0]["away"] == [1]
        # an ack this peer has lacked too, for duty_wait: seat 1 may lack it
        missing.append(2)
        node.final, node.acks[2] = since + 2, since + 2
        spared = _watch(node, table)
        for _ in range(6):
            spared.look(replay)
            assert spared.body(table, False) is None
            await trio.sleep(1.0)

    _run(main)


def test_the_peer_whose_final_point_stands_still_says_whose_ack_it_lacks() -> None:
    """Seat 0 (this peer) holds entries past its final point that seat 2
    never acknowledges to it (seat 1 did): after ``duty_wait`` its screen
    says it waits for seat 2's acknowledgement, not for a seat that owes."""
    local = _stalled(3, holdout=0)
    table = local.table
    final = table.count + 1

    async def main() -> None:
        node = _Node(head=final + 4, final=final, acks={1: final + 4, 2: final})
        watch = _watch(node, table)
        replay = SimpleNamespace(table=table, broken=False, abandoned=None, fed=final)
        lines = []
        for _ in range(3):
            lines += [str(u) for u in watch.look(replay)]
            await trio.sleep(1.0)
        assert lines == [
            f"[waiting] waiting for seat 2 to acknowledge entry {final + 1}: "
            "the game goes on when it does"
        ], lines
        # with relayed acks, the node names them (Node.waiting_for_acks)
        node.waiting_for_acks = lambda: [1]
        relayed = _watch(node, table)
        lines = []
        for _ in range(3):
            lines += [str(u) for u in relayed.look(replay)]
            await trio.sleep(1.0)
        assert lines and "waiting for seat 1 to acknowledge" in lines[0], lines

    _run(main)


def test_a_new_entry_waiting_a_moment_for_its_acks_does_not_bring_an_away_seat_back() -> None:
    """(hostage_held_gap on v3-fixa + v3-acks: 'seat 2 is back' right before
    the table named it) An away seat that acks a new entry before the
    others do is past the final point for a moment only: still away."""
    local = _stalled(3, holdout=1)
    table = local.table
    since = table.owing()[1]
    replay = SimpleNamespace(table=table, broken=False, abandoned=None, fed=since + 1)

    async def main() -> None:
        missing: list[int] = []
        node = _Node(since + 1, since + 1, {1: since + 1, 2: since + 1}, relay=lambda: missing)
        watch = _watch(node, table)
        for _ in range(3):
            watch.look(replay)
            await trio.sleep(1.0)
        assert [a.seat for a, _ in watch._away] == [1]
        node.head += 1  # seat 0's new entry: seat 1 acks it first, seat 2 not yet
        node.acks[1] = node.head
        missing.append(2)
        assert [str(u) for u in watch.look(replay)] == []
        assert [a.seat for a in watch.waiting()] == [1]

    _run(main)
