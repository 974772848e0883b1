"""Snapshots (pytest-textual-snapshot) of a game-over screen that names the
players, at 80×24 and 160×45, in English and Chinese: who won and lost by
name ("you" for the person), why in words, two guests named alike told
apart by fingerprint, no Python lists, no rule ids. ``pytest
--snapshot-update`` rewrites them after a deliberate change (look at them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App

from table.names import SeatNames
from tui.screens.common import SPEAKING, game_title, relabel
from tui.screens.over import GameOverScreen

NAMES = SeatNames(
    ("ann", "bob", "player", "Player"),
    ("K3QF-7ZPA-M2XD-4RTY", "M2XD-4RTY-K3QF-7ZPA", "3F2A-7ZPA-M2XD-4RTY", "9C1D-4RTY-K3QF-7ZPA"),
    me=0,
)
OUTCOME = "winners [1, 3], losers [0, 2]: K18: a captain killed an enemy captain"


class OverApp(App[None]):
    TITLE = "nodealer"
    CSS_PATH = str(Path(__file__).resolve().parent.parent / "tui" / "app.tcss")
    BINDINGS = SPEAKING

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    async def on_mount(self) -> None:
        colon = "：" if self.lang == "zh" else ": "
        self.sub_title = game_title("bomb", self.lang) + colon + NAMES.listed(range(4), self.lang)
        relabel(self, self.lang)
        path = "~/.local/share/nodealer/tables/9aa1caf97c1c2fff/log"
        await self.push_screen(GameOverScreen(OUTCOME, f"clean: {OUTCOME}", path, False, NAMES))

    def action_rules(self) -> None:  # SPEAKING's keys, as the play app has them
        pass

    def action_language(self) -> None:
        pass

    def action_theme(self) -> None:
        pass


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_game_over_names_the_players(snap_compare: Any, lang: str, size: tuple[int, int]) -> None:
    assert snap_compare(OverApp(lang), terminal_size=size)


def test_game_over_says_it_in_words() -> None:
    import asyncio

    async def run(lang: str) -> str:
        app = OverApp(lang)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            return "\n".join(str(app.screen.query_one(f"#{part}").render())
                             for part in ("headline", "outcome", "verdict"))  # fmt: skip

    en = asyncio.run(run("en"))
    assert "You lost." in en
    assert "bob and Player (9C1D) win; you and player (3F2A) lose" in en
    assert "a captain blew up the enemy captain" in en
    assert "[" not in en and "K18" not in en
    zh = asyncio.run(run("zh"))
    assert "你输了。" in zh and "bob、Player (9C1D) 赢；你、player (3F2A) 输" in zh
    assert "K18" not in zh
