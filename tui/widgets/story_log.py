"""The story panel's drawing: the game's story, the last move marked
(``▸`` and bold, so it shows without colour too), separators between rounds.

A RichLog cannot restyle a line it has written, so only the tail is
rewritten: when the next move arrives, the strips from the marked line on
are dropped and written again, unmarked. The story is kept (:data:`KEEP`
lines) so that it can be drawn again whole (after F2, or before the panel
had a size).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import RichLog

from ..story import SEPARATOR

KEEP = 500
"""Story lines a panel keeps (older ones scroll away for good)."""
MARK = "▸ "
_STATE = "_story_mark"  # (index of the marked line's first strip, its index in told)


def _marked(line: str) -> Text:
    return Text(MARK + line, style="bold")


def tell(log: RichLog, told: list[str], line: str) -> None:
    """Add ``line`` to the story ``told`` so far and show it in ``log``,
    the newest move marked."""
    told.append(line)
    state = log.__dict__.get(_STATE)
    if len(told) > KEEP or (state is None and len(told) > 1):
        del told[: max(0, len(told) - KEEP)]
        redraw(log, told)
        return
    if line.startswith(SEPARATOR):
        log.write(Text(line))
        _to_end(log)
        return
    if state is not None:
        first, at = state
        if not log._size_known or len(log.lines) < first:
            redraw(log, told)
            return
        del log.lines[first:]
        log._line_cache.clear()
        for said in told[at:-1]:
            log.write(Text(said))
    _write_marked(log, len(told) - 1, line)


def _write_marked(log: RichLog, at: int, line: str) -> None:
    log.__dict__[_STATE] = (len(log.lines), at) if log._size_known else None
    log.write(_marked(line))
    _to_end(log)


def _to_end(log: RichLog) -> None:
    """Show the newest line once the panel has redrawn: RichLog's own
    scroll, made before the new lines' height is known, can stop short of
    them (a CI run saw the story stay at its first lines)."""
    if log.is_attached:
        log.call_after_refresh(log.scroll_end, animate=False)


def redraw(log: RichLog, told: list[str]) -> None:
    """Draw the whole story again, the last move marked."""
    log.clear()
    log.__dict__[_STATE] = None
    last = max((i for i, said in enumerate(told) if not said.startswith(SEPARATOR)), default=-1)
    for i, said in enumerate(told):
        if i == last:
            _write_marked(log, i, said)
        else:
            log.write(Text(said))
