"""The story of a game for a person, from the session's event lines: what
players did and what came of it, without the protocol underneath (cards
dealt by position, reveals of positions, reshuffled positions, jointly drawn
values, a rule's verdict that changed nothing). ``--verbose`` shows all.

>>> story("rule 0 (seat 1) on event 173: nothing") is None
True
>>> story("seat 0 plays 10♦ (#1)")
'seat 0 plays 10♦'
>>> story("reveal #15=BJ #3=7♦")
'cards shown: BJ 7♦'
>>> story("seat 1 places 1, claims 1 × 2")
'seat 1 places 1, claims 1 × 2'
"""

from __future__ import annotations

import re

_HIDDEN = (
    re.compile(r"^dealt \[[0-9 ]*\] to seat \d+$"),
    re.compile(r"^reshuffled new_positions="),
    re.compile(r"^transferred \[[0-9 ]*\] to seat \d+$"),
    re.compile(r"^random "),
    re.compile(r"^rule \d+ \(seat \d+\) on event \d+: nothing$"),
    re.compile(r"^seat \d+'s proof about #\d+ verified$"),
)
_POSITION = re.compile(r" \(#\d+\)")
_SHOWS = re.compile(r"shows #\d+ as ")


_REVEAL = re.compile(r"#\d+=(\S+)")


def story(line: str) -> str | None:
    """The line a person reads for one event, or None to leave it out."""
    if any(pattern.search(line) for pattern in _HIDDEN):
        return None
    if line.startswith("reveal #"):
        return "cards shown: " + " ".join(_REVEAL.findall(line))
    return _SHOWS.sub("shows ", _POSITION.sub("", line))


_RED_CARD = re.compile(r"((?:10|[2-9AJQK])[♥♦]|RJ)")


def coloured(line: str) -> str:
    """Red cards in red (ANSI), for a colour terminal.

    >>> coloured("seat 0 plays Q♥ 7♠") == "seat 0 plays \x1b[31mQ♥\x1b[0m 7♠"
    True
    """
    return _RED_CARD.sub(lambda m: f"\x1b[31m{m.group(1)}\x1b[0m", line)
