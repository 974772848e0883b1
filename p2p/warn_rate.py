"""Connection warnings, rate-limited (:class:`p2p.node.Node`'s): a stranger
opening thousands of connections must not flood the terminal."""

from __future__ import annotations

import logging
import math
import time
from collections import Counter

log = logging.getLogger("nodealer.p2p")

WARN_BURST, WARN_WINDOW = 5, 10.0  # connection warnings per window; the rest are counted


class WarningRate:
    """Connection warnings, rate-limited: a stranger opening thousands of
    connections must not flood the terminal. The first ``WARN_BURST`` of a
    ``WARN_WINDOW`` are logged; the rest are counted and summed up in one
    line when the next window starts."""

    def __init__(self) -> None:
        self.start = -math.inf
        self.shown = 0
        self.hidden: Counter[str] = Counter()

    def flush(self) -> None:
        """Start a new window if the current one is over (the summary line)."""
        now = time.monotonic()
        if now - self.start < WARN_WINDOW:
            return
        if self.hidden:
            total = sum(self.hidden.values())
            kinds = ", ".join(f"{n} × {what}" for what, n in self.hidden.most_common(3))
            log.warning("%d more connection problems in %.0f s (%s)", total, WARN_WINDOW, kinds)
        self.start, self.shown, self.hidden = now, 0, Counter()

    def warn(self, kind: str, text: str) -> None:
        self.flush()
        if self.shown < WARN_BURST:
            self.shown += 1
            log.warning("%s", text)
        else:
            self.hidden[kind] += 1

    def note(self, kind: str) -> None:
        """Count a problem without a line of its own (shown in the summary)."""
        self.flush()
        self.hidden[kind] += 1
