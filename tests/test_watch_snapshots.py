"""The spectator's big screen (``nodealer watch``) as snapshots, in English
and Chinese at 80×24 and 160×45: the conformance vector's Bluff game fed to
the spectator's reader record by record, half-way (only what the log made
public: counts, shown cards, whose turn) and at the end (every hand)."""

from __future__ import annotations

from typing import Any

import pytest

from p2p.store import RecordStream
from tests.test_tui_snapshots import LANGS, SIZES, VECTOR, ScreenApp
from tui.watch import WatchScreen
from tui.watch_feed import WatchFeed


def _fed(part: float) -> WatchFeed:
    records = [record for _, record in RecordStream(VECTOR)]
    feed = WatchFeed(None)
    entries = sum(1 for r in records if r["t"] == "entry")
    wanted = int(entries * part)
    seen = 0
    for record in records:
        seen += record["t"] == "entry"
        if seen > wanted:
            break
        feed.feed(record)
    return feed


def _screen(part: float) -> Any:
    def make(app: ScreenApp) -> Any:
        screen = WatchScreen(_fed(part))
        screen.status = ("watching {host}:{port} ({n} watching, at most {most})",
                         {"host": "127.0.0.1", "port": 4100, "n": 1, "most": 8})  # fmt: skip
        return app.push_screen(screen)

    return make


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("part", [0.5, 1.0])
def test_watch_snapshot(snap_compare, part: float, lang: str, size: tuple[int, int]) -> None:
    app = ScreenApp(_screen(part), lang, "spectator", "nodealer watch")
    assert snap_compare(app, terminal_size=size)


def test_half_way_shows_no_hidden_card_and_the_end_every_hand() -> None:
    half, end = _fed(0.5), _fed(1.0)
    assert not half.over() and end.over()
    faces, public = end.faces(), half.public_faces()
    held = [p for hand in half.table.state.hands for p in hand]
    hidden = {str(faces[p]) for p in held if p not in public}  # known only from the end
    shown = "\n".join(half.lines())
    assert hidden and not [c for c in hidden if c in shown]
    assert "every card" in "\n".join(end.lines())
