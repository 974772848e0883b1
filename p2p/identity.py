"""Who a peer is: one Ed25519 key per user, and its human fingerprint.

Theory of operation
-------------------
Every user has exactly one signing key. It is created the first time it is
needed, as 32 random bytes from the operating system (:mod:`secrets`), and
stored raw in ``identity.key`` with mode 0600 in the
config directory: ``$NODEALER_HOME`` when that variable is set (tests and
several local peers use it to keep separate identities), otherwise
``$XDG_CONFIG_HOME/nodealer`` (default ``~/.config/nodealer``). Saved logs and
the peer's own secrets live in the data directory: ``$NODEALER_HOME`` again,
otherwise ``$XDG_DATA_HOME/nodealer`` (default ``~/.local/share/nodealer``).
The key's privacy is what each OS can say (:func:`p2p.disk.private_problem`):
on POSIX a key that others may read is refused; on Windows, where modes say
nothing, and on a file system with no permissions (a FAT stick) it is
accepted with the reason logged. Its creation is durable: the key fsynced
(F_FULLFSYNC on macOS), then named with a hard link (written in place with
O_EXCL where hard links fail), then its folder fsynced.

A peer is named everywhere by its *fingerprint*: SHA-256 over a domain tag and
the 32-byte public key, the first 10 bytes (80 bits) in RFC 4648 base32,
grouped by four for reading aloud, e.g. ``K3QF-7ZPA-M2XD-4RTY``
(protocol.md §2.1).

Signatures are made and checked by libsodium (through PyNaCl, already the
card group's library): its Ed25519 check costs about half of OpenSSL's
(65 against 117 µs on this machine, ``bench/latency.py`` pays it twice per
entry at every peer). Ed25519 signing is deterministic, so the signatures
are the same bytes whichever library makes them. What a check accepts must
be the same at every peer (protocol.md §2.1), and Ed25519 libraries differ
at the edges: a public key must be a valid point of the prime-order
subgroup (:class:`PeerKey` refuses any other at once), and released
libsodium compares ``R`` byte for byte, so an ``R`` with a small-order
component is refused. libsodium's development branch accepts such an ``R``
since 2022; this module checks, once when it is imported, that the
libsodium PyNaCl brought refuses it (:func:`check_library`), and refuses to
run on one that does not rather than disagree with the other peers.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import nacl
import nacl.bindings as _sodium
import nacl.exceptions

from p2p import disk

log = logging.getLogger("nodealer.p2p.identity")

KEY_FILE = "identity.key"
FINGERPRINT_TAG = b"nodealer/fingerprint/v1\x00"
PUBLIC_KEY_LEN = 32
SIGNATURE_LEN = 64


WRITABLE = "free some space, or point NODEALER_HOME (or --home) at a folder you can write"


_SHORT_READ_WAITS = (0.02, 0.05, 0.1, 0.2)
"""A key file shorter than a key is read again after these pauses (another
process may be writing it where hard links fail, :func:`_publish`)."""


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (mode 0600, never over another file) holding ``data``,
    fsynced; a short write is a full disk (OSError)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | disk.O_BINARY, 0o600)
    try:
        if os.write(fd, data) != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        disk.sync_file(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def _publish(tmp: Path, path: Path, data: bytes) -> None:
    """Give the key written at ``tmp`` its name ``path``, unless a key is
    there already (FileExistsError: another process made one first; theirs
    wins, so one home never has two keys). A hard link does that at once
    and whole. Where the file system has none (FAT and exFAT sticks, some
    network shares: EPERM, ENOTSUP, ...) the key is written afresh at
    ``path`` with O_EXCL: still never over another key, but a reader may
    briefly see it short (:meth:`Identity.load_or_create` reads it again)."""
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        raise
    except (OSError, AttributeError, NotImplementedError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        log.info("no hard link for %s (%s): writing it in place", path, reason)
    _write_new(path, data)


class IdentityError(Exception):
    """The identity file is missing, unreadable, or has the wrong size or mode."""


def config_dir() -> Path:
    """Where the identity key lives (``$NODEALER_HOME`` wins over XDG)."""
    home = os.environ.get("NODEALER_HOME")
    if home:
        return Path(home)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "nodealer"


def data_dir() -> Path:
    """Where saved logs and this peer's secrets live (``$NODEALER_HOME`` wins)."""
    home = os.environ.get("NODEALER_HOME")
    if home:
        return Path(home)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "nodealer"


def fingerprint(public_key: bytes) -> str:
    """The short human name of a public key: 16 base32 characters in 4 groups."""
    digest = hashlib.sha256(FINGERPRINT_TAG + bytes(public_key)).digest()[:10]
    text = base64.b32encode(digest).decode("ascii")
    return "-".join(text[i : i + 4] for i in range(0, 16, 4))


@dataclass(frozen=True)
class PeerKey:
    """A peer's Ed25519 public key: an immutable value named by its fingerprint."""

    raw: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.raw, bytes) or len(self.raw) != PUBLIC_KEY_LEN:
            raise ValueError("an Ed25519 public key is exactly 32 bytes")
        if not _sodium.crypto_core_ed25519_is_valid_point(self.raw):
            # a real key is a·B: canonical, in the prime-order subgroup, not
            # small; any other has signatures libraries disagree about
            raise ValueError("not an Ed25519 public key: not a point of the prime-order subgroup")

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.raw)

    def verify(self, signature: bytes, message: bytes) -> bool:
        """True when ``signature`` is this key's signature over ``message``
        (libsodium's check: cofactorless, and a small-order or non-canonical
        key or ``R`` is refused, protocol.md §2.1)."""
        if not isinstance(message, bytes):
            raise TypeError(f"a signed message is bytes, not {type(message).__name__}")
        if not isinstance(signature, bytes) or len(signature) != SIGNATURE_LEN:
            return False
        try:
            _sodium.crypto_sign_open(signature + message, self.raw)
        except nacl.exceptions.BadSignatureError:
            return False
        return True

    def __str__(self) -> str:
        return self.fingerprint

    def __repr__(self) -> str:
        return f"PeerKey({self.fingerprint})"


