"""Windows and macOS, and a USB stick, simulated on Linux: the store and the
identity key do what each platform can (p2p/disk.py), and nothing imports
what a platform lacks.

Simulated: no ``fcntl`` module (Windows), ``msvcrt.locking`` (a stand-in
that keeps the locks in a dict), file modes that read 0o666 or that a file
system cannot keep, ``os.link`` failing (FAT, exFAT), no ``os.fchmod``
(Windows before Python 3.13), macOS's ``F_FULLFSYNC``.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import subprocess
import sys
import types
from pathlib import Path

import pytest

from p2p import disk
from p2p.envelope import TableSpec
from p2p.identity import Identity, IdentityError
from p2p.store import Store, StoreError

ROOT = Path(__file__).resolve().parent.parent
VECTOR = ROOT / "tests" / "vectors" / "bluff-2-proven.log"

NO_FCNTL = """
import importlib, pkgutil, sys
sys.modules["fcntl"] = None  # as on Windows: "import fcntl" fails
failed = []
for package in ("p2p", "table", "tui", "engines", "mental_poker", "rules"):
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        try:
            importlib.import_module(info.name)
        except Exception as exc:
            failed.append(f"{info.name}: {exc!r}")
print("\\n".join(failed) or "all imported")
from tui.cli import main
sys.exit(main(["verify", sys.argv[1]]))
"""


def test_every_module_imports_and_verify_runs_without_fcntl(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NODEALER_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", NO_FCNTL, str(VECTOR)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.stdout.splitlines()[0] == "all imported", done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("clean: "), done.stdout  # the verdict


class FakeMsvcrt(types.ModuleType):
    """msvcrt.locking's contract (LK_NBLCK fails while another descriptor of
    the file holds its byte), kept in a dict instead of the kernel."""

    LK_UNLCK, LK_NBLCK = 0, 2

    def __init__(self) -> None:
        super().__init__("msvcrt")
        self.held: dict[tuple[int, int], int] = {}
        self.calls: list[tuple[int, int, int]] = []

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0 and nbytes == 1  # the first byte
        self.calls.append((fd, mode, nbytes))
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if mode == self.LK_NBLCK:
            if key in self.held:
                raise PermissionError(errno.EACCES, "Permission denied")
            self.held[key] = fd
        elif mode == self.LK_UNLCK:
            if self.held.get(key) != fd:
                raise PermissionError(errno.EACCES, "Permission denied")
            del self.held[key]


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> FakeMsvcrt:
    """p2p.disk on "Windows": no fcntl, no fchmod, a stand-in msvcrt, and
    any chmod is a failure (modes mean nothing there)."""
    fake = FakeMsvcrt()
    monkeypatch.setattr(disk, "WINDOWS", True)
    monkeypatch.setitem(sys.modules, "fcntl", None)
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.delattr(os, "fchmod", raising=False)

    def no_chmod(*args: object, **kwargs: object) -> None:
        raise AssertionError("chmod on Windows")

    monkeypatch.setattr(os, "chmod", no_chmod)
    return fake


def _table() -> TableSpec:
    ids = [Identity.generate() for _ in range(2)]
    return TableSpec(b"portable", tuple(i.public for i in ids))


def test_a_store_on_windows_locks_with_msvcrt_and_never_chmods(
    tmp_path: Path, windows: FakeMsvcrt
) -> None:
    table = _table()
    store = Store.open(table, tmp_path)
    store.put_secret("k", b"v")
    try:
        with pytest.raises(StoreError, match="in use by another"):
            Store.open(table, tmp_path)
    finally:
        store.close()
    assert windows.held == {}  # unlocked on close
    again = Store.open(table, tmp_path)
    assert again.get_secret("k") == b"v"
    again.close()
    modes = [mode for _, mode, _ in windows.calls]
    assert modes == [2, 2, 0, 2, 0]  # lock, refused, unlock, lock, unlock


def test_a_666_key_is_accepted_on_windows_with_the_reason_logged(
    tmp_path: Path, windows: FakeMsvcrt, caplog: pytest.LogCaptureFixture
) -> None:
    me = Identity.load_or_create(tmp_path)
    key = tmp_path / "identity.key"
    _real_chmod(key, 0o666)  # what Windows reports for every writable file
    with caplog.at_level(logging.INFO, logger="nodealer.p2p.disk"):
        assert Identity.load_or_create(tmp_path).public == me.public
    assert "666" in caplog.text and "ACL" in caplog.text and str(key) in caplog.text


_real_chmod = os.chmod  # past the Windows fixture's trap


def test_a_key_others_may_read_is_refused_where_modes_are_kept(tmp_path: Path) -> None:
    Identity.load_or_create(tmp_path)
    os.chmod(tmp_path / "identity.key", 0o644)
    assert disk.keeps_modes(tmp_path)
    with pytest.raises(IdentityError, match=r"readable by others \(mode 644\); chmod 600 it"):
        Identity.load_or_create(tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".mode-probe")]


def test_a_key_on_a_file_system_without_modes_is_accepted_with_the_reason_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    me = Identity.load_or_create(tmp_path)
    os.chmod(tmp_path / "identity.key", 0o755)  # what a vfat mount shows for every file
    real_fstat = os.fstat

    def fat_fstat(fd: int) -> os.stat_result:  # a FAT stick: every file reads 0o755
        st = real_fstat(fd)
        fields = list(st)
        fields[0] = stat.S_IFMT(st.st_mode) | 0o755
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", fat_fstat)
    with caplog.at_level(logging.WARNING, logger="nodealer.p2p.disk"):
        assert Identity.load_or_create(tmp_path).public == me.public
    assert "keeps no permissions" in caplog.text and "755" in caplog.text


def test_a_key_is_created_where_hard_links_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(src: object, dst: object) -> None:  # vfat: "Operation not permitted"
        raise PermissionError(errno.EPERM, "Operation not permitted")

    synced: list[Path] = []
    real_sync_dir = disk.sync_dir
    monkeypatch.setattr(os, "link", no_link)
    monkeypatch.setattr(disk, "sync_dir", lambda p: (synced.append(Path(p)), real_sync_dir(p)))
    home = tmp_path / "stick" / "nodealer"
    me = Identity.load_or_create(home)
    key = home / "identity.key"
    assert key.read_bytes() and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert [p.name for p in home.iterdir()] == ["identity.key"]  # no stray temporary file
    assert Identity.load_or_create(home).public == me.public
    # the folders made and the key's name are durable: each parent was synced
    assert synced == [tmp_path, tmp_path / "stick", home]


def test_without_hard_links_an_existing_key_still_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = Identity.load_or_create(tmp_path)
    monkeypatch.setattr(os, "link", lambda src, dst: (_ for _ in ()).throw(OSError(errno.ENOTSUP,
                        "Operation not supported")))  # fmt: skip
    # another process made the key between our look and our write
    assert Identity._create(tmp_path / "identity.key").public == theirs.public
    assert [p.name for p in tmp_path.iterdir()] == ["identity.key"]


def test_a_key_still_being_written_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import p2p.identity

    seed = os.urandom(32)
    key = tmp_path / "identity.key"
    key.write_bytes(seed[:5])  # another process's O_EXCL write, half done
    os.chmod(key, 0o600)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:  # it finishes during our first real pause
            key.write_bytes(seed)

    monkeypatch.setattr(p2p.identity.time, "sleep", pause)
    assert Identity.load_or_create(tmp_path).public == Identity(seed).public
    key.write_bytes(seed[:5])  # a key that stays short is an error, after the waits
    with pytest.raises(IdentityError, match="is 5 bytes, expected 32"):
        Identity.load_or_create(tmp_path)


def test_no_fchmod_makes_a_loose_store_file_private_with_chmod(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table()
    store = Store.open(table, tmp_path)
    store.close()
    secrets = store.directory / "secrets"
    os.chmod(secrets, 0o644)
    monkeypatch.delattr(os, "fchmod")
    Store.open(table, tmp_path).close()
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600


def test_a_new_store_syncs_the_folders_and_files_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[Path] = []
    real_sync_dir = disk.sync_dir
    monkeypatch.setattr(disk, "sync_dir", lambda p: (synced.append(Path(p)), real_sync_dir(p)))
    table = _table()
    store = Store.open(table, tmp_path / "home")
    directory = store.directory
    store.close()
    # home, tables/, tables/<id>/ made: each parent synced; then the three files' folder
    assert synced == [tmp_path, tmp_path / "home", directory.parent, directory]
    for made in (tmp_path / "home", directory.parent, directory):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made  # every folder made, private
    synced.clear()
    Store.open(table, tmp_path / "home").close()
    assert synced == []  # nothing made, nothing to sync
    (directory / "own").unlink()
    Store.open(table, tmp_path / "home").close()
    assert synced == [directory]


def test_macos_syncs_to_the_platter_with_full_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    full, calls, fsyncs = 51, [], []
    monkeypatch.setattr(disk, "MACOS", True)
    monkeypatch.setattr(fcntl, "F_FULLFSYNC", full, raising=False)
    monkeypatch.setattr(fcntl, "fcntl", lambda fd, op, *a: calls.append((fd, op)) or 0)
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd)))
    store = Store.open(_table(), tmp_path)
    calls.clear()
    store.put_secret("k", b"v")
    assert calls == [(store._fds["secrets"], full)] and fsyncs == []

    def refuse(fd: int, op: int, *a: object) -> int:  # a share without F_FULLFSYNC
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(fcntl, "fcntl", refuse)
    store.put_secret("k", b"w")
    assert fsyncs == [store._fds["secrets"]]
    store.close()


def test_a_folder_that_cannot_be_synced_is_let_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def einval(fd: int) -> None:  # some FUSE and network file systems
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(disk, "sync_file", einval)
    disk.sync_dir(tmp_path)

    def eio(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(disk, "sync_file", eio)
    with pytest.raises(OSError, match="Input/output"):
        disk.sync_dir(tmp_path)
