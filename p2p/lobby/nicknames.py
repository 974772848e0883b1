"""Nicknames that never block a seat: a name someone at the table already
has (alike: NFKC, case-folded) is seated with a number ("player",
"player 2", "player 3", ...), and a guest who gives none is called by the
operating system's user name, made presentable. Seats stay told apart by
their fingerprints, as everywhere (protocol.md §4, the lobby)."""

from __future__ import annotations

import getpass
import re
from collections.abc import Collection

from p2p.wire import MAX_SEATS

from .messages import MAX_NICK, _nick_key, nickname_problem

FALLBACK = "player"


def free_nickname(nick: str, taken: Collection[str]) -> str:
    """``nick`` if nobody in ``taken`` has it (alike), else ``nick`` with the
    first free number from 2 (shortened to fit 32 characters). ``nick`` must
    be a valid nickname (:func:`nickname_problem`)."""
    keys = {_nick_key(name) for name in taken}
    if _nick_key(nick) not in keys:
        return nick
    for n in range(2, len(keys) + 3):  # some number up to here is free
        candidate = numbered(nick, n)
        if _nick_key(candidate) not in keys and nickname_problem(candidate) is None:
            return candidate
    raise AssertionError("unreachable: fewer names are taken than numbers tried")


def numbered(nick: str, n: int) -> str:
    """``nick`` followed by a space and ``n``, its start shortened (and
    stripped of trailing spaces) to keep 32 characters."""
    suffix = f" {n}"
    return nick[: MAX_NICK - len(suffix)].rstrip() + suffix


def given_for(asked: str, given: str) -> bool:
    """Whether a host may seat someone who asked for ``asked`` as ``given``:
    the same name, or it numbered as :func:`free_nickname` does (2 up to one
    more than a table's seats: at most that many names are ever taken). The
    joiner's check that its host did not rename it (protocol.md §4)."""
    return given == asked or any(given == numbered(asked, n) for n in range(2, MAX_SEATS + 2))


_SEPARATORS = re.compile(r"[\s._\-+]+")


def presentable(user: str) -> str:
    """A login name as a person's name: ``alice`` → ``Alice``, ``john.doe``
    → ``John Doe``, ``DOMAIN\\bob`` → ``Bob``; a name that cannot be a
    nickname becomes ``player``."""
    user = user.rsplit("\\", 1)[-1].split("@", 1)[0]  # Windows DOMAIN\\user, user@realm
    words = [w for w in _SEPARATORS.split(user) if w]
    name = " ".join(w[:1].upper() + w[1:] if w.islower() else w for w in words)
    name = name[:MAX_NICK].rstrip()
    return name if name and nickname_problem(name) is None else FALLBACK


def default_nickname() -> str:
    """This computer's user name, presentable (``player`` when there is none)."""
    try:
        user = getpass.getuser()  # LOGNAME, USER, LNAME, USERNAME, then the password file
    except Exception:  # no such variable and no password entry (a container, Windows service)
        return FALLBACK
    return presentable(user)
