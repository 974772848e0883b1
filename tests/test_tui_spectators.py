"""The host's spectator choice on the screens (issue 25): the home screen's
host form ticks it (and refuses it with a private table, or a bad count),
the LAN list says which tables take spectators and which are being played,
and the command line gets it (``--spectators``); a private table refuses it
in one line however it is asked."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from textual.widgets import Checkbox, Input, Static

from p2p.advert import TableAd
from tests.test_tui_private import _until
from tui.cli import choice_argv, main
from tui.screens.home import HostForm, table_row
from tui.table_app import LanHomeApp
from tui.watch_serve import spectators_short, spectators_text

FP = "K3QF-7ZPA-M2XD-4RTY"


def _host_form(lang: str, *, spectators: str | None, private: bool = False) -> tuple[Any, str]:
    """Fill the host form (3 seats), as a person would; (the app, the error shown)."""
    app = LanHomeApp("me", [("bluff", 2)], [], lang=lang)
    error: list[str] = []

    async def run() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("h")
            await _until(pilot, lambda: isinstance(app.screen, HostForm), "the host form")
            form = app.screen
            box = form.query_one("#spectators", Checkbox)
            assert not box.value  # off unless the host ticks it (protocol.md §8)
            if private:
                form.query_one("#private", Checkbox).focus()
                await pilot.press("space")
            if spectators is not None:
                box.focus()
                await pilot.press("space")
                count = form.query_one("#spectators-count", Input)
                count.value = spectators
            form.query_one("#seats", Input).focus()
            await pilot.press("3", "enter")
            await pilot.pause(0.1)
            if isinstance(app.screen, HostForm):
                error.append(str(app.screen.query_one("#form-error", Static).render()))

    asyncio.run(run())
    return app, "".join(error)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_host_form_takes_spectators(lang: str) -> None:
    app, error = _host_form(lang, spectators="4")
    assert not error
    kind, _, plan = (app.return_value or "").partition(":")
    assert kind == "host" and json.loads(plan)["spectators"] == 4
    assert choice_argv(app.return_value)[-2:] == ["--spectators", "4"]
    app2, _ = _host_form(lang, spectators=None)
    assert "spectators" not in json.loads((app2.return_value or ":{}").partition(":")[2])
    assert "--spectators" not in choice_argv(app2.return_value)


@pytest.mark.parametrize(("count", "private", "said"), [
    ("0", False, "spectators: 1 to 64, not '0'"),
    ("65", False, "spectators: 1 to 64, not '65'"),
    ("four", False, "spectators: 1 to 64"),
    ("4", True, "a private table takes no spectators"),
])  # fmt: skip
def test_the_host_form_shows_a_mistake_and_hosts_nothing(
    count: str, private: bool, said: str
) -> None:
    app, error = _host_form("en", spectators=count, private=private)
    assert app.return_value is None and said in error, error


def test_the_lan_list_says_who_takes_spectators_and_who_plays() -> None:
    open_ad = TableAd(b"\x01" * 8, "bluff", 1, 3, FP, "10.0.0.2", 4000, name="t",
                      watch_port=4100, spectators=4)  # fmt: skip
    assert table_row(open_ad).endswith(" · spectators: up to 4 (w)")
    playing = TableAd(b"\x01" * 8, "bluff", 3, 3, FP, "10.0.0.2", 4000, name="t",
                      watch_port=4100, spectators=4, playing=True)  # fmt: skip
    assert table_row(playing, "zh").endswith(" · 观众：至多 4 人 · 对局中：按 w 观看")
    assert "full" not in table_row(playing)  # playing says more than full
    plain = TableAd(b"\x01" * 8, "bluff", 1, 3, FP, "10.0.0.2", 4000, name="t")
    assert "spectators" not in table_row(plain) and "playing" not in table_row(plain)
    argv = choice_argv('watchlan:{"connect": "10.0.0.2:4100", "table": "0101"}')
    assert argv == ["watch", "--connect", "10.0.0.2:4100", "--table-id", "0101"]


def test_the_words_for_the_seats() -> None:
    assert spectators_text((4100, 4), 1, "zh") == "观众：至多 4 人，1 人在看"
    assert spectators_text(None, 1, "en") == "" and spectators_short(None, 0, "en") == ""
    assert spectators_short((4100, 4), None, "en") == "≤4 watching"
    assert spectators_short((4100, 8), 2, "zh") == "观众 2/8"


@pytest.mark.parametrize("asked", [["--spectators", "4"], ["--watch-port", "0"]])
def test_a_private_table_refuses_spectators_however_asked(tmp_path, capsys, asked) -> None:
    argv = ["host", "bluff", "--private", *asked, "--headless", "--home", str(tmp_path),
            "--no-advertise"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "private table takes no spectators" in err


def test_spectators_zero_takes_none_and_a_bad_count_is_a_usage_error(capsys) -> None:
    from tui.watch_serve import watch_request

    class Args:
        watch_host = "127.0.0.1"

    for port, most, expected in ((None, None, None), (None, 0, None), (4100, 0, None),
                                 (None, 3, ("127.0.0.1", 0, 3)), (0, None, ("127.0.0.1", 0, 8)),
                                 (4100, 2, ("127.0.0.1", 4100, 2))):  # fmt: skip
        args = Args()
        args.watch_port, args.spectators = port, most  # type: ignore[attr-defined]
        assert watch_request(args) == expected  # type: ignore[arg-type]
    with pytest.raises(SystemExit):
        main(["host", "bluff", "--spectators", "65"])
    with pytest.raises(SystemExit):
        main(["play", "bluff", "--watch-port", "70000"])


class _FakeLan:
    """A browser that has seen ``ads`` (no mDNS: find_watchable's choice alone)."""

    def __init__(self, ads: list[TableAd]) -> None:
        self.tables = {f"t{i}": ad for i, ad in enumerate(ads)}
        self._left = len(ads)

    async def __aenter__(self) -> _FakeLan:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __aiter__(self) -> _FakeLan:
        return self

    async def __anext__(self) -> None:
        if self._left == 0:
            raise StopAsyncIteration
        self._left -= 1


def test_nodealer_watch_picks_the_table_asked_for(monkeypatch) -> None:
    import argparse

    import trio

    import p2p.discovery
    from tui.watch import find_watchable

    def ad(n: int, name: str, **kw: Any) -> TableAd:
        return TableAd(bytes([n]) * 8, "bluff", 1, 3, FP, "10.0.0.2", 4000 + n, name=name, **kw)

    ann = ad(1, "ann's table", watch_port=4101, spectators=4)
    bob = ad(2, "bob's table", watch_port=4102, spectators=2, playing=True)
    shy = ad(3, "shy table")  # takes no spectators: never listed to watch
    lan = [ann, bob, shy]
    monkeypatch.setattr(p2p.discovery, "browse", lambda interface=None: _FakeLan(lan))

    def find(table: str | None, table_id: str | None = None) -> Any:
        args = argparse.Namespace(table=table, table_id=table_id, seconds=1.0, interface=None,
                                  lang="en")  # fmt: skip
        return trio.run(find_watchable, args)

    several = find(None)
    assert isinstance(several, str) and several.startswith("several tables take spectators")
    assert "1. ann's table" in several and "2. bob's table" in several and "shy" not in several
    assert find("bob") == bob and find("2") == bob and find("1") == ann
    assert find(None, ann.table_id.hex()) == ann
    assert "no table number 3" in find("3") and "no table that takes spectators" in find("shy")
    lan[:] = [shy, bob]
    assert find(None) == bob  # the only one that takes spectators
