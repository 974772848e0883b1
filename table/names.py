"""Who sits where, by name: the one lookup every screen and printed line
uses instead of seat numbers.

The names come from the signed lobby (each seat's nickname, kept in the
seat's store as ``table-lobby`` by :mod:`table.seating`); under ``nodealer
play`` the person's seat 0 has the person's name and the bots get names too
(kept as ``table-names``), so a saved game still reads with names in
``nodealer games``, ``replay`` and ``verify``. A log with neither (a demo,
a bot's store) reads "seat 1", "seat 2".

Two nicknames that look alike (NFKC, case-folded: what the lobby already
refuses between guests, but a resumed or foreign log may hold) are told
apart by the first group of the seat's fingerprint: ``player (3F2A)``.

API (stable; screens call it):

- ``SeatNames(nicknames, fingerprints=(), me=None)``
- ``names.name(seat)``: the seat's name, told apart if needed ("bob").
- ``names.who(seat, lang)``: "you" / "你" for ``me``, else the name.
- ``names.whose(seat, lang)``: "your" / "bob's" (zh: "你的" / "bob 的").
- ``names.listed(seats, lang)``: "bob and carol" / "bob、carol".
- ``names.seen_by(seat)``: the same names, seen from ``seat``.
- ``SeatNames.numbered(n, me)``: "seat 0" … (no names known).
- ``SeatNames.for_play(person, seats, fingerprints)``: the person and bots.
- ``names_of_log(path, me=None)``: the names a saved log's store holds.
- ``default_name()``: this user's name: the one last chosen
  (``remember_name``), else the login name, else "player".
- ``remember_name(name)``: keep the name a person chose (``play --name``,
  the home screen, the host form) for the next games.

>>> names = SeatNames(("ann", "bob", "Bob"), ("AAAA-1111", "BBBB-2222", "CCCC-3333"), me=0)
>>> names.name(1), names.name(2), names.who(0), names.who(1, "zh")
('bob (BBBB)', 'Bob (CCCC)', 'you', 'bob (BBBB)')
>>> names.listed([0, 2])
'you and Bob (CCCC)'
>>> SeatNames.numbered(3).who(2, "zh")
'座位2'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import msgpack

NAMES_SECRET = "table-names"
"""The store secret holding a ``play`` table's names (``SeatNames.pack``)."""
LOBBY_SECRET = "table-lobby"  # table.seating's; its "nicknames" are the lobby's

BOT_NAMES = ("bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
             "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter")  # fmt: skip
"""Names of the bots under ``nodealer play`` (seat 1 is bob, seat 2 carol, …)."""

_YOU = {"en": "you", "zh": "你"}
_YOUR = {"en": "your", "zh": "你的"}


def _key(nick: str) -> str:
    return unicodedata.normalize("NFKC", nick).casefold()


