"""Finding tables on the LAN: zeroconf (mDNS / DNS-SD) adverts and the manual ``HOST:PORT``.

Theory of operation
-------------------
A host advertises its open table as one DNS-SD service of type
``_nodealer._tcp.local.`` (protocol.md §4). The SRV record carries the TCP port
the host's peer listens on, the A/AAAA record the ONE address the host chose,
and the TXT record five short keys: protocol version, table id, game, seats
taken/total and the host's identity fingerprint. A :class:`TableAd` is that
advert as a small immutable value; :meth:`TableAd.txt` and
:meth:`TableAd.from_txt` are its exact wire form, and nothing else in the
program reads or writes TXT bytes.

An advert is untrusted: anyone on the LAN can publish anything. Decoding is
strict (every required key present, every value matching its grammar, sizes
bounded) and a bad advert is *ignored with a logged reason*, never shown and
never a crash. Even a well-formed advert proves nothing: the peer that answers
at its address must still prove, in the handshake (protocol.md §2), that it
holds the key whose fingerprint the advert names.

zeroconf is asyncio inside. A ``Zeroconf`` made on a thread with a running
asyncio loop attaches to that loop, otherwise it starts its own loop thread;
its blocking calls (register, update, unregister, resolve, close) must never
run on an event loop thread. So every zeroconf object here is created, used
and closed from a worker thread (``trio.to_thread.run_sync``), where there is
no running asyncio loop. That gives the same behaviour whether trio runs on
its own (headless) or as a guest on Textual's asyncio loop (the TUI, see
:mod:`tui.guest`). Browser callbacks arrive on zeroconf's browser thread;
they resolve the advert there (a blocking call, fine on that thread) and hand
the result to trio through a memory channel with ``trio.from_thread.run``.

The trio-facing API:

* :func:`advertise` — ``async with advertise(ad) as advert:`` publishes the
  table, bound to ``ad.address`` only; ``await advert.update(seats_taken=3)``
  republishes the TXT record; leaving the block sends the mDNS goodbye.
* :func:`browse` — ``async with browse() as tables: async for event in
  tables:`` yields :class:`TableEvent` values (appeared / updated / vanished);
  ``tables.tables`` is the current list, for a lobby screen.
* :func:`find_tables` — browse for a few seconds and return the list.
* :func:`parse_hostport` — ``--connect HOST:PORT`` for networks without
  multicast, with errors a player can act on.
* :func:`local_addresses` — the ``(interface, address)`` pairs a host may
  choose to advertise on.
"""

from __future__ import annotations

import enum
import ipaddress
import logging
import socket
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

import trio
from zeroconf import (
    BadTypeInNameException,
    InterfaceChoice,
    IPVersion,
    ServiceBrowser,
    ServiceInfo,
    ServiceStateChange,
    Zeroconf,
)
from zeroconf import Error as ZeroconfError

from p2p.advert import (
    MAX_NAME_BYTES,
    MAX_SEATS,
    MAX_TXT_BYTES,
    PROTOCOL_VERSION,
    SERVICE_TYPE,
    BadAdvertisement,
    BadHostPort,
    DiscoveryError,
    HostPort,
    TableAd,
    _check_address,
    decode_txt,
    parse_hostport,
)

__all__ = ["MAX_NAME_BYTES", "MAX_SEATS", "MAX_TXT_BYTES", "PROTOCOL_VERSION", "SERVICE_TYPE",
           "BadAdvertisement", "BadHostPort", "Change",
           "DiscoveryError", "HostPort", "TableAd", "TableEvent", "advertise", "browse",
           "decode_txt", "find_table", "find_tables", "local_addresses",
           "parse_hostport"]  # fmt: skip

logger = logging.getLogger(__name__)


