"""Names, not seat numbers (issue 26): the name lookup, the story, outcomes
and refused moves in a player's words, and the commands around the screens
(``play`` with its names kept in the saved game, ``games``, ``verify``,
``replay --text``, a closed output pipe, ``--cheat``'s explanation)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engines.bluff import GAME as BLUFF
from engines.bluff import Accept, BluffConfig, Challenge
from engines.bots import Simulator, sensible_bots
from engines.core import EngineError, game
from table.cheats import CHEATS
from table.names import BOT_NAMES, SeatNames, names_of_log
from tui.cli import _no_chance, main
from tui.story import outcome_text
from tui.storyteller import StoryTeller
from tui.words import refusal_text, turn_text

ROOT = Path(__file__).resolve().parent.parent
_LIST = re.compile(r"\[[\d, ]*\]")  # a Python list of seats
_RULE_ID = re.compile(r"\b[BKM]\d+\b")


def test_two_guests_named_alike_are_told_apart_by_fingerprint() -> None:
    names = SeatNames(("player", "bob", "Player"), ("3F2A-AAAA", "BBBB-1111", "9C1D-CCCC"), me=1)
    assert names.name(0) == "player (3F2A)" and names.name(2) == "Player (9C1D)"
    assert names.name(1) == "bob" and names.who(1) == "you" and names.who(1, "zh") == "你"
    assert names.listed([0, 1]) == "player (3F2A) and you"
    assert SeatNames(("ann", "bob")).name(1) == "bob"  # no fingerprint where none is needed


def test_the_bots_never_take_the_persons_name() -> None:
    names = SeatNames.for_play("bob", 4)
    assert names.nicknames == ("bob", "carol", "dave", "erin")
    assert len(set(SeatNames.for_play("ann", 9).nicknames)) == 9
    assert SeatNames.for_play("ann", len(BOT_NAMES) + 3).name(len(BOT_NAMES) + 2)  # still named


def test_names_survive_packing_and_unknown_seats_read_as_numbers() -> None:
    names = SeatNames(("ann", "bob"))
    again = SeatNames.unpack(names.pack(), ("F1", "F2"), me=0)
    assert again is not None and again.nicknames == ("ann", "bob") and again.me == 0
    assert SeatNames.unpack(b"\x93not names") is None
    assert SeatNames.numbered(3).who(2) == "seat 2"


def _bot_game(name: str, seats: int, seed: int) -> tuple[list[str], str]:
    engine = game(name)
    sim = Simulator(engine, engine.Config(), seats, deck_seed=seed)
    bots = sensible_bots(name, seats, seed, salt_source=lambda n: bytes(n))
    outcome = sim.play(bots, seed=seed, max_events=60_000)
    return [str(e) for e in sim.events], str(outcome)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_bomb_story_tells_each_play_once_by_name(lang: str) -> None:
    names = SeatNames(("ann", "bob", "carol", "dave", "erin"), me=0)
    for seed in range(3):
        events, outcome = _bot_game("bomb", 5, seed)
        teller = StoryTeller(names)
        lines = [line for event in events for line in teller.tell(event, lang)]
        plays = [i for i, line in enumerate(lines) if re.search(r" (plays|出) ", line)]
        assert plays
        for i in plays:  # the next line never repeats the play's cards
            cards = sorted(re.findall(r"(?:10|[2-9AJQK])[♠♥♦♣]|[RB]J", lines[i]))
            after = lines[i + 1] if i + 1 < len(lines) else ""
            if after.startswith(("cards shown", "亮牌")):
                assert sorted(re.findall(r"(?:10|[2-9AJQK])[♠♥♦♣]|[RB]J", after)) != cards
        assert not any(re.search(r"\bseat \d|座位\d", line) for line in lines), lines[:5]
        assert any("bob" in line for line in lines)
        if lang == "en":
            assert not any("吹牛" in line or "炸掉" in line for line in lines)
        if teller.round > 1:
            assert any(line.startswith("── ") for line in lines)  # rounds are separated
        said = outcome_text(outcome, lang, names)
        assert not _LIST.search(said) and not _RULE_ID.search(said), said


def test_a_bluff_challenge_says_who_was_right_and_who_takes_the_pile() -> None:
    names = SeatNames(("ann", "bob", "carol"), me=0)
    events, _ = _bot_game("bluff", 3, 1)
    teller = StoryTeller(names)
    lines = [line for event in events for line in teller.tell(event)]
    verdicts = [line for line in lines if " honest: " in line or " bluffed: " in line]
    assert verdicts and all(re.search(r"(takes?) \d+ cards?$", v) for v in verdicts)
    assert any(line == "── new pile ──" for line in lines)
    assert any(line.startswith(("you challenge", "bob challenges", "carol challenges"))
               and line.endswith("Bluff!") for line in lines)  # fmt: skip


def test_outcomes_read_as_words_with_names() -> None:
    names = SeatNames(("ann", "bob", "carol"), me=0)
    text = "winners [1], losers [0, 2]: K20: the assassination failed"
    said = outcome_text(text, "en", names)
    assert said == "bob wins; you and carol lose: the assassination failed"
    assert outcome_text(text, "zh", names) == "bob 赢；你、carol 输：刺杀失败"
    assert outcome_text(text, "en", names, past=True).startswith("bob won; you and carol lost")


def test_your_turn_shows_only_when_you_may_act() -> None:
    names = SeatNames(("ann", "bob"), me=0)
    assert turn_text("bluff", "deal", 0, names, False) == "the cards are being dealt"
    assert turn_text("bluff", "starter", 0, names, True) == "waiting for A♠ to be shown"
    assert turn_text("bomb", "place_bomb", 0, names, True).startswith("your turn: place the bomb")
    assert "your turn" not in turn_text("bomb", "turn", 0, names, False)
    assert turn_text("bluff", "play", 1, names, False, "zh") == "轮到 bob：扣牌"


def test_refused_moves_are_said_in_a_players_words() -> None:
    """Real refusals of the Bluff engine, as a person reads them."""
    names = SeatNames(("ann", "bob"), me=0)
    sim = Simulator(BLUFF, BluffConfig(), 2, deck_seed=1)
    bots = sensible_bots("bluff", 2, 1, salt_source=lambda n: bytes(n))
    import random

    rng = random.Random(1)
    while sim.state.phase.value != "play":
        sim.step(bots, rng)
    said = []
    for event in (Accept(0), Accept(1), Challenge(sim.state.turn)):
        with pytest.raises(EngineError) as refused:
            BLUFF.apply(sim.state, event)
        for lang in ("en", "zh"):
            said.append(refusal_text(str(refused.value), "bluff", names, lang))
    for line in said:
        assert not re.search(r"phase|seat \d|座位\d|_", line), line
    assert "you cannot let the claim stand now: placing cards" in said


def test_the_cheat_says_the_moment_it_never_had() -> None:
    said = _no_chance(CHEATS["identity-claim"], "bomb", "en")
    assert "kind A or B" in said and "Mao" not in said and "--rounds" not in said
    assert "win a round" in _no_chance(CHEATS["false-verdict"], "mao", "en")
    assert "它需要" in _no_chance(CHEATS["identity-claim"], "bomb", "zh")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A headless Bluff game played as "ann" under a NODEALER_HOME."""
    home = tmp_path_factory.mktemp("home")
    env = {"NODEALER_HOME": str(home), "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "tui.cli", "play", "bluff", "--players", "3", "--headless",
            "--unproven", "--name", "ann", "--seed", "2"]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return home, done.stdout


