"""The keys every screen answers, as a person uses them (issue 26 rows 12-14):
``^q`` mid-game asks first, ``q`` and Esc go back and never quit at once,
F1/F2/F3 work on home, at a table and in replay, F2 says again everything
already on screen, ``NODEALER_LANG=zh`` opens home in Chinese, help is
written for players, and every table's footer keeps F1, ^q and F2 in 80
columns in both languages."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

import pytest
from textual.widgets import Input, RichLog, Static

from p2p.identity import Identity
from tests.test_tui_mao_snapshots import _table as _mao_table
from tests.test_tui_snapshots import SCREENS, ScreenApp
from tui.app import PlayApp, ReplayApp
from tui.screens.bluff import BluffScreen
from tui.screens.common import Confirm, FittingFooter, HelpScreen
from tui.table_app import LanHomeApp

VECTOR = Path(__file__).resolve().parent / "vectors" / "bluff-2-proven.log"
INTERNALS = ("ctrl+p", "super+c", "command palette", "命令面板", ".py", "protocol.md", "§")


def _text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def _story(screen: Any) -> str:
    log = screen.query_one(getattr(screen, "STORY", "#story"), RichLog)
    return "\n".join(strip.text for strip in log.lines)


async def _until(pilot: Any, ready: Any, seconds: float = 60.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if ready():
            return
        await pilot.pause(0.05)
    pytest.fail("the screen never got there")


def test_a_table_asks_before_leaving_and_f2_retells_it(tmp_path: Path) -> None:
    """A real Bluff table against a bot: ^q, q and Esc ask first (no keeps
    the game), F2 says the header and every story line again in Chinese,
    and yes leaves."""
    asyncio.run(_leave_a_table(tmp_path))


def _told_a_move(screen: Any) -> bool:
    """The story holds a move (F2 retells the moves; a separator alone is
    the table's setup line)."""
    return any(line.strip(" ▸") and not line.strip(" ▸").startswith("──")
               for line in _story(screen).splitlines())  # fmt: skip


def _cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


async def _leave_a_table(tmp_path: Path) -> None:
    home = tmp_path / "me"
    own = (Identity.load_or_create(home), home)
    app = PlayApp("bluff", 2, bots_home=tmp_path / "bots", own=own, proven=False, seed=3,
                  time_scale=1.0, processes=0)  # fmt: skip
    async with app.run_test(size=(100, 34)) as pilot:
        screen = app.table_screen
        # dealt: the header says the table again, the story has begun
        await _until(pilot, lambda: screen.view is not None and _told_a_move(screen)
                     and "you" in app.sub_title)  # fmt: skip
        for key in ("ctrl+q", "q", "escape"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, Confirm), key
            assert "Leave this game?" in _text(app)
            await pilot.press("n" if key != "escape" else "escape")
            await pilot.pause()
            assert app.screen is screen and not app._exit, key
        english = _story(screen)
        await pilot.press("f2")
        await pilot.pause()
        assert app.lang == "zh" and "你" in app.sub_title
        chinese = _story(screen)
        assert _cjk(chinese) and chinese != english
        assert not _cjk(english)
        await pilot.press("f2")
        await pilot.pause()
        assert "you" in app.sub_title and not _cjk(_story(screen))
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert app._exit  # yes: the app ends (home opens again if it was started there)


def test_home_esc_does_not_quit_q_does_and_f1_f2_f3_work() -> None:
    async def run() -> None:
        app = LanHomeApp("me (XXXX-XXXX-XXXX-XXXX)", [("bluff", 2)], [])
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            assert not app._exit and "host a table" in _text(app)
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            shown = _text(app)
            assert "nodealer" in shown and not any(w in shown for w in INTERNALS)
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("f2")
            await pilot.pause()
            assert "开桌" in _text(app) and app.lang == "zh"
            theme = app.theme
            await pilot.press("f3")
            await pilot.pause()
            assert app.theme != theme
            await pilot.press("q")
            await pilot.pause()
            assert app._exit
        assert app.return_value is None

    asyncio.run(run())


def test_nodealer_lang_opens_home_in_chinese_and_the_choice_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui import cli

    monkeypatch.setenv("NODEALER_LANG", "zh")
    monkeypatch.setenv("NODEALER_HOME", str(tmp_path))
    seen: list[str] = []
    ran: list[list[str]] = []

    def run(app: LanHomeApp) -> str | None:
        app.lan = None  # no mDNS in a test
        if seen:
            return None  # the second time home opens (after the game): q

        async def look() -> None:
            async with app.run_test(size=(80, 24)) as pilot:
                await pilot.pause()
                seen.append(_text(app))
                await pilot.press("f2", "f2")  # and back to Chinese

        asyncio.run(look())
        return "replay:/nowhere/log"

    monkeypatch.setattr(cli, "main", lambda argv: ran.append(list(argv)) or 0)
    assert cli._home(cli.build_parser(), run=run) == 0
    assert "你：" in seen[0] and "开桌" in seen[0]
    assert ran == [["replay", "/nowhere/log", "--lang", "zh"]]  # then home again, then q

    monkeypatch.delenv("NODEALER_LANG")  # nodealer --lang zh: the same
    seen.clear()
    ran.clear()
    assert cli._home(cli.build_parser(), run=run, lang="zh") == 0
    assert "开桌" in seen[0] and ran == [["replay", "/nowhere/log", "--lang", "zh"]]
    assert cli.build_parser().parse_args(["--lang", "zh"]).home_lang == "zh"


def test_a_command_from_home_ended_by_a_signal_ends_home(monkeypatch: Any) -> None:
    """A table opened from home whose terminal closed (SIGHUP: the command
    returns 129) ends home too: home never opens again on a dead terminal
    (it was left spinning there, an orphan)."""
    from tui import cli

    opened: list[int] = []

    def run(app: Any) -> str:
        opened.append(1)
        return "join:127.0.0.1:4000"

    monkeypatch.setattr(cli, "main", lambda argv: 129)
    assert cli._home(cli.build_parser(), run=run) == 129
    assert opened == [1]


def test_replay_answers_f1_f2_f3_and_q_goes_back() -> None:
    async def run() -> None:
        app = ReplayApp(VECTOR, "en")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("right", "right")
            await pilot.pause()
            before = _text(app)
            assert "tests/vectors" not in before  # no machine path in the header
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen) and app.screen.game == "bluff"
            assert not any(w in _text(app) for w in INTERNALS)
            await pilot.press("escape")
            await pilot.pause()
            await pilot.press("f2")
            await pilot.pause()
            after = _text(app)
            assert app.lang == "zh" and "下一步" in after and after != before
            assert getattr(app.screen, "at", 2) == 2  # the same step
            theme = app.theme
            await pilot.press("f3")
            assert app.theme != theme
            await pilot.press("q")
            await pilot.pause()
            assert app._exit

    asyncio.run(run())


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("game", ["bluff", "bomb", "mao"])
def test_help_is_written_for_players(game: str, lang: str) -> None:
    async def run() -> str:
        app = ScreenApp(lambda a: _mao_table(a) if game == "mao" else SCREENS[game][0](a), lang)
        async with app.run_test(size=(100, 60)) as pilot:
            await pilot.pause()
            await pilot.press("f1")
            await pilot.pause(0.2)
            assert isinstance(app.screen, HelpScreen)
            help_screen = app.screen
            words = [str(w.render()) for w in help_screen.query(Static)]
            from textual.widgets import Markdown

            words += [w.source for w in help_screen.query(Markdown)]
            return "\n".join(words)

    shown = asyncio.run(run())
    found = [w for w in INTERNALS if w in shown]
    assert not found, found
    for key in ("F1", "F2", "F3", "^q"):
        assert f"`{key}`" in shown


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("game", ["bluff", "bomb", "mao"])
def test_every_table_footer_fits_80_columns_keeping_help_quit_language(
    game: str, lang: str
) -> None:
    async def run() -> None:
        app = ScreenApp(lambda a: _mao_table(a) if game == "mao" else SCREENS[game][0](a), lang)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.2)
            footer = app.screen.query_one(FittingFooter)
            for _ in range(50):  # a loaded machine may not have composed its keys yet
                if footer.children:
                    break
                await pilot.pause(0.1)
            keys = {key.key: key for key in footer.children}
            assert {"f1", "ctrl+q", "f2"} <= set(keys), sorted(keys)
            assert max(key.region.right for key in footer.children) <= 80
            line = _text(app).split("\n")[-1]
            for _ in range(50):  # a loaded machine may not have drawn it yet
                if line.strip():
                    break
                await pilot.pause(0.1)
                line = _text(app).split("\n")[-1]
            assert "F1" in line and "^q" in line and "F2" in line
            assert ("English" if lang == "zh" else "中文") in line

    asyncio.run(run())