# Record lifetimes. RFC 6762 suggests 75 minutes for PTR/TXT; we use two
# minutes for every record. python-zeroconf browsers clamp a received PTR TTL
# up to 1125 s, so record expiry alone would keep a crashed host's table
# listed for ~19 minutes: the browser therefore re-resolves each listed table
# every LIVENESS_INTERVAL_SECONDS. While its SRV/TXT/A records are fresh that
# is a cache hit (no traffic); once they expire (TTL) it is one query, which a
# live host answers and a crashed one does not, so a crashed host's table
# vanishes about TTL + interval + timeout after its last answer.
AD_TTL_SECONDS: Final = 120
LIVENESS_INTERVAL_SECONDS: Final = 15.0
# find_table: once a wanted table answered, this long more for a second one
FIND_SETTLE_SECONDS: Final = 0.5
LIVENESS_TIMEOUT_MS: Final = 3000
# How long the browser waits for an advert's SRV/TXT/A answers.
RESOLVE_TIMEOUT_MS: Final = 2000
# The most tables one browser lists (a LAN party has a handful).
MAX_TABLES: Final = 256


# --------------------------------------------------------------------------- advertise


def local_addresses(include_loopback: bool = False) -> list[tuple[str, str]]:
    """``(interface, address)`` pairs this machine could advertise on, IPv4 first.

    Reads the interface list only (no packets). IPv6 link-local addresses carry
    their zone (``fe80::1%eth0``). For a ``--advertise-on`` choice in the CLI/TUI.
    """
    import ifaddr  # zeroconf's own dependency for the same job

    found: list[tuple[int, str, str]] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if ip.is_IPv6:
                host, _flow, scope = ip.ip  # type: ignore[misc]
                text = f"{host}%{adapter.nice_name}" if scope else host
            else:
                text = str(ip.ip)
            try:
                parsed = ipaddress.ip_address(text)
            except ValueError:
                continue
            if parsed.is_loopback and not include_loopback:
                continue
            found.append((parsed.version, adapter.nice_name, str(parsed)))
    return [(name, address) for _, name, address in sorted(found)]


def _check_local(address: str) -> None:
    """Fail clearly unless ``address`` belongs to this machine (binds, sends nothing)."""
    ip = ipaddress.ip_address(address)
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        # getaddrinfo turns a zone ("%eth0") into the scope id bind() needs
        sockaddr = socket.getaddrinfo(
            address, 0, family, socket.SOCK_DGRAM, flags=socket.AI_NUMERICHOST
        )[0][4]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind(sockaddr)
    except (OSError, UnicodeError) as exc:
        raise DiscoveryError(f"{address} is not an address of this machine: {exc}") from None


def _open_zeroconf(interface: str | None) -> Zeroconf:
    """Open zeroconf on one address (or every interface). Blocking: worker thread only."""
    if interface is None:
        return Zeroconf(interfaces=InterfaceChoice.All)
    _check_local(interface)
    try:
        return Zeroconf(interfaces=[interface])
    except (OSError, ValueError) as exc:
        raise DiscoveryError(f"cannot use {interface} for mDNS: {exc}") from exc


def _service_info(ad: TableAd, name: str | None = None, ttl: int = AD_TTL_SECONDS) -> ServiceInfo:
    return ServiceInfo(
        SERVICE_TYPE,
        name or ad.instance_name,
        port=ad.port,
        properties=ad.txt(),
        server=ad.server_name,
        host_ttl=ttl,
        other_ttl=ttl,
        parsed_addresses=[ad.address],
    )


