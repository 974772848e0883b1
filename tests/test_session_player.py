"""A seat played from outside the session, the way the TUI will: it reads the
seat's snapshot (state, view, known faces) and sends intents through
``submit_move``, which refuses what the seat may not do without sending it."""

from __future__ import annotations

import pytest
import trio

from engines.bluff import BluffConfig, Challenge, Start
from engines.bots import sensible_bots
from engines.core import to_data
from p2p.node import Node
from table.session import MoveRefused, TableSession
from table.verify import verify_log
from tests.p2p_mesh import make_table


@pytest.mark.trio
@pytest.mark.slow
async def test_a_seat_played_through_submit_move(tmp_path) -> None:
    ids, spec = make_table(2, b"human-seat")
    nodes = [
        Node(ids[s], spec, home=tmp_path / f"peer{s}", host="127.0.0.1", timeout=2.0)
        for s in range(2)
    ]
    bots = sensible_bots("bluff", 2, 8)
    changed = trio.Event()

    def note(update) -> None:
        nonlocal changed
        changed.set()
        changed = trio.Event()

    host = TableSession(nodes[0], game="bluff", proven=False, player=bots[0], time_scale=0.02)
    guest = TableSession(nodes[1], game="bluff", proven=False, time_scale=0.02, on_update=note)
    refused: list[str] = []
    made = 0

    async def person() -> None:
        """Seat 1's player: decides from the snapshot only, like a TUI."""
        nonlocal made
        while guest.result is None:
            wait = changed
            snap = guest.snapshot
            if snap.state is not None and guest.legal_kinds():
                assert snap.view is not None and set(snap.known) <= set(range(54))
                event = bots[1].act(guest.table.game, snap.state, 1, snap.known)
                if event is not None:
                    try:
                        await guest.submit_move(event)
                        made += 1
                    except MoveRefused as exc:
                        refused.append(str(exc))
            with trio.move_on_after(0.2):
                await wait.wait()

    try:
        async with trio.open_nursery() as nursery:
            for node in nodes:
                await nursery.start(node.run)
            await nodes[1].connect(*nodes[0].listen_address)
            with pytest.raises(MoveRefused, match="not been set up"):
                await guest.submit_move(Challenge(1))
            with trio.fail_after(60):
                async with trio.open_nursery() as players:
                    players.start_soon(host.run)
                    players.start_soon(guest.run)
                    players.start_soon(person)
                    # intents the seat may not make are refused, nothing is sent
                    while guest.snapshot.state is None:
                        await trio.sleep(0.01)
                    sent = nodes[1].log.next_own_counter
                    with pytest.raises(MoveRefused, match="cannot make"):
                        await guest.submit_move(Challenge(0))
                    with pytest.raises(MoveRefused):
                        await guest.submit_move(Challenge(1))  # nothing to challenge yet
                    assert nodes[1].log.next_own_counter == sent
            nursery.cancel_scope.cancel()
    finally:
        for node in nodes:
            node.store.close()
    assert made > 0, "seat 1's moves came through submit_move"
    assert host.result is not None and guest.result is not None
    assert host.result.clean and guest.result.clean
    assert str(host.result.outcome) == str(guest.result.outcome)
    assert verify_log(nodes[1].store.log_path).exit_code == 0
    with pytest.raises(MoveRefused):
        await guest.submit_move(Challenge(1))  # the game is over


@pytest.mark.trio
@pytest.mark.parametrize(
    ("expected", "words"),
    [
        ({"game": "mao", "proven": False}, "set up bluff, not mao"),
        # issue 9 §3: a host cannot switch the proofs off behind a player's back
        (
            {"game": "bluff", "proven": True},
            "set up unproven deals, but this seat agreed to proven",
        ),
        ({"proven": True}, "unproven deals"),
        (
            {"game": "bluff", "proven": False, "config": to_data(BluffConfig(start=Start.RANDOM))},
            "but this seat agreed to",
        ),
    ],
)
async def test_a_peer_refuses_a_setup_other_than_it_agreed_to(tmp_path, expected, words) -> None:
    ids, spec = make_table(2, b"wrong-setup")
    nodes = [
        Node(ids[s], spec, home=tmp_path / f"peer{s}", host="127.0.0.1", timeout=2.0)
        for s in range(2)
    ]
    host = TableSession(nodes[0], game="bluff", proven=False, time_scale=0.02, duty_wait=0.5)
    guest = TableSession(nodes[1], time_scale=0.02, **expected)
    done: list = []
    try:
        async with trio.open_nursery() as nursery:
            for node in nodes:
                await nursery.start(node.run)
            await nodes[1].connect(*nodes[0].listen_address)

            async def run_host() -> None:
                done.append(await host.run())

            nursery.start_soon(run_host)
            with trio.fail_after(20):
                result = await guest.run()
                while not done:  # the host stops too, blaming nobody
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
    finally:
        for node in nodes:
            node.store.close()
    (fault,) = result.faults
    assert (fault.seat, fault.seq) == (0, 1) and words in fault.reason, fault
    assert fault.fingerprint == ids[0].fingerprint and not result.clean
    # issue 9 review: the refusal is in the log, so the host stops instead
    # of naming the guest "overdue" for a pass it will never make
    (hosted,) = done
    assert not hosted.faults and hosted.outcome is None
    assert host.table is not None and host.table.refusal is not None
    report = verify_log(nodes[0].store.log_path)
    assert report.exit_code == 2 and "refused the host's setup" in (report.problem or "")
    with pytest.raises(MoveRefused):
        await guest.submit_move(Challenge(1))
