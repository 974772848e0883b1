"""From a lobby to a game: host a table, join one, or resume the one a seat
holds after a crash (``nodealer host`` / ``nodealer join``).

Theory of operation
-------------------
The lobby (:mod:`p2p.lobby`) knows keys and addresses, not games: it seats
people into a table whose *settings* every seat signed. This module gives
those settings their meaning — :class:`GameSettings`: the game (from the
engine registry), the seat count, the engine config, proven deals or not and
the table's friendly name — and then does what the lobby's result asks:

1. a :class:`~p2p.node.Node` for the agreed :class:`~p2p.envelope.TableSpec`,
   listening where the seat said it would, told every other seat's address;
2. the seat's secret store keeps what a restart needs (the settings, every
   address, the nicknames: ``table-lobby``), fsynced before the game starts;
3. a :class:`~table.session.TableSession` that expects exactly the agreed
   game, config and proof setting (the host's setup entry must match, §7.1)
   and plays the seat with its player (a bot, until the TUI lands).

A seat that crashed or quit calls :func:`resume_table`: the node reloads the
log and redials the addresses it remembers, the session replays the log and
goes on. :func:`held_tables` finds the unfinished tables a seat holds in its
own store.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgpack
import trio

from engines.core import EngineError, game
from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.lobby import LobbyState, SeatedTable, host_lobby, join_lobby
from p2p.node import Node
from p2p.store import StoreError, read_log, read_secret, table_dir

from .replay import Replay
from .session import SessionError, SessionResult, TableSession, Update
from .turn_timer import MAX_TURN_TIME

LOBBY_SECRET = "table-lobby"
RESUME_WAIT = 20.0  # seconds a seat going back waits for another seat
NODE_TIMEOUT = 3.0


class SeatingError(SessionError):
    """The table cannot be hosted, joined or resumed (a clear message)."""


@dataclass(frozen=True)
class GameSettings:
    """What a host offers and every seat agrees to (the lobby's settings)."""

    game: str
    seats: int
    config: Any = None
    proven: bool = True
    name: str = ""
    rounds: int | None = None
    """Mao: every seat's bot proposes and votes to end after this many
    rounds (M31); None: the bots' own default."""
    turn_time: int | None = None
    """(v3) the table's turn timer in seconds (:mod:`table.turn_timer`); None: none"""

    def __post_init__(self) -> None:
        try:
            engine = game(self.game)
        except KeyError:
            raise SeatingError(f"no game {self.game!r} on this machine") from None
        if not engine.min_seats <= self.seats <= engine.max_seats:
            raise SeatingError(
                f"{self.game} is for {engine.min_seats}-{engine.max_seats} players, "
                f"not {self.seats}"
            )
        try:
            engine.new(
                engine.Config() if self.config is None else engine.decode_config(self.config),
                self.seats,
            )
        except (EngineError, ValueError, TypeError) as exc:
            raise SeatingError(f"bad {self.game} settings: {exc}") from exc
        if self.rounds is not None and (type(self.rounds) is not int or self.rounds < 1):
            raise SeatingError(f"rounds must be a positive number, not {self.rounds!r}")
        turn = self.turn_time
        if turn is not None and (type(turn) is not int or not 1 <= turn <= MAX_TURN_TIME):
            raise SeatingError(f"the turn time is 1…{MAX_TURN_TIME} seconds, not {turn!r}")

    KEYS = frozenset({"game", "seats", "config", "proven", "name", "rounds"})

    def to_map(self) -> dict[str, Any]:
        out = {
            "game": self.game,
            "seats": self.seats,
            "config": self.config,
            "proven": self.proven,
            "name": self.name,
            "rounds": self.rounds,
        }
        if self.turn_time is not None:  # (v3) absent when none: settings as before
            out["turn_time"] = self.turn_time
        return out

    @classmethod
    def from_map(cls, data: Any) -> GameSettings:
        if not isinstance(data, dict) or set(data) - {"turn_time"} != cls.KEYS:
            raise SeatingError("the table's settings are not nodealer game settings")
        if type(data["seats"]) is not int or type(data["proven"]) is not bool:
            raise SeatingError("the table's settings are malformed")
        if not isinstance(data["game"], str) or not isinstance(data["name"], str):
            raise SeatingError("the table's settings are malformed")
        return cls(
            data["game"],
            data["seats"],
            data["config"],
            data["proven"],
            data["name"],
            data["rounds"],
            data.get("turn_time"),
        )

    def __str__(self) -> str:
        mode = "proven" if self.proven else "unproven"
        turn = "" if self.turn_time is None else f", turn timer {self.turn_time} s"
        return f"{self.name or self.game}: {self.game}, {self.seats} players, {mode} deals{turn}"


def free_port(host: str) -> int:
    """A TCP port free on ``host`` now (for the game node, which must say
    where it will listen before it can be created)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class SeatResult:
    """How the table ended for this seat."""

    seated: SeatedTable | None
    result: SessionResult
    log_path: Path
    fingerprint: str


def _save_lobby(seated: SeatedTable) -> bytes:
    return msgpack.packb(
        {
            "v": 1,
            "seat": seated.seat,
            "settings": seated.settings,
            "addresses": [list(a) for a in seated.addresses],
            "nicknames": list(seated.nicknames),
        },
        use_bin_type=True,
    )


async def _play(
    identity: Identity,
    spec: TableSpec,
    home: Path | None,
    settings: GameSettings,
    addresses: list[tuple[str, int]],
    seat_lobby: bytes | None,
    *,
    bind: str,
    player: Any,
    time_scale: float,
    on_update: Callable[[Update], None] | None,
    duty_wait: float | None,
    on_session: Callable[[TableSession], None] | None = None,
) -> tuple[SessionResult, Path]:
    me = spec.seat_of(identity.public)
    if me is None:
        raise SeatingError(f"{identity.public.fingerprint} holds no seat at {spec}")
    port = addresses[me][1] if me < len(addresses) else None
    node = Node(identity, spec, home=home, host=bind, port=port, timeout=NODE_TIMEOUT)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(node.run)
            if seat_lobby is not None:
                await node.put_secret(LOBBY_SECRET, seat_lobby)
            for seat, (host, peer_port) in enumerate(addresses):
                if seat != me:
                    node.add_address(seat, host, peer_port)
            if seat_lobby is None:  # going back: somebody must still be there
                with trio.move_on_after(RESUME_WAIT):
                    while not node.connected:
                        await trio.sleep(0.1)
                if not node.connected:
                    raise SeatingError(
                        f"none of the other seats of {spec} answered within "
                        f"{RESUME_WAIT:g} s: the table is over or abandoned (try again "
                        "later, or join another table with --connect)"
                    )
            options: dict[str, Any] = {}
            if duty_wait is not None:
                options["duty_wait"] = duty_wait
            session = TableSession(
                node,
                game=settings.game,
                config=settings.config,
                proven=settings.proven,
                player=player,
                time_scale=time_scale,
                on_update=on_update,
                **options,
            )
            # the host's setup says it; every seat checks it (table.turn_timer)
            session.turn_time, session.turn_agreed = settings.turn_time, True
            if on_session is not None:  # a screen plays this seat through it
                on_session(session)
            result = await session.run()
            await session.wait_for_peers(timeout=5.0)
            nursery.cancel_scope.cancel()
    finally:
        node.store.close()
    return result, node.store.log_path


async def host_table(
    identity: Identity,
    settings: GameSettings,
    *,
    home: Path | None = None,
    nickname: str = "host",
    host: str = "127.0.0.1",
    port: int = 0,
    node_port: int | None = None,
    player: Any = None,
    time_scale: float = 1.0,
    on_lobby: Callable[[Any], None] | None = None,
    on_change: Callable[[LobbyState], None] | None = None,
    on_update: Callable[[Update], None] | None = None,
    duty_wait: float | None = None,
    min_seats: int | None = None,
    on_session: Callable[[TableSession], None] | None = None,
    code: str | None = None,
    table_id: bytes | None = None,
    watch: tuple[int, int] | None = None,
) -> SeatResult:
    """Open a lobby for ``settings``, seat joiners until the table is full,
    then play seat 0. ``on_lobby`` gets the running lobby (its port, and
    ``start()`` to start with fewer where ``min_seats`` allows). ``code``: a
    private table's code (only joiners who know it are seated). ``table_id``
    (default: a new random one) and ``watch`` (the watch port and at most how
    many spectators, said to every seat: :func:`p2p.lobby.host_lobby`)."""
    node_port = node_port or free_port(host)
    seated: list[SeatedTable] = []

    async def run_lobby(task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> None:
        seated.append(
            await host_lobby(
                identity,
                settings.to_map(),
                settings.seats,
                node_port=node_port,
                host=host,
                port=port,
                nickname=nickname,
                min_seats=min_seats,
                on_change=on_change,
                task_status=task_status,
                code=code,
                table_id=table_id,
                watch=watch,
            )
        )

    async with trio.open_nursery() as nursery:
        lobby = await nursery.start(run_lobby)
        if on_lobby is not None:
            on_lobby(lobby)
    (table,) = seated
    result, log_path = await _play(
        identity,
        table.table,
        home,
        _seated_settings(table),
        list(table.addresses),
        _save_lobby(table),
        bind=host,
        player=player,
        time_scale=time_scale,
        on_update=on_update,
        duty_wait=duty_wait,
        on_session=on_session,
    )
    return SeatResult(table, result, log_path, identity.public.fingerprint)


async def join_table(
    identity: Identity,
    host: str,
    port: int,
    *,
    home: Path | None = None,
    nickname: str,
    expect: GameSettings | None = None,
    bind: str = "127.0.0.1",
    node_port: int | None = None,
    player_for: Callable[[GameSettings, int], Any] | None = None,
    time_scale: float = 1.0,
    on_change: Callable[[LobbyState], None] | None = None,
    on_update: Callable[[Update], None] | None = None,
    duty_wait: float | None = None,
    on_session: Callable[[TableSession], None] | None = None,
    expect_table: bytes | None = None,
    expect_host: str | None = None,
    code: str | None = None,
) -> SeatResult:
    """Take a seat at the lobby at ``host:port`` (agreeing to ``expect``, or
    to what the host offers), then play it with ``player_for(settings, seat)``.
    ``expect_table`` / ``expect_host``: the table id and host fingerprint an
    advert named (a table picked from the LAN list): a lobby at that address
    with another key or table id is left before any request, changing
    nothing (:class:`~p2p.lobby.WrongHost`)."""
    node_port = node_port or free_port(bind)

    def known_table(table_id: bytes) -> str | None:
        if (table_dir(table_id, home) / "log").exists():
            return (
                f"this seat already holds a table with id {table_id.hex()[:16]} (a host "
                "reusing an old table's id would rewrite its saved log): refused"
            )
        return None

    table = await join_lobby(
        identity,
        host,
        port,
        nickname=nickname,
        expect_settings=None if expect is None else expect.to_map(),
        node_port=node_port,
        on_change=on_change,
        refuse_table=known_table,
        expect_table=expect_table,
        expect_host=expect_host,
        code=code,
    )
    settings = _seated_settings(table)
    player = None if player_for is None else player_for(settings, table.seat)
    result, log_path = await _play(
        identity,
        table.table,
        home,
        settings,
        list(table.addresses),
        _save_lobby(table),
        bind=bind,
        player=player,
        time_scale=time_scale,
        on_update=on_update,
        duty_wait=duty_wait,
        on_session=on_session,
    )
    return SeatResult(table, result, log_path, identity.public.fingerprint)


def _seated_settings(table: SeatedTable) -> GameSettings:
    """The agreed settings, for the table as it started: a host may start
    with fewer than the seats offered (the game allowing), never more."""
    settings = GameSettings.from_map(table.settings)
    engine = game(settings.game)
    if not engine.min_seats <= table.n <= settings.seats:
        raise SeatingError(
            f"the table has {table.n} seats but its settings offer {settings.seats} "
            f"({settings.game} needs {engine.min_seats}-{engine.max_seats})"
        )
    return replace(settings, seats=table.n)


@dataclass(frozen=True)
class HeldTable:
    """An unfinished table this identity holds a seat at (in its store)."""

    spec: TableSpec
    seat: int
    settings: GameSettings
    addresses: tuple[tuple[str, int], ...]
    log_path: Path


def held_tables(identity: Identity, home: Path | None = None) -> list[HeldTable]:
    """The unfinished tables in this identity's store where it holds a seat
    and knows the settings it agreed to (most recent first)."""
    from p2p.identity import data_dir

    base = (Path(home) if home is not None else data_dir()) / "tables"
    found: list[tuple[float, HeldTable]] = []
    for log_path in base.glob("*/log") if base.is_dir() else []:
        try:
            saved = read_log(log_path)
        except (StoreError, OSError):
            continue
        seat = saved.table.seat_of(identity.public)
        if seat is None:
            continue
        held = _held(identity, saved.table, seat, home, log_path)
        if held is None:
            continue
        replay = Replay(saved.table)
        for entry in saved.entries:
            body = entry.event.decoded_body()
            replay.feed(entry.seq, entry.term, entry.event.author, body, entry.hash(saved.table))
        if replay.table is not None and (replay.table.over or replay.stopped):
            if not replay.finals_missing():
                continue  # finished
        found.append((log_path.stat().st_mtime, held))
    return [held for _, held in sorted(found, key=lambda pair: -pair[0])]


def _held(
    identity: Identity, spec: TableSpec, seat: int, home: Path | None, log_path: Path
) -> HeldTable | None:
    # read-only: the table may be in play in another process right now
    blob = read_secret(log_path.parent, LOBBY_SECRET)
    if blob is None:
        return None
    try:
        data = msgpack.unpackb(blob, raw=False)
        settings = GameSettings.from_map(data["settings"])
        addresses = tuple((str(h), int(p)) for h, p in data["addresses"])
    except (ValueError, TypeError, KeyError, msgpack.UnpackException, SeatingError):
        return None
    if len(addresses) != spec.n:
        return None
    return HeldTable(spec, seat, settings, addresses, log_path)


async def resume_table(
    identity: Identity,
    held: HeldTable,
    *,
    home: Path | None = None,
    bind: str = "127.0.0.1",
    player_for: Callable[[GameSettings, int], Any] | None = None,
    time_scale: float = 1.0,
    on_update: Callable[[Update], None] | None = None,
    duty_wait: float | None = None,
    on_session: Callable[[TableSession], None] | None = None,
) -> SeatResult:
    """Go back to a table this seat holds (after a crash or a quit): same
    identity, same store; the log and the secrets come back from disk."""
    player = None if player_for is None else player_for(held.settings, held.seat)
    result, log_path = await _play(
        identity,
        held.spec,
        home,
        held.settings,
        list(held.addresses),
        None,
        bind=bind,
        player=player,
        time_scale=time_scale,
        on_update=on_update,
        duty_wait=duty_wait,
        on_session=on_session,
    )
    return SeatResult(None, result, log_path, identity.public.fingerprint)


def table_log(table_id: bytes, home: Path | None = None) -> Path:
    return table_dir(table_id, home) / "log"


__all__ = [
    "GameSettings",
    "HeldTable",
    "SeatResult",
    "SeatingError",
    "free_port",
    "held_tables",
    "host_table",
    "join_table",
    "resume_table",
]
