"""A whole game between bot peers on this machine (``nodealer play``, the
tests and the benches): :func:`play_bot_table`. The session itself
(:mod:`table.session`) knows nothing of how bots are run or how cheats are
staged (issue 27: no import circle session ↔ bot_process ↔ cheats).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from engines.bots import sensible_bots
from engines.core import game as engine_of
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.node import Node
from p2p.wire import PROTOCOL_VERSION

from .bot_process import (
    PeerPlan,
    PeerProcess,
    default_processes,
    split_seats,
    workers_for,
)
from .names import NAMES_SECRET, SeatNames
from .pace import Pace
from .reports import PeerResult
from .session import DUTY_WAIT, FINAL_WAIT, TableSession, Update

SessionFactory = Callable[..., TableSession]


async def play_bot_table(
    game_name: str,
    seats: int,
    home: Path,
    *,
    proven: bool = True,
    config: Any = None,
    seed: int = 0,
    time_scale: float = 0.05,
    node_timeout: float = 3.0,
    final_wait: float = FINAL_WAIT,
    duty_wait: float = DUTY_WAIT,
    on_update: Callable[[int, Update], None] | None = None,
    make_session: SessionFactory = TableSession,
    own: tuple[Identity, Path | None] | None = None,
    rounds: int | None = None,
    person: int | None = None,
    on_session: Callable[[int, TableSession], None] | None = None,
    processes: int | None = None,
    pace: Pace | None = None,
    names: SeatNames | None = None,
    patience: int | None = None,
    timer_lead: int | None = None,
    version: int = PROTOCOL_VERSION,
) -> list[PeerResult]:
    """A whole game between ``seats`` real peers on this machine: each its
    own identity and store under ``home/peer<seat>``, a real TCP mesh on
    127.0.0.1, every seat played by a sensible bot (``nodealer play``).
    ``own``: seat 0's identity and data folder instead (a person's own, so
    that its log is kept with its other games). ``rounds``: Mao bots end
    the game after this many rounds (M31). ``person``: that seat has no bot;
    a person plays it through its session's ``submit_move`` (``on_session``
    hands each session over as it starts). ``names``: the seats' names,
    kept in the local seats' stores (``table-names``) so that the saved game
    reads with names later. ``patience`` (v3): the table's, in the host's
    setup (seconds; each session times it times ``time_scale``).

    Seat 0 (and ``person``'s seat) play in this process; the other seats in
    ``processes`` child processes (:mod:`table.bot_process`; default one per
    core, 0: every seat in this process), so that the table uses every core.
    ``on_update`` hears every seat, ``on_session`` the seats of this process.
    ``pace``: the bot seats wait for the people (:mod:`table.pace`).
    ``version``: the protocol version of the table (tests of v2 logs' rules).
    ``timer_lead``: the other seats sign a timer only after that seat did
    (:mod:`table.clock`; a person's screen holds the clock).
    A ``make_session`` other than :class:`TableSession` or a factory of
    :func:`table.cheats.cheating_at`, or a game registered outside
    ``engines``, cannot cross into a child: the whole table then plays in
    this process."""
    homes: list[Path | None] = [Path(home) / f"peer{s}" for s in range(seats)]
    identities = [Identity.load_or_create(h) for h in homes]
    if own is not None:
        identities[0], homes[0] = own
    spec = TableSpec(secrets.token_bytes(16), tuple(i.public for i in identities), version)
    cheat = _cheat_of(make_session)
    local = sorted({0} | ({person} if person is not None else set()))
    if processes is None:
        processes = default_processes()
    if (
        processes < 1
        or (make_session is not TableSession and cheat is None)
        or not type(engine_of(game_name)).__module__.startswith("engines.")
    ):
        local = list(range(seats))  # a factory or a game a child process cannot know
    remote = [s for s in range(seats) if s not in local]
    bots = sensible_bots(game_name, seats, seed, salt_source=secrets.token_bytes)
    for bot in bots:
        if rounds is not None and hasattr(bot, "rounds"):
            bot.rounds = rounds
    nodes = {
        s: Node(identities[s], spec, home=homes[s], host="127.0.0.1", timeout=node_timeout)
        for s in local
    }
    results: list[PeerResult | None] = [None] * seats

    def got(peer: PeerResult) -> None:
        results[peer.seat] = peer

    children: list[PeerProcess] = []
    try:
        async with trio.open_nursery() as nursery:
            for node in nodes.values():
                await nursery.start(node.run)
                if names is not None:
                    await node.put_secret(NAMES_SECRET, names.pack())
            first = nodes[local[0]]
            for node in list(nodes.values())[1:]:
                await node.connect(*first.listen_address)
            children_seats = split_seats(remote, processes)
            for group in children_seats:
                plan = PeerPlan(
                    PeerPlan.pack(spec),
                    tuple(group),
                    tuple(str(homes[s]) for s in group),
                    game_name,
                    proven=proven,
                    config=config,
                    seed=seed,
                    time_scale=time_scale,
                    node_timeout=node_timeout,
                    final_wait=final_wait,
                    duty_wait=duty_wait,
                    rounds=rounds,
                    cheat=cheat,
                    connect=first.listen_address,
                    updates=on_update is not None,
                    pace=pace,
                    workers=workers_for(len(children_seats) + 1),
                    timer_lead=timer_lead,
                )
                child = PeerProcess(plan, on_update=on_update, on_result=got)
                children.append(await nursery.start(child.run))
            for child in children:
                await child.ready.wait()

            async def play(s: int) -> None:
                updates = None if on_update is None else (lambda u, s=s: on_update(s, u))
                session = make_session(
                    nodes[s],
                    game=game_name,
                    config=config,
                    proven=proven,
                    player=None if s == person else bots[s],
                    time_scale=time_scale,
                    on_update=updates,
                    final_wait=final_wait,
                    duty_wait=duty_wait,
                    **({} if pace is None or s == person else {"pace": pace}),
                    **({} if patience is None or s != 0 else {"patience": patience}),
                )
                session.timer_lead = timer_lead  # table.clock
                if on_session is not None:
                    on_session(s, session)
                outcome = await session.run()
                node = nodes[s]
                results[s] = PeerResult(s, node.fingerprint, homes[s], node.store.log_path, outcome)

            async with trio.open_nursery() as games:
                for s in local:
                    games.start_soon(play, s)
            for child in children:
                while len(child.results) < len(child.plan.seats) and not child.finished.is_set():
                    await trio.sleep(0.01)
            for child in children:
                await child.stop()
            for child in children:
                await child.finished.wait()
            nursery.cancel_scope.cancel()
    finally:
        for node in nodes.values():
            node.store.close()
    return [r for r in results if r is not None]


def _cheat_of(make_session: SessionFactory) -> tuple[int, str] | None:
    """The (seat, name) of a :func:`table.cheats.cheating_at` factory."""
    cheat = getattr(make_session, "cheat", None)
    if (
        isinstance(cheat, tuple)
        and len(cheat) == 2
        and isinstance(cheat[0], int)
        and isinstance(cheat[1], str)
    ):
        return cheat
    return None


__all__ = ["PeerResult", "SessionFactory", "play_bot_table"]