class Advertisement:
    """A table being advertised; made by :func:`advertise`."""

    def __init__(self, zc: Zeroconf, info: ServiceInfo, ad: TableAd, ttl: int) -> None:
        self._zc = zc
        self._info = info
        self._ad = ad
        self._ttl = ttl
        self._lock = trio.Lock()

    @property
    def ad(self) -> TableAd:
        """The advert as currently published."""
        return self._ad

    @property
    def instance_name(self) -> str:
        """The DNS-SD name in use (zeroconf renames on a clash, e.g. ``… (2)``)."""
        return self._info.name

    async def update(self, seats_taken: int, seats_total: int | None = None) -> None:
        """Republish the advert with new seat counts (e.g. when a player sits down)."""
        await self.republish(self._ad.with_seats(seats_taken, seats_total))

    async def republish(self, new: TableAd) -> None:
        """Republish the advert as ``new`` (same name and address: e.g. the
        table started, and stays listed for its spectators)."""
        async with self._lock:
            if new == self._ad:
                return
            info = _service_info(new, self._info.name, self._ttl)
            try:
                await trio.to_thread.run_sync(self._zc.update_service, info)
            except ZeroconfError as exc:
                raise DiscoveryError(f"cannot update the advert of {new}: {exc!r}") from exc
            self._info, self._ad = info, new


@asynccontextmanager
async def advertise(ad: TableAd, *, ttl: int = AD_TTL_SECONDS) -> AsyncIterator[Advertisement]:
    """Advertise ``ad`` on the LAN, on ``ad.address`` only, until the block ends.

    Registration probes the network for a name clash first (about a second).
    On exit the goodbye records are sent so browsers drop the table at once.
    ``ttl`` (seconds) is the lifetime of the published records.
    """
    if not isinstance(ad, TableAd):
        raise TypeError(f"advertise() takes a TableAd, not {type(ad).__name__}")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or not 1 <= ttl <= 4500:
        raise DiscoveryError(f"ttl must be 1 to 4500 seconds, not {ttl!r}")
    with trio.CancelScope(shield=True):  # a cancel must not strand zeroconf's thread
        zc = await trio.to_thread.run_sync(_open_zeroconf, ad.address)
    try:
        info = _service_info(ad, ttl=ttl)
        try:
            await trio.to_thread.run_sync(lambda: zc.register_service(info, allow_name_change=True))
        except (ZeroconfError, BadTypeInNameException) as exc:
            raise DiscoveryError(f"cannot advertise {ad}: {exc!r}") from exc
        logger.info("advertising %s as %r", ad, info.name)
        yield Advertisement(zc, info, ad, ttl)
    finally:
        with trio.CancelScope(shield=True):
            # close() unregisters (goodbye packets) and stops zeroconf's thread.
            await trio.to_thread.run_sync(zc.close)


# --------------------------------------------------------------------------- browse


class Change(enum.Enum):
    APPEARED = "appeared"
    UPDATED = "updated"
    VANISHED = "vanished"


@dataclass(frozen=True)
class TableEvent:
    """A change in the list of tables on the LAN."""

    change: Change
    name: str  # the DNS-SD instance name: the key of the browser's table list
    ad: TableAd  # for VANISHED, the last advert seen

    def __str__(self) -> str:
        return f"{self.change.value}: {self.ad}"


@dataclass(frozen=True)
class AdReport:
    """What the browser thread learned about one instance name.

    ``ad`` is None when the advert is gone (goodbye or expiry, ``reason`` None)
    or unusable (``reason`` says why). A ``transient`` failure (no answer in
    time) leaves an already listed table alone; a bad advert drops it.
    """

    name: str
    ad: TableAd | None
    reason: str | None = None
    transient: bool = False


@dataclass
class TableTracker:
    """Turns browser reports into appear/update/vanish events (no I/O; tested alone).

    At most ``limit`` tables are listed, so a flood of adverts cannot grow
    memory without bound; each distinct rejection is logged once.
    """

    limit: int = MAX_TABLES
    tables: dict[str, TableAd] = field(default_factory=dict)
    _logged: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def _ignore(self, name: str, reason: str) -> None:
        if (name, reason) in self._logged:
            return
        if len(self._logged) >= 4 * self.limit:
            self._logged.clear()
        self._logged.add((name, reason))
        logger.warning("ignoring advert %r: %s", name, reason)

    def apply(self, report: AdReport) -> TableEvent | None:
        known = self.tables.get(report.name)
        if report.ad is None:
            if report.reason is not None:
                self._ignore(report.name, report.reason)
            if known is None or report.transient:
                return None
            del self.tables[report.name]
            return TableEvent(Change.VANISHED, report.name, known)
        if known is None and len(self.tables) >= self.limit:
            self._ignore(report.name, f"already listing {self.limit} tables")
            return None
        self.tables[report.name] = report.ad
        if known is None:
            return TableEvent(Change.APPEARED, report.name, report.ad)
        if known != report.ad:
            return TableEvent(Change.UPDATED, report.name, report.ad)
        return None


