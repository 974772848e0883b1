"""``nodealer replay LOG --at N`` and ``--html FILE``: the moment a number
names, and the shared page — self-contained, its data round-trips, text a
player typed cannot break out of it, hands shown only as the log reveals
them. (The page in a real browser: tests/test_replay_browser.py.)"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.replay_games import saved_game
from tui.cli import main
from tui.html_replay import embed_json, page_data, page_html
from tui.moments import BadMoment, moment, next_move_of, seat_named
from tui.replay import replay_log

EVIL = "</script><script>alert(1)</script>"
_BLOCK = re.compile(r'<script type="application/json" id="game">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("games")
    return {game: saved_game(game, folder) for game in ("bluff", "bomb", "mao")}


def embedded(html: str) -> Any:
    found = _BLOCK.findall(html)
    assert len(found) == 1
    return json.loads(found[0])


def expand(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps with what each left out carried from the one before (as
    the page's script does)."""
    out: list[dict[str, Any]] = []
    for step in steps:
        full = dict(step)
        if "rowdiff" in step:
            full["rows"] = list(out[-1]["rows"])
            for index, row in step["rowdiff"]:
                full["rows"][index] = row
        for key in ("hands", "seats", "rows", "turn"):
            if key not in full:
                full[key] = out[-1][key]
        out.append(full)
    return out


