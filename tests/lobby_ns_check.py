"""The home screen's LAN list over real mDNS, inside a private network namespace.

Run only as ``unshare -n -- python tests/lobby_ns_check.py CALLER_NETNS``
(tests/test_tui_lobby.py does that). Like tests/discovery_ns_check.py it
first checks that it runs in a fresh namespace where loopback is the only
interface, and refuses otherwise (exit 3): mDNS must never reach a real
network. It then switches on multicast on lo, opens the home screen
(Textual's Pilot, trio as a guest, :func:`p2p.discovery.browse` bound to
127.0.0.1) and, from another thread with its own trio run, advertises a
table, updates its seats and withdraws it. It prints one JSON line with the
LAN list as the screen showed it at each step.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from discovery_ns_check import refusal  # noqa: E402

STEP_TIMEOUT = 20.0


def set_up_loopback() -> None:
    for cmd in (
        ["ip", "link", "set", "lo", "up"],
        ["ip", "link", "set", "lo", "multicast", "on"],
        ["ip", "route", "add", "224.0.0.0/4", "dev", "lo"],
    ):
        subprocess.run(cmd, check=True, capture_output=True)


class Advertiser:
    """A table advertised from its own thread and trio run until told."""

    def __init__(self) -> None:
        import trio

        from p2p.discovery import TableAd

        self.ad = TableAd(
            bytes.fromhex("00112233445566778899aabbccddeeff"),
            "bluff",
            1,
            3,
            "K3QF-7ZPA-M2XD-4RTY",
            "127.0.0.1",
            40123,
            name="Ann's table",
            host_name="ann",
            proven=True,
        )
        self.token: trio.lowlevel.TrioToken | None = None
        self.stop_event: trio.Event | None = None
        self.update_to: int | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=lambda: trio.run(self._main), daemon=True)
        self.thread.start()

    async def _main(self) -> None:
        import trio

        from p2p.discovery import advertise

        self.token = trio.lowlevel.current_trio_token()
        self.stop_event = trio.Event()
        self.updated = trio.Event()
        async with advertise(self.ad) as advert:
            self.ready.set()
            await self.updated.wait()
            await advert.update(2)
            await self.stop_event.wait()

    def update(self) -> None:
        assert self.token is not None
        self.token.run_sync_soon(self.updated.set)

    def stop(self) -> None:
        assert self.token is not None and self.stop_event is not None
        self.token.run_sync_soon(self.stop_event.set)
        self.thread.join(timeout=30)


async def check() -> dict[str, object]:
    from textual.widgets import OptionList

    from p2p.discovery import browse
    from tui.table_app import LanHomeApp

    seen: dict[str, object] = {}
    app = LanHomeApp("me", [("bluff", 2)], [], lan=lambda: browse("127.0.0.1"))

    def rows() -> list[str]:
        lan = app.home_screen.query_one("#lan", OptionList)
        return [str(lan.get_option_at_index(i).prompt) for i in range(lan.option_count)]

    async with app.run_test(size=(80, 24)) as pilot:

        async def until(done, what: str) -> None:  # type: ignore[no-untyped-def]
            deadline = time.monotonic() + STEP_TIMEOUT
            while not done():
                if time.monotonic() > deadline:
                    raise SystemExit(f"timed out waiting for {what}: {rows()}")
                await pilot.pause(0.1)

        await pilot.pause(0.5)
        seen["before"] = rows()
        advertiser = Advertiser()
        advertiser.ready.wait(STEP_TIMEOUT)
        await until(lambda: len(rows()) == 1, "the table to appear")
        seen["appeared"] = rows()
        advertiser.update()
        await until(lambda: rows() and "bluff 2/3" in rows()[0], "the seats to change")
        seen["updated"] = rows()
        advertiser.stop()
        await until(lambda: not rows(), "the table to vanish")
        seen["vanished"] = rows()
    return seen


def main() -> int:
    outside = sys.argv[1] if len(sys.argv) > 1 else None
    why = refusal(outside)
    if why is not None:
        print(f"lobby_ns_check: refusing to run: {why}", file=sys.stderr)
        return 3
    set_up_loopback()
    print(json.dumps(asyncio.run(check())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
