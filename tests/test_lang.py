"""``--lang zh``: everything the command prints about a game reads in Chinese
(issue 16), from whole bot games of all three games."""

from __future__ import annotations

import re

import pytest

from engines.bots import Simulator, sensible_bots
from engines.core import game
from engines.mao_events import MaoConfig
from engines.phrases import parse
from table.names import BOT_NAMES, default_name
from tui import words
from tui.cli import main
from tui.story import outcome_text, story, verify_line

# what may stay in Latin letters in a Chinese line: card names, seat
# fingerprints, a rule's commitment hash, the K12 kind letters, paths
_ALLOWED = re.compile(
    r"(?:10|[2-9AJQK])[♠♥♦♣]|\b[RB]J\b|[A-Z2-7]{4}(?:-[A-Z2-7]{3,4}){3}|[0-9a-f]{12}…"
    r"|\b[0-9a-f]{16}\b|\b[ABC] 类|[BKM]\d+|/\S+|\b127\.0\.0\.1\b|--\w+"
)
_ENGLISH = re.compile(r"[A-Za-z]{2,}")
# players' names stay as they are in any language (the bots', and the login's)
_NAMES = re.compile(
    r"\b(?:" + "|".join(map(re.escape, (*BOT_NAMES, default_name()))) + r")\b(?: \([A-Z2-7]{4}\))?"
)


def _english_left(line: str) -> list[str]:
    """Latin words left, besides what a player chose to say (a secret
    rule's own phrase, free talk: shown as said)."""
    line = re.sub(
        r"“[^”]*”|「[^」]*」", lambda m: "" if parse(m.group(0)[1:-1]) is None else m.group(0), line
    )
    return _ENGLISH.findall(_ALLOWED.sub("", _NAMES.sub("", line)))


def _bot_game(name: str, seats: int, seed: int) -> tuple[list[str], str]:
    engine = game(name)
    config = MaoConfig.for_seats(seats) if name == "mao" else engine.Config()
    sim = Simulator(engine, config, seats, deck_seed=seed)
    bots = sensible_bots(name, seats, seed, salt_source=lambda n: bytes(n))
    if name == "mao":
        from engines.bots.mao import SensibleBot

        bots = [SensibleBot(seed * 16 + s, 3) for s in range(seats)]
    outcome = sim.play(bots, seed=seed, max_events=60_000)
    return [str(e) for e in sim.events], str(outcome)


@pytest.mark.parametrize("name,seats", [("bluff", 3), ("bomb", 5), ("mao", 4)])
def test_every_story_line_of_whole_games_reads_in_chinese(name: str, seats: int) -> None:
    kinds: set[str] = set()
    for seed in range(4):
        lines, outcome = _bot_game(name, seats, seed)
        for line in lines:
            shown = story(line, "zh")
            if shown is None:
                continue
            kinds.add(line.split()[2] if line.startswith("seat") else line.split()[0])
            assert not _english_left(shown), (line, shown)
        zh = outcome_text(outcome, "zh")
        assert not _english_left(zh), (outcome, zh)
    assert len(kinds) >= 3  # several kinds of event were read, not just one


@pytest.mark.slow
@pytest.mark.parametrize("name", ["bluff", "bomb", "mao"])
def test_play_headless_in_chinese_prints_no_english(tmp_path, capsys, name: str) -> None:
    words.MISSING.clear()
    argv = ["play", name, "--players", "3", "--headless", "--unproven", "--lang", "zh",
            "--home", str(tmp_path)]  # fmt: skip
    if name == "mao":
        argv += ["--rounds", "2"]
    if name == "bomb":  # K25's hour at 0.02 s a second: 72 s at most, not 360
        argv += ["--time-scale", "0.02"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = [x for x in (captured.out + captured.err).splitlines() if x.strip()]
    assert any(line.startswith("核查：干净") for line in lines), lines[-3:]
    for line in lines:
        assert not _english_left(line), line
    assert not words.MISSING


def test_english_stays_the_default(tmp_path, capsys) -> None:
    argv = ["play", "bluff", "--players", "2", "--headless", "--unproven", "--quiet",
            "--home", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "verify: clean:" in out and "核查" not in out


def test_a_language_we_do_not_have_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["play", "bluff", "--lang", "fr"])
    assert exit_.value.code == 2
    assert "--lang" in capsys.readouterr().err


def test_verify_reads_in_chinese(tmp_path, capsys) -> None:
    argv = ["play", "bomb", "--players", "3", "--headless", "--unproven", "--quiet",
            "--time-scale", "0.02",  # K25's hour: 72 s at most, not 360
            "--home", str(tmp_path), "--log", str(tmp_path / "game.log")]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["verify", "--lang", "zh", str(tmp_path / "game.log")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("干净：") and " 赢；" in lines[-1]
    for line in lines:
        if not line.startswith("日志："):
            assert not _english_left(line), line
    assert verify_line("note: 3 stale bodies dropped (races, nobody blamed)", "zh").startswith(
        "备注：丢弃了 3 条"
    )


def test_usage_problems_read_in_chinese_too(capsys) -> None:
    assert main(["play", "bomb", "--players", "12", "--lang", "zh"]) == 2
    err = capsys.readouterr().err
    assert "不是 12 名" in err and not _english_left(err.replace("nodealer play", ""))
    assert main(["play", "bluff", "--rounds", "2", "--lang", "zh"]) == 2
    assert "只用于毛" in capsys.readouterr().err


def test_the_waiting_lines_are_said_with_names_and_in_chinese() -> None:
    # (v3) every line the absence rules say to a person (table.absence,
    # table.waiting): the player's name, and no English left in Chinese
    from table.absence import _why_nobody
    from table.names import SeatNames
    from tui.story import update_line

    lines = [
        "waiting for seat 2, away 1:12: the game goes on when seat 2 is back",
        "seat 2 is back: the game goes on",
        "waiting for seat 2 to acknowledge entry 41: the game goes on when it does",
        "not signed: the game is over or stopped",
        "not signed: seat 2 owes nothing now",
        _why_nobody((), [1, 2], 4),
        _why_nobody((2,), [], 2),
        _why_nobody((1, 2), [], 4),
    ]
    names = SeatNames(("ann", "bob", "carol", "dan"), me=0)
    words.MISSING.clear()
    for line in lines:
        en = update_line("waiting", line, "en", names)
        assert "seat 2" not in en or "carol (seat 2)" in en, en
        zh = update_line("waiting", line, "zh", names)
        assert not _english_left(zh), (line, zh)
    assert not words.MISSING
    said = update_line("waiting", lines[2], "en", names)
    assert said == (
        "[waiting] waiting for carol (seat 2) to acknowledge entry 41: "
        "the game goes on when carol does"
    )