class LibraryError(RuntimeError):
    """This libsodium checks Ed25519 signatures otherwise than protocol.md §2.1."""


# Known answers (protocol.md §2.1): RFC 8032 §7.1 test 2 must verify; the
# other two are signatures by the key of seed 00 01 … 1f over MESSAGE whose R
# is the right point plus one of order 4, and plus one of order 2: refused by
# released libsodium (R compared byte for byte), accepted by its development
# branch since 2022 (``R − R'`` of small order is let through).
_RFC_KEY = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"
_RFC_SIG = (
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
)
_TORSION_KEY = "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"
_TORSION_MESSAGE = b"nodealer/self-check"
_TORSION_SIGS = (
    "af6e8e63f857d90bf1afb0d2cd8753a15efed2964adc823c24f85082207e073e"
    "67e53d67ef9ba334fd61a5383c76d67a5c81256210b9f5501e6185103933470d",
    "feaf9d07b868cc52786305312c376563c622b0386a10d105e3c1501b28d65f7e"
    "0ea9d3be354bedd637fcf00ec381b5f34caf8a46e54fe71f43c301e3df575409",
)


def check_library() -> None:
    """Raise :class:`LibraryError` unless the libsodium under PyNaCl checks
    signatures as protocol.md §2.1 says (run once at import)."""
    rfc = PeerKey(bytes.fromhex(_RFC_KEY)).verify(bytes.fromhex(_RFC_SIG), b"\x72")
    key = PeerKey(bytes.fromhex(_TORSION_KEY))
    torsion = [key.verify(bytes.fromhex(sig), _TORSION_MESSAGE) for sig in _TORSION_SIGS]
    if not rfc or any(torsion):
        raise LibraryError(
            f"the libsodium that PyNaCl {nacl.__version__} uses here checks Ed25519 "
            "signatures otherwise than protocol.md §2.1 (it accepts an R with a "
            "small-order component, or refuses RFC 8032's own test): peers would "
            "disagree about which signatures are valid. Install a PyNaCl built on a "
            "released libsodium (1.0.18 to 1.0.21 pass this check; PyNaCl 1.5 to 1.6 "
            "bundle one)."
        )


check_library()


class Identity:
    """This user's signing key. Never printed, never sent; only signatures leave."""

    def __init__(self, seed: bytes) -> None:
        """The key whose 32-byte private seed is ``seed`` (RFC 8032)."""
        if not isinstance(seed, bytes) or len(seed) != _sodium.crypto_sign_SEEDBYTES:
            raise ValueError("an Ed25519 private seed is exactly 32 bytes")
        raw, self._secret = _sodium.crypto_sign_seed_keypair(seed)
        self.public = PeerKey(raw)

    @classmethod
    def generate(cls) -> Identity:
        """A fresh key (OS randomness), kept in memory only."""
        return cls(secrets.token_bytes(32))

    @classmethod
    def load_or_create(cls, directory: Path | None = None) -> Identity:
        """Load ``identity.key`` from ``directory`` (default :func:`config_dir`),
        creating it with mode 0600 on first use."""
        directory = config_dir() if directory is None else Path(directory)
        path = directory / KEY_FILE
        for wait in (0.0, *_SHORT_READ_WAITS):
            time.sleep(wait)
            try:
                with path.open("rb") as f:
                    seed = f.read(33)  # a key is 32 bytes: never read a huge file whole
            except FileNotFoundError:
                return cls._create(path)
            except OSError as exc:
                raise IdentityError(f"cannot read identity key {path}: {exc}") from exc
            if len(seed) >= 32:
                break  # a shorter one may be another process's, being written (_publish)
        if len(seed) != 32:
            size = f"{len(seed)} bytes" if len(seed) < 32 else "longer"
            raise IdentityError(f"identity key {path} is {size}, expected 32 bytes")
        problem = disk.private_problem(path)  # what each OS can tell (p2p.disk)
        if problem is not None:
            raise IdentityError(f"identity key {path} is {problem}")
        return cls(seed)

    @classmethod
    def _create(cls, path: Path) -> Identity:
        try:
            disk.make_dirs(path.parent, 0o700)
        except OSError as exc:
            raise IdentityError(
                f"cannot create {path.parent}: {exc.strerror or exc} ({WRITABLE})"
            ) from exc
        seed = secrets.token_bytes(32)
        # a name of our own: two processes creating one home at once must not
        # write into the same file (one would then run with a key not on disk)
        tmp = path.with_name(f"{path.name}.{secrets.token_hex(8)}.new")
        try:
            _write_new(tmp, seed)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise IdentityError(
                f"cannot write identity key {path}: {exc.strerror} ({WRITABLE})"
            ) from exc
        try:
            _publish(tmp, path, seed)
            disk.sync_dir(path.parent)  # the key's name, durable like its bytes
        except FileExistsError:
            return cls.load_or_create(path.parent)
        except OSError as exc:  # a full disk: no half-written key, no stray file
            raise IdentityError(
                f"cannot write identity key {path}: {exc.strerror} ({WRITABLE})"
            ) from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return cls(seed)

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``message``."""
        return _sodium.crypto_sign(message, self._secret)[:SIGNATURE_LEN]

    @property
    def fingerprint(self) -> str:
        return self.public.fingerprint

    def __repr__(self) -> str:
        return f"Identity({self.fingerprint})"
