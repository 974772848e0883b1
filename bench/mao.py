"""Mao bot games through the engine, in-process: game length, penalties,
secret rules, what the sensible bot's learning buys, and games per second.

    python -m bench.mao [games] [rounds]     (default 1000 games of 5 rounds)
    python bench/mao.py [games] [rounds]

Tables of 3–8 seats (two decks above five), a mix of sensible and legal
bots (seat ``s`` of game ``g`` is legal when ``(s + g) % 3 == 0``), the
winners adding secret rules; seat 0 proposes the end after ``rounds`` rounds.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from pathlib import Path

if not __package__:  # run as a file: this file's name would shadow the engines package
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

from engines.bots import Table
from engines.bots.mao import LegalBot, SensibleBot
from engines.mao import GAME, judged_of
from engines.mao_events import MaoConfig


def main(games: int = 1000, rounds: int = 5) -> None:
    kinds: Counter = Counter()
    phrases: Counter = Counter()
    effects: Counter = Counter()
    rule_texts: Counter = Counter()
    per_bot_penalties: Counter = Counter()
    per_bot_seats: Counter = Counter()
    wins: Counter = Counter()
    lengths, seconds = [], []
    dropped = 0
    start = time.perf_counter()
    for g in range(games):
        seats = 3 + g % 6
        table = Table(GAME, MaoConfig.for_seats(seats), seats, deck_seed=g)
        legal = [(s + g) % 3 == 0 for s in range(seats)]
        bots = [
            LegalBot(g * 16 + s, rounds) if legal[s] else SensibleBot(g * 16 + s, rounds)
            for s in range(seats)
        ]
        t0 = time.perf_counter()
        table.play(bots, seed=g, max_events=60_000)
        seconds.append(time.perf_counter() - t0)
        state = table.state
        lengths.append(len(table.events))
        kinds.update(e.KIND for e in table.events)
        for event in table.events:
            if event.KIND == "propose" and event.action != "end":  # type: ignore[attr-defined]
                dropped += 1
        for rule in state.rules:
            assert rule.rule is not None and not rule.faults
            rule_texts[str(rule.rule)] += 1
            for judged in judged_of(rule):
                for eff in judged.effects:
                    effects[eff.do] += 1
                    if eff.do == "penalty":
                        phrases[eff.phrase] += 1
                        per_bot_penalties["legal" if legal[eff.target] else "sensible"] += 1
        for s in range(seats):
            per_bot_seats["legal" if legal[s] else "sensible"] += state.round
            wins["legal" if legal[s] else "sensible"] += state.wins[s]
    total = time.perf_counter() - start
    rounds_played = sum(wins.values())
    print(f"Mao: {games} bot games of 3–8 seats, {rounds} rounds each, in {total:.1f} s "
          f"({games / total:.1f} games/s, {sum(lengths) / total:,.0f} events/s)")  # fmt: skip
    print(f"events per game: mean {statistics.mean(lengths):,.0f}, median "
          f"{statistics.median(lengths):,.0f}, max {max(lengths):,}; seconds per game: mean "
          f"{statistics.mean(seconds):.3f}, max {max(seconds):.3f}")  # fmt: skip
    print("events by kind:", ", ".join(f"{k} {v:,}" for k, v in kinds.most_common()))
    print(f"rounds won: {rounds_played:,}; secret rules added: {sum(rule_texts.values()):,}; "
          f"dropped or changed by vote (M30) proposals: {dropped}")  # fmt: skip
    print("verdict effects:", ", ".join(f"{k} {v:,}" for k, v in effects.most_common()))
    print("secret-rule penalties per seat-round: "
          + ", ".join(f"{b} {per_bot_penalties[b] / max(1, per_bot_seats[b]):.2f}"
                      for b in ("sensible", "legal")))  # fmt: skip
    print("rounds won per seat-round: "
          + ", ".join(f"{b} {wins[b] / max(1, per_bot_seats[b]):.2f}"
                      for b in ("sensible", "legal")))  # fmt: skip
    print("most common secret-rule penalties:",
          ", ".join(f"“{p}” {n:,}" for p, n in phrases.most_common(6)))  # fmt: skip
    print("most common rules:")
    for text, n in rule_texts.most_common(5):
        print(f"  {n:5,}  {text}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
