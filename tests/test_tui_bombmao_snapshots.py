"""Snapshots of the Bomb game and Mao screens of issue 26, in English and
Chinese at 80×24 and 160×45, from fixed tables (tests/bombmao_tables.py):
placing the bomb (K15, the cursor on the next seat), the Bomb detonation
window (asked once: ``d`` pressed), the Bomb game over
(every identity, who blew up whom and why) and the Mao game over (every
secret rule and the plays it judged). ``--snapshot-update`` rewrites them
after a deliberate change; each test also reads the screen as drawn and
checks that what the person needs is on it."""

from __future__ import annotations

from typing import Any

import pytest

from engines.bomb import GAME as BOMB
from engines.mao import GAME as MAO
from tests.bombmao_tables import (
    LOG,
    TableApp,
    bomb_over,
    bomb_snap,
    bomb_until,
    mao_over,
    mao_snap,
    my_window,
)
from tests.test_tui_mao_snapshots import _cut_off, _settle, _text
from tui.screens.bomb import BombScreen
from tui.screens.mao import MaoScreen

SIZES = [(80, 24), (160, 45)]
LANGS = ["en", "zh"]
NAMES = ["ann", "bob", "carol", "dan", "eve"]


def _bomb_window(app: TableApp) -> Any:
    sim = bomb_until(my_window)
    screen = BombScreen(seat=0)
    screen.window_left = lambda: 7.0  # type: ignore[method-assign]  # the clock is fixed

    async def show() -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)
        screen.action_detonate()  # d, once: it asks

    return show()


def _bomb_place(app: TableApp) -> Any:
    sim = bomb_until(lambda s: s.state.phase == "place_bomb" and s.state.turn == 0)
    screen = BombScreen(seat=0)

    async def show() -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)
        screen.action_cursor(1)  # → : before the next seat

    return show()


def _bomb_over(app: TableApp) -> Any:
    sim = bomb_over()
    screen = BombScreen(seat=0)
    result = sim.state.result

    async def show() -> None:
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)
        over = screen.game_over(str(result), f"clean: {result}", LOG, 0 in result.winners)
        await app.push_screen(over)

    return show()


def _mao_over(app: TableApp) -> Any:
    s, author = mao_over()
    screen = MaoScreen(seat=0, author=author)
    result = MAO.outcome(s.state)

    async def show() -> None:
        await app.push_screen(screen)
        screen.refresh_table(mao_snap(s), MAO)
        over = screen.game_over(str(result), f"clean: {result}", LOG, 0 in result.winners)
        await app.push_screen(over)

    return show()


SCREENS = {"bomb-place": (_bomb_place, "bomb"), "bomb-window": (_bomb_window, "bomb"),
           "bomb-over": (_bomb_over, "bomb"), "mao-over": (_mao_over, "mao")}  # fmt: skip
WANTS = {
    ("bomb-place", "en"): ["7 cards: place the bomb before a player", "bomb before: ▶ bob"],
    ("bomb-place", "zh"): ["满 7 张", "炸弹放在：▶ bob"],
    ("bomb-window", "en"): ["the bomb is in front of", "press d again to", "esc: no", "f1 help"],
    ("bomb-window", "zh"): ["炸弹在", "再按一次 d", "esc：不炸"],
    ("bomb-over", "en"): [
        "shouted “detonate!” and blew up",
        "placed the bomb in front of",
        "Winners:",
        "you: ",
        "bob: ",
        "eve: ",
    ],
    ("bomb-over", "zh"): ["喊了“炸掉！”", "赢家：", "你：", "bob：", "eve："],
    ("mao-over", "en"): [
        "Rounds won: you 1, bob 1, carol 0.",
        "The secret rules:",
        "rule 1 by you:",
        "carol played 5♥ →",
    ],
    ("mao-over", "zh"): ["秘密规则：", "规则 1（你写的）", "carol 出了 5♥ →"],
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", sorted(SCREENS))
def test_bombmao_snapshot(snap_compare, name: str, lang: str, size: tuple[int, int]) -> None:
    make, game = SCREENS[name]
    seen: list[str] = []

    async def read(pilot: Any) -> None:
        await _settle(pilot)
        seen.append(_text(pilot.app))

    app = TableApp(make, lang, game, names=NAMES)
    assert snap_compare(app, terminal_size=size, run_before=read)
    missing = _cut_off(seen[0], WANTS[(name, lang)])
    assert not missing, f"cut off at {size}: {missing}\n{seen[0]}"
