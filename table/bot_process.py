"""Bot peers in child processes, so that a table on one machine uses every core.

Theory of operation
-------------------
:func:`~table.bot_table.play_bot_table` plays a whole table on this machine:
a person's seat (seat 0, with the TUI) and bot seats. Each peer checks every
proof of every deal, and much of a peer's work is Python holding the GIL, so
peers sharing one process share one core. Here the bot seats run in child
processes instead (``python -m table.bot_process``): each child is given a
:class:`PeerPlan` - the table, its seats and their data folders, the game's
options, the address of a peer to dial - and runs a real :class:`~p2p.node.Node`
and :class:`~table.session.TableSession` per seat, exactly as the parent
would, over real TCP on 127.0.0.1. Every peer still has its own identity,
store, secrets and tracker and checks every proof itself.

Parent and child talk over the child's stdin and stdout in frames
(``u32`` length, then a pickle): trusted, since both ends are this program
and the pipe is private to them. Child to parent: ``("listening", {seat: port})``
once its nodes listen, ``("ready",)`` once they reach every other seat (or
``MESH_WAIT`` passed), ``("update", seat, Update)`` for every
update of a seat when asked, ``("result", PeerResult)`` when a seat's
session ends, ``("error", text)`` when the child failed. Parent to child:
``("go",)`` to start the sessions (when the plan waits for it) and
``("stop",)`` once every seat of the table is done (a child keeps its nodes
up until then, as the in-process table does). A child whose stdin closes
(the parent died or was cancelled) stops at once; the parent kills a child
it is cancelled with.

A cheating seat (``nodealer play --cheat KIND``) goes to the child by name
(:data:`table.cheats.CHEATS`): a session factory made by
:func:`table.cheats.cheating_at` says which (its ``cheat`` attribute); any
other factory cannot cross a process boundary, so such a table is played in
one process as before.
"""

from __future__ import annotations

import os
import pickle
import secrets
import struct
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from p2p.envelope import TableSpec
from p2p.identity import PeerKey

from .reports import PeerResult

FRAME = struct.Struct(">I")
MESH_WAIT = 10.0  # seconds a child waits for its nodes to reach every other seat
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PeerPlan:
    """What one child process plays: ``seats`` of ``spec``, each with its
    data folder in ``homes`` (its identity is loaded from there), dialling
    ``connect`` (a peer already listening), with the game's options."""

    table: tuple[bytes, tuple[bytes, ...], int]
    """the :class:`~p2p.envelope.TableSpec`: id, seats' raw keys, version"""
    seats: tuple[int, ...]
    homes: tuple[str, ...]
    game: str
    proven: bool = True
    config: Any = None
    seed: int = 0
    time_scale: float = 0.05
    node_timeout: float = 3.0
    final_wait: float = 30.0
    duty_wait: float = 30.0
    rounds: int | None = None
    cheat: tuple[int, str] | None = None
    """(seat, name in table.cheats.CHEATS): that seat cheats"""
    connect: tuple[str, int] | None = None
    updates: bool = False
    """send every update of every seat to the parent"""
    wait_go: bool = False
    """start the sessions only on the parent's ``go``"""
    share: bool = True
    """the seats of this process feed one table (:class:`~table.session.SharedFeed`):
    each proof checked once per process, not once per seat"""
    pace: Any = None
    """a :class:`table.pace.Pace`: the bots wait for the people at the table"""
    workers: int | None = None
    """group threads of this process (:func:`mental_poker.group.set_workers`);
    None: one per core. :func:`workers_for` gives the share of a machine"""
    timer_lead: int | None = None
    """the seats sign a timer only after this seat did (:mod:`table.clock`)"""

    @staticmethod
    def pack(spec: TableSpec) -> tuple[bytes, tuple[bytes, ...], int]:
        return spec.table_id, tuple(key.raw for key in spec.seats), spec.version

    @property
    def spec(self) -> TableSpec:
        table_id, keys, version = self.table
        return TableSpec(table_id, tuple(PeerKey(raw) for raw in keys), version)


def frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return FRAME.pack(len(data)) + data


