"""Bluff bots: one that only plays legal moves at random, one that plays
sensibly — tells the truth when it can, lies sometimes, and challenges by
counting the cards of the claimed rank it has seen.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from engines.bluff import Accept, BluffState, Challenge, Claim, Phase, PlayFaceDown, Show
from engines.cards import Card
from engines.core import Event, Game, register_bots

ACE_OF_SPADES = Card.parse("A♠")


def _next_claims(standing: Claim | None, twos_reset: bool) -> list[Claim]:
    """Every claim that beats ``standing``, cheapest first (up to 4 cards)."""
    out = [
        Claim(n, r)
        for n in range(1, 5)
        for r in range(1, 14)
        if Claim(n, r).beats(standing) or (twos_reset and r == 2)
    ]
    return sorted(set(out))


def _show_ace(state: BluffState, seat: int, known: dict[int, Card]) -> Event | None:
    for p in state.hands[seat]:
        if known.get(p) == ACE_OF_SPADES:
            return Show(seat, p)
    return None


@dataclass
class RandomBluffBot:
    """Legal moves only, chosen at random."""

    rng: random.Random
    challenge_rate: float = 0.2

    def act(self, game: Game, state: BluffState, seat: int, known: dict[int, Card]) -> Event | None:
        kinds = game.legal_kinds(state, seat)
        if "show" in kinds:
            return _show_ace(state, seat, known)
        if "challenge" in kinds and (
            self.rng.random() < self.challenge_rate or "play" not in kinds
        ):
            if "accept" not in kinds or self.rng.random() < 0.5:
                return Challenge(seat)
        if "accept" in kinds:
            return Accept(seat)
        if "play" in kinds:
            hand = list(state.hands[seat])
            placed = self.rng.sample(hand, self.rng.randint(1, min(4, len(hand))))
            claims = _next_claims(state.claim, state.config.twos_reset)
            if not claims:  # the standing claim is already huge: claim one more card
                claims = [Claim(min(state.claim.count + 1, 54), 1)]  # type: ignore[union-attr]
            return PlayFaceDown(seat, tuple(placed), self.rng.choice(claims[:8]))
        return None


@dataclass
class SensibleBluffBot:
    """Truthful when a true claim beats the standing one (except now and then
    a lie), otherwise a small lie; challenges what its counting rules out, or
    looks too good late in the game."""

    rng: random.Random
    lie_rate: float = 0.15
    doubt: float = 0.15
    seen: dict[int, Card] = field(default_factory=dict)

    def act(self, game: Game, state: BluffState, seat: int, known: dict[int, Card]) -> Event | None:
        kinds = game.legal_kinds(state, seat)
        if "show" in kinds:
            return _show_ace(state, seat, known)
        if "challenge" in kinds and self._doubts(state, seat, known, "play" in kinds):
            return Challenge(seat)
        if "accept" in kinds:
            return Accept(seat)
        if "play" in kinds:
            return self._play(state, seat, known)
        return None

    def _faces(self, state: BluffState, seat: int, known: dict[int, Card]) -> dict[int, Card]:
        faces = dict(known)
        faces.update(state.public)
        return faces

    def _doubts(self, state: BluffState, seat: int, known: dict[int, Card], my_turn: bool) -> bool:
        last = state.last
        assert last is not None
        claim = last.claim
        faces = self._faces(state, seat, known)
        in_play = set(last.positions)
        per_rank = 4 + (2 if state.config.jokers else 0)
        seen = sum(
            1
            for p, c in faces.items()
            if p not in in_play and (c.rank == claim.rank or (state.config.jokers and c.is_joker))
        )
        possible = min(per_rank - seen, len(last.positions))
        if claim.count > possible:
            return True  # counting rules it out
        if state.phase is Phase.LAST_CLAIM:
            return self.rng.random() < 0.6  # last cards: worth a look
        tight = claim.count >= possible
        # the next seat must answer; the others only speak up when it is tight
        rate = self.doubt * (2 if tight else 1) if my_turn else (0.05 if tight else 0.0)
        return self.rng.random() < rate

    def _play(self, state: BluffState, seat: int, known: dict[int, Card]) -> Event:
        hand = state.hands[seat]
        faces = self._faces(state, seat, known)
        by_rank: dict[int, list[int]] = {}
        jokers: list[int] = []
        for p in hand:
            card = faces.get(p)
            if card is None:
                continue
            if card.is_joker:
                jokers.append(p)
            else:
                by_rank.setdefault(card.rank, []).append(p)
        wild = jokers if state.config.jokers else []
        twos = state.config.twos_reset
        truthful = [
            (Claim(len(ps) + len(wild), r), ps + wild)
            for r, ps in sorted(by_rank.items())
            if Claim(len(ps) + len(wild), r).beats(state.claim) or (twos and r == 2)
        ]
        if truthful and self.rng.random() >= self.lie_rate:
            claim, placed = min(truthful, key=lambda t: (t[0].count, t[0].rank))
            # claim only what beats the standing claim, keep the rest of the set
            return PlayFaceDown(seat, tuple(placed), claim)
        # past four of a kind only a larger count beats the standing claim (B5)
        above = Claim(min((state.claim.count if state.claim else 0) + 1, 54), 1)
        claims = _next_claims(state.claim, twos) or [above]
        claim = claims[0] if self.rng.random() < 0.7 else self.rng.choice(claims[:6])
        # get rid of the cards least likely to make a true claim later
        lonely = sorted(hand, key=lambda p: len(by_rank.get(getattr(faces.get(p), "rank", 0), [])))
        placed = lonely[: min(len(lonely), max(1, min(claim.count, 2)))]
        return PlayFaceDown(seat, tuple(placed), claim)


def sensible_bots(
    seats: int, seed: int, salt_source: Callable[[int], bytes] | None = None
) -> list[SensibleBluffBot]:
    """One SensibleBluffBot per seat, each seeded from ``seed`` and its seat."""
    return [SensibleBluffBot(random.Random(f"bot/{seed}/{s}")) for s in range(seats)]


register_bots("bluff", sensible_bots)  # the game finds its bots here (engines.core)
