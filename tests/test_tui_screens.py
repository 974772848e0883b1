"""The home and replay screens (issue 12), driven by Pilot."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from tui.app import ReplayApp
from tui.games import SavedGame, saved_games
from tui.replay import load
from tui.screens.replay import ReplayScreen
from tui.table_app import LanHomeApp

VECTOR = Path(__file__).resolve().parent / "vectors" / "bluff-2-proven.log"


def test_home_offers_games_and_saved_games(tmp_path) -> None:
    log = tmp_path / "tables" / "abcdef" / "log"
    log.parent.mkdir(parents=True)
    shutil.copyfile(VECTOR, log)
    saved = saved_games(tmp_path)
    assert [s.table_id for s in saved] == ["abcdef"] and isinstance(saved[0], SavedGame)

    async def run() -> str | None:
        app = LanHomeApp("me (XXXX-XXXX-XXXX-XXXX)", [("bluff", 2), ("bomb", 5)], saved)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("down", "down", "enter")  # the saved game
        return app.return_value

    assert asyncio.run(run()) == f"replay:{log}"


def test_a_replay_shows_the_cards_behind_every_play() -> None:
    steps, verdict = load(VECTOR)
    assert verdict[-1].startswith("audit: clean") and "wins" not in " ".join(verdict)
    assert steps[-1].text.startswith("game over: ")  # the outcome comes last
    placed = [s.text for s in steps if " places " in s.text]
    assert placed and all("[" in text for text in placed)  # the faces, now known

    async def run() -> int:
        app = ReplayApp(VECTOR)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(0.2)
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            await pilot.press("right", "right", "end", "left")
            at = screen.at
            await pilot.press("home")
            assert screen.at == 0 and at == len(steps) - 2
        return 0

    assert asyncio.run(run()) == 0


def test_the_story_and_card_widgets_doctests() -> None:
    """The story filter, the ANSI colours and the card widget (their
    docstrings are their examples)."""
    import doctest

    import table.names
    import tui.games
    import tui.replay
    import tui.screens.bomb
    import tui.story
    import tui.storyteller
    import tui.widgets.cards
    import tui.words

    for module in (tui.story, tui.storyteller, tui.words, table.names, tui.games,
                   tui.widgets.cards, tui.replay, tui.screens.bomb):  # fmt: skip
        assert doctest.testmod(module).failed == 0, module.__name__
