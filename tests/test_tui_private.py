"""A private table on the screens (issue 29), driven with Textual's pilot:
the home screen's host form (a "private table" checkbox), its join form (a
code field), the LAN list (private tables marked, a code asked for when
one is picked), the waiting room (the code big, every wrong try, ``r`` to
remove a seated player after a yes) and their snapshots at 80×24 and
160×45 in English and Chinese."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from textual.widgets import Checkbox, Input

from p2p.discovery import Change, TableAd, TableEvent
from p2p.lobby.messages import LobbyState, Player
from p2p.lobby.table_code import Attempt
from table.seating import GameSettings
from tests.test_tui_snapshots import ScreenApp
from tui.cli import choice_argv
from tui.screens.common import Confirm
from tui.screens.home import CodeForm, HostForm, JoinForm, table_row
from tui.screens.lobby import LobbyScreen, RemovePicker
from tui.table_app import LanHomeApp

ANN, HAL, BOB = "K3QF-7ZPA-M2XD-4RTY", "M2XD-4RTY-K3QF-7ZPA", "4RTY-K3QF-7ZPA-M2XD"
CODE = "4721-walnut"


def _ad(private: bool) -> TableAd:
    return TableAd(b"\x01" * 8, "bluff", 1, 3, ANN, "192.168.1.20", 4001, name="table 1",
                   host_name="ann", proven=True, private=private)  # fmt: skip


async def _until(pilot: Any, check: Callable[[], bool], what: str) -> None:
    for _ in range(200):
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


def _error(app: Any) -> str:
    return str(app.screen.query_one("#form-error").render())


def test_the_lan_list_marks_a_private_table() -> None:
    assert table_row(_ad(True)).endswith(" · private · proven")
    assert " · 私密 · " in table_row(_ad(True), "zh")
    assert "private" not in table_row(_ad(False))  # a public row as before


def test_the_host_form_makes_a_private_table() -> None:
    app = LanHomeApp("me", [("bluff", 2)], [], lang="zh")

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("h")
            await _until(pilot, lambda: isinstance(app.screen, HostForm), "the host form")
            box = app.screen.query_one("#private", Checkbox)
            assert "私密牌桌" in str(box.label) and not box.value
            box.focus()
            await pilot.press("space")  # ticked as a person ticks it
            assert box.value
            app.screen.query_one("#seats", Input).focus()
            await pilot.press("3", "enter")
            await pilot.pause(0.1)

    asyncio.run(run())
    kind, _, plan = (app.return_value or "").partition(":")
    assert kind == "host" and json.loads(plan)["private"] is True
    assert choice_argv(app.return_value)[-1] == "--private"


def test_the_join_form_takes_a_code_and_shows_a_typo() -> None:
    app = LanHomeApp("me", [("bluff", 2)], [])

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("j")
            await _until(pilot, lambda: isinstance(app.screen, JoinForm), "the join form")
            await pilot.press(*"127.0.0.1:4000", "tab", *"4721 walnutt", "enter")
            await pilot.pause(0.1)
            assert "not a table-code word" in _error(app)  # nothing happens
            assert isinstance(app.screen, JoinForm) and app.return_value is None
            app.screen.query_one("#code", Input).value = "WALNUT-4721"
            await pilot.press("enter")
            await pilot.pause(0.1)

    asyncio.run(run())
    assert app.return_value == f"join:127.0.0.1:4000 {CODE}"
    assert choice_argv(app.return_value) == ["join", "--connect", "127.0.0.1:4000",
                                             "--code", CODE]  # fmt: skip


class _OneTable:
    """A LAN browser that shows one private table."""

    def open(self) -> Any:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def events() -> Any:
            async def gen() -> Any:
                yield TableEvent(Change.APPEARED, "t1._nodealer._tcp.local.", _ad(True))
                import trio

                await trio.sleep_forever()

            yield gen()

        return events()


def test_picking_a_private_table_asks_for_its_code() -> None:
    app = LanHomeApp("me", [("bluff", 2)], [], lan=_OneTable().open)

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            from textual.widgets import OptionList

            lan = lambda: app.home_screen.query_one("#lan", OptionList)  # noqa: E731
            await _until(pilot, lambda: lan().option_count == 1, "the private table listed")
            assert "private" in str(lan().get_option_at_index(0).prompt)
            await pilot.press("l", "home", "enter")
            await _until(pilot, lambda: isinstance(app.screen, CodeForm), "the code form")
            await pilot.press(*"47", "enter")
            await pilot.pause(0.1)
            assert "4 digits and a word" in _error(app) and app.return_value is None
            await pilot.press("escape")  # back, nothing joined
            await _until(pilot, lambda: not isinstance(app.screen, CodeForm), "back home")
            assert app.is_running and app.return_value is None
            await pilot.press("l", "home", "enter")
            await _until(pilot, lambda: isinstance(app.screen, CodeForm), "the code form")
            await pilot.press(*"4721-walnut", "enter")
            await pilot.pause(0.1)

    asyncio.run(run())
    kind, _, listed = (app.return_value or "").partition(":")
    assert kind == "lan" and json.loads(listed)["code"] == CODE
    assert choice_argv(app.return_value)[-2:] == ["--code", CODE]


# --------------------------------------------------------------------- the waiting room

SETTINGS = GameSettings("bluff", 3, None, True, "Ann's table").to_map()


def _private_lobby(app: Any, players: tuple[Player, ...] | None = None) -> Any:
    screen = LobbyScreen(hosting=True, fingerprint=ANN, code=CODE)
    players = players or (Player(0, "ann", ANN), Player(1, "hal", HAL))

    async def show() -> None:
        await app.push_screen(screen)
        screen.show_where("169.254.0.2:4000")
        screen.show_state(LobbyState(bytes(8), SETTINGS, 3, 2, players))
        screen.show_attempt(Attempt("169.254.0.9", 0.0, 1, "wrong"))
        screen.show_attempt(Attempt("169.254.0.9", 1.0, 2, "unfinished"))

    return show()


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_private_waiting_room_snapshot(snap_compare, lang: str, size: tuple[int, int]) -> None:
    async def settle(pilot: Any) -> None:
        for _ in range(3):
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()

    assert snap_compare(ScreenApp(_private_lobby, lang), terminal_size=size, run_before=settle)


def _text(app: Any) -> str:
    screen = app.screen
    return "\n".join(str(w.render()) for w in screen.query("Static"))


def test_the_waiting_room_shows_the_code_and_the_tries_and_says_them_again_after_f2() -> None:
    app = ScreenApp(_private_lobby, "en")

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            shown = _text(app)
            assert "4 7 2 1 - W A L N U T" in shown and "wrong codes: 1 (below)" in shown
            assert "nodealer join 4721-walnut --connect 169.254.0.2:4000" in shown
            story = [str(line.text) for line in app.screen.query_one("#story").lines]
            assert story == [
                "wrong table code (try 1 of 5 from 169.254.0.9)",
                "table-code exchange not finished (try 2 of 5 from 169.254.0.9)",
            ]
            await pilot.press("f2")
            await pilot.pause()
            shown = _text(app)
            assert "4 7 2 1 - W A L N U T" in shown and "错误口令：1 次" in shown
            story = [str(line.text) for line in app.screen.query_one("#story").lines]
            assert story[0] == "牌桌口令错误（来自 169.254.0.9 的第 1/5 次尝试）"

    asyncio.run(run())


class _Host(ScreenApp):
    removed: list[Any]

    def remove_player(self, player: Any) -> None:
        self.removed.append(player)


@pytest.mark.parametrize("seated", [1, 2])
def test_r_removes_a_seated_player_after_a_yes(seated: int) -> None:
    players = (Player(0, "ann", ANN), Player(1, "hal", HAL), Player(2, "bob", BOB))[: 1 + seated]
    app = _Host(lambda a: _private_lobby(a, players), "en")
    app.removed = []

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            for answer in ("n", "y"):  # no: nothing; yes: removed
                await pilot.press("r")
                if seated > 1:  # which one: the last
                    await _until(pilot, lambda: isinstance(app.screen, RemovePicker), "picker")
                    await pilot.press("down", "enter")
                await _until(pilot, lambda: isinstance(app.screen, Confirm), "the question")
                who = players[-1]
                assert f"Remove {who.nickname} ({who.fingerprint})" in app.screen.question
                await pilot.press(answer)
                await _until(pilot, lambda: isinstance(app.screen, LobbyScreen), "no question")
                assert app.removed == ([] if answer == "n" else [who])

    asyncio.run(run())


def test_r_with_nobody_seated_removes_nobody_and_a_joiner_has_no_r() -> None:
    app = _Host(lambda a: _private_lobby(a, (Player(0, "ann", ANN),)), "en")
    app.removed = []

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("r")
            await pilot.pause(0.2)
            assert isinstance(app.screen, LobbyScreen) and app.removed == []
            app.screen.hosting = False
            assert app.screen.check_action("remove", ()) is False

    asyncio.run(run())


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("form", ["host", "join"])
def test_form_snapshot(
    snap_compare, monkeypatch: pytest.MonkeyPatch, form: str, lang: str, size: tuple[int, int]
) -> None:
    """The host form with "private table" ticked; the join form with a code."""
    monkeypatch.setenv("USER", "ann")  # the default table name shown: the same everywhere
    monkeypatch.delenv("USERNAME", raising=False)

    async def fill(pilot: Any) -> None:
        app = pilot.app
        await pilot.press(form[0])
        await _until(pilot, lambda: isinstance(app.screen, HostForm | JoinForm), "the form")
        if form == "host":
            app.screen.query_one("#private", Checkbox).value = True
            app.screen.query_one("#seats", Input).focus()
        else:
            app.screen.query_one("#address", Input).value = "192.168.1.20:40123"
            app.screen.query_one("#code", Input).value = CODE
        for field in app.screen.query(Input):
            field.cursor_blink = False  # drawn the same whenever the picture is taken
        for _ in range(3):
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()

    app = LanHomeApp("ann (K3QF-7ZPA-M2XD-4RTY)", [("bluff", 4), ("bomb", 5)], [], lang=lang)
    assert snap_compare(app, terminal_size=size, run_before=fill)


def test_the_examples_in_the_docs_hold() -> None:
    """``nodealer join 4721-walnut`` reads as a code; the home screen's
    choices carry the code and --private (tui.lan, tui.cli)."""
    import doctest

    import tui.cli
    import tui.lan

    for module in (tui.lan, tui.cli):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__
