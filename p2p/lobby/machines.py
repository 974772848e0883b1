"""The lobby's rules, sans-I/O: the host's and the joiner's machines (bytes
and time in, effects out), as in :mod:`p2p.log`."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from p2p.identity import Identity, PeerKey, fingerprint
from p2p.wire import (
    MAX_SEATS,
    MAX_TABLE_ID,
    PROTOCOL_VERSION,
    WireError,
)

from .messages import (
    AGREE_TIMEOUT,
    CLOSED,
    CODE,
    FULL,
    MAX_ERRORS,
    MAX_HOST,
    NICKNAME,
    PROTOCOL,
    REMOVED,
    REQUEST_TIMEOUT,
    SEATED,
    SETTINGS,
    SIGNATURE,
    SPEC,
    TABLE,
    TIMEOUT,
    VERSION,
    WRONG_CODE,
    AlreadySeated,
    BadHostMessage,
    BadSpec,
    LobbyState,
    NotEnoughPlayers,
    Phase,
    Player,
    PrivateTable,
    Refused,
    SeatedTable,
    SettingsChanged,
    SettingsMismatch,
    TableFull,
    VersionMismatch,
    WrongHost,
    _canonical_copy,
    _nick_key,
    _refusal_error,
    _seated,
    _show,
    agree_bytes,
    decode_lobby_message,
    lobby_message,
    log,
    nickname_problem,
    refused,
    request_bytes,
    request_message,
    settings_digest,
    spec_bytes,
)
from .nicknames import free_nickname, given_for
from .table_code import (
    CODE_TRIES,
    Attempt,
    GuessLimit,
    HostPake,
    JoinerPake,
    PakeFailed,
    parse_code,
)

# --------------------------------------------------------------------- host (sans-I/O)


@dataclass(frozen=True)
class Send:
    """Send ``msg`` on connection ``conn``."""

    conn: int
    msg: dict[str, Any]


@dataclass(frozen=True)
class Close:
    """Close ``conn`` once what is queued on it has been sent."""

    conn: int


@dataclass(frozen=True)
class Changed:
    """The lobby changed (seats, phase): for the host's screen."""

    state: LobbyState


@dataclass(frozen=True)
class Finished:
    """Every seat agreed: the host's result."""

    table: SeatedTable


HostEffect = Send | Close | Changed | Finished


@dataclass
class _Guest:
    """A connection whose handshake is done (seated or not yet)."""

    conn: int
    key: PeerKey
    host: str  # its address as we see it
    local: str  # our own address on that connection
    deadline: float  # for its request, while not seated
    nick: str | None = None
    port: int = 0
    agreed: bool = False
    pake: HostPake | None = None  # a private table's exchange, until the code is proven
    attempt: Attempt | None = None  # the try that exchange counts (given back if right)

    @property
    def seated(self) -> bool:
        return self.nick is not None

    def label(self) -> str:
        who = f"{self.nick} " if self.nick else ""
        return f"{who}({self.key.fingerprint}) at {self.host}"


@dataclass
class _Spec:
    round: int
    seats: list[tuple[bytes, str, str, int]]
    data: bytes  # spec_bytes
    agree: bytes  # agree_bytes
    signature: bytes  # ours over data
    own_agreement: bytes
    deadline: float
    agreements: dict[int, bytes] = field(default_factory=dict)  # conn -> signature


