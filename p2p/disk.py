"""Files that survive a power cut and stay private, on Linux, macOS and Windows.

What the store (:mod:`p2p.store`) and the identity key (:mod:`p2p.identity`)
need from the operating system, one function per need, each doing what the
platform can:

``lock`` / ``unlock``
    One process per table store. POSIX: ``flock(2)`` on the store's lock
    file; Windows: ``msvcrt.locking`` of the lock file's first byte. Either
    lock belongs to the open file and the OS drops it when the process dies,
    so a crash never leaves a table locked. This is the primitive that the
    ``filelock`` and ``portalocker`` libraries wrap on these platforms too;
    we need only "try once, never wait" on a descriptor we already hold, so
    ten lines of the standard library beat a dependency (filelock's path-
    based, reentrant, timeout API and portalocker's pywin32 path solve
    problems we do not have). ``fcntl`` and ``msvcrt`` are imported only
    where they exist, when first used.
``sync_file``
    ``fsync``; on macOS ``fcntl(F_FULLFSYNC)``, because fsync there stops at
    the drive's own cache (falling back to fsync on a file system that
    refuses it, such as some network shares).
``sync_dir``
    A file just created or renamed is only in its folder once the folder is
    synced: POSIX fsyncs the folder after every create and rename that a
    promise of durability rests on (the store's three files, the identity
    key, the folders made for them). Windows cannot open a folder with
    ``os.open``; NTFS journals its folders itself, so there it does nothing.
``make_dirs``
    ``mkdir -p`` with mode 0700 for every folder it makes, syncing the parent
    of each.
``make_private``
    chmod 0600 of an open file: ``os.fchmod`` where it exists (POSIX; Windows
    only from Python 3.13), ``os.chmod`` of the path otherwise. On Windows
    nothing: a file mode there is only a read-only flag, and what keeps a
    file private is the ACL it inherits from its folder.
``private_problem``
    Why a secret file may be readable by others, or None; see its docstring
    for what each platform can and cannot tell.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import stat
import sys
from pathlib import Path

log = logging.getLogger("nodealer.p2p.disk")

WINDOWS = os.name == "nt"
MACOS = sys.platform == "darwin"
O_BINARY: int = getattr(os, "O_BINARY", 0)
"""Windows opens files in text mode (``\\n`` written as ``\\r\\n``) without it."""

_UNSYNCABLE_DIR = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES, errno.EPERM}


def lock(fd: int) -> None:
    """Take the exclusive lock of the open file ``fd`` without waiting;
    OSError if another process holds it."""
    if WINDOWS:
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def unlock(fd: int) -> None:
    """Let go of :func:`lock` (closing ``fd`` does it too; Windows may take a
    moment after a close, so an orderly close unlocks first)."""
    with contextlib.suppress(OSError):
        if WINDOWS:
            import msvcrt

            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)


def sync_file(fd: int) -> None:
    """Make what was written to ``fd`` durable (F_FULLFSYNC on macOS)."""
    if MACOS:
        import fcntl

        full = getattr(fcntl, "F_FULLFSYNC", None)
        if full is not None:
            try:
                fcntl.fcntl(fd, full)
                return
            except OSError:
                pass  # a file system without it (some network shares): plain fsync
    os.fsync(fd)


def sync_dir(path: Path) -> None:
    """Make the names in the folder ``path`` durable (files created or renamed
    in it). Nothing on Windows (see the module's docstring); a file system
    that cannot sync a folder (some FUSE and network ones) is let be."""
    if WINDOWS:
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        sync_file(fd)
    except OSError as exc:
        if exc.errno not in _UNSYNCABLE_DIR:
            raise
    finally:
        os.close(fd)


def make_dirs(path: Path, mode: int = 0o700) -> None:
    """Create ``path`` and its missing parents, each with ``mode`` (private:
    a data folder made here holds saved games), and sync the parent of each
    folder made, so that the folders are still there after a power cut."""
    path = Path(path)
    missing: list[Path] = []
    here = path
    while not here.exists() and here.parent != here:
        missing.append(here)
        here = here.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=mode)
        except FileExistsError:
            if not made.is_dir():
                raise
            continue  # another process made it
        sync_dir(made.parent)
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=mode)  # raises what is in the way


def make_private(fd: int, path: Path, mode: int = 0o600) -> None:
    """Give the open file ``fd`` (at ``path``) ``mode`` where the OS has modes."""
    if WINDOWS:
        return  # its privacy is its folder's ACL (see private_problem)
    if stat.S_IMODE(os.fstat(fd).st_mode) == mode:
        return
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:
        os.chmod(path, mode)


def keeps_modes(directory: Path) -> bool:
    """Whether files in ``directory`` keep a private mode: False on a file
    system that has no permissions (FAT, exFAT: every file shows the mount's
    mode, and chmod changes nothing)."""
    probe = Path(directory) / f".mode-probe.{secrets.token_hex(6)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY, 0o600)
    except OSError:
        return True  # cannot tell: assume it does, so a loose key is refused
    try:
        with contextlib.suppress(OSError):
            os.chmod(probe, 0o600)
        return stat.S_IMODE(os.fstat(fd).st_mode) & 0o077 == 0
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(probe)


def private_problem(path: Path) -> str | None:
    """Why the secret file ``path`` may be readable by other users, or None.

    - POSIX: its mode; group or other bits set is a problem ("chmod 600 it"),
      unless its file system keeps no modes at all (a FAT or exFAT stick):
      then nothing better is possible and the file is accepted, with the
      reason logged (whoever can read that stick can read the file).
    - Windows: every writable file reads 0o666 and chmod cannot change it,
      so the mode says nothing. The file is accepted, with the reason logged:
      it is as private as the ACL of its folder, which under the user's
      profile (the default) only the user, SYSTEM and administrators can
      read. This function does not read ACLs.
    """
    mode = stat.S_IMODE(Path(path).stat().st_mode)
    if WINDOWS:
        log.info("%s: Windows file modes say nothing (it reads %o); the file is as "
                 "private as its folder's ACL", path, mode)  # fmt: skip
        return None
    if not mode & 0o077:
        return None
    if not keeps_modes(Path(path).parent):
        log.warning("%s reads mode %o on a file system that keeps no permissions "
                    "(FAT/exFAT?): anyone who can read this disk can read it",
                    path, mode)  # fmt: skip
        return None
    return f"readable by others (mode {mode:o}); chmod 600 it"
