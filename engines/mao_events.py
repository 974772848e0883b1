"""Mao's configuration and player events (GAMES.md M1–M40; protocol.md §5.4).

Every event is a small frozen value with a readable text form; the strict
wire codec is the common one in ``engines.core``. What a player *says* travels
as utterances (free text, at most 256 characters each, at most
``MAX_UTTERANCES`` per event) that the engine reads with
``engines.phrases.parse``, so the log keeps exactly what was said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from engines.cards import Card
from engines.core import Event
from engines.mao_rules import Rule, VerdictEffect

MAX_UTTERANCES = 12
SEVEN_DRAW = ("discard", "draw")
PROPOSALS = ("drop", "change", "end")
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class MaoConfig:
    """The table creator's switches.

    ``decks``: 1 or 2 (M1; :meth:`for_seats` picks two above five players).
    ``seven_draw``: where the 7-chain cards come from (M9; the seed says the
    discard pile). ``opening``: the creator's opening words (M3).
    ``continuous`` (M36), ``no_talking`` (M37), ``conduct`` (M38),
    ``dictator`` seat or -1 (M39) with ``dictator_plays``, ``mini`` (M40),
    ``timeout`` seconds (M23)."""

    decks: int = 1
    hand_size: int = 5
    seven_draw: str = "discard"
    opening: str = ""
    continuous: bool = False
    no_talking: bool = False
    conduct: bool = False
    dictator: int = -1
    dictator_plays: bool = True
    mini: bool = False
    timeout: int = 10

    def __post_init__(self) -> None:
        if self.decks not in (1, 2):
            raise ValueError("decks must be 1 or 2")
        if not 1 <= self.hand_size <= 10:
            raise ValueError("hand_size must be 1..10")
        if self.seven_draw not in SEVEN_DRAW:
            raise ValueError(f"seven_draw must be one of {SEVEN_DRAW}")
        if not -1 <= self.dictator <= 9:
            raise ValueError("dictator must be a seat or -1")
        if not 1 <= self.timeout <= 600:
            raise ValueError("timeout must be 1..600 seconds")

    @classmethod
    def for_seats(cls, seats: int, **switches: object) -> MaoConfig:
        """M1's default: two decks for more than five players."""
        switches.setdefault("decks", 2 if seats > 5 else 1)
        return cls(**switches)  # type: ignore[arg-type]


def _says(says: tuple[str, ...]) -> None:
    if len(says) > MAX_UTTERANCES:
        raise ValueError(f"at most {MAX_UTTERANCES} utterances per event")


def _show_says(says: tuple[str, ...]) -> str:
    return "".join(f" “{u}”" for u in says)


@dataclass(frozen=True, slots=True)
class PlayCard(Event):
    """M4: ``seat`` plays the card at ``position`` face up (the session proves
    ``card`` by revealing keys), saying ``says``."""

    KIND: ClassVar[str] = "play"
    seat: int
    position: int
    card: Card
    says: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.position < 0:
            raise ValueError("position must be non-negative")
        _says(self.says)

    def shown(self) -> tuple[tuple[int, Card], ...]:
        return ((self.position, self.card),)

    def __str__(self) -> str:
        return f"seat {self.seat} plays {self.card} (#{self.position}){_show_says(self.says)}"


@dataclass(frozen=True, slots=True)
class Draw(Event):
    """M4: ``seat`` draws instead of playing (or takes the 7 chain's cards, M9)."""

    KIND: ClassVar[str] = "draw"
    seat: int
    says: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _says(self.says)

    def __str__(self) -> str:
        return f"seat {self.seat} draws{_show_says(self.says)}"


@dataclass(frozen=True, slots=True)
class Say(Event):
    """``seat`` says something on its own, at any time (M16, M32–M38)."""

    KIND: ClassVar[str] = "say"
    seat: int
    says: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.says:
            raise ValueError("say needs at least one utterance")
        _says(self.says)

    def __str__(self) -> str:
        return f"seat {self.seat} says{_show_says(self.says)}"


@dataclass(frozen=True, slots=True)
class Call(Event):
    """M17: ``seat`` gives ``target`` a penalty with the penalty ``phrase``."""

    KIND: ClassVar[str] = "call"
    seat: int
    target: int
    phrase: str

    def __post_init__(self) -> None:
        if self.target < 0:
            raise ValueError("target must be a seat")

    def __str__(self) -> str:
        return f"seat {self.seat} to seat {self.target}: “{self.phrase}”"


@dataclass(frozen=True, slots=True)
class RuleVerdict(Event):
    """M28: the author of secret rule ``slot`` judges event number ``on``."""

    KIND: ClassVar[str] = "verdict"
    seat: int
    slot: int
    on: int
    effects: tuple[VerdictEffect, ...] = ()

    def __post_init__(self) -> None:
        if self.slot < 0 or self.on < 0 or len(self.effects) > 8:
            raise ValueError("bad verdict")

    def __str__(self) -> str:
        what = "; ".join(str(e) for e in self.effects) or "nothing"
        return f"rule {self.slot} (seat {self.seat}) on event {self.on}: {what}"


@dataclass(frozen=True, slots=True)
class AddRule(Event):
    """M27: ``seat`` commits to a new secret rule (hex SHA-256); ``""`` passes."""

    KIND: ClassVar[str] = "add_rule"
    seat: int
    commitment: str

    def __post_init__(self) -> None:
        if self.commitment and not _HEX64.fullmatch(self.commitment):
            raise ValueError("commitment is 64 lowercase hex digits (or empty to pass)")

    def __str__(self) -> str:
        if not self.commitment:
            return f"seat {self.seat} adds no rule"
        return f"seat {self.seat} adds a secret rule {self.commitment[:12]}…"


@dataclass(frozen=True, slots=True)
class RevealRule(Event):
    """M30/end of game: the author opens rule ``slot`` (``salt`` in hex)."""

    KIND: ClassVar[str] = "reveal_rule"
    seat: int
    slot: int
    salt: str
    rule: Rule

    def __post_init__(self) -> None:
        if self.slot < 0:
            raise ValueError("slot must be a rule's number (0 or more)")
        if not _HEX64.fullmatch(self.salt):
            raise ValueError("salt is 32 bytes in lowercase hex")

    def __str__(self) -> str:
        return f"seat {self.seat} reveals rule {self.slot}: {self.rule}"


@dataclass(frozen=True, slots=True)
class Propose(Event):
    """M30/M31: put ``action`` (drop/change rule ``slot``, or end) to a vote."""

    KIND: ClassVar[str] = "propose"
    seat: int
    action: str
    slot: int = -1

    def __post_init__(self) -> None:
        if self.action not in PROPOSALS:
            raise ValueError(f"action must be one of {PROPOSALS}")

    def __str__(self) -> str:
        what = "end the game" if self.action == "end" else f"{self.action} rule {self.slot}"
        return f"seat {self.seat} proposes to {what}"


@dataclass(frozen=True, slots=True)
class Vote(Event):
    """A vote on the open proposal."""

    KIND: ClassVar[str] = "vote"
    seat: int
    yes: bool

    def __str__(self) -> str:
        return f"seat {self.seat} votes {'yes' if self.yes else 'no'}"


PLAYER_EVENTS: tuple[type[Event], ...] = (
    PlayCard, Draw, Say, Call, RuleVerdict, AddRule, RevealRule, Propose, Vote
)  # fmt: skip
