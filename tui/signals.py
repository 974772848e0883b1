"""SIGTERM and SIGHUP end a command the way Ctrl-C does.

A player's ``nodealer join`` is ended by more than Ctrl-C: ``kill`` sends
SIGTERM, closing the terminal window sends SIGHUP. Without a handler Python
dies on the spot (exit -15: no message, nothing cleaned up - a table
screen leaves the terminal raw). :func:`signals_as_interrupt` makes either
signal an interrupt: the handler passes it on to whatever handles SIGINT
right now - trio's (which raises ``KeyboardInterrupt`` at a safe point, so
every nursery unwinds: bots' child processes are stopped, files closed) or
Python's default one - and remembers which signal it was, for the caller's
message and its exit code, 128 + the signal's number (143 for SIGTERM, 129
for SIGHUP), as a shell reports a process the signal ended. Everything
this seat signed or acknowledged is already on disk (the node fsyncs before
it sends or acknowledges, protocol.md §3.6): the saved log is kept as it
stands and ``nodealer join`` goes back to the table.

Windows has no SIGHUP (only what :mod:`signal` offers is handled there).

After SIGHUP the terminal is gone, and unwinding may still block on it: a
program once slept for good in Textual's shutdown, its writes to the dead
terminal queued behind a writer that no longer ran (a home screen left
behind by a closed tmux session, ``py-spy dump``). So SIGHUP also starts a
clock: a program still running :data:`HUP_GRACE` seconds later exits at
once with 129. Nothing is lost by it: what the seat signed or acknowledged
is on disk before it is sent.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

from .words import register, t

register({"stopped by {name}: {interrupted}": "被 {name} 结束：{interrupted}"})

HUP_GRACE = 10.0
"""Seconds a program may take to end after SIGHUP before it is made to."""

HANDLED = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@dataclass
class Stop:
    """Which signal stopped the command (None: none did, or Ctrl-C)."""

    signum: int | None = None

    @property
    def name(self) -> str:
        return "Ctrl-C" if self.signum is None else signal.Signals(self.signum).name

    def exit_code(self, interrupted: int) -> int:
        """128 + the signal's number, or ``interrupted`` for Ctrl-C."""
        return interrupted if self.signum is None else 128 + self.signum

    def said(self, interrupted: str, lang: str = "en") -> str:
        """The one-line message: ``interrupted`` for Ctrl-C, else the signal's name first."""
        if self.signum is None:
            return interrupted
        return t("stopped by {name}: {interrupted}", lang, name=self.name, interrupted=interrupted)


def _as_interrupt(stop: Stop) -> Any:
    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.signum is None:
            stop.signum = signum
            if signum == getattr(signal, "SIGHUP", None):
                _exit_later(128 + signum)
        on_interrupt = signal.getsignal(signal.SIGINT)
        if callable(on_interrupt):
            on_interrupt(signal.SIGINT, frame)  # trio's (a safe point) or Python's
        else:  # SIGINT ignored or left to the system: interrupt here
            raise KeyboardInterrupt

    return handler


def _exit_later(code: int) -> None:
    """End the process with ``code`` in :data:`HUP_GRACE` seconds unless it
    ends first (a daemon thread: it never holds an exit back)."""
    timer = threading.Timer(HUP_GRACE, os._exit, (code,))
    timer.daemon = True
    timer.start()


def tell(line: str) -> None:
    """``line`` on stderr, if there still is one (after SIGHUP the terminal
    may be gone: writing to it fails, and that must not change the exit)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


@contextmanager
def signals_as_interrupt(stop: Stop | None = None) -> Iterator[Stop]:
    """While inside, SIGTERM and SIGHUP interrupt like Ctrl-C; the yielded
    :class:`Stop` (``stop``, or a new one) says which arrived. Outside the
    main thread (where handlers cannot be set) nothing changes."""
    stop = Stop() if stop is None else stop
    previous: dict[int, Any] = {}
    try:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            # started with SIGINT ignored (a background job of a script):
            # trio then installs no interrupt handler of its own, and raising
            # in the middle of its loop breaks it; so interrupts are on
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in HANDLED:
            previous[signum] = signal.signal(signum, _as_interrupt(stop))
    except ValueError:  # not the main thread
        pass
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


__all__ = ["HANDLED", "Stop", "signals_as_interrupt", "tell"]
