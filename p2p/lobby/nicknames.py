"""Nicknames that never block a seat: a name someone at the table already
has (alike: NFKC, case-folded) is seated with a number ("player",
"player 2", "player 3", ...), and a guest who gives none is called by the
operating system's user name, made presentable. Seats stay told apart by
their fingerprints, as everywhere (protocol.md §4, the lobby)."""

from __future__ import annotations

import getpass
import re
from collections.abc import Collection

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
        suffix = f" {n}"
        candidate = nick[: MAX_NICK - len(suffix)].rstrip() + suffix
        if _nick_key(candidate) not in keys and nickname_problem(candidate) is None:
            return candidate
    raise AssertionError("unreachable: fewer names are taken than numbers tried")


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
