"""Issue 28, attack 1, at a real table (real nodes on 127.0.0.1, real
TableSessions playing Bluff with bots): the host, sequencer of term 0,
silently drops every submit of seat 2 from seat 2's first ``keys`` on while
it keeps beating. On v3 seat 2 sends its events to every peer; seat 1 and
seat 2 hold them, vote the censor out after ``censor_wait`` (2 × the node
timeout) and the next sequencer sequences them: the game goes on to its
end and nobody is named. (On today's v2 rule seat 2's duties stay owed in
the log and the honest seats sign ``overdue``: seat 2 is named CHEATING.)"""

from __future__ import annotations

import msgpack
import pytest
import trio

from p2p.envelope import Event
from p2p.log import LogMachine
from p2p.node import Node
from table.bot_table import play_bot_table
from table.session import TableSession

VICTIM = 2


class CensoringMachine(LogMachine):
    dropping = False

    def _on_submit(self, src: int, event: Event, now: float) -> None:
        if event.author == VICTIM:
            body = msgpack.unpackb(event.body)
            if body.get("t") == "deal" and body.get("msg", {}).get("type") == "keys":
                self.dropping = True
            if self.dropping:
                return  # silently: it keeps beating and sequencing the others
        super()._on_submit(src, event, now)


class CensoringNode(Node):
    @property
    def log(self) -> LogMachine:
        machine = Node.log.fget(self)  # type: ignore[attr-defined]
        if type(machine) is LogMachine:
            machine.__class__ = CensoringMachine
        return machine


@pytest.mark.trio
async def test_a_sequencer_that_drops_every_submit_of_seat_2_loses_its_term_not_seat_2(
    tmp_path,
) -> None:
    made: dict[int, TableSession] = {}

    def make(node: Node, **options) -> TableSession:
        if node.seat == 0:
            node.__class__ = CensoringNode
        session = TableSession(node, **options)
        made[session.me] = session
        return session

    with trio.fail_after(300):
        peers = await play_bot_table(
            "bluff",
            3,
            tmp_path,
            proven=False,
            seed=1,
            time_scale=0.05,
            node_timeout=1.0,  # censor_wait 2 s
            make_session=make,
            duty_wait=8.0,
            final_wait=3.0,
            processes=0,
        )
    censor = made[0].node.log
    assert isinstance(censor, CensoringMachine) and censor.dropping  # it did censor
    for peer in peers:
        node = made[peer.seat].node
        assert node.term >= 1 and node.log.sequencer != 0  # the censor lost its term
        assert node.proofs == []
        assert peer.result.outcome is not None, peer.result  # the game went on to its end
        assert peer.result.faults == [], peer.result  # nobody is named
    victim_entries = [e for e in made[1].node.chain if e.event.author == VICTIM]
    assert any(
        msgpack.unpackb(e.event.body).get("msg", {}).get("type") == "keys"
        for e in victim_entries
        if msgpack.unpackb(e.event.body).get("t") == "deal"
    )
