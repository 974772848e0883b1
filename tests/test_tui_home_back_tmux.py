"""Going back from the home screen (issue 27, item 8), in a real terminal:
a home holding an unfinished table shows it first on ``nodealer`` ("your
game with hal and carol is waiting for you"), naming the other seats as the
lobby did, and enter goes back to it the way ``nodealer join`` does (the
app's going-back screen, waiting for the other seats). In English and in
Chinese, at 80×24.

The held table is made as a seat's store holds one after a crash: the
table's log (no move yet) and the lobby's record (settings, addresses,
nicknames). Nobody listens at its addresses: going back waits for seats
that never answer, which is all the test needs. Home browses the LAN
(mDNS), so it runs inside a network namespace with only loopback."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import msgpack
import pytest

from p2p.envelope import TableSpec
from p2p.identity import Identity
from p2p.store import Store
from table.seating import LOBBY_SECRET, GameSettings, held_tables
from tests.terminal import PYTHON, ROOT, in_namespace, keys, kill, need_tmux, start, wait


def hold_a_table(home: Path) -> bytes:
    """A bluff table for hal, ann (this home's key, seat 1) and carol,
    unfinished in ``home``'s store; its table id."""
    ann = Identity.load_or_create(home)
    hal, carol = Identity.generate(), Identity.generate()
    spec = TableSpec(secrets.token_bytes(8), (hal.public, ann.public, carol.public))
    store = Store.open(spec, home)
    settings = GameSettings("bluff", 3, name="Hal's table")
    lobby = {"v": 1, "seat": 1, "settings": settings.to_map(),
             "addresses": [["127.0.0.1", 47401 + seat] for seat in range(3)],
             "nicknames": ["hal", "ann", "carol"]}  # fmt: skip
    store.put_secret(LOBBY_SECRET, msgpack.packb(lobby, use_bin_type=True))
    store.close()
    assert [held.spec.table_id for held in held_tables(ann, home)] == [spec.table_id]
    return spec.table_id


def _row(screen: str, text: str) -> int:
    return next(i for i, line in enumerate(screen.splitlines()) if text in line)


@pytest.mark.slow
@pytest.mark.netns
@pytest.mark.parametrize(
    ("lang", "line", "first_choice", "going_back"),
    [
        ("en", "your game with hal and carol is waiting for you (enter: go back)",
         "play bluff against bots", "going back to"),
        ("zh", "你和 hal、carol 的对局在等你（回车：回去）", "与机器人玩", "回到牌桌"),
    ],
)  # fmt: skip
def test_home_offers_the_held_table_first_and_enter_goes_back(
    tmp_path: Path, lang: str, line: str, first_choice: str, going_back: str
) -> None:
    need_tmux()
    home = tmp_path / "ann"
    home.mkdir()
    hold_a_table(home)
    session = f"nd-home-back-{lang}-{os.getpid()}"
    inner = (
        f"cd {ROOT} && NODEALER_LANG={lang} NODEALER_HOME={home} {PYTHON}; "
        "echo nodealer-ended-$?; sleep 30"
    )
    start(session, in_namespace(inner))
    try:
        screen = wait(session, line, first_choice, timeout=60)
        assert _row(screen, line) < _row(screen, first_choice), screen  # first of the choices
        keys(session, "Enter")  # the held table is what enter chooses
        screen = wait(session, going_back, "Hal's table", timeout=60)
        assert "nodealer-ended" not in screen
    finally:
        kill(session)


@pytest.mark.slow
@pytest.mark.netns
def test_home_without_a_held_table_offers_none(tmp_path: Path) -> None:
    """A finished or never-held table: home looks as it always did."""
    need_tmux()
    home = tmp_path / "ann"
    home.mkdir()
    session = f"nd-home-none-{os.getpid()}"
    inner = f"cd {ROOT} && NODEALER_HOME={home} {PYTHON}; echo nodealer-ended-$?; sleep 30"
    start(session, in_namespace(inner))
    try:
        screen = wait(session, "you:", "host a table", timeout=60)
        assert "waiting for you" not in screen
    finally:
        kill(session)


def test_the_held_table_chosen_on_home_is_what_join_goes_back_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pilot: home offers the held table first (and says it again in Chinese
    after F2); enter on it runs ``nodealer join --table-id`` for that table,
    which finds it held (the going-back path ``join`` takes)."""
    import asyncio

    from tui import cli

    monkeypatch.setenv("NODEALER_HOME", str(tmp_path))
    table_id = hold_a_table(tmp_path)
    said: list[str] = []

    async def at_home(app: object) -> None:
        async with app.run_test(size=(80, 24)) as pilot:  # type: ignore[attr-defined]
            await pilot.pause(0.2)
            choices = app.screen.query_one("#choices")  # type: ignore[attr-defined]
            said.append(str(choices.get_option_at_index(0).prompt))
            await pilot.press("f2")
            await pilot.pause(0.3)
            choices = app.screen.query_one("#choices")  # type: ignore[attr-defined]
            said.append(str(choices.get_option_at_index(0).prompt))
            await pilot.press("enter")

    ran: list[list[str]] = []

    def run(app: object) -> str | None:
        if ran:
            return None  # home again after the join: q
        asyncio.run(at_home(app))
        return app.return_value  # type: ignore[attr-defined]

    def join(argv: list[str]) -> int:
        ran.append(argv)
        return 0

    monkeypatch.setattr(cli, "main", join)
    assert cli._home(None, run, "en") == 0  # type: ignore[arg-type]
    assert said == ["your game with hal and carol is waiting for you (enter: go back)",
                    "你和 hal、carol 的对局在等你（回车：回去）"]  # fmt: skip
    assert ran == [["join", "--table-id", table_id.hex(), "--lang", "zh"]]
    # and that command goes back to this table (tui.lan.run_join's test)
    from tui.lan import _is_asked_for

    args = cli.build_parser().parse_args(ran[0])
    assert args.handler.__name__ == "run_join"
    held = held_tables(Identity.load_or_create(tmp_path), tmp_path)
    assert [h.spec.table_id for h in held if _is_asked_for(h, args)] == [table_id]
