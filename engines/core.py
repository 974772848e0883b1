"""The one interface every game engine implements (Bluff, the Bomb game, Mao).

Theory of operation
-------------------
An engine is a pure function from an event sequence to a state. Every peer
applies the same public, signed, ordered events to the same engine and must
hold a byte-identical public state (``Game.encode``). Nothing here does I/O,
reads a clock or draws a random number: time and jointly drawn random values
arrive as events, issued by the log's sequencer.

*Hidden cards are deck positions.* After the joint shuffle the deck is the
positions ``0 … n-1``; the engine moves positions between zones (hands, pile,
public area) and learns a position's face only from a public ``Revealed``
event. A seat's private knowledge (the faces it decrypted) is never in the
public state; it is a plain mapping ``known: {position: Card}`` that the layer
above keeps per seat and passes to ``view``/bots. ``view`` shows a seat only
public faces plus the faces in ``known`` *for positions that seat holds*, so
a wrong or oversized ``known`` can never leak another seat's hand.

*The engine says what crypto work it needs, as data.* ``Game.pending(state)``
lists ``Request`` values (deal positions to a seat, reveal positions to all,
move hidden positions to another hand, reshuffle face-up cards into fresh
positions, draw a joint random value, tell me when N seconds passed, …). The
layer above performs them in list order and answers each with the matching
*system event* (``Dealt``, ``Revealed``, ``Transferred``, ``Reshuffled``,
``RandomValue``, ``TimerExpired``, or a game's own such as Bomb's proof
verdict). A system event that answers no pending request is illegal. A timer
that disappears from ``pending`` is cancelled.

*Two kinds of events.* Player events carry the author ``seat`` (the layer
above checks it against the signature); system events (``SYSTEM = True``)
come from the sequencer. Both are small frozen dataclasses with a ``KIND``
string, ``to_data()`` giving plain msgpack-able data, a strict
``Game.decode_event(data)`` that raises ``MalformedEvent`` on anything odd
(wrong types, unknown kind, missing or extra keys), and a readable ``str``.

*Errors are values.* ``apply`` either returns the next state or raises
``IllegalMove(reason, penalty=None)``; states are immutable, so a refused
event changes nothing. ``penalty`` is the penalty phrase id (Mao).

A new game is one ``Game`` subclass (rules, seat range, default seat count,
its bots) registered with :func:`register`: a module ``engines/<name>.py``
with ``GAME = register(MyGame())`` for a built-in game (listed in
``BUILT_IN``), or any module that registers one (a test does). ``game(name)``
and :func:`games` are the one registry every layer reads.

>>> e = Revealed(positions=(4, 9), cards=(Card.parse("A♠"), Card.parse("RJ")))
>>> str(e)
'reveal #4=A♠ #9=RJ'
>>> e.to_data()
{'kind': 'revealed', 'positions': [4, 9], 'cards': [0, 53]}
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, ClassVar, Generic, TypeVar

import msgpack

from engines.cards import DECK_SIZE, Card, full_deck

MAX_LIST = 4096
"""Longest list accepted from the wire inside an event or config."""
MAX_TEXT = 256
"""Longest string accepted from the wire inside an event or config."""
MAX_CARD_INDEX = 8 * DECK_SIZE
"""Card indices above this (eight decks) are refused on decode."""

Knowledge = Mapping[int, Card]
"""What one seat privately knows: deck position -> face. Never in the state."""


# -- errors -------------------------------------------------------------------
class EngineError(Exception):
    """Base of every error an engine raises on bad input."""


class MalformedEvent(EngineError, ValueError):
    """Data that is not a well-formed event (or config) of this game."""


class IllegalMove(EngineError):
    """A well-formed event the rules do not allow now. ``reason`` says why in
    words a player can act on; ``penalty`` is a penalty phrase id (Mao) or
    None; ``seat`` is the offending seat when there is one."""

    def __init__(self, reason: str, penalty: str | None = None, seat: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.penalty = penalty
        self.seat = seat

    def __str__(self) -> str:
        who = f"seat {self.seat}: " if self.seat is not None else ""
        tail = f" (penalty: {self.penalty})" if self.penalty else ""
        return f"{who}{self.reason}{tail}"


# -- a generic codec for small frozen dataclasses ----------------------------
def to_data(value: Any) -> Any:
    """Plain msgpack-able data for a value: dataclasses become maps in field
    order (events and requests lead with their ``kind``), tuples become
    lists, cards their index, enums their value."""
    if value is None or isinstance(value, (bool, int, str)):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, Card):
        return value.index
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [to_data(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        kind = getattr(type(value), "KIND", None)
        if kind is not None:
            out["kind"] = kind
        for f in dataclasses.fields(value):
            out[f.name] = to_data(getattr(value, f.name))
        return out
    raise TypeError(f"cannot encode {type(value).__name__} in engine data")


_HINTS: dict[type, dict[str, Any]] = {}


def _field_hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        module = importlib.import_module(cls.__module__)
        every = typing.get_type_hints(cls, vars(module))
        hints = {f.name: every[f.name] for f in dataclasses.fields(cls)}
        if "kind" in hints and getattr(cls, "KIND", None) is not None:
            raise TypeError(f"{cls.__name__}: a field may not be called 'kind'")
        _HINTS[cls] = hints
    return hints


def _bad(where: str, what: str) -> MalformedEvent:
    return MalformedEvent(f"{where}: {what}")


def _from(hint: Any, data: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if hint is bool:
        if type(data) is not bool:
            raise _bad(where, f"expected true/false, got {type(data).__name__}")
        return data
    if hint is int:
        if type(data) is not int:
            raise _bad(where, f"expected an integer, got {type(data).__name__}")
        return data
    if hint is str:
        if type(data) is not str or len(data) > MAX_TEXT:
            raise _bad(where, f"expected text of at most {MAX_TEXT} characters")
        return data
    if hint is Card:
        if type(data) is not int or not 0 <= data < MAX_CARD_INDEX:
            raise _bad(where, f"expected a card index 0…{MAX_CARD_INDEX - 1}")
        return Card(data)
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(data, (list, tuple)) or len(data) > MAX_LIST:
            raise _bad(where, f"expected a list of at most {MAX_LIST} items")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
        if len(data) != len(args):
            raise _bad(where, f"expected {len(args)} items")
        pairs = enumerate(zip(args, data, strict=True))
        return tuple(_from(a, v, f"{where}[{i}]") for i, (a, v) in pairs)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if data is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _from(inner, data, where)
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(data)
        except (ValueError, TypeError):
            raise _bad(where, f"not a valid {hint.__name__}: {data!r}") from None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_data(hint, data, where)
    raise TypeError(f"unsupported field type {hint!r} at {where}")


T = TypeVar("T")


def from_data(cls: type[T], data: Any, where: str = "") -> T:
    """Strictly decode ``data`` (as made by ``to_data``) into ``cls``: exactly
    the expected keys, exact types; any problem raises ``MalformedEvent``."""
    where = where or cls.__name__
    if not isinstance(data, Mapping):
        raise _bad(where, f"expected a map, got {type(data).__name__}")
    hints = _field_hints(cls)
    kind = getattr(cls, "KIND", None)
    expected = set(hints) | ({"kind"} if kind is not None else set())
    if set(data) != expected:
        missing, extra = expected - set(data), set(data) - expected
        raise _bad(where, f"missing {sorted(missing)!r}, unexpected {sorted(map(str, extra))!r}")
    if kind is not None and data["kind"] != kind:
        raise _bad(where, f"kind {data['kind']!r} is not {kind!r}")
    values = {name: _from(h, data[name], f"{where}.{name}") for name, h in hints.items()}
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        raise _bad(where, str(exc)) from None


# -- events -----------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    """Base of every event. Subclasses are frozen dataclasses with a ``KIND``;
    player events have ``seat`` as first field, system events set
    ``SYSTEM = True`` and have no author seat."""

    KIND: ClassVar[str] = ""
    SYSTEM: ClassVar[bool] = False

    def to_data(self) -> dict[str, Any]:
        return to_data(self)

    @property
    def author(self) -> int | None:
        """The seat that must have signed this event; None for system events."""
        return None if self.SYSTEM else getattr(self, "seat", None)

    def shown(self) -> tuple[tuple[int, Card], ...]:
        """Hidden cards this player event turns face up itself, as (position,
        face) pairs its author proves with its own keys (a Mao play, M4);
        none for most events. The table checks the keys before applying."""
        return ()

    def __str__(self) -> str:
        parts = [f"{f.name}={_text(getattr(self, f.name))}" for f in dataclasses.fields(self)]
        return " ".join([self.KIND, *parts])


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + " ".join(_text(v) for v in value) + "]"
    return str(value)


def _positions(values: tuple[int, ...], what: str = "positions") -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"{what} repeat a position")
    if any(p < 0 for p in values):
        raise ValueError(f"{what} must be non-negative")


@dataclasses.dataclass(frozen=True, slots=True)
class Dealt(Event):
    """System: the positions of a ``Deal`` request are now privately known to
    ``seat`` (every other holder's key was broadcast). Carries no faces."""

    KIND: ClassVar[str] = "dealt"
    SYSTEM: ClassVar[bool] = True
    seat: int
    positions: tuple[int, ...]

    def __post_init__(self) -> None:
        _positions(self.positions)

    def __str__(self) -> str:
        return f"dealt {_text(self.positions)} to seat {self.seat}"


@dataclasses.dataclass(frozen=True, slots=True)
class Revealed(Event):
    """System: positions turned face up for everyone, with their faces."""

    KIND: ClassVar[str] = "revealed"
    SYSTEM: ClassVar[bool] = True
    positions: tuple[int, ...]
    cards: tuple[Card, ...]

    def __post_init__(self) -> None:
        _positions(self.positions)
        if len(self.cards) != len(self.positions):
            raise ValueError("one card per revealed position")

    @property
    def faces(self) -> dict[int, Card]:
        return dict(zip(self.positions, self.cards, strict=True))

    def __str__(self) -> str:
        pairs = zip(self.positions, self.cards, strict=True)
        return "reveal " + " ".join(f"#{p}={c}" for p, c in pairs)


@dataclasses.dataclass(frozen=True, slots=True)
class Proved(Event):
    """System: whether ``seat``'s proof about its hidden card at ``position``
    (a ``Prove`` request) verified."""

    KIND: ClassVar[str] = "proved"
    SYSTEM: ClassVar[bool] = True
    seat: int
    position: int
    ok: bool

    def __str__(self) -> str:
        result = "verified" if self.ok else "FAILED"
        return f"seat {self.seat}'s proof about #{self.position} {result}"


@dataclasses.dataclass(frozen=True, slots=True)
class Transferred(Event):
    """System: hidden positions moved to ``seat``'s hand are now known to it."""

    KIND: ClassVar[str] = "transferred"
    SYSTEM: ClassVar[bool] = True
    seat: int
    positions: tuple[int, ...]

    def __post_init__(self) -> None:
        _positions(self.positions)

    def __str__(self) -> str:
        return f"transferred {_text(self.positions)} to seat {self.seat}"


@dataclasses.dataclass(frozen=True, slots=True)
class Reshuffled(Event):
    """System: the face-up cards of a ``Reshuffle`` request were jointly
    reshuffled and are now the hidden ``new_positions``."""

    KIND: ClassVar[str] = "reshuffled"
    SYSTEM: ClassVar[bool] = True
    new_positions: tuple[int, ...]

    def __post_init__(self) -> None:
        _positions(self.new_positions)


@dataclasses.dataclass(frozen=True, slots=True)
class RandomValue(Event):
    """System: a jointly drawn value in ``[0, bound)`` for ``purpose``."""

    KIND: ClassVar[str] = "random"
    SYSTEM: ClassVar[bool] = True
    purpose: str
    value: int

    def __str__(self) -> str:
        return f"random {self.purpose}={self.value}"


@dataclasses.dataclass(frozen=True, slots=True)
class TimerExpired(Event):
    """System: the seconds of the pending ``Timer`` for ``purpose`` passed."""

    KIND: ClassVar[str] = "timer"
    SYSTEM: ClassVar[bool] = True
    purpose: str

    def __str__(self) -> str:
        return f"time up: {self.purpose}"


COMMON_EVENTS: tuple[type[Event], ...] = (
    Dealt,
    Revealed,
    Transferred,
    Reshuffled,
    RandomValue,
    TimerExpired,
)


# -- requests: the work the layer above must do -------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Request:
    """Base of the work items ``Game.pending`` lists (``KIND`` names one)."""

    KIND: ClassVar[str] = ""

    def to_data(self) -> dict[str, Any]:
        return to_data(self)

    def __str__(self) -> str:
        parts = [f"{f.name}={_text(getattr(self, f.name))}" for f in dataclasses.fields(self)]
        return " ".join([self.KIND, *parts])


@dataclasses.dataclass(frozen=True, slots=True)
class Deal(Request):
    """Deal hidden ``positions`` privately to ``seat``; answer ``Dealt``."""

    KIND: ClassVar[str] = "deal"
    seat: int
    positions: tuple[int, ...]
    purpose: str = "hand"

    def answer(self) -> Dealt:
        return Dealt(self.seat, self.positions)


@dataclasses.dataclass(frozen=True, slots=True)
class Reveal(Request):
    """Turn ``positions`` face up for everyone; answer ``Revealed`` (same
    positions, same order, with their faces)."""

    KIND: ClassVar[str] = "reveal"
    positions: tuple[int, ...]
    purpose: str


@dataclasses.dataclass(frozen=True, slots=True)
class Transfer(Request):
    """Hidden ``positions`` (in the pile) now belong to ``seat``'s hand: their
    previous holders give up their keys so ``seat`` alone learns the faces;
    answer ``Transferred``."""

    KIND: ClassVar[str] = "transfer"
    seat: int
    positions: tuple[int, ...]

    def answer(self) -> Transferred:
        return Transferred(self.seat, self.positions)


@dataclasses.dataclass(frozen=True, slots=True)
class Reshuffle(Request):
    """Jointly reshuffle the face-up cards at ``positions`` into the fresh
    hidden positions ``new_positions`` (same count); answer ``Reshuffled``."""

    KIND: ClassVar[str] = "reshuffle"
    positions: tuple[int, ...]
    new_positions: tuple[int, ...]

    def answer(self) -> Reshuffled:
        return Reshuffled(self.new_positions)


@dataclasses.dataclass(frozen=True, slots=True)
class Prove(Request):
    """``seat`` must prove, without showing it, that its hidden card at
    ``position`` is one of ``allowed`` (a zero-knowledge membership proof:
    the Bomb game's K12 A and B); answer ``Proved``. ``purpose`` says why,
    for people (a game's own label)."""

    KIND: ClassVar[str] = "prove"
    seat: int
    position: int
    allowed: tuple[Card, ...]
    purpose: str = ""

    def answer(self, ok: bool) -> Proved:
        return Proved(self.seat, self.position, ok)


@dataclasses.dataclass(frozen=True, slots=True)
class RandomDraw(Request):
    """Draw a joint random value in ``[0, bound)``; answer ``RandomValue``."""

    KIND: ClassVar[str] = "random"
    purpose: str
    bound: int


@dataclasses.dataclass(frozen=True, slots=True)
class Timer(Request):
    """Tell the engine when ``seconds`` have passed since this request first
    appeared; answer ``TimerExpired``. Cancelled if it leaves ``pending``."""

    KIND: ClassVar[str] = "timer"
    purpose: str
    seconds: int

    def answer(self) -> TimerExpired:
        return TimerExpired(self.purpose)


@dataclasses.dataclass
class SimulatedClock:
    """Simulated game time for in-process tables (the engine-only
    simulator, the in-process table): each pending timer is due ``seconds``
    after it was first seen pending; :meth:`due` says which one to fire."""

    now: int = 0
    deadlines: dict[str, int] = dataclasses.field(default_factory=dict)

    def watch(self, pending: tuple[Request, ...]) -> None:
        """Note the timers pending now (a timer that left is cancelled)."""
        timers = {r.purpose: r for r in pending if isinstance(r, Timer)}
        self.deadlines = {p: t for p, t in self.deadlines.items() if p in timers}
        for purpose, timer in timers.items():
            self.deadlines.setdefault(purpose, self.now + timer.seconds)

    def due(self, force: bool = False) -> str | None:
        """The purpose of the earliest timer if it is due (or at all, if
        ``force``: nothing else can happen), advancing the clock to it."""
        if not self.deadlines:
            return None
        purpose, when = min(self.deadlines.items(), key=lambda kv: (kv[1], kv[0]))
        if when > self.now and not force:
            return None
        self.now = max(self.now, when)
        del self.deadlines[purpose]
        return purpose


# -- outcome ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended: winning and losing seats, the reason in
    words (citing the rule), and seats caught cheating (never winners)."""

    winners: tuple[int, ...]
    losers: tuple[int, ...]
    reason: str
    cheaters: tuple[int, ...] = ()

    def to_data(self) -> dict[str, Any]:
        return to_data(self)

    def __str__(self) -> str:
        text = f"winners {list(self.winners)}, losers {list(self.losers)}: {self.reason}"
        return text + (f"; cheaters {list(self.cheaters)}" if self.cheaters else "")


# -- the game interface ---------------------------------------------------------
S = TypeVar("S")
C = TypeVar("C")


class Game(ABC, Generic[S, C]):
    """One game's rules. Subclasses set the class attributes and implement the
    abstract methods; the encode/decode helpers are shared.

    ``seat``s are ``0 … seats-1`` in table order. ``State`` is a frozen
    dataclass holding only public information (its config and seat count
    included), so ``encode`` is the same bytes on every peer."""

    name: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    default_seats: ClassVar[int]
    Config: ClassVar[type]
    events: ClassVar[tuple[type[Event], ...]]

    # -- to implement ---------------------------------------------------------
    @abstractmethod
    def new(self, config: C, seats: int) -> S:
        """The state before anything is dealt (raise ``IllegalMove`` for a bad
        seat count)."""

    @abstractmethod
    def _apply(self, state: S, event: Event) -> S:
        """Game rules for ``apply`` (event already of one of ``events``)."""

    @abstractmethod
    def pending(self, state: S) -> tuple[Request, ...]:
        """Work the layer above must do now, in order."""

    @abstractmethod
    def legal_kinds(self, state: S, seat: int) -> frozenset[str]:
        """The ``KIND``s of player events ``seat`` may submit now. (Plays are
        combinatorial — any subset of a hand with any claim — so the events
        themselves are not enumerated; ``apply`` is the full check.)"""

    @abstractmethod
    def view(self, state: S, seat: int, known: Knowledge) -> dict[str, Any]:
        """Plain data with only what ``seat`` may know: public faces, counts,
        and faces from ``known`` for positions ``seat`` holds."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """The outcome once the game is over, else None."""

    def sensible_bots(
        self, seats: int, seed: int, salt_source: Callable[[int], bytes] | None = None
    ) -> list[Any]:
        """One sensible bot per seat (``engines.bots.Bot``), seeded from
        ``seed``; ``salt_source(n)`` gives n secret bytes where a bot needs
        secrets (Mao rule commitments; the engines never draw randomness).
        Found through the registry (:func:`bots_of`): a game never imports
        its bots, its bots import the game."""
        return bots_of(self.name)(seats, seed, salt_source)

    # -- shared ---------------------------------------------------------------
    def owed(self, state: S) -> dict[int, str]:
        """Player events a seat owes the table that its own peer makes
        without asking the player (a Mao rule author's verdicts and
        reveals): seat -> what, for every such seat now. The table counts
        them among the seat's duties, so a seat that never sends them is
        named (``overdue``) instead of stalling the game. None by default."""
        return {}

    def deck(self, config: C) -> tuple[Card, ...]:
        """The cards the joint shuffle must encode, in canonical order; the
        shuffle's output positions ``0 … len-1`` are what the engine deals.
        One 54-card deck unless a game says otherwise."""
        return tuple(full_deck(1))

    def apply(self, state: S, event: Event) -> S:
        """The next state, or ``IllegalMove`` (the given state is unchanged)."""
        if type(event) not in self.events:
            raise IllegalMove(f"{self.name} has no event {type(event).__name__}")
        author = event.author
        seats = getattr(state, "seats", None)
        if author is not None and (seats is None or not 0 <= author < seats):
            raise IllegalMove(f"no seat {author} at this table")
        if self.is_over(state):
            raise IllegalMove("the game is over", seat=author)
        return self._apply(state, event)

    def is_over(self, state: S) -> bool:
        return self.outcome(state) is not None

    def decode_event(self, data: Any) -> Event:
        """Strictly decode one event of this game (``MalformedEvent`` if bad)."""
        if not isinstance(data, Mapping) or type(data.get("kind")) is not str:
            raise MalformedEvent("an event is a map with a text 'kind'")
        for cls in self.events:
            if cls.KIND == data["kind"]:
                return from_data(cls, data)
        raise MalformedEvent(f"{self.name} has no event kind {data['kind']!r}")

    def decode_config(self, data: Any) -> C:
        return from_data(self.Config, data)

    def new_for(self, config: C, seats: int, version: int) -> S:
        """:meth:`new` under the rules of table protocol ``version`` (the
        table calls this; default: the same rules for every version). A game
        whose rules changed with a protocol version says so here, so that
        old logs replay by old rules."""
        return self.new(config, seats)

    def encode(self, state: S) -> bytes:
        """Canonical bytes of the public state (identical on every peer)."""
        return msgpack.packb(to_data(state), use_bin_type=True)


BUILT_IN = ("bluff", "bomb", "mao")
"""The games that ship with nodealer (module ``engines.<name>`` registers each)."""

_REGISTRY: dict[str, Game[Any, Any]] = {}
G = TypeVar("G", bound=Game[Any, Any])


def register(engine: G) -> G:
    """Add a game to the registry, under ``engine.name``; returns it."""
    name = engine.name
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"a game's name is an identifier, not {name!r}")
    if not 1 <= engine.min_seats <= engine.default_seats <= engine.max_seats:
        raise ValueError(f"{name}: need 1 ≤ min_seats ≤ default_seats ≤ max_seats")
    known = _REGISTRY.get(name)
    if known is not None and type(known) is not type(engine):
        raise ValueError(f"two different games are called {name!r}")
    _REGISTRY[name] = engine
    return engine


BotMaker = Callable[[int, int, Callable[[int], bytes] | None], list[Any]]
"""``(seats, seed, salt_source) -> one bot per seat``, as :meth:`Game.sensible_bots`."""

_BOTS: dict[str, BotMaker] = {}


def register_bots(name: str, make: BotMaker) -> BotMaker:
    """Register the sensible bots of the game called ``name`` (module
    ``engines.bots.<name>`` does, for the built-in games); returns ``make``."""
    _BOTS[name] = make
    return make


def bots_of(name: str) -> BotMaker:
    """How to make the sensible bots of the game ``name`` (KeyError if it
    has none): registered by its bots' module, ``engines.bots.<name>``,
    imported here on first use."""
    if name not in _BOTS and name.isidentifier():
        try:
            importlib.import_module(f"engines.bots.{name}")
        except ModuleNotFoundError:
            pass
    try:
        return _BOTS[name]
    except KeyError:
        raise KeyError(f"no bots for the game {name!r}") from None


def games() -> dict[str, Game[Any, Any]]:
    """Every registered game by name, in name order (the built-in ones
    included)."""
    for name in BUILT_IN:
        importlib.import_module(f"engines.{name}")
    return dict(sorted(_REGISTRY.items()))


def game(name: str) -> Game[Any, Any]:
    """The registered game called ``name`` (KeyError if there is none)."""
    if name not in _REGISTRY:
        games()
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise KeyError(f"no game {name!r}") from None
