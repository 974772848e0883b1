"""The ``nodealer`` command meets a machine's trouble (a full disk, a folder
it cannot write, a file where a folder should be, a bad number) with one
line naming the problem and the fix, never a traceback (issue 10)."""

from __future__ import annotations

import errno
import os
import re

import pytest

import p2p.identity
import p2p.store
from p2p.identity import Identity, IdentityError
from table.verify import verify_log
from tui.cli import main


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


@pytest.mark.parametrize(
    "argv", [["demo", "bluff", "--players", "0"], ["play", "bluff", "--players", "x"]]
)
def test_bad_numbers_are_usage_errors(argv, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "not a" in capsys.readouterr().err


def test_a_home_that_is_a_file(tmp_path, capsys) -> None:
    home = tmp_path / "file"
    home.write_text("not a folder")
    assert main(["play", "bluff", "--players", "2", "--home", str(home), "--unproven"]) == 2
    line = _one_line(capsys)
    assert "nodealer play:" in line and str(home) in line


def test_a_full_disk_mid_game_is_one_line_and_keeps_the_log(tmp_path, capsys, monkeypatch) -> None:
    appended = 0
    real = p2p.store.Store.append

    def append(self, file, record, **options):
        nonlocal appended
        appended += 1
        if appended > 40:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.directory / file))
        return real(self, file, record, **options)

    monkeypatch.setattr(p2p.store.Store, "append", append)
    home = tmp_path / "home"
    argv = ["play", "bluff", "--players", "2", "--home", str(home), "--unproven", "--quiet"]
    assert main(argv) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "the disk is full" in line and "Traceback" not in line
    logs = list(home.glob("tables/*/log"))  # your own seat's log, kept
    assert logs
    for log in logs:  # intact: what was written verifies so far (the game did not finish)
        report = verify_log(log)
        assert report.exit_code == 2 and "did not finish" in (report.problem or ""), report.lines()


def test_a_full_disk_at_start_leaves_no_stray_key(tmp_path, monkeypatch) -> None:
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(p2p.identity.os, "write", full)
    with pytest.raises(IdentityError, match="No space left"):
        Identity.load_or_create(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_home_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    real = os.open

    def read_only(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real(path, flags, *args, **kwargs)

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr(p2p.store.os, "open", read_only)
    argv = ["play", "bluff", "--players", "2", "--home", str(home), "--unproven", "--quiet"]
    assert main(argv) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cannot write" in line and "Read-only" in line and "--home" in line


def test_play_keeps_your_log_and_removes_the_bots(tmp_path, capsys, monkeypatch) -> None:
    """Issue 16: seat 0 is yours (your identity, your log kept with your
    games); the bots' stores go in a temporary folder removed at the end."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    home = tmp_path / "home"
    copy = tmp_path / "copy.log"
    argv = ["play", "bluff", "--players", "3", "--home", str(home), "--unproven", "--headless"]
    assert main([*argv, "--log", str(copy)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    # progress on stderr (plain lines when not a terminal): never silent
    assert "deal 0: seat 1 shuffles (1/6 passes, unproven)" in captured.err
    assert "deal 0 dealt (6/6 passes, unproven)" in captured.err
    assert "auditing every deal" in captured.err
    (log,) = home.glob("tables/*/log")
    assert copy.read_bytes() == log.read_bytes() and f"your log: {log}" in out
    assert (home / "identity.key").exists() and list(scratch.iterdir()) == []
    assert "verify: clean" in out
    assert "dealt [" not in out and " on event " not in out  # the story, not the protocol
    assert (home / "tables").stat().st_mode & 0o077 == 0


def test_cards_on_a_terminal_that_is_not_utf8() -> None:
    """Issue 16: UnicodeEncodeError before; now ASCII card names."""
    import io

    from tui.cli import _PlainCards

    raw = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    out = _PlainCards(raw)
    out.write("seat 0 plays Q♠ 10♥ 7♦ A♣, claims 2 × 7 – ok\n")
    raw.flush()
    assert raw.buffer.getvalue() == b"seat 0 plays QS 10H 7D AC, claims 2 x 7 ? ok\n"


def test_saved_games_are_listed_and_verified_by_table_id(tmp_path, capsys, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("NODEALER_HOME", str(home))
    argv = ["play", "bluff", "--players", "2", "--unproven", "--headless", "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["games"]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    table_id = line.split()[0]
    assert "bluff with you and bob" in line and re.search(r"you (won|lost) — bob", line), line
    assert main(["verify", table_id[:6]]) == 0
    assert "clean:" in capsys.readouterr().out
    assert main(["verify", "ffffffffff"]) == 2
    assert "no saved game" in capsys.readouterr().err


def test_a_private_table_refuses_spectators_in_one_line(tmp_path, capsys) -> None:
    # the watch port takes no table code (protocol.md §8): a private table's
    # log must not reach whoever finds the port
    argv = ["host", "bluff", "--private", "--watch-port", "0", "--headless",
            "--home", str(tmp_path), "--no-advertise"]  # fmt: skip
    assert main(argv) == 2
    line = _one_line(capsys)
    assert "private table takes no spectators" in line and "--watch-port" in line