class LobbyHostMachine:
    """The host's side of a lobby: every rule, no I/O.

    The driver reports connections whose lobby handshake finished
    (:meth:`connected`), their frames (:meth:`receive`), broken frames
    (:meth:`fail`), closed connections (:meth:`disconnected`), the time
    (:meth:`tick`) and the host's wish to start (:meth:`request_start`); each
    returns the effects to carry out in order."""

    def __init__(
        self,
        identity: Identity,
        settings: Mapping[str, Any],
        seats: int,
        *,
        node_port: int,
        nickname: str = "host",
        address: str | None = None,
        min_seats: int | None = None,
        table_id: bytes | None = None,
        version: int = PROTOCOL_VERSION,
        request_timeout: float = REQUEST_TIMEOUT,
        agree_timeout: float = AGREE_TIMEOUT,
        code: str | None = None,
        watch: tuple[int, int] | None = None,
    ) -> None:
        if type(seats) is not int or not 2 <= seats <= MAX_SEATS:
            raise ValueError(f"a table has 2 to {MAX_SEATS} seats, not {seats!r}")
        min_seats = 2 if min_seats is None else min_seats
        if type(min_seats) is not int or not 2 <= min_seats <= seats:
            raise ValueError(f"min_seats must be 2 to {seats}, not {min_seats!r}")
        if type(node_port) is not int or not 1 <= node_port <= 0xFFFF:
            raise ValueError(f"node_port must be 1 to 65535, not {node_port!r}")
        problem = nickname_problem(nickname)
        if problem:
            raise ValueError(f"nickname {nickname!r}: {problem}")
        if address is not None and not 1 <= len(address) <= MAX_HOST:
            raise ValueError(f"address must be 1 to {MAX_HOST} characters")
        table_id = secrets.token_bytes(16) if table_id is None else table_id
        if type(table_id) is not bytes or not 1 <= len(table_id) <= MAX_TABLE_ID:
            raise ValueError(f"a table id is 1 to {MAX_TABLE_ID} bytes")
        self.code = None if code is None else parse_code(code)  # None: a public table
        self.guesses = GuessLimit()
        self.identity = identity
        self.settings = _canonical_copy(settings)
        self.digest = settings_digest(self.settings)
        self.seats = seats
        self.min_seats = min_seats
        self.node_port = node_port
        self.nickname = nickname
        self.address = address
        self.table_id = table_id
        self.version = version
        self.request_timeout = request_timeout
        self.agree_timeout = agree_timeout
        self.phase = Phase.OPEN
        self.start_requested = False
        self.guests: dict[int, _Guest] = {}
        self.seated: list[int] = []  # conns of seats 1, 2, ...
        self.spec: _Spec | None = None
        self.result: SeatedTable | None = None
        self.errors: list[str] = []
        self._rounds = 0
        self._final: tuple[Player, ...] | None = None  # who sat down, once started
        self.removed: set[bytes] = set()  # keys the host removed: never seated again
        self.watch = watch  # (watch port, at most N spectators), said in every lobby
        self.watching = 0
        if watch is not None:
            lobby_message("lobby", **self._lobby_fields())  # a bad one fails here, not later

    # ---------------------------------------------------------------- views

    @property
    def taken(self) -> int:
        return 1 + len(self.seated)

    def is_seated(self, conn: int) -> bool:
        guest = self.guests.get(conn)
        return guest is not None and guest.seated

    def players(self) -> tuple[Player, ...]:
        if self._final is not None:
            return self._final
        own = Player(0, self.nickname, self.identity.fingerprint)
        others = (
            Player(i, g.nick or "", g.key.fingerprint)
            for i, g in enumerate((self.guests[c] for c in self.seated), start=1)
        )
        return (own, *others)

    def state(self) -> LobbyState:
        return LobbyState(self.table_id, self.settings, self.seats, self.min_seats,
                          self.players(), self.phase, self.watch, self.watching)  # fmt: skip

    def _lobby_fields(self) -> dict[str, Any]:
        players = [
            {"seat": p.seat, "nick": p.nickname, "fp": p.fingerprint} for p in self.players()
        ]
        fields = {"v": self.version, "table": self.table_id, "settings": self.settings,
                  "total": self.seats, "min": self.min_seats, "players": players}  # fmt: skip
        if self.watch is not None:  # the table takes spectators (protocol.md §4.1)
            fields["watch"] = {"port": self.watch[0], "max": self.watch[1]}
        return fields

    def lobby_msg(self) -> dict[str, Any]:
        return lobby_message("lobby", **self._lobby_fields())

    def set_watching(self, n: int) -> list[HostEffect]:
        """The spectators watching now (the host's watch port counts them):
        every seated joiner is told while the lobby runs (``watching``)."""
        if self.watch is None or self.phase is Phase.STARTED or n == self.watching:
            return []
        self.watching = n
        msg = lobby_message("watching", n=n)
        return [Send(c, msg) for c in self.seated] + [Changed(self.state())]

    # ---------------------------------------------------------------- inputs

    def answers(self, host: str, now: float) -> str | None:
        """Why connections from ``host`` are closed at once (that address
        spent its table-code tries), or None. The driver asks before the
        handshake. A table paused for every address still answers, with a
        ``refused`` that says so (see :meth:`connected`)."""
        if self.code is None or not self.guesses.address_blocked(host, now):
            return None
        return f"{CODE_TRIES} table-code tries from {host}: not answered for a while"

    def connected(
        self, conn: int, key: PeerKey, host: str, local: str, deadline: float, now: float = 0.0
    ) -> list[HostEffect]:
        """A lobby handshake finished on ``conn``: show it the table (a
        private table: its PAKE message first)."""
        if self.phase is Phase.STARTED:
            return [Send(conn, refused(CLOSED, "the table has started")), Close(conn)]
        guest = _Guest(conn, key, host, local, deadline)
        if key.raw in self.removed:
            # before any code exchange or offer: a removed key sees nothing of
            # the table again (at a private table it cannot believe this line,
            # since the host proved nothing: it only learns it was not let in)
            self._error(guest, f"refused ({CLOSED}): {REMOVED}")
            return [Send(conn, refused(CLOSED, REMOVED)), Close(conn)]
        if self.code is not None:
            if self.guesses.address_blocked(host, now):
                self._error(guest, f"{CODE_TRIES} table-code tries from {host}: not answered")
                return [Close(conn)]  # no answer: that address's tries are spent
            paused = self.guesses.paused_for(now)
            if paused is not None:  # every address's tries together are spent
                text = (
                    "this table is paused after too many wrong codes: "
                    f"try again in {math.ceil(paused)} s"
                )
                self._error(guest, text)
                return [Send(conn, refused(CODE, text)), Close(conn)]
            # the try is counted now, before any reply: parallel connections
            # cannot test more codes than the limit (given back if right)
            guest.attempt = self.guesses.reserve(host, now)
            guest.pake = HostPake(self.code, self.table_id, self.identity.public, key)
            self.guests[conn] = guest
            return [Send(conn, lobby_message("pake", table=self.table_id, m=guest.pake.message))]
        self.guests[conn] = guest
        return [Send(conn, self.lobby_msg())]

    def receive(self, conn: int, payload: bytes, now: float) -> list[HostEffect]:
        """One opened frame from ``conn``."""
        guest = self.guests.get(conn)
        if guest is None:
            return []
        try:
            msg = decode_lobby_message(payload)
        except WireError as exc:
            return self._refuse([conn], PROTOCOL, f"malformed message: {exc}", now)
        kind = msg["k"]
        if kind == "refused":
            self._error(guest, f"left: {msg['text']} ({msg['code']})")
            return self._drop([conn], now)
        if guest.pake is not None:
            if kind != "pake-reply":
                return self._refuse([conn], PROTOCOL, f"expected pake-reply, got {kind}", now)
            return self._on_pake(guest, msg, now)
        if not guest.seated:
            if kind != "request":
                return self._refuse([conn], PROTOCOL, f"expected request, got {kind}", now)
            return self._on_request(guest, msg, now)
        if kind == "agree":
            return self._on_agree(guest, msg, now)
        return self._refuse([conn], PROTOCOL, f"unexpected {kind} from a seated player", now)

    def fail(self, conn: int, reason: str, now: float) -> list[HostEffect]:
        """A frame from ``conn`` could not even be opened or framed."""
        if conn not in self.guests:
            return []
        return self._refuse([conn], PROTOCOL, reason, now)

    def disconnected(self, conn: int, now: float) -> list[HostEffect]:
        """``conn`` is gone (a seat is released, the later ones move up)."""
        if conn not in self.guests:
            return []
        return self._drop([conn], now)

    def tick(self, now: float) -> list[HostEffect]:
        late = [c for c, g in self.guests.items() if not g.seated and now >= g.deadline]
        effects = self._refuse(
            late, TIMEOUT, f"no seat request within {self.request_timeout:g} s", now
        )
        spec = self.spec
        if self.phase is Phase.AGREEING and spec is not None and now >= spec.deadline:
            slow = [c for c in self.seated if c not in spec.agreements]
            effects += self._refuse(
                slow, TIMEOUT, f"did not agree to the table within {self.agree_timeout:g} s", now
            )
        return effects

    def request_start(self, now: float) -> list[HostEffect]:
        """Start with the seats taken now (at least ``min_seats``)."""
        if self.phase is not Phase.OPEN:
            return []
        if self.taken < self.min_seats:
            raise NotEnoughPlayers(
                f"{self.taken} of the {self.min_seats} seats needed to start are taken"
            )
        self.start_requested = True
        return self._maybe_spec(now)

    def remove(self, fingerprint: str, now: float) -> list[HostEffect]:
        """The host removes the seated player holding ``fingerprint`` before
        the start: it gets ``refused closed`` "the host removed you from the
        table" and is closed, the later seats move up, every other seated
        joiner gets a new ``lobby`` (a spec in flight is void), and that key
        is not seated again at this table. Nothing if no seated joiner holds
        it (it left meanwhile) or the table has started."""
        if self.phase is Phase.STARTED:
            return []
        conn = next(
            (c for c in self.seated if self.guests[c].key.fingerprint == fingerprint), None
        )
        if conn is None:
            return []
        key = self.guests[conn].key.raw
        self.removed.add(key)
        # the start the host asked for was for the table with that player: a
        # removal disarms it (the host presses s again for the seats left), so
        # the next key to sit down never starts the table on its own
        self.start_requested = False
        # the same key's other connections (not seated: offered, or proving
        # the code) go too: none of them is shown the table again
        also = [c for c, g in self.guests.items() if g.key.raw == key and c != conn]
        return self._refuse([conn, *also], CLOSED, REMOVED, now)

    # ---------------------------------------------------------------- rules

    def _error(self, guest: _Guest, text: str) -> None:
        line = f"{guest.label()}: {text}"
        log.info("lobby: %s", line)
        self.errors.append(line)
        del self.errors[:-MAX_ERRORS]

    def _refuse(self, conns: list[int], code: str, text: str, now: float) -> list[HostEffect]:
        effects: list[HostEffect] = []
        for conn in conns:
            guest = self.guests.get(conn)
            if guest is not None:
                self._error(guest, f"refused ({code}): {text}")
                effects.append(Send(conn, refused(code, text)))
        return effects + self._drop(conns, now)

    def _drop(self, conns: list[int], now: float) -> list[HostEffect]:
        effects: list[HostEffect] = []
        seat_lost = False
        for conn in conns:
            guest = self.guests.pop(conn, None)
            if guest is None:
                continue
            if guest.pake is not None and guest.attempt is not None:
                self.guesses.settle(guest.attempt, "unfinished")  # it keeps its count
            effects.append(Close(conn))
            if conn in self.seated:
                self.seated.remove(conn)
                seat_lost = True
        if seat_lost:
            if self.taken < self.min_seats:
                # fewer seats than a start needs: the host's start is void,
                # and the table waits for every seat or a new s
                self.start_requested = False
            if self.phase is Phase.AGREEING:
                self.phase, self.spec = Phase.OPEN, None  # that spec is void
            effects += self._broadcast()
            effects += self._maybe_spec(now)
        return effects

    def _broadcast(self) -> list[HostEffect]:
        msg = self.lobby_msg()
        sends = [Send(c, msg) for c in self.seated]
        if self.watching:  # a joiner just seated learns how many watch already
            said = lobby_message("watching", n=self.watching)
            sends += [Send(c, said) for c in self.seated]
        return [*sends, Changed(self.state())]

    def _on_pake(self, guest: _Guest, msg: dict[str, Any], now: float) -> list[HostEffect]:
        assert guest.pake is not None
        try:
            mac = guest.pake.check(msg["m"], msg["mac"])
        except PakeFailed as exc:
            assert guest.attempt is not None
            self.guesses.settle(guest.attempt, "wrong")  # counted when pake was sent
            n = guest.attempt.number
            self._error(guest, f"{exc} (try {n} of {CODE_TRIES} from {guest.host})")
            guest.pake = None
            effects: list[HostEffect] = [Send(guest.conn, refused(CODE, WRONG_CODE))]
            self.guests.pop(guest.conn, None)
            return [*effects, Close(guest.conn)]
        guest.pake = None
        if guest.attempt is not None:
            self.guesses.give_back(guest.attempt)
        log.info("lobby: %s knows the table code", guest.label())
        return [
            Send(guest.conn, lobby_message("pake-ok", mac=mac)),
            Send(guest.conn, self.lobby_msg()),
        ]

    def _on_request(self, guest: _Guest, msg: dict[str, Any], now: float) -> list[HostEffect]:
        conn, nick = guest.conn, msg["nick"]
        data = request_bytes(msg["table"], msg["digest"], nick, msg["port"])
        taken = [p.nickname for p in self.players()]
        problem = None
        if msg["v"] != self.version:
            problem = VERSION, f"this table speaks protocol version {self.version}, not {msg['v']}"
        elif msg["table"] != self.table_id:
            problem = TABLE, "the request names another table"
        elif not guest.key.verify(msg["s"], data):
            problem = SIGNATURE, "the request is not signed by the key of this connection"
        elif msg["digest"] != self.digest:
            problem = SETTINGS, "you agreed to other settings than this table's"
        elif guest.key.raw in self.removed:
            problem = CLOSED, REMOVED
        elif any(self.guests[c].key == guest.key for c in self.seated):
            problem = SEATED, f"the key {guest.key.fingerprint} already holds a seat"
        elif self.taken >= self.seats:
            problem = FULL, f"all {self.seats} seats are taken"
        elif self.phase is not Phase.OPEN:
            problem = CLOSED, "the table is starting"
        elif (why := nickname_problem(nick)) is not None:
            problem = NICKNAME, why
        if problem is not None:
            return self._refuse([conn], *problem, now)
        # a name already at the table is seated with a number, never refused
        guest.nick, guest.port = free_nickname(nick, taken), msg["port"]
        self.seated.append(conn)
        log.info("lobby: %s takes seat %d", guest.label(), self.taken - 1)
        return self._broadcast() + self._maybe_spec(now)

    def _maybe_spec(self, now: float) -> list[HostEffect]:
        if self.phase is not Phase.OPEN:
            return []
        full = self.taken == self.seats
        if not full and not (self.start_requested and self.taken >= self.min_seats):
            return []
        guests = [self.guests[c] for c in self.seated]
        own_host = self.address or guests[0].local
        seats = [(self.identity.public.raw, self.nickname, own_host, self.node_port)]
        seats += [(g.key.raw, g.nick or "", g.host, g.port) for g in guests]
        data = spec_bytes(self.version, self.table_id, self.digest, seats)
        agree = agree_bytes(self.version, self.table_id, data)
        self._rounds += 1
        spec = _Spec(
            round=self._rounds,
            seats=seats,
            data=data,
            agree=agree,
            signature=self.identity.sign(data),
            own_agreement=self.identity.sign(agree),
            deadline=now + self.agree_timeout,
        )
        self.spec, self.phase = spec, Phase.AGREEING
        msg = lobby_message(
            "spec",
            v=self.version,
            table=self.table_id,
            round=spec.round,
            digest=self.digest,
            seats=[{"key": k, "nick": n, "host": h, "port": p} for k, n, h, p in seats],
            s=spec.signature,
        )
        return [Send(c, msg) for c in self.seated] + [Changed(self.state())]

    def _on_agree(self, guest: _Guest, msg: dict[str, Any], now: float) -> list[HostEffect]:
        spec = self.spec
        if spec is None or msg["round"] != spec.round:
            if msg["round"] <= self._rounds:
                return []  # an answer to a spec made void meanwhile: harmless
            return self._refuse([guest.conn], PROTOCOL, "agreement to a table never sent", now)
        if guest.conn in spec.agreements:
            return self._refuse([guest.conn], PROTOCOL, "agreed twice", now)
        if not guest.key.verify(msg["s"], spec.agree):
            return self._refuse([guest.conn], SIGNATURE, "the agreement does not verify", now)
        spec.agreements[guest.conn] = msg["s"]
        if len(spec.agreements) < len(self.seated):
            return []
        agreements = [spec.own_agreement] + [spec.agreements[c] for c in self.seated]
        self.phase = Phase.STARTED
        self.result = _seated(
            self.version,
            self.table_id,
            spec.seats,
            0,
            self.settings,
            self.digest,
            spec.signature,
            agreements,
        )
        start = lobby_message("start", agreements=agreements)
        effects: list[HostEffect] = []
        for conn in self.seated:
            effects += [Send(conn, start), Close(conn)]
        for conn, other in list(self.guests.items()):
            if not other.seated:
                effects += [Send(conn, refused(CLOSED, "the table has started")), Close(conn)]
        log.info("lobby: table %s starts with %d seats", self.table_id.hex()[:8], self.taken)
        self._final = self.players()
        self.guests.clear()
        self.seated.clear()
        return [*effects, Changed(self.state()), Finished(self.result)]


