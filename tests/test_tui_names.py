"""Names on the screens (issue 26), driven by Pilot: a whole ``play`` game
as "ann" whose status line, story panel and game-over screen name the
players (never "seat 1"), and what ``play`` prints and writes when its
screen closes (the outcome, the log's path, ``--log``'s copy); the replay's
first screen shows the table and gives nothing away."""

from __future__ import annotations

import argparse
import asyncio
import re
import secrets
from pathlib import Path

import pytest
from textual.widgets import RichLog

from engines.bots import sensible_bots
from p2p.identity import Identity
from table.verify import verify_log
from tui.app import PlayApp, ReplayApp
from tui.cli import _after_screen
from tui.screens.over import GameOverScreen
from tui.screens.replay import ReplayScreen
from tui.widgets.story_log import MARK

_SEAT = re.compile(r"\bseat \d")
_LIST = re.compile(r"\[[\d, ]*\]")


Seen = dict[str, list[str]]


async def _play_as_ann(tmp_path: Path, game: str, seats: int) -> tuple[PlayApp, Seen]:
    """A whole game: the person's seat is played by a sensible bot handed to
    its session (so the test does not depend on any game's keys), the
    screen shows everything as it would to a person."""
    home = tmp_path / "me"
    app = PlayApp(game, seats, bots_home=tmp_path / "bots", own=(Identity.load_or_create(home),
                  home), proven=False, seed=5, time_scale=0.02, name="ann")  # fmt: skip
    seen: Seen = {"status": [], "panel": []}
    shown = app.table_screen.refresh_table

    def refresh_table(snapshot: object, engine: object) -> None:  # every status shown
        shown(snapshot, engine)
        if app.table_screen.view is not None:
            seen["status"].append(str(app.table_screen.query_one("#status").render()))

    app.table_screen.refresh_table = refresh_table  # type: ignore[method-assign]
    async with app.run_test(size=(100, 34)) as pilot:
        adopted = False
        for _ in range(4000):
            await pilot.pause(0.05)
            if app.session is not None and not adopted:
                bot = sensible_bots(game, seats, 11, salt_source=secrets.token_bytes)[0]
                app.session.adopt_player(bot)
                adopted = True
            if isinstance(app.screen, GameOverScreen):
                break
        else:
            pytest.fail("the game did not end")
        await pilot.pause(0.3)  # the game-over screen says its words on mount
        panel = app.table_screen.query_one("#story", RichLog)
        seen["panel"] = [strip.text for strip in panel.lines]
        over = app.screen
        assert isinstance(over, GameOverScreen)
        seen["over"] = [str(over.query_one(f"#{part}").render())
                        for part in ("headline", "outcome", "verdict")]  # fmt: skip
        await pilot.press("q")
    return app, seen


@pytest.mark.slow
@pytest.mark.parametrize("game,seats", [("bluff", 3), ("bomb", 4)])
def test_a_game_under_play_names_everyone(tmp_path, capsys, game: str, seats: int) -> None:
    app, seen = asyncio.run(_play_as_ann(tmp_path, game, seats))
    statuses = seen["status"]
    assert statuses and all(" ann " in s or "· ann" in s for s in statuses), statuses[:3]
    assert not any(_SEAT.search(s) for s in statuses), statuses[:3]
    assert any("your turn: " in s for s in statuses)
    assert any(("bob's turn" if game == "bluff" else "bob is playing") in s for s in statuses)
    told = app.table_screen.told
    assert told and not any(_SEAT.search(line) for line in told), told[:5]
    assert any(line.startswith(("bob ", "carol ")) for line in told)
    marked = [line for line in seen["panel"] if line.startswith(MARK)]
    assert len(marked) == 1, marked  # the last move, and only it, is marked
    headline, outcome, verdict = seen["over"]
    assert headline in ("You won!", "You lost.")
    assert re.search(r"\b(you|bob|carol|dave) wins?\b", outcome) and not _LIST.search(outcome)
    assert "clean" in verdict
    # what play prints when its screen closes, and --log's copy
    copy = tmp_path / "copy.log"
    _after_screen(app, argparse.Namespace(lang="en", log=str(copy)))
    out = capsys.readouterr().out
    assert f"outcome: {outcome}" in out and f"your log: {app.log_path}" in out
    assert verify_log(copy).exit_code == 0


def test_the_replay_opens_on_the_table_without_the_outcome() -> None:
    log = Path(__file__).resolve().parent / "vectors" / "bluff-2-proven.log"

    async def run() -> tuple[str, str, str, list[str]]:
        app = ReplayApp(log)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.3)
            screen = app.screen
            assert isinstance(screen, ReplayScreen) and screen.at == 0
            picture = str(screen.query_one("#replay-picture").render())
            verdict = str(screen.query_one("#verdict").render())
            steps = str(screen.query_one("#replay-steps").render()).splitlines()
            await pilot.press("end")
            last = screen.steps[screen.at].text
            return app.sub_title, picture, verdict, [*steps, last]

    title, picture, verdict, steps = asyncio.run(run())
    assert "/" not in title and title.startswith("bluff with ")  # no machine path
    assert picture.startswith("seat 0: ") and "seat 1: " in picture and "pile: " in picture
    assert "♠" in picture  # the hands, known from the log's final reveals
    assert "clean" in verdict and "win" not in verdict and "lose" not in verdict
    assert steps[0].startswith("▸   1  ") and not any("game over" in s for s in steps[:-1])
    assert steps[-1].startswith("game over: ")
