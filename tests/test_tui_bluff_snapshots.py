"""The Bluff table as a person sees it (issue 26), compared with reviewed
snapshots at 80×24 and 160×45, in English and Chinese: a turn (the sorted
hand, a picked card marked ``*``, a claim raised with ↑) and a challenge's
result told in words (the cards taken marked ``+``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bluff_table import BluffApp, Table, persons_turn

SIZES = [(80, 24), (160, 45)]
LANGS = ["en", "zh"]


class _Shown(BluffApp):
    """The screen with a fixed table, some keys already pressed."""

    def __init__(self, lang: str, make: Any) -> None:
        super().__init__(lang)
        self.make = make

    async def on_mount(self) -> None:
        await super().on_mount()
        self.make(self)


def _turn(app: BluffApp) -> None:
    table = Table(seed=5).until(persons_turn)
    app.show(table.snap(), table.lines())
    screen = app.screen_
    screen.action_cursor(3)
    screen.action_pick()
    screen.action_claim(1)


def _challenge(app: BluffApp) -> None:
    table = Table(seed=5).until(persons_turn)
    app.show(table.snap(), table.lines())
    shown = len(table.lines())
    table.challenge(0)  # seat 0 challenges: the claim stood, seat 0 takes the pile
    app.show(table.snap(), table.lines()[shown:])


SCREENS = {"turn": _turn, "challenge": _challenge}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", sorted(SCREENS))
def test_bluff_snapshot(snap_compare, name: str, lang: str, size: tuple[int, int]) -> None:
    assert snap_compare(_Shown(lang, SCREENS[name]), terminal_size=size)