class _Refs(HTMLParser):
    """Every tag and every attribute that could load something."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in {"src", "href", "srcset", "action", "poster", "data", "background"}:
                self.refs.append((tag, name, value or ""))


# ------------------------------------------------------------------ --at


def test_at_names_a_move_a_body_or_an_entry(games: dict[str, Path]) -> None:
    replayed = replay_log(games["bluff"])
    steps, bodies = replayed.steps, replayed.table.count
    assert moment(steps, "1") == 0 and moment(steps, str(len(steps))) == len(steps) - 1
    middle = steps[len(steps) // 2]
    assert moment(steps, f"body:{middle.body}", bodies) >= middle.number - 1
    shown = steps[moment(steps, f"body:{middle.body}", bodies)]
    assert shown.body == middle.body  # the last move that body made
    assert moment(steps, f"entry:{middle.body + 2}", bodies) == moment(
        steps, f"body:{middle.body}", bodies
    )
    # a body that made no move shows the table as the move before it left it
    quiet = next(b for b in range(bodies) if all(s.body != b for s in steps) and b > steps[0].body)
    before = max(s.number for s in steps if s.body < quiet)
    assert moment(steps, f"body:{quiet}", bodies) == before - 1
    for bad in ("0", str(len(steps) + 1), "body:-1", f"body:{bodies}", "entry:1", "x", "body:"):
        with pytest.raises(BadMoment):
            moment(steps, bad, bodies)


def test_replay_text_at_a_move_and_a_bad_one(
    games: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(games["bomb"]), "--text", "--at", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    moves = [line for line in lines if re.match(r"^ *\d+  ", line)]
    assert moves[0].startswith("   5  ")
    assert main(["replay", str(games["bomb"]), "--text", "--at", "99999"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("nodealer replay: no move 99999: this game has moves 1 to ")
    assert "\n" not in err


def test_a_seat_is_found_by_number_or_name_and_its_next_move() -> None:
    from tui.replay import Step

    steps = [Step(1, "a", 0, 0), Step(2, "b", 1, 1), Step(3, "c", 2, None), Step(4, "d", 3, 1)]
    assert next_move_of(steps, 0, 1) == 1
    assert next_move_of(steps, 1, 1) == 3
    assert next_move_of(steps, 3, 1) == 1  # wraps around
    assert next_move_of(steps, 3, 1, back=True) == 1
    assert next_move_of(steps, 0, 2) is None
    names = ["ann", "bob", "bea"]
    assert [seat_named(w, names) for w in ("2", "seat 1", "座位0", "BO", "b", "zed", "7")] == [
        2, 1, 0, 1, None, None, None]  # fmt: skip


# ------------------------------------------------------------------ the page


@pytest.mark.parametrize("game", ["bluff", "bomb", "mao"])
def test_the_page_is_self_contained_and_its_data_round_trips(
    games: dict[str, Path], game: str
) -> None:
    replayed = replay_log(games[game])
    data = page_data(replayed, "en")
    html = page_html(data)
    assert embedded(html) == data
    refs = _Refs()
    refs.feed(html)
    assert refs.refs == []  # nothing to load at all
    assert not {"link", "img", "iframe", "object", "embed", "audio", "video"} & set(refs.tags)
    outside = _BLOCK.sub("", html)  # the page itself (the data is text)
    for needle in ("http:", "https:", "//cdn", "url(", "@import", "fetch(", "XMLHttpRequest",
                   "WebSocket", "src="):  # fmt: skip
        assert needle not in outside
    assert "default-src 'none'" in html
    assert [s["n"] for s in data["steps"]] == [s.number for s in replayed.steps]
    assert [s["text"] for s in data["steps"]] == [s.text for s in replayed.steps]
    assert data["verdict"]["kind"] == "clean" and data["revealed"]


def test_every_hand_is_shown_once_the_final_reveals_are_in(games: dict[str, Path]) -> None:
    data = page_data(replay_log(games["bluff"]), "en")
    steps = expand(data["steps"])
    known = [s for s in steps if all(None not in hand for hand in s["hands"])]
    # all but cards on their way to a challenge's loser (B7: not yet received)
    assert len(known) >= 3 * len(steps) // 4
    plays = [s for s in steps if " places " in s["text"]]
    assert plays and all(s in known for s in plays)
    mid = plays[len(plays) // 2]
    assert sum(len(h) for h in mid["hands"]) > 10
    assert [n[0] for n in mid["seats"]] == [len(h) for h in mid["hands"]]


def test_the_bomb_page_names_every_role_once_identities_are_known(
    games: dict[str, Path]
) -> None:
    from engines.bomb import roles
    from engines.cards import Card

    data = page_data(replay_log(games["bomb"]), "en")
    steps = expand(data["steps"])
    identities = tuple(Card.parse(card) for _, card in steps[0]["seats"])
    said = dict((row[0], row[1]) for row in steps[0]["rows"])["roles"]
    for seat, role in enumerate(roles(identities)):
        assert f"seat {seat}: {role.value}" in said


def test_an_unfinished_game_shows_only_public_cards(
    games: dict[str, Path], tmp_path: Path
) -> None:
    cut = tmp_path / "cut.log"
    cut.write_bytes(games["bluff"].read_bytes()[:40_000])  # the log of a game left early
    data = page_data(replay_log(cut), "en")
    assert data["verdict"]["kind"] == "unfinished" and not data["revealed"]
    assert "did not finish" in data["verdict"]["lines"][0]
    steps = expand(data["steps"])
    # the faces the log showed (a challenge turns cards up): like the final
    # reveals of a finished game, they show in the hands at every step
    seen = {f for s in steps for f in re.findall(r"(?:10|[2-9AJQK])[♠♥♦♣]|[RB]J", s["text"])}
    hidden = 0
    for step in steps:
        for hand in step["hands"]:
            hidden += hand.count(None)
            assert {f for f in hand if f is not None} <= seen
    assert hidden > 0


def test_a_cheat_is_named_at_the_top(tmp_path: Path) -> None:
    log = saved_game("bluff", tmp_path, cheat="duplicate-card")
    data = page_data(replay_log(log, "zh"), "zh")
    assert data["verdict"]["kind"] == "cheating"
    assert any(line.startswith("作弊") and "座位1" in line for line in data["verdict"]["lines"])
    assert data["words"]["cheating"] == "作弊"


def test_typed_text_cannot_break_out_of_the_page(games: dict[str, Path]) -> None:
    replayed = replay_log(games["mao"])
    data = page_data(replayed, "en", names=[EVIL, "bob & <i>", "carol"])
    data["steps"][0]["text"] = EVIL + "\u2028" + "]]>-->"
    html = page_html(data)
    assert html.count("</script>") == 2  # the data block's own end and the script's
    assert EVIL not in html and "<script>alert" not in html
    assert embedded(html) == data
    assert embed_json({"a": "</SCRIPT>&<!--"}) == '{"a":"\\u003c/SCRIPT\\u003e\\u0026\\u003c!--"}'


def test_the_page_speaks_chinese(games: dict[str, Path]) -> None:
    from tui import words

    words.MISSING.clear()
    data = page_data(replay_log(games["mao"], "zh"), "zh")
    assert not words.MISSING and not words.CONFLICTS
    html = page_html(data)
    assert '<html lang="zh-Hans">' in html
    assert data["title"] == "毛" and data["seats"][0] == "座位0"
    assert data["words"]["next"] == "下一步"
    labels = {row[0] for step in expand(data["steps"]) for row in step["rows"]}
    assert {"轮次", "摸牌堆"} <= labels
    assert not any(re.search(r"[a-z]{4}", label) for label in labels)


def test_replay_html_writes_the_page_and_refuses_a_bad_target(
    games: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bomb.html"
    assert main(["replay", str(games["bomb"]), "--html", str(out), "--lang", "zh"]) == 0
    said = capsys.readouterr().out
    assert str(out) in said and f"({out.stat().st_size} bytes)" in said
    assert embedded(out.read_text())["lang"] == "zh"
    assert main(["replay", str(games["bomb"]), "--html", str(out), "--at", "7"]) == 0
    assert said.split("open ")[-1].strip() == out.resolve().as_uri()
    assert capsys.readouterr().out.strip().endswith(f"{out.resolve().as_uri()}#turn=7")
    assert main(["replay", str(games["bomb"]), "--html", str(out), "--at", "body:x"]) == 2
    assert capsys.readouterr().err.startswith("nodealer replay: --at 'body:x': expected")
    missing = tmp_path / "no" / "such" / "dir" / "x.html"
    assert main(["replay", str(games["bomb"]), "--html", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("nodealer replay: cannot write") and "\n" not in err
    assert not missing.exists()


def test_the_moments_and_page_doctests() -> None:
    """--at's forms, a seat by name and the JSON escaping (their docstrings
    are their examples)."""
    import doctest

    import tui.html_replay
    import tui.moments

    for module in (tui.moments, tui.html_replay):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__
