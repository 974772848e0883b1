"""Where a node's fsyncs run (p2p/disk_pace.py): on the loop only while the
disk has been fast, back in a worker thread after one slow or failed fsync."""

from __future__ import annotations

import threading

import pytest
import trio

from p2p.disk_pace import FAST_STREAK, SLOW_FSYNC, DiskPace


class FakeDisk:
    """An fsync that takes the time the test says (on a fake clock) and
    notes which thread ran it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.next_takes = 0.0
        self.threads: list[bool] = []  # True: ran on the loop's thread
        self.synced: list[list[int]] = []
        self.fail = False

    def clock(self) -> float:
        return self.now

    def fsync(self, fds: list[int]) -> None:
        self.threads.append(threading.current_thread() is threading.main_thread())
        if self.fail:
            raise OSError(5, "Input/output error")
        self.synced.append(fds)
        self.now += self.next_takes


def test_the_loop_runs_fsyncs_only_after_a_streak_of_fast_ones() -> None:
    disk = FakeDisk()
    pace = DiskPace(disk.clock)

    async def main() -> None:
        disk.next_takes = SLOW_FSYNC / 10
        for i in range(FAST_STREAK + 3):
            await pace.fsync(disk.fsync, [i])
        assert disk.threads == [False] * FAST_STREAK + [True] * 3  # a new node starts in the thread
        assert disk.synced == [[i] for i in range(FAST_STREAK + 3)]
        disk.next_takes = SLOW_FSYNC  # a stall, on the loop: the next ones go to the thread
        await pace.fsync(disk.fsync, [0])
        assert disk.threads[-1] is True
        disk.next_takes = SLOW_FSYNC / 10
        for _ in range(FAST_STREAK):
            await pace.fsync(disk.fsync, [0])
        assert disk.threads[-FAST_STREAK:] == [False] * FAST_STREAK
        await pace.fsync(disk.fsync, [0])
        assert disk.threads[-1] is True
        assert (pace.on_loop, pace.in_thread) == (5, 2 * FAST_STREAK)

    trio.run(main)


def test_a_failed_fsync_raises_and_sends_the_next_ones_to_the_thread() -> None:
    disk = FakeDisk()
    pace = DiskPace(disk.clock)
    pace.fast = FAST_STREAK  # fast so far: the next runs on the loop

    async def main() -> None:
        disk.fail = True
        with pytest.raises(OSError, match="Input/output"):
            await pace.fsync(disk.fsync, [3])
        assert disk.threads == [True]
        disk.fail = False
        await pace.fsync(disk.fsync, [3])
        assert disk.threads == [True, False]

    trio.run(main)


def test_an_fsync_here_only_while_the_disk_has_been_fast() -> None:
    disk = FakeDisk()
    pace = DiskPace(disk.clock)
    with pytest.raises(RuntimeError, match="thread"):
        pace.fsync_here(disk.fsync, [1])
    assert disk.synced == []
    pace.fast = FAST_STREAK
    disk.next_takes = 2 * SLOW_FSYNC
    pace.fsync_here(disk.fsync, [1])
    assert disk.synced == [[1]] and disk.threads == [True]
    assert not pace.inline  # that one was slow