def test_f2_says_the_mao_phrase_box_again() -> None:
    async def run() -> None:
        app = ScreenApp(_mao_table, "en")
        async with app.run_test(size=(100, 34)) as pilot:
            await pilot.pause()
            box = app.screen.query_one("#mao-say", Input)
            english = str(box.placeholder)
            await pilot.press("f2")
            await pilot.pause()
            assert box.placeholder != english and any("\u4e00" <= c <= "\u9fff"
                                                      for c in str(box.placeholder))  # fmt: skip

    asyncio.run(run())


def test_f2_says_a_table_screens_keys_again() -> None:
    """(The story told so far is said again by the app, which keeps it as
    events: test_a_table_asks_before_leaving_and_f2_retells_it reads it after F2.)"""

    async def run() -> None:
        app = ScreenApp(lambda a: a.push_screen(BluffScreen(seat=0)), "en")
        async with app.run_test(size=(100, 34)) as pilot:
            await pilot.pause()
            await pilot.press("f2")
            await pilot.pause(0.2)
            footer = _text(app).split("\n")[-1]
            assert "English" in footer and "帮助" in footer  # the footer's keys too

    asyncio.run(run())


def test_f2_says_the_waiting_rooms_notes_and_problem_again() -> None:
    from tests.test_tui_snapshots import _lobby
    from tui.words import t

    async def run() -> None:
        app = ScreenApp(_lobby, "en")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            screen = app.screen
            screen.note(lambda lang: t("the table is not ready yet", lang))  # type: ignore[attr-defined]
            screen.show_problem("address in use")  # type: ignore[attr-defined]
            await pilot.pause()
            assert "the table is not ready yet" in _story(screen)
            await pilot.press("f2")
            await pilot.pause()
            assert "牌桌还没准备好" in _story(screen) and "not ready" not in _story(screen)
            assert "address in use" in _text(app)  # the problem is still said

    asyncio.run(run())


