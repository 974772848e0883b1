"""trio as a guest on an asyncio loop (tui.guest). Plain asyncio tests, not trio-marked."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
import trio

from tui.guest import (
    GuestError,
    TrioGuestCancelled,
    run_alongside_trio,
    run_trio_guest,
    start_trio_guest,
)


def test_result_comes_back_and_both_loops_make_progress() -> None:
    order: list[str] = []

    async def trio_side() -> str:
        for i in range(3):
            order.append(f"trio {i}")
            await trio.sleep(0.02)
        return "dealt"

    async def asyncio_side() -> None:
        for i in range(3):
            order.append(f"asyncio {i}")
            await asyncio.sleep(0.02)

    async def main() -> str:
        guest = start_trio_guest(trio_side)
        ticker = asyncio.create_task(asyncio_side())
        result = await guest.wait()
        await ticker
        assert guest.done
        return result

    assert asyncio.run(main()) == "dealt"
    # interleaved, not one loop after the other
    assert order.index("asyncio 1") < order.index("trio 2")
    assert order.index("trio 1") < order.index("asyncio 2")


def test_trio_exception_reaches_asyncio() -> None:
    async def trio_side() -> None:
        await trio.sleep(0)
        raise ValueError("bad frame")

    with pytest.raises(ValueError, match="bad frame"):
        asyncio.run(run_trio_guest(trio_side))


def test_cancelling_the_asyncio_task_cancels_trio_and_waits_for_it() -> None:
    seen: list[str] = []

    async def trio_side() -> None:
        try:
            await trio.sleep_forever()
        finally:
            seen.append("trio cancelled")
            with trio.CancelScope(shield=True):
                await trio.sleep(0.05)  # e.g. sending goodbye packets
            seen.append("trio cleaned up")

    async def main() -> None:
        task = asyncio.create_task(run_trio_guest(trio_side))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        seen.append("asyncio saw the cancel")

    asyncio.run(main())
    assert seen == ["trio cancelled", "trio cleaned up", "asyncio saw the cancel"]


def test_a_second_cancel_does_not_abandon_the_trio_run() -> None:
    # Textual cancels a worker without waiting; asyncio.run then cancels it again.
    seen: list[str] = []

    async def trio_side() -> None:
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                await trio.sleep(0.05)
            seen.append("trio cleaned up")

    async def main() -> None:
        task = asyncio.create_task(run_trio_guest(trio_side))
        await asyncio.sleep(0.02)
        task.cancel()
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        seen.append("asyncio task ended")

    asyncio.run(main())
    assert seen == ["trio cleaned up", "asyncio task ended"]


def test_asyncio_run_shutdown_ends_the_trio_run() -> None:
    seen: list[str] = []

    async def trio_side() -> None:
        try:
            await trio.sleep_forever()
        finally:
            seen.append("trio finally")

    async def main() -> None:
        asyncio.create_task(run_trio_guest(trio_side))  # noqa: RUF006 - left for asyncio.run to reap
        await asyncio.sleep(0.05)
        # return without awaiting: asyncio.run cancels the leftover task

    asyncio.run(main())
    assert seen == ["trio finally"]


def test_cancel_method_and_cancel_before_trio_starts() -> None:
    async def trio_side() -> None:
        await trio.sleep_forever()

    async def main() -> None:
        early = start_trio_guest(trio_side)
        early.cancel()  # before trio has run a single step of trio_side
        with pytest.raises(TrioGuestCancelled):
            await early.wait()
        late = start_trio_guest(trio_side)
        await asyncio.sleep(0.02)
        late.cancel()
        with pytest.raises(TrioGuestCancelled):
            await late.wait()
        late.cancel()  # cancelling a finished run is harmless

    asyncio.run(main())


def test_call_soon_carries_asyncio_intents_into_trio() -> None:
    async def trio_side(receive: trio.MemoryReceiveChannel[str]) -> list[str]:
        got = []
        async for intent in receive:
            got.append(intent)
            if intent == "stand up":
                break
        return got

    async def main() -> list[str]:
        send, receive = trio.open_memory_channel[str](10)
        guest = start_trio_guest(trio_side, receive)
        for intent in ("sit", "play 9♦", "stand up"):
            guest.call_soon(send.send_nowait, intent)
            await asyncio.sleep(0.01)
        result = await guest.wait()
        with pytest.raises(GuestError, match="not running"):
            guest.call_soon(send.send_nowait, "late")
        return result

    assert asyncio.run(main()) == ["sit", "play 9♦", "stand up"]


def test_an_error_in_call_soon_is_logged_and_trio_keeps_running(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def trio_side(receive: trio.MemoryReceiveChannel[str]) -> str:
        return await receive.receive()

    async def main() -> str:
        send, receive = trio.open_memory_channel[str](0)
        guest = start_trio_guest(trio_side, receive)
        guest.call_soon(int, "not a number")  # raises ValueError inside trio
        await asyncio.sleep(0.02)
        assert not guest.done
        guest.call_soon(lambda: trio.lowlevel.spawn_system_task(send.send, "sit"))
        return await guest.wait()

    with caplog.at_level(logging.ERROR, logger="tui.guest"):
        assert asyncio.run(main()) == "sit"
    assert "ValueError" in caplog.text


def test_trio_reaches_asyncio_with_sync_calls_and_threads_work() -> None:
    async def trio_side(flag: asyncio.Event) -> tuple[int, str]:
        # same thread as asyncio: sync asyncio calls are fine from trio
        asyncio.get_running_loop().call_soon(flag.set)
        # worker threads report back through loop.call_soon_threadsafe
        value = await trio.to_thread.run_sync(lambda: 6 * 7)
        token = trio.lowlevel.current_trio_token()
        send, receive = trio.open_memory_channel[str](1)

        def foreign_thread() -> None:  # like zeroconf's browser thread
            trio.from_thread.run(send.send, "table appeared", trio_token=token)

        thread = threading.Thread(target=foreign_thread)
        thread.start()
        message = await receive.receive()
        await trio.to_thread.run_sync(thread.join)
        return value, message

    async def main() -> tuple[int, str]:
        flag = asyncio.Event()
        result = await run_trio_guest(trio_side, flag)
        assert flag.is_set()
        return result

    assert asyncio.run(main()) == (42, "table appeared")


def test_one_guest_per_thread_and_needs_a_running_loop() -> None:
    async def main() -> None:
        first = start_trio_guest(trio.sleep, 0.05)
        with pytest.raises(GuestError, match="already hosts"):
            start_trio_guest(trio.sleep, 0)
        await first.wait()
        await run_trio_guest(trio.sleep, 0)  # free again once the first run ended

    asyncio.run(main())
    with pytest.raises(GuestError, match="running asyncio loop"):
        start_trio_guest(trio.sleep, 0)


def test_textual_app_hosts_trio_in_a_worker() -> None:
    textual_app = pytest.importorskip("textual.app")
    from textual.widgets import Static

    seen: list[str] = []

    class Lobby(textual_app.App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("no tables yet", id="tables")

        def on_mount(self) -> None:
            self.run_worker(run_trio_guest(self.trio_main), exclusive=True)

        async def trio_main(self) -> None:
            await trio.sleep(0.01)
            # trio runs on Textual's thread: sync Textual calls are allowed
            self.query_one("#tables", Static).update("mao 2/5 seats")
            try:
                await trio.sleep_forever()
            finally:
                seen.append("trio closed with the app")

    async def main() -> str:
        app = Lobby()
        async with app.run_test() as pilot:
            for _ in range(100):
                await pilot.pause(0.02)
                text = str(app.query_one("#tables", Static).render())
                if text == "mao 2/5 seats":
                    break
        return text

    assert asyncio.run(main()) == "mao 2/5 seats"
    assert seen == ["trio closed with the app"]


def test_run_alongside_trio_cleans_up_trio_before_returning() -> None:
    seen: list[str] = []

    async def trio_side() -> None:
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                await trio.sleep(0.02)
            seen.append("trio cleaned up")

    async def main() -> str:
        result = await run_alongside_trio(asyncio.sleep(0.05, result="app done"), trio_side)
        seen.append("returned")
        return result

    assert asyncio.run(main()) == "app done"
    assert seen == ["trio cleaned up", "returned"]


def test_run_alongside_trio_errors() -> None:
    async def failing_app() -> None:
        await asyncio.sleep(0.02)
        raise KeyError("app crashed")

    async def failing_trio() -> None:
        raise ValueError("session crashed")

    with pytest.raises(KeyError):
        asyncio.run(run_alongside_trio(failing_app(), trio.sleep_forever))
    # both failing: the app's error wins, trio's is logged
    with pytest.raises(KeyError):
        asyncio.run(run_alongside_trio(failing_app(), failing_trio))
    # trio failing while the app runs: reported once the app ends
    with pytest.raises(ValueError, match="session crashed"):
        asyncio.run(run_alongside_trio(asyncio.sleep(0.05), failing_trio))


def test_textual_app_run_alongside_trio() -> None:
    textual_app = pytest.importorskip("textual.app")
    from textual.widgets import Static

    seen: list[str] = []

    class Lobby(textual_app.App[str]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("no tables yet", id="tables")

    async def session(app: Lobby) -> None:
        try:
            while not app.is_running:
                await trio.sleep(0.01)
            await trio.sleep(0.02)
            app.query_one("#tables", Static).update("bomb 3/5 seats")
            seen.append(str(app.query_one("#tables", Static).render()))
            app.exit("bye")  # trio may drive the app: same thread
            await trio.sleep_forever()
        finally:
            seen.append("trio finally")

    async def main() -> str | None:
        app = Lobby()
        return await run_alongside_trio(app.run_async(headless=True), session, app)

    assert asyncio.run(main()) == "bye"
    assert seen == ["bomb 3/5 seats", "trio finally"]
