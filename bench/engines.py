"""Bot games through the Bluff and Bomb engines, in-process: game-length
statistics and games per second.

    python -m bench.engines [games-per-game]   (default 1000)
    python bench/engines.py [games-per-game]
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a file: this file's name would shadow the engines package
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from engines import bluff, bomb
from engines.bots import Table
from engines.bots.bluff import RandomBluffBot, SensibleBluffBot
from engines.bots.bomb import RandomBombBot, SensibleBombBot


def run(
    name: str,
    game: Any,
    games: int,
    setup: Callable[[int], tuple[Any, int, list[Any]]],
) -> None:
    lengths, rounds, reasons = [], [], Counter()
    start = time.perf_counter()
    for seed in range(games):
        config, seats, bots = setup(seed)
        table = Table(game, config, seats, deck_seed=seed)
        outcome = table.play(bots, seed)
        lengths.append(len(table.events))
        rounds.append(getattr(table.state, "round", 0))
        reasons[outcome.reason.split(":")[0]] += 1
    elapsed = time.perf_counter() - start
    q = statistics.quantiles(lengths, n=20)
    print(f"{name}: {games} games in {elapsed:.1f} s = {games / elapsed:.0f} games/s")
    mean, median = statistics.mean(lengths), statistics.median(lengths)
    print(
        f"  events per game: mean {mean:.0f}, median {median:.0f},"
        f" p5 {q[0]:.0f}, p95 {q[-1]:.0f}, max {max(lengths)}"
    )
    if any(rounds):
        print(f"  rounds per game: mean {statistics.mean(rounds):.1f}, max {max(rounds)}")
    print("  endings: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))


def bluff_setup(seed: int) -> tuple[Any, int, list[Any]]:
    seats = 2 + seed % 5
    config = bluff.BluffConfig(jokers=seed % 2 == 0, twos_reset=seed % 3 == 0)
    kinds = [SensibleBluffBot if (s + seed) % 2 else RandomBluffBot for s in range(seats)]
    return config, seats, [k(random.Random(f"{seed}/{s}")) for s, k in enumerate(kinds)]


def bomb_setup(seed: int) -> tuple[Any, int, list[Any]]:
    seats = 3 + seed % 7
    kinds = [SensibleBombBot if (s + seed) % 2 else RandomBombBot for s in range(seats)]
    return bomb.BombConfig(), seats, [k(random.Random(f"{seed}/{s}")) for s, k in enumerate(kinds)]


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    run("bluff (2-6 seats, half sensible bots)", bluff.GAME, games, bluff_setup)
    run("bomb (3-9 seats, half sensible bots)", bomb.GAME, games, bomb_setup)


if __name__ == "__main__":
    main()
