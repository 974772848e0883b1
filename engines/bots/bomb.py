"""Bomb game bots: one that plays legal moves at random, one that plays to
its identity with a simple belief model.

The belief model is exact set reasoning over what the log shows: an
identity card never reaches the public area, so every face seen there (or
in one's own hand) is nobody's identity; a kind-A play shows the player's
identity relates to one of the cards, a kind-B play that it relates to none.
Each other seat keeps the set of identities still possible, taken as equally
likely. From that the bot estimates roles: how likely it is itself a captain
(nobody holds a higher card of its suit), and how likely each seat is an
enemy captain or a traitor of its own alliance (the two targets worth a
detonation, K18/K19).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import combinations

from engines.bomb import (
    AREA_SIZE,
    DECK,
    BombState,
    Detonate,
    Kind,
    Pass,
    PlaceBomb,
    Play,
    alliance_of,
    is_pattern,
    related,
)
from engines.cards import Card
from engines.core import Event, Game


def legal_plays(hand: list[tuple[int, Card]], identity: Card) -> list[Play]:
    """Every legal play (K12) of ``hand`` for this identity, seat 0 (the
    caller sets the seat)."""
    plays: list[Play] = []
    cards = [c for _, c in hand]
    for size in (1, 2, 3):
        for combo in combinations(hand, size):
            ps, cs = zip(*combo, strict=True)
            if any(related(identity, c) for c in cs):
                plays.append(Play(0, ps, cs, Kind.A))
    if hand and not any(related(identity, c) for c in cards):
        ps, cs = zip(*hand, strict=True)
        plays.append(Play(0, ps, cs, Kind.B))
    for size in range(2, len(hand) + 1):
        for combo in combinations(hand, size):
            ps, cs = zip(*combo, strict=True)
            if is_pattern(cs):
                plays.append(Play(0, ps, cs, Kind.C))
    return plays


def _mine(state: BombState, seat: int, known: dict[int, Card]) -> tuple[Card, list]:
    identity = known[seat]
    return identity, [(p, known[p]) for p in state.hands[seat]]


def _seat(play: Play, seat: int) -> Play:
    return Play(seat, play.positions, play.cards, play.rule)


@dataclass
class RandomBombBot:
    """Legal moves only, chosen at random; detonates now and then."""

    rng: random.Random
    detonate_rate: float = 0.03

    def act(self, game: Game, state: BombState, seat: int, known: dict[int, Card]) -> Event | None:
        kinds = game.legal_kinds(state, seat)
        if "play" in kinds:
            identity, hand = _mine(state, seat, known)
            return _seat(self.rng.choice(legal_plays(hand, identity)), seat)
        if "place_bomb" in kinds:
            return PlaceBomb(seat, self.rng.randrange(state.seats))
        if "detonate" in kinds and self.rng.random() < self.detonate_rate:
            return Detonate(seat)
        if "pass" in kinds:
            return Pass(seat)
        return None


class Beliefs:
    """Possible identities of every seat, from one seat's point of view."""

    def __init__(self, state: BombState, seat: int, known: dict[int, Card]):
        self.me = known[seat]
        seen = {c for _, c in state.faces} | {known[p] for p in state.hands[seat] if p in known}
        seen |= {r_card for r in state.history for r_card in r.cards}
        base = [c for c in DECK if c not in seen and c != self.me]
        self.possible: list[list[Card]] = []
        for other in range(state.seats):
            if other == seat:
                self.possible.append([self.me])
                continue
            cands = base
            for r in state.history:
                if r.seat != other:
                    continue
                if r.rule is Kind.A:
                    cands = [c for c in cands if any(related(c, x) for x in r.cards)]
                elif r.rule is Kind.B:
                    cands = [c for c in cands if not any(related(c, x) for x in r.cards)]
            self.possible.append(cands or base)

    def chance(self, seat: int, test) -> float:
        cands = self.possible[seat]
        return sum(1 for c in cands if test(c)) / len(cands)

    def captain_chance(self, seat: int) -> float:
        """How likely ``seat`` (with identity ``me`` if it is us) is a captain."""
        p = 1.0
        mine = self.possible[seat]
        if len(mine) != 1:
            return 0.0  # only used for ourselves
        card = mine[0]
        if card.is_joker:
            return 0.0
        for other, cands in enumerate(self.possible):
            if other == seat:
                continue
            p *= 1 - sum(1 for c in cands if c.suit == card.suit and c.rank > card.rank) / len(
                cands
            )
        return p

    def good_target(self, seat: int, target: int) -> float:
        """Chance that ``target`` is an enemy captain or an own-alliance traitor
        (K18/K19), judged by suit and a high/low rank guess."""
        mine = alliance_of(self.me)
        if mine is None:
            return 0.0

        def enemy_captain(c: Card) -> bool:
            return alliance_of(c) is mine.enemy and c.rank >= 10

        def own_traitor(c: Card) -> bool:
            return alliance_of(c) is mine and c.rank <= 3 and c.suit != self.me.suit

        return self.chance(target, lambda c: enemy_captain(c) or own_traitor(c))


@dataclass
class SensibleBombBot:
    """Plays to its identity: hides it behind patterns (kind C) and mixed
    plays, aims to fill the area to exactly 7 to place the bomb, places it
    on the likeliest enemy captain, and detonates only as a likely captain
    with a likely target."""

    rng: random.Random
    nerve: float = 0.5

    def act(self, game: Game, state: BombState, seat: int, known: dict[int, Card]) -> Event | None:
        kinds = game.legal_kinds(state, seat)
        if "play" in kinds:
            return self._play(state, seat, known)
        if "place_bomb" in kinds:
            beliefs = Beliefs(state, seat, known)
            others = [s for s in range(state.seats) if s != seat]
            return PlaceBomb(seat, max(others, key=lambda s: beliefs.good_target(seat, s)))
        if "detonate" in kinds and state.bomb is not None:
            beliefs = Beliefs(state, seat, known)
            if (
                state.bomb != seat
                and beliefs.captain_chance(seat) > 0.7
                and beliefs.good_target(seat, state.bomb) > self.nerve
            ):
                return Detonate(seat)
        if "pass" in kinds:
            return Pass(seat)
        return None

    def _play(self, state: BombState, seat: int, known: dict[int, Card]) -> Event:
        identity, hand = _mine(state, seat, known)
        plays = legal_plays(hand, identity)
        room = AREA_SIZE - len(state.area)

        def score(play: Play) -> float:
            n = len(play.cards)
            s = self.rng.random()
            if n == room:
                s += 3  # exactly 7: we place the bomb
            elif n > room:
                s -= 3  # the bomb would land in front of us
            if play.rule is Kind.C:
                s += 1.5  # tells nothing about the identity
            elif play.rule is Kind.A:
                # decoys: the more unrelated cards beside the related one, the better
                s += 0.4 * sum(1 for c in play.cards if not related(identity, c))
            return s

        return _seat(max(plays, key=score), seat)
