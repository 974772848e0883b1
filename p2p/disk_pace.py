"""Where a node's fsyncs run: on the event loop while the disk is fast, else
in a worker thread.

An fsync handed to a worker thread (``trio.to_thread``) costs two thread
wake-ups besides the fsync itself: the worker's, and the loop's when the
worker is done. On an idle machine that is about 0.3 ms; on a loaded one
each wake-up waits for a core, and ``bench/latency.py --trace`` measured the
whole call at p50 2.4 ms (p90 8.5 ms) for an fsync whose own p50 was 0.4 ms.
A v3 move waits for two fsyncs in a row (the author's outbox, then every
seat's log before it acks), so on a fast disk they run on the loop.

A disk that is slow, or stalls now and then, must not hold up the loop (its
beats, its reading, the screen): an fsync that took :data:`SLOW_FSYNC` or
more (or failed) sends the next ones to the worker thread, and they come
back to the loop only after :data:`FAST_STREAK` fsyncs in a row each took
less. So the loop waits at most for one stall of a disk that had been fast
until then, and a node starts in the thread. Where an fsync runs changes
nothing about what is durable when it returns.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import trio

SLOW_FSYNC = 0.010
"""seconds: an fsync this slow is not run on the loop again until the disk
has been fast for :data:`FAST_STREAK` fsyncs (10 ms, well under a beat or a
keystroke's notice; an fsync of a small append takes 0.1-1 ms on an SSD and
on this project's benchmark VM, up to 5 ms there when other jobs load it,
5-30 ms on a spinning disk, often more on macOS's F_FULLFSYNC)."""
FAST_STREAK = 4


class DiskPace:
    """Runs fsyncs where they cost least (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.fast = 0  # fsyncs in a row that took less than SLOW_FSYNC
        self.on_loop = 0  # how many ran on the loop
        self.in_thread = 0  # how many ran in a worker thread

    @property
    def inline(self) -> bool:
        """Whether the next fsync runs on the loop."""
        return self.fast >= FAST_STREAK

    def note(self, took: float) -> None:
        """One fsync took ``took`` seconds."""
        self.fast = self.fast + 1 if took < SLOW_FSYNC else 0

    def _timed(self, fsync: Callable[[list[int]], None], fds: list[int]) -> float:
        start = self.clock()
        fsync(fds)
        return self.clock() - start

    def fsync_here(self, fsync: Callable[[list[int]], None], fds: list[int]) -> None:
        """``fsync(fds)`` on the loop now (only while :attr:`inline`)."""
        if not self.inline:
            raise RuntimeError("the disk has not been fast: fsync in the thread")
        took = SLOW_FSYNC
        try:
            self.on_loop += 1
            took = self._timed(fsync, fds)
        finally:
            self.note(took)

    async def fsync(self, fsync: Callable[[list[int]], None], fds: list[int]) -> None:
        """``fsync(fds)`` on the loop or in a worker thread; raises what it raises."""
        took = SLOW_FSYNC  # one that failed counts as slow
        try:
            if self.inline:
                self.on_loop += 1
                took = self._timed(fsync, fds)
            else:
                self.in_thread += 1
                took = await trio.to_thread.run_sync(self._timed, fsync, fds)
        finally:
            self.note(took)
