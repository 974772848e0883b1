"""Running nodealer's trio code on Textual's asyncio loop (trio guest mode).

Theory of operation
-------------------
Everything in :mod:`p2p` is trio. The TUI is Textual, which owns an asyncio
event loop. Rather than run two loops in two threads, trio runs as a *guest*
on the asyncio loop (``trio.lowlevel.start_guest_run``): trio's scheduler
steps are callbacks on the asyncio loop, trio's I/O waits happen in a helper
thread, and ``loop.call_soon_threadsafe`` wakes the loop when trio has work.
Both worlds therefore run on ONE thread, the asyncio thread, which gives the
rules below.

* asyncio → trio: an asyncio callback is not inside a trio task, so it must
  not call trio functions directly (a channel's ``send_nowait`` would try to
  wake a trio task outside trio's run). Hand trio a sync function instead:
  :meth:`TrioGuest.call_soon` runs it inside trio, e.g.
  ``guest.call_soon(intents.send_nowait, intent)``.
* trio → asyncio / Textual: trio code already runs on the asyncio thread, so
  it may call *sync* asyncio and Textual APIs directly (``app.post_message``,
  ``widget.refresh``, ``loop.call_soon``). It must never ``await`` asyncio.
* Blocking work never runs on that thread. That includes zeroconf: called
  from a trio task here, it would find the running asyncio loop and attach
  to it, and its blocking calls would then deadlock the loop; so
  :mod:`p2p.discovery` drives zeroconf from ``trio.to_thread`` workers.
* Lifetime: the trio run must end before the asyncio loop stops. Awaiting
  :meth:`TrioGuest.wait` (or :func:`run_trio_guest`) ties the two together:
  if the awaiting asyncio task is cancelled — Textual cancels its workers
  when the app exits, ``asyncio.run`` cancels leftover tasks — the trio run is
  cancelled and waited for, so every ``finally:`` in trio runs (goodbye
  packets sent, connections closed) before the loop goes away.

The simplest setup for the TUI ties both lifetimes in one call, so trio's
cleanup runs before the app's objects and the loop go away::

    asyncio.run(run_alongside_trio(app.run_async(), session_main, app))

Or start trio from inside a Textual app::

    from tui.guest import run_trio_guest

    class NodealerApp(App):
        def on_mount(self) -> None:
            self.run_worker(run_trio_guest(self.session_main), exclusive=True)

        async def session_main(self) -> None:  # trio code
            async with browse() as tables:
                async for event in tables:
                    self.post_message(TablesChanged(dict(tables.tables)))

(Textual cancels workers at exit without waiting for them; the trio run then
finishes during ``asyncio.run``'s final clean-up, after the app has stopped.)

And with plain asyncio::

    async def main() -> None:
        guest = start_trio_guest(trio.sleep, 1)
        ...  # asyncio work runs meanwhile
        await guest.wait()

    asyncio.run(main())

Only one trio run may be hosted by a given thread at a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import trio

if TYPE_CHECKING:
    import outcome

T = TypeVar("T")
R = TypeVar("R")
logger = logging.getLogger(__name__)


class GuestError(RuntimeError):
    """The guest run cannot be started, or is over when asked to do something."""


class TrioGuestCancelled(Exception):
    """The trio run ended because :meth:`TrioGuest.cancel` was called."""


class TrioGuest(Generic[T]):
    """A trio run hosted on the running asyncio loop; made by :func:`start_trio_guest`."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._done: asyncio.Future[outcome.Outcome[T]] = loop.create_future()
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._cancel_requested = False

    # -- running inside trio -------------------------------------------------------

    async def _main(self, async_fn: Callable[..., Awaitable[T]], args: tuple[Any, ...]) -> T:
        with trio.CancelScope() as scope:
            self._scope = scope
            if self._cancel_requested:
                scope.cancel()
            return await async_fn(*args)
        raise TrioGuestCancelled("the trio run was cancelled from asyncio")

    def _cancel_in_trio(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    def _finished(self, result: outcome.Outcome[T]) -> None:
        # done_callback: trio calls it on the host (asyncio) thread.
        if not self._done.done():
            self._done.set_result(result)

    # -- the asyncio side ----------------------------------------------------------

    @property
    def done(self) -> bool:
        """Whether the trio run has finished (returned, raised or was cancelled)."""
        return self._done.done()

    def call_soon(self, fn: Callable[..., object], *args: object) -> None:
        """Run the sync ``fn(*args)`` inside trio soon; safe from asyncio and any thread.

        Like asyncio's ``call_soon``, an exception raised by ``fn`` is logged,
        not propagated (there is no caller left to receive it, and letting it
        escape would crash the whole trio run). So ``fn`` should handle what it
        expects, e.g. ``trio.WouldBlock`` from a full channel.
        """
        if self._token is None or self.done:
            raise GuestError("the trio run is not running")

        def guarded() -> None:
            try:
                fn(*args)
            except Exception:
                logger.exception("exception in %r called from asyncio into trio", fn)

        try:
            self._token.run_sync_soon(guarded)
        except trio.RunFinishedError:
            raise GuestError("the trio run has finished") from None

    def cancel(self) -> None:
        """Ask the trio run to stop; :meth:`wait` then raises :class:`TrioGuestCancelled`."""
        if self.done:
            return
        self._cancel_requested = True
        if self._token is not None:
            try:
                self._token.run_sync_soon(self._cancel_in_trio)
            except trio.RunFinishedError:
                pass

    async def wait(self) -> T:
        """The trio function's result (or its exception).

        If the task awaiting this is cancelled, the trio run is cancelled and
        waited for before the cancellation propagates; further cancellations
        during that wind-down are absorbed (Textual cancels workers without
        waiting for them, then ``asyncio.run`` cancels leftover tasks again and
        gathers them: the trio run must still finish before the loop closes).
        """
        try:
            result = await asyncio.shield(self._done)
        except asyncio.CancelledError:
            self.cancel()
            while not self._done.done():
                try:
                    await asyncio.shield(self._done)
                except asyncio.CancelledError:
                    self.cancel()
            raise
        return result.unwrap()


def start_trio_guest(async_fn: Callable[..., Awaitable[T]], *args: object) -> TrioGuest[T]:
    """Start ``async_fn(*args)`` as a trio guest run on the running asyncio loop.

    Must be called from the loop's thread (from a coroutine or a callback).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise GuestError("start_trio_guest() needs a running asyncio loop") from None
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:
        pass
    else:
        raise GuestError("this thread already hosts a trio run")
    guest: TrioGuest[T] = TrioGuest(loop)
    trio.lowlevel.start_guest_run(
        guest._main,
        async_fn,
        args,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        run_sync_soon_not_threadsafe=loop.call_soon,
        done_callback=guest._finished,
        # asyncio owns signal.set_wakeup_fd on the main thread; trio leaves it alone.
        host_uses_signal_set_wakeup_fd=True,
    )
    # Allowed once start_guest_run has returned (trio docs): sync trio calls work.
    guest._token = trio.lowlevel.current_trio_token()
    return guest


async def run_trio_guest(async_fn: Callable[..., Awaitable[T]], *args: object) -> T:
    """Run ``async_fn(*args)`` in trio, hosted on this asyncio loop, and return its result."""
    return await start_trio_guest(async_fn, *args).wait()


async def run_alongside_trio(
    main: Awaitable[R], trio_fn: Callable[..., Awaitable[object]], *args: object
) -> R:
    """Await the asyncio ``main`` (e.g. ``app.run_async()``) with ``trio_fn(*args)`` as guest.

    When ``main`` ends, however it ends, the trio run is cancelled and waited
    for *before* this returns, so trio's cleanup runs while the loop (and the
    app's objects) still exist. An error that ended the trio run is raised
    once ``main`` has finished (``main``'s own error takes precedence).
    """
    guest = start_trio_guest(trio_fn, *args)
    try:
        result = await main
    except BaseException:
        guest.cancel()
        try:
            await guest.wait()
        except TrioGuestCancelled:
            pass
        except Exception:  # main's error is the one to report; trio's is logged
            logger.exception("the trio run failed while %r was failing", main)
        raise
    guest.cancel()
    try:
        await guest.wait()
    except TrioGuestCancelled:
        pass
    return result