def test_play_prints_players_story_and_outcome_by_name(played: tuple[Path, str]) -> None:
    _, out = played
    assert "players: ann (" in out and "bob (" in out and "carol (" in out
    story_lines = [line for line in out.splitlines() if line.startswith("  ")]
    assert story_lines and not any(re.search(r"\bseat \d", line) for line in story_lines)
    outcome = next(line for line in out.splitlines() if line.startswith("outcome: "))
    assert not _LIST.search(outcome) and not _RULE_ID.search(outcome)
    assert re.search(r"\b(you|bob|carol) wins?\b", outcome), outcome


def test_the_saved_game_keeps_its_names(played: tuple[Path, str]) -> None:
    home, _ = played
    (log,) = home.glob("tables/*/log")
    assert names_of_log(log).nicknames == ("ann", "bob", "carol")


def test_games_says_you_won_or_lost_with_names(played, monkeypatch, capsys) -> None:
    home, _ = played
    monkeypatch.setenv("NODEALER_HOME", str(home))
    assert main(["games"]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    assert "bluff with you, bob and carol" in line
    assert re.search(r"carol  you (won|lost) — ", line) and not _LIST.search(line), line
    assert main(["games", "--lang", "zh"]) == 0
    zh = capsys.readouterr().out
    assert "吹牛，玩家：你、bob、carol" in zh and re.search("你(赢|输)了 — ", zh)


def test_verify_names_the_seats(played, capsys) -> None:
    home, _ = played
    (log,) = home.glob("tables/*/log")
    assert main(["verify", str(log)]) == 0
    out = capsys.readouterr().out
    assert "seat 0 (ann):" in out and "seat 2 (carol):" in out
    assert re.search(r"^clean: .*(ann|bob|carol) wins?", out, re.M), out


def test_replay_text_starts_without_the_outcome(played, capsys) -> None:
    home, _ = played
    (log,) = home.glob("tables/*/log")
    assert main(["replay", "--text", str(log)]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = [line for line in lines if re.match(r"^\s+\d+  ", line)]
    head = lines[: len(lines) - len(steps)]
    assert not any(" wins" in line or " win;" in line for line in head), head
    assert "game over: " in steps[-1]
    assert any("bob" in line for line in steps) and not any("seat 1 " in s for s in steps)


def test_a_closed_pipe_ends_replay_quietly() -> None:
    """``nodealer replay --text LOG | head``: the reader goes away; no
    traceback, no "Broken pipe"."""
    log = ROOT / "tests" / "vectors" / "bluff-2-proven.log"
    argv = [sys.executable, "-m", "tui.cli", "replay", "--text", str(log)]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as head does after its lines
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert "Broken pipe" not in err and "Traceback" not in err, err
    assert code == 141


def test_a_chosen_name_is_kept_for_the_next_games(tmp_path) -> None:
    from table.names import default_name, remember_name

    remember_name("ann", tmp_path)
    assert default_name(tmp_path) == "ann"
    with pytest.raises(ValueError, match="nickname"):
        remember_name("   ", tmp_path)
    assert default_name(tmp_path) == "ann"


def test_a_latin_name_stands_apart_in_a_chinese_line() -> None:
    from tui.story import story

    names = SeatNames(("ann", "bob"), me=0)
    said = story("rule 0 (seat 0) on event 5: draw 1 for seat 1", "zh", names)
    assert said == "规则 0（你）：bob 摸 1 张"  # not "bob摸": a name is a word of its own
