"""Text from the network or a log is shown as written, never read as
Textual markup: a nickname ``a[/]`` must not crash the host's program when it
presses ``r`` (nor a table name ``a[/]`` every home screen listing it), and
``Carol[i][/i]`` must not pass for ``Carol``, nor ``Bob[#101010 on #101010]``
hide a fingerprint. Every screen that shows nicknames, table names, phrases
or rules is driven here with such names, and what it draws is read back.

The class of bug is closed by rule (the first test): in ``tui/`` every
Static, Label and OptionList is built with ``markup=False``, every RichLog
too, no ``from_markup`` is called, and every nodealer app's toasts are plain
(:meth:`tui.base.NodealerApp.notify`)."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.app import App

from p2p.discovery import Change, TableAd, TableEvent
from p2p.lobby.messages import REMOVED, LobbyState, Player
from table.seating import GameSettings
from tests.test_tui_snapshots import ScreenApp
from tui.screens.common import Confirm
from tui.screens.lobby import LobbyScreen, RemovePicker
from tui.words import t

TUI = Path(__file__).resolve().parent.parent / "tui"
ANN, BOB, CAROL, DAN = (
    "K3QF-7ZPA-M2XD-4RTY",
    "M2XD-4RTY-K3QF-7ZPA",
    "4RTY-K3QF-7ZPA-M2XD",
    "7ZPA-M2XD-4RTY-K3QF",
)
CRASH, TWIN, HIDE = "a[/]", "Carol[i][/i]", "Bob[#101010 on #101010]"
MARKED = [CRASH, TWIN, HIDE, "[bold red]dan", "eve[/b]"]
"""Nicknames a player may choose (nickname_problem takes them all)."""


def _text(app: App[Any]) -> str:
    """The screen as drawn (every line of the terminal, as plain text)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def _toasts(app: App[Any]) -> list[str]:
    """Every toast as its widget draws it (:class:`textual.widgets._toast.Toast`)."""
    from textual.widgets._toast import Toast

    return [str(Toast(n).render()) for n in app._notifications]


BOX = str.maketrans("", "", "│╭╮╰╯─▊▎▔▁┃━┏┓┗┛█▀▄▅▃▂")


def _flat(text: str) -> str:
    """The screen's words in one line (box lines gone, a wrap is a space)."""
    return " ".join(text.translate(BOX).split())


async def _until(pilot: Any, check: Callable[[], bool], what: str) -> None:
    for _ in range(200):
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


# --------------------------------------------------------------------- the rule


