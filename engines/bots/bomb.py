"""Bomb game bots: one that plays legal moves at random, one that plays to
its identity with a simple belief model.

The belief model is exact set reasoning over what the log shows: an
identity card never reaches the public area, so every face seen there (or
in one's own hand) is nobody's identity; a kind-A play shows the player's
identity relates to one of the cards, a kind-B play that it relates to none.
Each other seat keeps the set of identities still possible, taken as equally
likely. The bot draws whole identity assignments from those sets (distinct
cards) and judges each with the engine's own K4 roles: how often a seat is a
good target (an enemy captain or a traitor of its own alliance, K18/K19),
and how often a detonation by the bot on it wins (the bot a captain too).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

from engines.bomb import (
    AREA_SIZE,
    DECK,
    BombState,
    Detonate,
    Kind,
    Pass,
    PlaceBomb,
    PlayToArea,
    Role,
    alliance_of,
    is_pattern,
    related,
    roles,
)
from engines.cards import Card
from engines.core import Event, Game, register_bots


def legal_plays(hand: list[tuple[int, Card]], identity: Card) -> list[PlayToArea]:
    """Every legal play (K12) of ``hand`` for this identity, seat 0 (the
    caller sets the seat)."""
    plays: list[PlayToArea] = []
    cards = [c for _, c in hand]
    for size in (1, 2, 3):
        for combo in combinations(hand, size):
            ps, cs = zip(*combo, strict=True)
            if any(related(identity, c) for c in cs):
                plays.append(PlayToArea(0, ps, cs, Kind.A))
    if hand and not any(related(identity, c) for c in cards):
        ps, cs = zip(*hand, strict=True)
        plays.append(PlayToArea(0, ps, cs, Kind.B))
    for size in range(2, len(hand) + 1):
        for combo in combinations(hand, size):
            ps, cs = zip(*combo, strict=True)
            if is_pattern(cs):
                plays.append(PlayToArea(0, ps, cs, Kind.C))
    return plays


def _mine(state: BombState, seat: int, known: dict[int, Card]) -> tuple[Card, list]:
    identity = known[seat]
    return identity, [(p, known[p]) for p in state.hands[seat]]


def _seat(play: PlayToArea, seat: int) -> PlayToArea:
    return PlayToArea(seat, play.positions, play.cards, play.rule)


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

    def sample(self, rng: random.Random) -> tuple[Card, ...] | None:
        """One identity per seat, each from its possible set, all distinct
        (None: some seat has no card left)."""
        drawn: list[Card] = []
        for cands in self.possible:
            card = rng.choice(cands)
            if card in drawn:
                free = [c for c in cands if c not in drawn]
                if not free:
                    return None
                card = rng.choice(free)
            drawn.append(card)
        return tuple(drawn)

    def odds(self, seat: int, rng: random.Random, samples: int = 64) -> list[tuple[float, float]]:
        """For every target seat, over identities drawn from the possible
        sets and judged with the engine's own K4 roles: the chance that it
        is a good target for ``seat``'s alliance (an enemy captain, K18, or
        a traitor of its own alliance, K19), and the chance that ``seat``
        detonating on it wins (``seat`` is a captain as well)."""
        n = len(self.possible)
        mine = alliance_of(self.me)
        if mine is None:  # a civilian has no alliance to win for
            return [(0.0, 0.0)] * n
        good, win, drawn = [0] * n, [0] * n, 0
        for _ in range(samples):
            ids = self.sample(rng)
            if ids is None:
                continue
            drawn += 1
            role = roles(ids)
            captain = role[seat] is Role.CAPTAIN
            for target in range(n):
                side = alliance_of(ids[target])
                if (role[target] is Role.CAPTAIN and side is mine.enemy) or (
                    role[target] is Role.TRAITOR and side is mine
                ):
                    good[target] += 1
                    win[target] += captain
        if not drawn:
            return [(0.0, 0.0)] * n
        return [(g / drawn, w / drawn) for g, w in zip(good, win, strict=True)]


@dataclass
class SensibleBombBot:
    """Plays to its identity: hides it behind patterns (kind C) and mixed
    plays, aims to fill the area to exactly 7 to place the bomb, places it
    on the likeliest enemy captain, and detonates only as a likely captain
    with a likely target. It grows impatient: K25 makes both alliances lose
    when time runs out, so each round lowers the chance of winning it needs
    (``nerve`` at first), down to 40 % of it after ``patience`` rounds (a
    gamble beats a certain loss)."""

    rng: random.Random
    nerve: float = 0.9
    patience: int = 40
    _window: tuple[tuple[int, int, int], bool] | None = field(default=None, repr=False)
    """(round, bomb, seat) of the last detonation window and the decision
    taken in it: a peer may ask again before its answer is on the log, and
    a fresh sample each time would turn one decision into many draws."""

    def needed(self, round_: int) -> float:
        """The chance of winning it needs to detonate in this round."""
        return self.nerve * (1 - 0.6 * min(1.0, round_ / self.patience))

    def act(self, game: Game, state: BombState, seat: int, known: dict[int, Card]) -> Event | None:
        kinds = game.legal_kinds(state, seat)
        if "play" in kinds:
            return self._play(state, seat, known)
        if "place_bomb" in kinds:
            beliefs = Beliefs(state, seat, known)
            odds = beliefs.odds(seat, self.rng)
            others = [s for s in range(state.seats) if s != seat]
            return PlaceBomb(seat, max(others, key=lambda s: odds[s]))
        if "detonate" in kinds and state.bomb is not None and state.bomb != seat:
            window = (state.round, state.bomb, seat)
            if self._window is None or self._window[0] != window:
                beliefs = Beliefs(state, seat, known)
                _, win = beliefs.odds(seat, self.rng)[state.bomb]
                self._window = (window, win > self.needed(state.round))
            if self._window[1]:
                return Detonate(seat)
        if "pass" in kinds:
            return Pass(seat)
        return None

    def _play(self, state: BombState, seat: int, known: dict[int, Card]) -> Event:
        identity, hand = _mine(state, seat, known)
        plays = legal_plays(hand, identity)
        room = AREA_SIZE - len(state.area)

        def score(play: PlayToArea) -> float:
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


def sensible_bots(
    seats: int, seed: int, salt_source: Callable[[int], bytes] | None = None
) -> list[SensibleBombBot]:
    """One SensibleBombBot per seat, each seeded from ``seed`` and its seat."""
    return [SensibleBombBot(random.Random(f"bot/{seed}/{s}")) for s in range(seats)]


register_bots("bomb", sensible_bots)  # the game finds its bots here (engines.core)