def _resolve(zc: Zeroconf, service_type: str, name: str) -> AdReport:
    """Fetch and decode one advert. Blocking: runs on zeroconf's browser thread."""
    try:
        info = ServiceInfo(service_type, name)
        if not info.request(zc, RESOLVE_TIMEOUT_MS):
            return AdReport(name, None, "no complete answer (SRV, TXT, address)", transient=True)
        addresses = info.parsed_addresses(IPVersion.V4Only) or info.parsed_scoped_addresses(
            IPVersion.V6Only
        )
        if not addresses:
            return AdReport(name, None, "no address")
        if info.port is None:
            return AdReport(name, None, "no port")
        return AdReport(name, TableAd.from_txt(info.text or b"", addresses[0], info.port))
    except BadAdvertisement as exc:
        return AdReport(name, None, str(exc))
    except Exception as exc:  # a callback on the browser thread must never raise
        return AdReport(name, None, f"cannot resolve: {exc!r}", transient=True)


class ReportBridge:
    """Carries reports from foreign threads (zeroconf's) into trio, in order.

    :meth:`deliver` blocks the calling thread while the channel is full
    (backpressure on the browser thread, never on an event loop), never
    raises, and returns at once for good after :meth:`close`.
    """

    def __init__(self, buffer: int = 64) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._send, self.reports = trio.open_memory_channel[AdReport](buffer)

    def deliver(self, report: AdReport) -> None:
        """Thread side: hand one report to trio."""
        try:
            trio.from_thread.run(self._send.send, report, trio_token=self._token)
        except (trio.RunFinishedError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the browse block has ended; nobody is listening any more
        except trio.Cancelled:
            pass  # the trio run is shutting down

    def close(self) -> None:
        """Trio side: stop listening; blocked and later deliveries return at once."""
        self.reports.close()


class _LivenessProber:
    """A thread that re-resolves every listed table and reports those that went silent."""

    def __init__(self, zc: Zeroconf, deliver: Callable[[AdReport], None], interval: float) -> None:
        self._zc = zc
        self._deliver = deliver
        self._interval = interval
        self._names: set[str] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="nodealer-discovery-liveness", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def watch(self, name: str, listed: bool) -> None:
        with self._lock:
            if listed:
                self._names.add(name)
            else:
                self._names.discard(name)

    def stop(self) -> None:
        """Blocking (up to one resolve timeout): worker thread only."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stopping.wait(self._interval):
            with self._lock:
                names = sorted(self._names)
            for name in names:
                if self._stopping.is_set():
                    return
                try:
                    answered = ServiceInfo(SERVICE_TYPE, name).request(
                        self._zc, LIVENESS_TIMEOUT_MS
                    )
                except Exception:  # zeroconf shutting down under us: stop quietly
                    return
                if not answered:
                    self.watch(name, False)
                    self._deliver(AdReport(name, None, "host stopped answering"))


class TableBrowser:
    """The tables on the LAN: ``async for event in browser`` and ``browser.tables``.

    Reports from the browser thread are folded into :attr:`tables` as the
    events are read, so the list and the events never disagree.
    """

    def __init__(self, reports: trio.MemoryReceiveChannel[AdReport]) -> None:
        self._reports = reports
        self._tracker = TableTracker()

    @property
    def tables(self) -> Mapping[str, TableAd]:
        """Every table seen so far and not vanished, by DNS-SD instance name (read-only)."""
        return MappingProxyType(self._tracker.tables)

    def __aiter__(self) -> TableBrowser:
        return self

    async def __anext__(self) -> TableEvent:
        while True:
            try:
                report = await self._reports.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                raise StopAsyncIteration from None
            event = self._tracker.apply(report)
            if event is not None:
                return event

    async def next_event(self, timeout: float) -> TableEvent | None:
        """The next event, or ``None`` after ``timeout`` seconds (handy in lobbies)."""
        with trio.move_on_after(timeout):
            return await self.__anext__()
        return None


@asynccontextmanager
async def browse(
    interface: str | None = None, *, liveness_interval: float = LIVENESS_INTERVAL_SECONDS
) -> AsyncIterator[TableBrowser]:
    """Watch the LAN for tables until the block ends.

    ``interface`` restricts mDNS to one local address; the default listens on
    every interface. Events come in the order the network showed them; a bad
    advert produces no event, only a log line. Every ``liveness_interval``
    seconds each listed table is re-resolved, so a host that crashed without
    a goodbye vanishes too (see AD_TTL_SECONDS).
    """
    if interface is not None:
        interface = _check_address(interface)
    if not liveness_interval > 0:
        raise DiscoveryError(f"liveness_interval must be positive, not {liveness_interval!r}")
    bridge = ReportBridge()
    deliver = bridge.deliver

    def on_change(
        zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:
        if state_change is ServiceStateChange.Removed:
            report = AdReport(name, None)
        else:
            report = _resolve(zeroconf, service_type, name)
        if not report.transient:
            prober.watch(name, report.ad is not None)
        deliver(report)

    # Opening is shielded so a cancel cannot strand a started zeroconf thread.
    with trio.CancelScope(shield=True):
        zc = await trio.to_thread.run_sync(_open_zeroconf, interface)
    prober = _LivenessProber(zc, deliver, liveness_interval)
    browser: ServiceBrowser | None = None
    try:
        with trio.CancelScope(shield=True):
            browser = await trio.to_thread.run_sync(
                lambda: ServiceBrowser(zc, SERVICE_TYPE, handlers=[on_change])
            )
            prober.start()
        yield TableBrowser(bridge.reports)
    finally:
        # Close the bridge first: a thread blocked handing us a report then
        # returns at once instead of deadlocking the joins below.
        bridge.close()
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(prober.stop)
            if browser is not None:
                await trio.to_thread.run_sync(browser.cancel)
            await trio.to_thread.run_sync(zc.close)


async def find_tables(seconds: float = 3.0, interface: str | None = None) -> list[TableAd]:
    """Browse for ``seconds`` and return the tables seen, e.g. for a one-shot listing."""
    async with browse(interface) as tables:
        with trio.move_on_after(seconds):
            async for _ in tables:
                pass
        return sorted(tables.tables.values(), key=lambda ad: (ad.game, ad.table_id))


async def find_table(
    wanted: Callable[[TableAd], bool],
    seconds: float = 4.0,
    interface: str | None = None,
    *,
    settle: float = FIND_SETTLE_SECONDS,
    first: Callable[[TableAd], object] | None = None,
) -> TableAd | None:
    """The first table (in :func:`find_tables`' order) that ``wanted``
    accepts, browsing at most ``seconds``: once one answers, only ``settle``
    seconds more (a second wanted table answering meanwhile is weighed
    too), not the whole browse - ``nodealer join`` goes to its table as soon
    as it is found. None when no wanted table answered in time. ``first``:
    a sort key putting the tables to prefer first (before game and id)."""
    async with browse(interface) as tables:
        deadline = trio.current_time() + seconds
        with trio.move_on_at(deadline) as looking:
            async for _ in tables:
                if any(wanted(ad) for ad in tables.tables.values()):
                    looking.deadline = min(looking.deadline, trio.current_time() + settle)
        found = [ad for ad in tables.tables.values() if wanted(ad)]
        rank = first or (lambda ad: 0)
        return min(found, key=lambda ad: (rank(ad), ad.game, ad.table_id), default=None)
