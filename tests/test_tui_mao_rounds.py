"""``nodealer play mao --rounds 1`` ends the game on the screen (issue 26):
a Pilot game on the seeded deals of tests/test_tui_mao.py, where the person
wins round 1 by keys and writes a rule; the round-over banner says so and
holds the next round's timer; the bot proposes the end (M31: its rounds are
played) and the person votes yes; game over lists the secret rule with the
plays it judged, and escape there goes back to the table, not out."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Static

from tests.test_tui_mao import _Game, _pilot_game, _win_a_round_and_write_a_rule
from tui.screens.mao import MaoScreen
from tui.screens.table_over import StoryOverScreen


@pytest.mark.slow
def test_rounds_1_ends_the_game_on_the_screen(tmp_path, deterministic_deals) -> None:
    async def play(game: _Game) -> None:
        slot = await _win_a_round_and_write_a_rule(game)
        screen, pilot = game.screen, game.pilot
        news = screen.query_one("#mao-news", Static)
        said = str(news.render())
        assert news.display and "Round 1 is over: you said “Mao” and won it." in said, said
        assert "its timer waits" in said and screen.hold.holding
        await game.wait(
            lambda: game.state.proposal is not None or game.state.phase != "play",
            "the bot proposes the end (its one round is played)",
        )
        bot = screen._who(1)  # "seat 1", or the bot's name where the table has names
        assert f"{bot} proposes to end the game" in game.feed()
        # on a loaded machine the bot may propose before our new rule is in
        # the log; a vote chosen then is refused once the rule lands (the
        # table moved on under it: TableMovedOn), so vote after it
        await game.wait(lambda: game.state.awaiting_rule == -1, "our rule in the log")
        await pilot.press("y")
        await game.wait(lambda: isinstance(game.app.screen, StoryOverScreen), "the game ends")
        over = game.app.screen
        details = str(over.query_one("#details", Static).render())
        assert f"Rounds won: you 1, {bot} 0." in details, details
        assert f"rule {slot} by you: When a card is played and the card is ♥" in details
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(game.app.screen, MaoScreen) and game.app.is_running
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(game.app.screen, StoryOverScreen)

    asyncio.run(_pilot_game(tmp_path, 1, play))