@dataclass(frozen=True)
class SeatNames:
    """Every seat's name, in seat order; ``me``: the seat that reads them."""

    nicknames: tuple[str, ...]
    fingerprints: tuple[str, ...] = ()
    me: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "nicknames", tuple(self.nicknames))
        object.__setattr__(self, "fingerprints", tuple(self.fingerprints))

    def __len__(self) -> int:
        return len(self.nicknames)

    def name(self, seat: int, lang: str = "en") -> str:
        """The seat's name (third person, also for ``me``), told apart from
        a look-alike by its fingerprint's first group."""
        if not 0 <= seat < len(self.nicknames) or not self.nicknames[seat]:
            return f"座位{seat}" if lang == "zh" else f"seat {seat}"
        nick = self.nicknames[seat]
        alike = [s for s, n in enumerate(self.nicknames) if n and _key(n) == _key(nick)]
        if len(alike) > 1:
            tag = self.fingerprints[seat].split("-")[0] if seat < len(self.fingerprints) else ""
            return f"{nick} ({tag or seat})"
        return nick

    def known(self, seat: int) -> bool:
        """Whether the seat has a name (else it reads "seat N")."""
        return 0 <= seat < len(self.nicknames) and bool(self.nicknames[seat])

    def who(self, seat: int, lang: str = "en") -> str:
        """The name, or "you" for the reading seat."""
        return _YOU.get(lang, "you") if seat == self.me else self.name(seat, lang)

    def whose(self, seat: int, lang: str = "en") -> str:
        """The possessive: "bob's", or "your" for the reading seat (zh: "bob 的")."""
        if seat == self.me:
            return _YOUR.get(lang, "your")
        return f"{self.name(seat, lang)} 的" if lang == "zh" else f"{self.name(seat, lang)}'s"

    def listed(self, seats: Iterable[int], lang: str = "en") -> str:
        """Several seats in words: "you, bob and carol" (zh: "你、bob、carol")."""
        said = [self.who(s, lang) for s in seats]
        if lang == "zh":
            return "、".join(said) or "无人"
        if len(said) < 2:
            return said[0] if said else "nobody"
        return ", ".join(said[:-1]) + " and " + said[-1]

    def seen_by(self, seat: int | None) -> SeatNames:
        return replace(self, me=seat)

    # ------------------------------------------------------------- making

    @classmethod
    def numbered(cls, seats: int, me: int | None = None) -> SeatNames:
        """No names known: every seat is "seat N"."""
        return cls(("",) * seats, (), me)

    @classmethod
    def for_play(
        cls, person: str, seats: int, fingerprints: Sequence[str] = (), me: int | None = 0
    ) -> SeatNames:
        """``nodealer play``: the person at seat 0, bots named after it."""
        bots = [b for b in BOT_NAMES if _key(b) != _key(person)]
        bots += [f"bot {i}" for i in range(len(bots), seats)]  # more seats than names
        return cls((person, *bots[: seats - 1]), tuple(fingerprints), me)

    def pack(self) -> bytes:
        return msgpack.packb({"v": 1, "nicknames": list(self.nicknames)}, use_bin_type=True)

    @classmethod
    def unpack(
        cls, blob: bytes, fingerprints: Sequence[str] = (), me: int | None = None
    ) -> SeatNames | None:
        """Names from a ``table-names`` or ``table-lobby`` secret (None: not names)."""
        try:
            data = msgpack.unpackb(blob, raw=False)
            nicks = data["nicknames"]
        except (ValueError, TypeError, KeyError, msgpack.UnpackException):
            return None
        if not isinstance(nicks, list) or not all(isinstance(n, str) for n in nicks):
            return None
        return cls(tuple(n[:32] for n in nicks), tuple(fingerprints), me)


def names_of_log(path: Path, me: int | None = None) -> SeatNames:
    """The names kept next to a saved log (its seat's store), else numbers.
    Read-only: another process may be playing that table right now."""
    from p2p.store import read_secret, read_table

    try:
        spec = read_table(path)  # the header only: the entries are verify's to read
    except Exception:  # a file that is not a log: verify says why
        spec = None
    fingerprints = tuple(k.fingerprint for k in spec.seats) if spec is not None else ()
    directory = Path(path).parent
    for secret in (NAMES_SECRET, LOBBY_SECRET):
        try:
            blob = read_secret(directory, secret)
        except Exception:  # no store next to this file, or an unreadable one
            blob = None
        names = None if blob is None else SeatNames.unpack(blob, fingerprints, me)
        if names is not None and (spec is None or len(names) == spec.n):
            return names
    return SeatNames.numbered(spec.n if spec is not None else 0, me)


NAME_FILE = "name"
"""Beside the identity key: the name this user last chose (UTF-8 text)."""


def default_name(directory: Path | None = None) -> str:
    """This user's name: the one last chosen (:func:`remember_name`), else
    the login name made presentable (``alice`` → ``Alice``), else "player"."""
    from p2p.identity import config_dir
    from p2p.lobby.messages import nickname_problem
    from p2p.lobby.nicknames import default_nickname

    path = (config_dir() if directory is None else Path(directory)) / NAME_FILE
    try:
        chosen = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):  # none chosen yet, or unreadable: not fatal
        chosen = ""
    if chosen and nickname_problem(chosen) is None:
        return chosen
    return default_nickname()  # the login name made presentable, else "player"


def remember_name(name: str, directory: Path | None = None) -> None:
    """Keep ``name`` (a valid nickname) as this user's name for the next
    games; raises ValueError with the reason for a name that cannot be one."""
    from p2p.identity import config_dir
    from p2p.lobby.messages import nickname_problem

    problem = nickname_problem(name)
    if problem is not None:
        raise ValueError(problem)
    folder = config_dir() if directory is None else Path(directory)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    (folder / NAME_FILE).write_text(name + "\n", encoding="utf-8")