class FrameReader:
    """Frames from a trio receive stream (None at end of stream)."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                return False
            self.buffer += chunk
        return True

    async def read(self) -> Any:
        if not await self._fill(FRAME.size):
            return None
        (length,) = FRAME.unpack(self.buffer[: FRAME.size])
        if not await self._fill(FRAME.size + length):
            return None
        data = bytes(self.buffer[FRAME.size : FRAME.size + length])
        del self.buffer[: FRAME.size + length]
        return pickle.loads(data)


# ---------------------------------------------------------------- the parent side


class ChildError(RuntimeError):
    """A bot process failed (its traceback is the message)."""


class PeerProcess:
    """One child process playing the seats of a :class:`PeerPlan`."""

    def __init__(
        self,
        plan: PeerPlan,
        on_update: Callable[[int, Any], None] | None = None,
        on_result: Callable[[Any], None] | None = None,
    ) -> None:
        self.plan = plan
        self.on_update = on_update
        self.on_result = on_result
        self.ports: dict[int, int] = {}
        self.listening = trio.Event()
        self.ready = trio.Event()
        self.results: dict[int, Any] = {}
        self.finished = trio.Event()
        self.error: str | None = None
        self.process: trio.Process | None = None

    async def run(
        self, *, task_status: trio.TaskStatus[PeerProcess] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Start the child, report it started, relay its frames until it
        exits (raises :class:`ChildError` if it failed)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "table.bot_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.process = process
        try:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send_all(frame(self.plan))
            task_status.started(self)
            reader = FrameReader(process.stdout)
            while True:
                message = await reader.read()
                if message is None:
                    break
                self._dispatch(message)
            await process.wait()
            if self.error is None and process.returncode != 0:
                self.error = f"bot process for seats {self.plan.seats} exited {process.returncode}"
            if self.error is None and len(self.results) < len(self.plan.seats):
                self.error = f"bot process for seats {self.plan.seats} ended early"
            if self.error is not None:
                raise ChildError(self.error)
        finally:
            self.listening.set()
            self.ready.set()
            self.finished.set()
            if process.returncode is None:
                process.kill()
                with trio.CancelScope(shield=True):
                    await process.wait()

    def _dispatch(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "listening":
            self.ports = dict(message[1])
            self.listening.set()
        elif kind == "ready":
            self.ready.set()
        elif kind == "update":
            if self.on_update is not None:
                self.on_update(message[1], message[2])
        elif kind == "result":
            peer = message[1]
            self.results[peer.seat] = peer
            if self.on_result is not None:
                self.on_result(peer)
        elif kind == "error":
            self.error = message[1]

    async def send(self, *message: Any) -> None:
        if self.process is None or self.process.stdin is None:
            return
        try:
            await self.process.stdin.send_all(frame(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # it has gone: its run() says why

    async def go(self) -> None:
        await self.send("go")

    async def stop(self) -> None:
        await self.send("stop")


def split_seats(seats: list[int], processes: int) -> list[list[int]]:
    """``seats`` dealt round-robin into at most ``processes`` groups."""
    count = max(1, min(processes, len(seats)))
    groups: list[list[int]] = [[] for _ in range(count)]
    for i, seat in enumerate(seats):
        groups[i % count].append(seat)
    return [g for g in groups if g]


def default_processes() -> int:
    """How many bot processes a table on this machine gets: one per core."""
    return max(1, os.cpu_count() or 1)


def workers_for(processes: int) -> int:
    """Group threads for each of ``processes`` busy processes sharing this
    machine: its cores divided among them, at least one and at most the
    group's default cap (:data:`mental_poker.group.MAX_WORKERS`). A second
    thread only pays when a core would otherwise idle: with every core
    already busy, its hand-offs and GIL switches cost CPU time and nothing
    else (one 9-seat deal's passes in one process: 1.02 CPU s with one
    thread, 1.19 with two, means of 5 side by side). ``play_bot_table``
    gives its children this share of ``processes`` = children + itself; it
    keeps its own default, for the person's seat and the screen."""
    from mental_poker.group import MAX_WORKERS

    return max(1, min(MAX_WORKERS, (os.cpu_count() or 1) // max(1, processes)))


# ---------------------------------------------------------------- the child side


async def _child(plan: PeerPlan, out: trio.lowlevel.FdStream, inp: trio.lowlevel.FdStream) -> None:
    from engines.bots import sensible_bots
    from p2p.identity import Identity
    from p2p.node import Node

    from .session import SharedFeed, TableSession, Update

    make_session: Callable[..., TableSession] = TableSession
    if plan.cheat is not None:
        from .cheats import CHEATS, cheating_at

        make_session = cheating_at(plan.cheat[0], CHEATS[plan.cheat[1]])
    sending = trio.Lock()

    async def send(*message: Any) -> None:
        async with sending:
            await out.send_all(frame(message))

    outbox_send, outbox = trio.open_memory_channel[tuple[Any, ...]](float("inf"))

    async def writer() -> None:
        async for message in outbox:
            await send(*message)

    go = trio.Event()
    stop = trio.Event()

    async def listen(cancel: trio.CancelScope) -> None:
        reader = FrameReader(inp)
        while True:
            message = await reader.read()
            if message is None:  # the parent has gone
                cancel.cancel()
                return
            if message[0] == "go":
                go.set()
            elif message[0] == "stop":
                stop.set()

    if plan.workers is not None:
        from mental_poker import group

        group.set_workers(plan.workers)
    bots = sensible_bots(plan.game, plan.spec.n, plan.seed, salt_source=secrets.token_bytes)
    for bot in bots:
        if plan.rounds is not None and hasattr(bot, "rounds"):
            bot.rounds = plan.rounds
    identities = [Identity.load_or_create(Path(h)) for h in plan.homes]
    spec = plan.spec
    nodes = [
        Node(identity, spec, home=Path(h), host="127.0.0.1", timeout=plan.node_timeout)
        for identity, h in zip(identities, plan.homes, strict=True)
    ]
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(listen, nursery.cancel_scope)
            nursery.start_soon(writer)
            for node in nodes:
                await nursery.start(node.run)
            if plan.connect is not None:
                for node in nodes:
                    await node.connect(*plan.connect)
            ports = {s: node.listen_address[1] for s, node in zip(plan.seats, nodes, strict=True)}
            await send("listening", ports)
            with trio.move_on_after(MESH_WAIT):
                while any(len(node.connected) < spec.n - 1 for node in nodes):
                    await trio.sleep(0.01)
            await send("ready")
            if plan.wait_go:
                await go.wait()

            shared = SharedFeed() if plan.share and len(nodes) > 1 else None

            async def play(seat: int, node: Node) -> None:
                def updated(update: Update) -> None:
                    outbox_send.send_nowait(("update", seat, update))

                session = make_session(
                    node,
                    game=plan.game,
                    config=plan.config,
                    proven=plan.proven,
                    player=bots[seat],
                    time_scale=plan.time_scale,
                    on_update=updated if plan.updates else None,
                    final_wait=plan.final_wait,
                    duty_wait=plan.duty_wait,
                    **({} if shared is None else {"shared": shared}),
                    **({} if plan.pace is None else {"pace": plan.pace}),
                )
                session.timer_lead = plan.timer_lead  # table.clock
                result = await session.run()
                home = Path(plan.homes[plan.seats.index(seat)])
                peer = PeerResult(seat, node.fingerprint, home, node.store.log_path, result)
                outbox_send.send_nowait(("result", peer))

            async with trio.open_nursery() as games:
                for seat, node in zip(plan.seats, nodes, strict=True):
                    games.start_soon(play, seat, node)
            await stop.wait()
            outbox_send.close()
            nursery.cancel_scope.cancel()
    finally:
        for node in nodes:
            node.store.close()


def main() -> int:
    """Entry point of a bot process (``python -m table.bot_process``)."""
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed goes to stderr, never into the frames
    in_fd = os.dup(0)

    def read(size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = os.read(in_fd, size - len(data))
            if not chunk:
                break
            data += chunk
        return data

    header = read(FRAME.size)
    if len(header) < FRAME.size:
        return 2
    (length,) = FRAME.unpack(header)
    data = read(length)
    if len(data) < length:
        return 2
    plan = pickle.loads(data)

    async def run() -> None:
        out = trio.lowlevel.FdStream(out_fd)
        stdin = trio.lowlevel.FdStream(in_fd)
        try:
            await _child(plan, out, stdin)
        except BaseException as exc:  # tell the parent why, then fail
            if not isinstance(exc, (KeyboardInterrupt, trio.Cancelled)):
                text = "".join(traceback.format_exception(exc))
                with trio.move_on_after(2):
                    await out.send_all(frame(("error", text)))
            raise

    profile_dir = os.environ.get("NODEALER_PROFILE")  # a folder: profile this child
    profiler = None
    if profile_dir:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        trio.run(run)
    except BaseException:  # already reported to the parent
        return 1
    finally:
        if profiler is not None and profile_dir:
            profiler.disable()
            seats = "-".join(str(s) for s in plan.seats)
            profiler.dump_stats(str(Path(profile_dir) / f"seats-{seats}.prof"))
    return 0


__all__ = [
    "ChildError",
    "PeerPlan",
    "PeerProcess",
    "default_processes",
    "main",
    "split_seats",
]

if __name__ == "__main__":
    sys.exit(main())
