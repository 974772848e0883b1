"""A whole game where one seat's link is black-holed for 7 s mid-game and
then heals (issue 27, item 3): the seat is back at the table within 5 s of
the heal - connected to every seat and holding the table's whole log - and
the game ends clean for everyone, every saved log verifying clean. Three
real peers on 127.0.0.1, every connection through the fault-injecting relay
of tests/fault_relay.py, the default node timeout (beats every 0.75 s)."""

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
CUT, OUTAGE, BACK_WITHIN = 2, 7.0, 5.0


@pytest.mark.trio
@pytest.mark.slow
async def test_a_seat_cut_mid_game_is_back_within_5_s_and_the_game_ends_clean(
    tmp_path: Path,
) -> None:
    ids = [Identity.generate() for _ in range(SEATS)]
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in ids))
    config = to_data(MaoConfig(hand_size=3))
    results: dict[int, SessionResult] = {}
    moves = {s: 0 for s in range(SEATS)}

    async with trio.open_nursery() as relays:
        net = FaultyNet(relays)
        routed = net.node_class()
        nodes = [
            routed(ids[s], spec, home=tmp_path / f"p{s}", host=LOCAL, timeout=3.0)
            for s in range(SEATS)
        ]

        def counter(seat: int):
            def got(update) -> None:
                moves[seat] += update.kind == "event"

            return got

        async def play(seat: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
            node = nodes[seat]
            bot = sensible_bots("mao", SEATS, 5, salt_source=secrets.token_bytes)[seat]
            table = TableSession(
                node, game="mao", config=config, proven=False, player=bot,
                time_scale=SCALE, on_update=counter(seat),
            )  # fmt: skip
            try:
                async with trio.open_nursery() as inner:
                    await inner.start(node.run)
                    task_status.started()
                    results[seat] = await table.run()
                    await table.wait_for_peers(timeout=10.0)
                    inner.cancel_scope.cancel()
            finally:
                node.store.close()

        async def until(done, what: str, seconds: float = 60) -> None:
            with trio.move_on_after(seconds):
                while not done():
                    await trio.sleep(0.02)
                return
            pytest.fail(f"timed out waiting for {what}")

        async with trio.open_nursery() as table:
            for seat in range(SEATS):
                await table.start(play, seat)
            for node in nodes[1:]:
                await node.connect(*nodes[0].listen_address)
            await until(lambda: all(len(n.connected) == SEATS - 1 for n in nodes), "a full mesh")
            await until(lambda: moves[0] >= 10, "a few moves")
            net.cut(CUT)
            await trio.sleep(OUTAGE)
            assert not nodes[CUT].connected  # the cut held
            head = nodes[0].head
            assert len(results) < SEATS, "the game ended before the heal: nothing was tested"
            net.heal(CUT)
            healed = trio.current_time()
            away, others = nodes[CUT], [n for n in nodes if n is not nodes[CUT]]
            await until(
                lambda: (
                    len(away.connected) == SEATS - 1
                    and all(CUT in n.connected for n in others)
                    and away.head >= max(head, *(n.head for n in others)) - 2
                ),
                "the seat back at the table",
                BACK_WITHIN * 4,
            )
            back = trio.current_time() - healed
            await until(lambda: len(results) == SEATS, "the game to end", 240)
        relays.cancel_scope.cancel()

    assert back <= BACK_WITHIN, back
    for seat in range(SEATS):
        assert results[seat].clean, (seat, str(results[seat]))
        (log,) = (tmp_path / f"p{seat}" / "tables").glob("*/log")
        assert verify_log(log).exit_code == 0
