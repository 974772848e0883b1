"""A person plays Bluff in the TUI (issue 12): Textual's Pilot plays a whole
game against a bot through key presses only — real peers on 127.0.0.1, the
person's seat driven by the screen through its session — and the game ends
with the game-over screen and a log that verifies."""

from __future__ import annotations

import asyncio

import pytest

from engines.bluff import GAME
from p2p.identity import Identity
from tui.app import PlayApp
from tui.screens.over import GameOverScreen


def _keys_for(app: PlayApp) -> list[str]:
    """What a person presses now, reading only the screen's view."""
    view = app.table_screen.view
    if view is None:
        return []
    may = set(view["may"])
    if "show" in may:
        return ["s"]
    if "accept" in may:
        return ["a"]
    if "challenge" in may and view["last"] and view["last"]["placed"] < 2 and view["pile"] > 6:
        return ["c"]
    if "play" in may:
        return ["space", "enter"]  # the card under the cursor, the lowest legal claim
    return []


@pytest.mark.slow
def test_a_whole_bluff_game_through_key_presses(tmp_path) -> None:
    asyncio.run(_play_bluff(tmp_path))


async def _play_bluff(tmp_path) -> None:
    home = tmp_path / "me"
    app = PlayApp(
        "bluff",
        2,
        bots_home=tmp_path / "bots",
        own=(Identity.load_or_create(home), home),
        proven=False,
        seed=3,
        time_scale=0.02,
    )
    pressed = 0
    async with app.run_test(size=(100, 34)) as pilot:
        for _ in range(3000):
            await pilot.pause(0.05)
            if isinstance(app.screen, GameOverScreen):
                break
            keys = _keys_for(app)
            if keys:
                await pilot.press(*keys)
                pressed += len(keys)
                await pilot.pause(0.1)
        else:
            pytest.fail("the game did not end")
        screen = app.screen
        assert isinstance(screen, GameOverScreen)
        assert "clean:" in screen.verdict
        await pilot.press("q")
    assert pressed > 0 and app.exit_code == 0
    (log,) = home.glob("tables/*/log")
    assert log.exists()


def test_only_legal_claims_are_offered() -> None:
    """B5: the screen offers the engine's legal claims, lowest first."""
    from engines.bluff import BluffConfig, Claim

    state = GAME.new(BluffConfig(), 2)
    claims = GAME.legal_claims(state, limit=2)
    assert claims[0] == Claim(1, 1) and len(claims) == 26
    assert all(c.count == 1 for c in GAME.legal_claims(state, limit=1))
