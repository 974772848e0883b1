"""``--bell/--no-bell`` (issue 27, item 7): ``play``, ``join`` and ``host``
set the bell's starting state; with neither it is as it always was (on in a
terminal, off headless), and ctrl+g still turns it over."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App

from tui.cli import build_parser
from tui.lan import with_bell
from tui.screens.common import bell_on, ring_bell, toggle_bell


@pytest.mark.parametrize(
    "command", [["play", "bluff"], ["join"], ["host", "bluff"]], ids=["play", "join", "host"]
)
def test_every_table_command_takes_bell_and_no_bell(command: list[str]) -> None:
    parse = build_parser().parse_args
    assert parse(command).bell is None  # today's default, untouched
    assert parse([*command, "--bell"]).bell is True
    assert parse([*command, "--no-bell"]).bell is False


def test_the_option_sets_the_bell_the_app_starts_with() -> None:
    parse = build_parser().parse_args

    async def rings(argv: list[str]) -> tuple[bool, bool]:
        app = with_bell(App(), parse(argv))
        rang: list[bool] = []
        async with app.run_test():  # headless: the bell is off unless asked for
            app.bell = lambda: rang.append(True)  # type: ignore[method-assign]
            first = ring_bell(app.screen)
            toggle_bell(app)  # ctrl+g
            return first and rang == [True], bell_on(app)

    assert asyncio.run(rings(["join", "--bell"])) == (True, False)
    assert asyncio.run(rings(["join", "--no-bell"])) == (False, True)
    assert asyncio.run(rings(["join"])) == (False, True)  # headless default: off
