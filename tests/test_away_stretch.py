"""(v3) A gone seat whose stretch changes without a body of its own (it owed
only its acknowledgement; a present seat's entry past the final point then
asks a body of it) stays away: before, the away clock restarted its
stretch, so the screens said "seat G is back", then "waiting for seat G to
acknowledge entry K", and away again only a full duty_wait later (review of
30e17a1, #6; the reviewer's script, made a test)."""

from __future__ import annotations

import hashlib
from copy import deepcopy
from types import SimpleNamespace

import trio
import trio.testing

from engines.bots import sensible_bots
from table.absence import AwayClock
from table.local import LocalTable
from table.machine import Table, TableSetup
from table.waiting import AwayWatch

SEATS, ME = 5, 0


def find():
    setup = TableSetup(b"away", "bluff", SEATS, proven=False, version=3)
    local = LocalTable(setup, sensible_bots("bluff", SEATS, 1), seed=5)
    for _ in range(400):
        local.step()
    bodies = list(local.log)
    t = Table(setup)
    tables = [deepcopy(t)]
    for author, body in bodies:
        t.feed(author, body, 0)
        tables.append(deepcopy(t))
    for k in range(2, len(bodies)):
        a1, a2 = bodies[k - 1][0], bodies[k][0]
        for g in range(1, SEATS):
            if g in (a1, a2):
                continue
            if (g not in tables[k - 1].owing() and g not in tables[k].owing()
                    and g in tables[k + 1].owing()):
                return tables[k - 1], bodies[k - 1], bodies[k], g
    raise AssertionError("no such game found")


class FakeNode:
    def __init__(self, final_seq: int, entries, g: int) -> None:
        self.table = SimpleNamespace(version=3, n=SEATS)
        self.final, self.entries, self.g = final_seq, entries, g
        self.shown = 1  # entries past final held so far
        self.next_own_counter = 10**6
        self.connected = {s for s in range(SEATS) if s not in (ME, g)}

    @property
    def head(self) -> int:
        return self.final + self.shown

    def chain_hash(self, seq):
        return hashlib.sha256(b"%d" % seq).digest() if 0 <= seq <= self.head else None

    def items_after(self, seq):
        out = []
        for s in range(max(seq, self.final) + 1, self.head + 1):
            author, body = self.entries[s - self.final - 1]
            out.append(SimpleNamespace(seq=s, term=0, author=author, counter=0, body=body,
                                       hash=self.chain_hash(s)))
        return out

    def tentative(self, after=0):
        return self.items_after(max(self.final, after))

    def stalled_since(self):
        return 0.0

    def acked(self, seat):
        return self.final if seat == self.g else self.head

    def waiting_for_acks(self):
        return [self.g]

    def held_events(self, seat):
        return []

    def set_leavers(self, seats):
        pass


def test_a_gone_seat_owing_its_ack_then_a_body_stays_away() -> None:
    before, e1, e2, g = find()
    fed = before.count + 1
    replay = SimpleNamespace(table=before, broken=False, abandoned=None, fed=fed)
    node = FakeNode(fed, [e1, e2], g)
    watch = AwayWatch(node, me=ME, duty_wait=1.0, time_scale=1.0)
    watch.clock = AwayClock(ME, duty_wait=1.0, patience=1000.0)
    said: list[str] = []
    away: list[list[int]] = []

    async def run() -> None:
        for step in range(14):
            if step == 6:
                node.shown = 2  # t=1.5: the entry that asks a body of it arrives
            said.extend(u.text for u in watch.look(replay))
            away.append([a.seat for a in watch.waiting()])
            await trio.sleep(0.25)

    trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))
    assert not [s for s in said if s.startswith(f"seat {g} is back")], said
    assert not [s for s in said if f"seat {g} to acknowledge" in s], said
    first = next(k for k, seats in enumerate(away) if seats == [g])
    assert all(seats == [g] for seats in away[first:]), away