def test_f2_on_the_help_screen_opens_it_again_in_the_other_language() -> None:
    async def run() -> None:
        app = ScreenApp(SCREENS["bluff"][0], "en")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen) and app.screen.lang == "en"
            await pilot.press("f1")  # F1 again: one help screen, not two
            await pilot.pause()
            await pilot.press("f2")
            await pilot.pause(0.2)
            assert isinstance(app.screen, HelpScreen) and app.screen.lang == "zh"
            assert sum(isinstance(s, HelpScreen) for s in app.screen_stack) == 1
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, BluffScreen)

    asyncio.run(run())


@pytest.mark.parametrize("form", ["h", "j"])
def test_the_home_forms_answer_f1_f2_f3(form: str) -> None:
    async def run() -> None:
        app = LanHomeApp("me (XXXX-XXXX-XXXX-XXXX)", [("bluff", 2)], [])
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press(form)
            await pilot.pause()
            title = str(app.screen.query_one("#form-title", Static).render())
            assert title in ("host a table", "join a table by address")
            await pilot.press("f2")
            await pilot.pause()
            said = str(app.screen.query_one("#form-title", Static).render())
            assert said in ("开桌", "按地址加入牌桌")
            theme = app.theme
            await pilot.press("f3")
            assert app.theme != theme
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen) and app.screen.lang == "zh"
            await pilot.press("escape", "escape")
            await pilot.pause()
            assert "开桌" in _text(app) and not app._exit  # home, still running

    asyncio.run(run())


def test_the_footer_drops_dead_keys_first_then_the_last_ones() -> None:
    from textual.app import ComposeResult
    from textual.binding import Binding, BindingType
    from textual.screen import Screen

    from tui.screens.common import footer

    class Busy(Screen[None]):
        BINDINGS: ClassVar[list[BindingType]] = [
            Binding(k, f"say('{k}')", f"key {k} does a thing") for k in "abcdefgh"
        ]

        def compose(self) -> ComposeResult:
            yield footer()

        def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
            return parameters != ("a",)  # a does nothing now: shown dimmed, if at all

        def action_say(self, key: str) -> None:
            pass

    async def run() -> list[str]:
        app = ScreenApp(lambda a: a.push_screen(Busy()), "en")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.2)
            return [key.key for key in app.screen.query_one(FittingFooter).children]

    keys = asyncio.run(run())
    assert keys[0] == "f1" and keys[-2:] == ["ctrl+q", "f2"]
    assert "a" not in keys and "b" in keys and "h" not in keys  # a dead, h last
