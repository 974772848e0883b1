"""(v3) A partial partition with no attacker (review v3, finding 1b): from a
few moves into a whole game the link between seats 1 and 2 is black-holed
for good (the fault-injecting relay of tests/fault_relay.py), while both
still reach seat 0. Acks are passed on (protocol.md §3.5 *Relayed acks*),
so both cut seats keep seeing entries final, play on and finish: the game
ends clean for every seat, nobody is named as having left (the table's
patience is short: a seat that saw nothing final would soon be named), and
every saved log verifies clean. Three real peers on 127.0.0.1."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
import trio

from engines.bots import sensible_bots
from engines.core import to_data
from engines.mao_events import MaoConfig
from p2p.envelope import TableSpec
from p2p.identity import Identity
from table.session import SessionResult, TableSession
from table.verify import verify_log
from tests.fault_relay import FaultyNet

LOCAL, SEATS, SCALE = "127.0.0.1", 3, 0.02


@pytest.mark.trio
@pytest.mark.slow
@pytest.mark.long  # a minute (CI time): cut links run in test_session_cut, p2p_schedules
async def test_both_seats_of_a_cut_link_finish_the_game(tmp_path: Path) -> None:
    ids = [Identity.generate() for _ in range(SEATS)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))
    config = to_data(MaoConfig(hand_size=3))
    results: dict[int, SessionResult] = {}
    moves = {s: 0 for s in range(SEATS)}
    after_cut = {s: 0 for s in range(SEATS)}
    cut = trio.Event()

    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        routed = net.node_class()
        nodes = [
            routed(ids[s], spec, home=tmp_path / f"p{s}", host=LOCAL, timeout=1.0)
            for s in range(SEATS)
        ]

        def counter(seat: int):
            def got(update) -> None:
                if update.kind == "event":
                    moves[seat] += 1
                    after_cut[seat] += cut.is_set()

            return got

        async def play(seat: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
            node = nodes[seat]
            bot = sensible_bots("mao", SEATS, 7, salt_source=secrets.token_bytes)[seat]
            table = TableSession(
                node, game="mao", config=config, proven=False, player=bot,
                time_scale=SCALE, on_update=counter(seat),
                patience=2, duty_wait=2.0, final_wait=3.0,
            )  # fmt: skip
            try:
                async with trio.open_nursery() as inner:
                    await inner.start(node.run)
                    task_status.started()
                    results[seat] = await table.run()
                    # seat 0 is the only way between 1 and 2: it stays until they are done
                    await table.wait_for_peers(timeout=30.0)
                    inner.cancel_scope.cancel()
            finally:
                node.store.close()

        async def until(done, what: str, seconds: float) -> None:
            with trio.move_on_after(seconds):
                while not done():
                    await trio.sleep(0.02)
                return
            state = [
                (n.seat, n.term, n.head, n.final, n.waiting_for_acks(), sorted(n.connected))
                for n in nodes
            ]
            pytest.fail(f"timed out waiting for {what}: ended {sorted(results)}; {state}")

        async with trio.open_nursery() as table:
            for seat in range(SEATS):
                await table.start(play, seat)
            for node in nodes[1:]:
                await node.connect(*nodes[0].listen_address)
            await until(lambda: all(len(n.connected) == SEATS - 1 for n in nodes), "a mesh", 30)
            await until(lambda: moves[0] >= 10, "a few moves", 60)
            net.cut_link(1, 2)
            cut.set()
            began = trio.current_time()
            await until(lambda: len(results) == SEATS, "the game to end", 120)
            print(f"the game ended {trio.current_time() - began:.1f} s after the cut")
            table.cancel_scope.cancel()
        relays.cancel_scope.cancel()

    assert len(results) == SEATS, "the game ended before the cut: nothing was tested"
    assert after_cut[1] > 0 and after_cut[2] > 0
    for seat in range(SEATS):
        assert results[seat].clean, (seat, str(results[seat]))
        (log,) = (tmp_path / f"p{seat}" / "tables").glob("*/log")
        assert verify_log(log).exit_code == 0
