"""A person plays the Bomb game in the TUI (issue 12): Pilot plays a whole
game against bots through key presses (the decisions a sensible bot would
take, pressed as keys: cursor, pick, A/B/C, bomb target, detonate, pass);
the identity stays hidden until ``i``; the game ends on the game-over
screen with a log that verifies."""

from __future__ import annotations

import asyncio

import pytest

from engines.bomb import BombConfig, Detonate, Pass, PlaceBomb, PlayToArea
from engines.bots.bomb import SensibleBombBot
from engines.cards import Card
from p2p.identity import Identity
from tui.app import PlayApp
from tui.screens.bomb import BombScreen, allowed_kinds
from tui.screens.over import GameOverScreen


def test_the_kinds_a_pick_allows_and_why() -> None:
    identity = Card.parse("7♠")
    hand = [Card.parse("9♠"), Card.parse("9♥"), Card.parse("2♦")]
    assert allowed_kinds(identity, hand[:1], hand) == {"A": "9♠ relates to your identity"}
    assert "C" in allowed_kinds(identity, hand[:2], hand)
    assert allowed_kinds(identity, [], hand) == {}
    far = [Card.parse("2♦"), Card.parse("3♥")]
    assert "B" in allowed_kinds(identity, far, far)


def _keys(app: PlayApp, bot: SensibleBombBot) -> list[str]:
    session = app.session
    screen = app.table_screen
    if session is None or screen.view is None or not screen.view["may"]:
        return []
    snap = session.snapshot
    event = bot.act(session.table.game, snap.state, 0, snap.known)  # type: ignore[union-attr]
    if isinstance(event, PlayToArea):
        hand = [p for p, _ in screen._hand_widget().cards]  # as shown: sorted
        keys: list[str] = []
        cursor = screen.cursor
        for position in event.positions:
            target = hand.index(position)
            keys += ["right"] * ((target - cursor) % len(hand)) + ["space"]
            cursor = target
        return [*keys, event.rule.value.lower()]
    if isinstance(event, PlaceBomb):
        seats = len(screen.view["counts"])
        return ["right"] * ((event.target - screen.target) % seats) + ["enter"]
    if isinstance(event, Detonate):
        return ["d"]
    if isinstance(event, Pass):
        return ["n"]
    return []


@pytest.mark.slow
def test_a_whole_bomb_game_through_key_presses(tmp_path) -> None:
    asyncio.run(_play(tmp_path))


async def _play(tmp_path) -> None:
    import random

    home = tmp_path / "me"
    app = PlayApp(
        "bomb",
        3,
        bots_home=tmp_path / "bots",
        own=(Identity.load_or_create(home), home),
        proven=False,
        seed=2,
        time_scale=0.02,
        config=BombConfig(time_limit=600),  # K25 bounds the game: 12 s here
    )
    bot = SensibleBombBot(random.Random("person"))
    async with app.run_test(size=(110, 36)) as pilot:
        screen = app.table_screen
        assert isinstance(screen, BombScreen)
        for _ in range(4000):
            await pilot.pause(0.05)
            if isinstance(app.screen, GameOverScreen):
                break
            if screen.view is not None and screen.view.get("identity") is not None:
                shown = str(screen.query_one("#identity").render())
                if not screen.show_identity:
                    assert "hidden" in shown  # not readable off the screen
            keys = _keys(app, bot)
            if keys:
                await pilot.press(*keys)
                await pilot.pause(0.1)
        else:
            pytest.fail("the game did not end")
        over = app.screen
        assert isinstance(over, GameOverScreen) and "clean:" in over.verdict
        await pilot.press("q")
    assert app.exit_code == 0