# --------------------------------------------------------------------- joiner (sans-I/O)


class LobbyJoinerMachine:
    """A joiner's side of a lobby: every check, no I/O.

    Feed it each opened frame from the host (:meth:`receive`); it returns
    the messages to send back, or raises :class:`LobbyError` (whose ``reply``
    is the ``refused`` to send, if any, before closing). :attr:`result` is
    set once the table started."""

    def __init__(
        self,
        identity: Identity,
        host_key: PeerKey,
        *,
        nickname: str,
        node_port: int,
        expect_settings: Mapping[str, Any] | None = None,
        expect_table: bytes | None = None,
        version: int = PROTOCOL_VERSION,
        refuse_table: Callable[[bytes], str | None] | None = None,
        code: str | None = None,
    ) -> None:
        problem = nickname_problem(nickname)
        if problem:
            raise ValueError(f"nickname {nickname!r}: {problem}")
        if type(node_port) is not int or not 1 <= node_port <= 0xFFFF:
            raise ValueError(f"node_port must be 1 to 65535, not {node_port!r}")
        self.identity = identity
        self.host_key = host_key
        self.nickname = nickname
        self.node_port = node_port
        self.expect = None if expect_settings is None else settings_digest(expect_settings)
        self.advertised = expect_table  # the table id the host advertised, if known
        self.table_id: bytes | None = None  # the offer's, once requested
        self.refuse_table = refuse_table
        self.version = version
        self.code = None if code is None else parse_code(code)  # for a private table
        self._pake: JoinerPake | None = None
        self._pake_table: bytes | None = None  # the table id the code was proven for
        # code, proving (a private table), offer, requested, seated, agreed, done
        self.stage = "offer" if self.code is None else "code"
        self.state: LobbyState | None = None
        self.digest: bytes | None = None  # what we agreed to, once requested
        self.seat: int | None = None
        self.given: str | None = None  # the nickname the host seated us as, once seated
        self._spec: tuple[list[tuple[bytes, str, str, int]], bytes, bytes] | None = None
        self.result: SeatedTable | None = None

    def receive(self, payload: bytes) -> list[dict[str, Any]]:
        try:
            msg = decode_lobby_message(payload)
        except WireError as exc:
            raise BadHostMessage(f"the host sent a malformed message: {exc}") from exc
        kind = msg["k"]
        if kind == "refused":
            if self.stage in ("code", "proving") and (msg["code"], msg["text"]) == (
                CLOSED,
                REMOVED,
            ):
                # only a host that proved it knows the code may say it removed
                # us: a look-alike without the code can send these words too
                raise Refused(
                    "the lobby there closed before proving it knows the table code "
                    f"(it said: {REMOVED!r}): nothing was joined",
                    code=CLOSED,
                )
            raise _refusal_error(msg["code"], msg["text"])
        if self.stage in ("code", "proving"):
            # while the code is being proven only pake, pake-ok (and refused)
            # are taken: never a lobby that would skip the host's proof
            if kind == "pake" and self.stage == "code":
                return self._on_pake(msg)
            if kind == "pake-ok" and self.stage == "proving":
                return self._on_pake_ok(msg)
            if kind == "lobby" and self.stage == "code":
                raise WrongHost(
                    "this table is not private, so it is not the table you were given the "
                    "code for: nothing was joined",
                    reply=refused(CODE, "I was given the code of a private table"),
                )
            raise BadHostMessage(f"the host sent {kind} out of turn (while {self.stage})")
        if kind == "pake" and (self.stage, self.code) == ("offer", None):
            return self._on_pake(msg)
        if kind == "lobby" and self.stage != "done":
            return self._on_lobby(msg)
        if kind == "watching" and self.stage in ("requested", "seated", "agreed"):
            assert self.state is not None  # informative only: changes no seat, no spec
            self.state = replace(self.state, watching=msg["n"])
            return []
        if kind == "spec" and self.stage == "seated":
            # one agreement per seat list: a second spec needs a new `lobby`
            # first (someone left), or a host could collect our signature on
            # two different tables and start each joiner with another one
            return self._on_spec(msg)
        if kind == "start" and self.stage == "agreed":
            return self._on_start(msg)
        raise BadHostMessage(f"the host sent {kind} out of turn (while {self.stage})")

    def _on_pake(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        if self.code is None:
            raise PrivateTable(
                "this table is private: ask the host for its table code "
                "(nodealer join --code CODE)",
                reply=refused(CODE, "I have no table code"),
            )
        advertised = self.advertised
        if advertised is not None and advertised != msg["table"]:
            raise WrongHost(
                f"the lobby there is table {msg['table'].hex()[:16]}, not the advertised "
                f"{advertised.hex()[:16]}: nothing was joined"
            )
        self._pake = JoinerPake(self.code, msg["table"], self.host_key, self.identity.public)
        try:
            mac = self._pake.answer(msg["m"])
        except PakeFailed as exc:
            raise BadHostMessage(
                f"the host's table-code exchange is broken: {exc}",
                reply=refused(PROTOCOL, "that is not a PAKE message"),
            ) from None
        self._pake_table, self.stage = msg["table"], "proving"
        return [lobby_message("pake-reply", m=self._pake.message, mac=mac)]

    def _on_pake_ok(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        assert self._pake is not None
        try:
            self._pake.confirm(msg["mac"])
        except PakeFailed:
            raise WrongHost(
                "this host does not know the table code, so it is not the table you were "
                "given the code for (a look-alike?): nothing was joined",
                reply=refused(CODE, "you do not know the table code"),
            ) from None
        self.stage = "offer"
        return []

    def _on_lobby(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        if msg["v"] != self.version:
            raise VersionMismatch(
                f"the host speaks protocol version {msg['v']}, this program {self.version}",
                reply=refused(VERSION, f"I speak protocol version {self.version}"),
            )
        if self.stage == "offer" and self.advertised not in (None, msg["table"]):
            assert self.advertised is not None
            raise WrongHost(
                f"the lobby there is table {msg['table'].hex()[:16]}, "
                f"not the advertised {self.advertised.hex()[:16]}: nothing was joined"
            )
        if self._pake_table not in (None, msg["table"]):
            raise WrongHost("the lobby's table id is not the one the table code was proven for")
        why = None if self.refuse_table is None else self.refuse_table(msg["table"])
        if why is not None:
            raise WrongHost(why, reply=refused(TABLE, "I cannot take a seat at this table id"))
        players = tuple(Player(p["seat"], p["nick"], p["fp"]) for p in msg["players"])
        if any(p.seat != i for i, p in enumerate(players)):
            raise BadHostMessage("the host's seat list is not numbered 0, 1, 2, ...")
        if players[0].fingerprint != self.host_key.fingerprint:
            raise BadHostMessage("seat 0 is not the host")
        if len({p.fingerprint for p in players}) != len(players):
            raise BadHostMessage("a key holds two seats in the host's seat list")
        if len({_nick_key(p.nickname) for p in players}) != len(players):
            raise BadHostMessage(
                "two seats have the same nickname in the host's seat list",
                reply=refused(NICKNAME, "two seats have the same nickname"),
            )
        if len(players) > msg["total"] or msg["min"] > msg["total"]:
            raise BadHostMessage("the host's seat counts do not add up")
        watch = (msg["watch"]["port"], msg["watch"]["max"]) if "watch" in msg else None
        watching = 0 if self.state is None else self.state.watching
        state = LobbyState(msg["table"], msg["settings"], msg["total"], msg["min"], players,
                           watch=watch, watching=watching)  # fmt: skip
        digest = settings_digest(state.settings)
        me = [p.seat for p in players if p.fingerprint == self.identity.fingerprint]
        if self.stage == "offer":
            if self.expect is not None and digest != self.expect:
                raise SettingsMismatch(
                    f"the host's settings are not the ones you expect: {_show(state.settings)}",
                    reply=refused(SETTINGS, "these are not the settings I agree to"),
                )
            if me:
                raise AlreadySeated(f"your key already holds seat {me[0]} at this table")
            if state.taken >= state.seats:
                raise TableFull(f"all {state.seats} seats of this table are taken")
            self.table_id, self.digest, self.state = msg["table"], digest, state
            self.stage = "requested"
            return [
                request_message(
                    self.identity, msg["table"], digest, self.nickname, self.node_port, self.version
                )
            ]
        if msg["table"] != self.table_id:
            raise BadHostMessage("the host switched to another table id")
        if digest != self.digest or (self.state is not None and watch != self.state.watch):
            raise SettingsChanged(
                "the host changed the settings after you agreed to them; join again to "
                f"accept the new ones: {_show(state.settings)}",
                reply=refused(SETTINGS, "the settings changed after I agreed"),
            )
        if len(me) != 1:
            raise BadHostMessage("the host's seat list no longer has you")
        self._check_given(players[me[0]].nickname)
        self.seat, self.state, self.stage = me[0], state, "seated"
        self._spec = None  # a spec in flight is void
        return []

    def _check_given(self, given: str) -> None:
        """The host seats us as the nickname we asked for, or it numbered
        (:func:`given_for`), and keeps calling us that (protocol.md §4)."""
        if self.given is None and not given_for(self.nickname, given):
            raise BadHostMessage(
                f"the host calls you {given!r}, you asked for {self.nickname!r}",
                reply=refused(NICKNAME, "that is not the nickname I asked for"),
            )
        if self.given is not None and given != self.given:
            raise BadHostMessage(
                f"the host renamed you from {self.given!r} to {given!r}",
                reply=refused(NICKNAME, "that is not the nickname I was given"),
            )
        self.given = given

    def _on_spec(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        def bad(text: str) -> BadSpec:
            return BadSpec(f"the host's table is wrong: {text}", reply=refused(SPEC, text))

        assert self.state is not None and self.seat is not None and self.digest is not None
        if msg["v"] != self.version or msg["table"] != self.table_id:
            raise bad("another version or table id than the lobby's")
        if msg["digest"] != self.digest:
            raise SettingsChanged(
                "the host changed the settings after you agreed to them "
                "(its table carries other settings than the ones you accepted)",
                reply=refused(SETTINGS, "the table's settings are not the ones I agreed to"),
            )
        seats = [(s["key"], s["nick"], s["host"], s["port"]) for s in msg["seats"]]
        players = self.state.players
        if len(seats) != len(players):
            raise bad(f"{len(seats)} seats, the lobby showed {len(players)}")
        for (key, nick, _, _), player in zip(seats, players, strict=True):
            if fingerprint(key) != player.fingerprint or nick != player.nickname:
                raise bad(f"seat {player.seat} is not {player.nickname} as the lobby showed")
        if seats[0][0] != self.host_key.raw:
            raise bad("seat 0 is not the host")
        own = seats[self.seat]
        if own[0] != self.identity.public.raw:
            raise bad(f"seat {self.seat} does not hold your key")
        if own[3] != self.node_port:
            raise bad(f"your port is {own[3]}, you asked for {self.node_port}")
        if len({s[0] for s in seats}) != len(seats):
            raise bad("a key holds two seats")
        for seat, (key, *_) in enumerate(seats):
            try:
                PeerKey(key)
            except ValueError:
                raise bad(f"seat {seat} has an unusable key") from None
        if len(seats) < self.state.min_seats:
            raise bad(f"{len(seats)} seats, fewer than the {self.state.min_seats} announced")
        data = spec_bytes(self.version, msg["table"], msg["digest"], seats)
        if not self.host_key.verify(msg["s"], data):
            raise bad("not signed by the host")
        agree = agree_bytes(self.version, msg["table"], data)
        self._spec = (seats, data, msg["s"])
        self.state = replace(self.state, phase=Phase.AGREEING)
        self.stage = "agreed"
        return [lobby_message("agree", round=msg["round"], s=self.identity.sign(agree))]

    def _on_start(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        assert self._spec is not None and self.state is not None and self.seat is not None
        assert self.table_id is not None and self.digest is not None
        seats, _, host_sig = self._spec
        result = _seated(
            self.version,
            self.table_id,
            seats,
            self.seat,
            self.state.settings,
            self.digest,
            host_sig,
            msg["agreements"],
        )
        result.verify()
        self.result, self.stage = result, "done"
        self.state = replace(self.state, phase=Phase.STARTED)
        return []