def _calls(name: str) -> list[tuple[Path, int, ast.Call]]:
    found = []
    for path in sorted(TUI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if called == name:
                    found.append((path, node.lineno, node))
    return found


def _plain(call: ast.Call) -> bool:
    return any(
        k.arg == "markup" and isinstance(k.value, ast.Constant) and k.value.value is False
        for k in call.keywords
    )


@pytest.mark.parametrize("widget", ["Static", "Label", "OptionList", "RichLog"])
def test_every_text_widget_in_tui_is_built_plain(widget: str) -> None:
    calls = _calls(widget)
    if widget != "Label":
        assert calls, f"no {widget} found: the rule checks nothing"
    parsing = [f"{p.relative_to(TUI.parent)}:{line}" for p, line, c in calls if not _plain(c)]
    assert not parsing, f"{widget} without markup=False (parses names as markup): {parsing}"


def test_no_markup_is_parsed_anywhere_in_tui() -> None:
    assert not _calls("from_markup")
    from textual.widgets import Static

    from tui.widgets.cards import Hand

    assert not isinstance(Hand(), Static) or Hand()._render_markup is False


def test_toasts_are_plain_whatever_markup_says() -> None:
    """Screens' notify passes ``markup=True``; the app shows it as written."""
    app = ScreenApp(lambda a: a.push_screen(LobbyScreen(hosting=True, fingerprint=ANN)), "en")

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            app.screen.notify(f"{CRASH} was removed from the table", markup=True)
            app.notify(TWIN)
            await pilot.pause()
            assert _toasts(app) == [f"{CRASH} was removed from the table", TWIN]

    asyncio.run(run())


# --------------------------------------------------------------------- the lobby

SETTINGS = GameSettings("bomb", 4, None, True, f"{CRASH}'s table").to_map()
PLAYERS = (Player(0, "Ann", ANN), Player(1, CRASH, BOB), Player(2, TWIN, CAROL),
           Player(3, HIDE, DAN))  # fmt: skip


QUESTION = "Remove {who} ({fp}) from the table? They are told the host removed them."


class _Host(ScreenApp):
    removed: list[Any]

    def remove_player(self, player: Any) -> None:  # as TableApp says it
        self.removed.append(player)
        self.notify(t("{who} was removed from the table", self.lang, who=player.nickname))


def _waiting(hosting: bool, me: str = ANN) -> Callable[[Any], Any]:
    def make(app: Any) -> Any:
        screen = LobbyScreen(hosting=hosting, fingerprint=me)

        async def show() -> None:
            await app.push_screen(screen)
            screen.show_where("127.0.0.1:4000")
            screen.show_state(LobbyState(bytes(8), SETTINGS, 4, 2, PLAYERS))

        return show()

    return make


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("pick", [1, 2, 3])
def test_the_host_removes_players_whose_names_are_markup(lang: str, pick: int) -> None:
    """The waiting room, ``r``'s picker, the question and the toast show
    every name as written, and the host's program goes on."""
    app = _Host(_waiting(True), lang)
    app.removed = []
    who = PLAYERS[pick]

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            shown = _text(app)
            for player in PLAYERS:
                assert f"{player.nickname} " in shown and player.fingerprint in shown
            assert f"{CRASH}'s table" in shown
            await pilot.press("r")
            await _until(pilot, lambda: isinstance(app.screen, RemovePicker), "the picker")
            await pilot.pause()
            shown = _text(app)
            for player in PLAYERS[1:]:
                assert f"{player.nickname}  {player.fingerprint}" in shown
            await pilot.press(*["down"] * (pick - 1), "enter")
            await _until(pilot, lambda: isinstance(app.screen, Confirm), "the question")
            await pilot.pause()
            asked = str(app.screen.query_one("#confirm-question").render())
            assert asked == t(QUESTION, lang, who=who.nickname, fp=who.fingerprint)
            shown = _flat(_text(app))  # drawn as written (wrapped beside the seats below)
            assert all(word in shown for word in who.nickname.split())
            await pilot.press("y")
            await _until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the waiting room")
            await _until(pilot, lambda: app.removed == [who], "the removal")
            said = t("{who} was removed from the table", lang, who=who.nickname)
            assert _toasts(app) == [said]
            assert app.is_running

    asyncio.run(run())


def test_a_removed_joiner_no_longer_sees_the_seats() -> None:
    """The joiner told the host removed it sees that, not the old seat list
    with itself in it."""
    app = ScreenApp(_waiting(False, BOB), "en")

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert "(you)" in _text(app) and CAROL in _text(app)
            app.screen.show_problem(t(REMOVED, "en"), unseated=True)
            await pilot.pause()
            shown = _text(app)
            assert REMOVED in shown
            assert "(you)" not in shown and CAROL not in shown and BOB not in shown
            await pilot.press("f2")  # everything said again in Chinese: still no seats
            await pilot.pause()
            shown = _text(app)
            assert REMOVED in shown and "(你)" not in shown and CAROL not in shown

    asyncio.run(run())


# --------------------------------------------------------------------- home


@pytest.mark.parametrize("name, host", [(CRASH, HIDE), (TWIN, CRASH), ("[link=x]y", "[b]")])
def test_the_lan_list_shows_advertised_names_as_written(name: str, host: str) -> None:
    from tui.screens.home import HomeScreen

    screen = HomeScreen("ann (K3QF-7ZPA-M2XD-4RTY)", [("bluff", 4)], [])

    async def make(app: Any) -> None:
        await app.push_screen(screen)
        for tid, private in ((1, False), (2, True)):
            ad = TableAd(bytes([tid]) * 8, "bomb", 1, 3, ANN, "127.0.0.1", 4000 + tid,
                         name=f"{name}{tid}", host_name=host, private=private,
                         proven=True)  # fmt: skip
            service = f"{name}{tid}._nodealer._tcp.local."
            screen.lan_event(TableEvent(Change.APPEARED, service, ad))

    app = ScreenApp(make, "en")

    async def run() -> None:
        async with app.run_test(size=(100, 24)) as pilot:
            await pilot.pause(0.2)
            shown = _text(app)
            for tid in (1, 2):
                assert f"{name}{tid} · bomb 1/3 · host {host} {ANN}" in shown
            assert app.is_running

    asyncio.run(run())


# --------------------------------------------------------------------- the tables


def _table_app(make: Callable[[Any], Any], game: str, lang: str = "en") -> Any:
    from tests.bombmao_tables import TableApp

    return TableApp(make, lang, game, names=MARKED)


def _shows_names(shown: str, seats: int, me: int = 0) -> None:
    flat = _flat(shown)
    others = [n for i, n in enumerate(MARKED[:seats]) if i != me]
    missing = [n for n in others if n not in flat]
    assert not missing, f"not shown as written: {missing}\n{shown}"


def test_the_bluff_table_shows_names_as_written() -> None:
    from tests.test_tui_snapshots import _table_screen
    from tui.screens.bluff import BluffScreen

    app = _table_app(lambda a: _table_screen(a, BluffScreen(seat=0), "bluff", 3, 12), "bluff")

    async def run() -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause(0.2)
            _shows_names(_text(app), 3)

    asyncio.run(run())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_bomb_table_and_its_game_over_show_names_as_written(lang: str) -> None:
    from engines.bomb import GAME as BOMB
    from tests.bombmao_tables import LOG, bomb_over, bomb_snap, bomb_until
    from tui.screens.bomb import BombScreen

    seen: list[str] = []
    sim = bomb_until(lambda s: s.state.phase == "place_bomb" and s.state.turn == 0)
    over = bomb_over()

    async def make(app: Any) -> None:
        screen = BombScreen(seat=0)
        await app.push_screen(screen)
        screen.refresh_table(bomb_snap(sim), BOMB)
        screen.action_cursor(1)

    app = _table_app(make, "bomb", lang)

    async def run() -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause(0.2)
            seen.append(_text(app))
            screen = app.screen
            screen.refresh_table(bomb_snap(over), BOMB)
            result = over.state.result
            await app.push_screen(
                screen.game_over(str(result), f"clean: {result}", LOG, 0 in result.winners)
            )
            await pilot.pause(0.2)
            seen.append(_text(app))

    asyncio.run(run())
    _shows_names(seen[0], 5)
    _shows_names(seen[1], 5)


def test_the_mao_table_shows_names_and_what_players_said_as_written() -> None:
    """Names and a phrase a player said (free text in M-rules' calls), all markup."""
    from engines.cards import Card
    from engines.mao import GAME as MAO
    from engines.mao_author import RuleAuthor
    from engines.mao_events import MaoConfig, PlayCard
    from tests.test_mao_script import Script
    from tests.test_tui_mao_snapshots import _Snap
    from tui.screens.mao import MaoScreen
    from tui.story import story

    said = "[b]hi[/b] a[/]"
    author = RuleAuthor(salt_source=lambda n: bytes(n))
    s = Script([["3♣", "Q♣", "K♥"], ["2♦", "6♣", "Q♥"], ["3♦", "10♦", "K♣"]], "2♣", ["9♣"],
               config=MaoConfig(hand_size=3))  # fmt: skip
    s.draw(0)
    s.table.submit(PlayCard(1, s.position(1, "2♦"), Card.parse("2♦"), (said,)))
    s.judge()
    seen: list[str] = []

    async def make(app: Any) -> None:
        screen = MaoScreen(seat=0, author=author)
        screen.timer_left = lambda: None  # type: ignore[method-assign]
        await app.push_screen(screen)
        for event in s.table.events:
            line = story(str(event), app.lang)
            if line:
                screen.story(line)
        screen.refresh_table(_Snap(s.state, s.table.known[0]), MAO)

    app = _table_app(make, "mao")

    async def run() -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause(0.3)
            seen.append(_text(app))

    asyncio.run(run())
    _shows_names(seen[0], 3)
    assert said in _flat(seen[0]), seen[0]


# --------------------------------------------------------------------- a whole game, its log


def test_a_game_and_its_replay_show_a_markup_name_as_written(tmp_path: Path) -> None:
    """A whole Bluff game played as ``a[/]`` (its seat by a bot), its game
    over, then the replay of its log, whose seat names come from the log."""
    import secrets

    from engines.bots import sensible_bots
    from p2p.identity import Identity
    from tui.app import PlayApp, ReplayApp
    from tui.screens.over import GameOverScreen
    from tui.screens.replay import ReplayScreen

    home = tmp_path / "me"
    app = PlayApp("bluff", 2, bots_home=tmp_path / "bots", own=(Identity.load_or_create(home),
                  home), proven=False, seed=5, time_scale=0.02, name=CRASH)  # fmt: skip
    seen: dict[str, str] = {}

    async def play() -> None:
        async with app.run_test(size=(100, 34)) as pilot:
            adopted = False
            for _ in range(4000):
                await pilot.pause(0.05)
                if app.session is not None and not adopted:
                    bot = sensible_bots("bluff", 2, 11, salt_source=secrets.token_bytes)[0]
                    app.session.adopt_player(bot)
                    adopted = True
                if app.table_screen.view is not None and "table" not in seen:
                    seen["table"] = _text(app)
                if isinstance(app.screen, GameOverScreen):
                    break
            else:
                pytest.fail("the game did not end")
            await pilot.pause(0.3)
            seen["over"] = _text(app)
            await pilot.press("q")

    asyncio.run(play())
    assert f"Bluff · {CRASH} · " in seen["table"], seen["table"]
    assert app.log_path is not None

    async def replay() -> None:
        again = ReplayApp(Path(app.log_path))
        async with again.run_test(size=(100, 34)) as pilot:
            await pilot.pause(0.3)
            assert isinstance(again.screen, ReplayScreen)
            seen["replay"] = _text(again)
            await pilot.press("end")
            await pilot.pause(0.2)
            seen["replay end"] = _text(again)

    asyncio.run(replay())
    assert CRASH in seen["replay"], seen["replay"]
    assert CRASH in seen["replay end"], seen["replay end"]


def test_the_mao_game_over_shows_names_as_written() -> None:
    """Every secret rule and the plays it judged, by seats named in markup."""
    from engines.mao import GAME as MAO
    from tests.bombmao_tables import LOG, mao_over, mao_snap
    from tui.screens.mao import MaoScreen

    s, author = mao_over()
    result = MAO.outcome(s.state)
    seen: list[str] = []

    async def make(app: Any) -> None:
        screen = MaoScreen(seat=0, author=author)
        await app.push_screen(screen)
        screen.refresh_table(mao_snap(s), MAO)
        await app.push_screen(
            screen.game_over(str(result), f"clean: {result}", LOG, 0 in result.winners)
        )

    app = _table_app(make, "mao")

    async def run() -> None:
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause(0.3)
            seen.append(_text(app))

    asyncio.run(run())
    _shows_names(seen[0], 3)
    assert f"Rounds won: you 1, {MARKED[1]} 1, {MARKED[2]} 0." in _flat(seen[0]), seen[0]
