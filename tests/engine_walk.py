"""The random walk the engine property tests share: bots play, stray events
(legal or not) are thrown in, every refused event leaves the state's bytes
unchanged, the invariants hold after every step, and the event log replays
to identical bytes."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from engines.bots import Bot, Simulator
from engines.core import EngineError, Event


def walk_with_strays(
    t: Simulator,
    bots: list[Bot],
    rng: random.Random,
    order: random.Random,
    steps: int,
    stray_rate: float,
    stray: Callable[[random.Random, Simulator], Event],
    check: Callable[[Simulator], Any],
) -> int:
    """Play up to ``steps`` steps; returns how many stray events were refused."""
    refused = 0
    for _ in range(steps):
        if t.game.is_over(t.state):
            break
        if rng.random() < stray_rate:
            before = t.game.encode(t.state)
            try:
                t.submit(stray(rng, t))
            except EngineError:
                refused += 1
                assert t.game.encode(t.state) == before, "a refused event changed the state"
        else:
            t.step(bots, order)
        check(t)
    return refused


def assert_replays(t: Simulator) -> None:
    """The logged events, decoded from their wire form, give the same bytes."""
    replay = t.game.new_for(t.config, t.seats, t.version)
    for event in t.events:
        replay = t.game.apply(replay, t.game.decode_event(event.to_data()))
    assert t.game.encode(replay) == t.game.encode(t.state)
