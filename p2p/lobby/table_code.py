"""The table code of a private table: a short code people read aloud
(``4721-walnut``), a PAKE (SPAKE2) over the lobby connection that proves both
ends know it, bound to the table id and both keys, and the host's limit on
wrong guesses (protocol.md §4.1, private tables).

Why SPAKE2 (``spake2`` on PyPI, the one magic-wormhole uses): maintained for
years by Brian Warner and in daily use by wormhole, pure Python over
Ed25519, 33 bytes per side; one run tests at most one guess, and a recorded
run teaches nothing about the code. The CPace package on PyPI (``cpace`` 0.1.0, 2026) is a
single fresh release with no track record: not what strangers' bytes should
meet."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field

from spake2 import SPAKE2_A, SPAKE2_B

from p2p.identity import PeerKey
from p2p.wire import canonical

CODE_TAG = "nodealer/table-code"

CODE_TRIES = 5  # wrong codes from one address ...
CODE_BLOCK = 300.0  # ... and it is not answered for this long (seconds)
CODE_TRIES_TOTAL = 20  # wrong codes from every address within CODE_WINDOW ...
CODE_WINDOW = 300.0  # ... and no private exchange is answered until it passes

# 256 words, easy to say and to type: a code is 4 digits and one of them,
# 10 000 x 256 = 2 560 000 codes (about 2^21.3)
WORDS = tuple(
    """acorn adobe album alpine amber anchor apple apron arrow aspen atlas autumn
badger bagel bamboo banjo barley basil beacon beaver bison blanket blossom bonfire
bramble bridge brook bucket buffalo butter cabin cactus camel canoe canyon carrot
castle cedar cello cherry chestnut cider cinnamon clover cobalt cocoa comet copper
coral cotton cougar coyote crayon cricket crystal cupcake daisy dolphin donkey dragon
drum eagle easel ember falcon feather fennel fiddle flute forest fossil fountain
fox galaxy garden garlic gecko ginger glacier goose granite grape gravel guitar
hammock harbor harp hazel hedgehog helmet heron hickory honey horizon husky igloo
iris island ivory jacket jaguar jasmine jelly jigsaw juniper kayak kettle kitten
koala ladder lagoon lantern lemon lilac lily lion lobster locket lotus magnet
mango maple marble meadow melon meteor mitten monkey moose mosaic muffin mustard
nectar needle nutmeg oasis oatmeal ocean olive onion orange orchid otter owl
paddle panda papaya parrot peach peanut pebble pelican pepper piano pickle pigeon
pillow pine pirate planet plum pocket pony poppy potato pretzel pumpkin puzzle
quail quartz quilt rabbit radish raven ribbon river robin rocket rose saddle
salmon sapphire satchel scarf seashell sesame shadow shovel silver sketch sled
snail sparrow spider spinach sponge spruce squash squirrel starfish stone sugar
summit sunset swan tablet tango teapot thistle thunder tiger timber tomato topaz
tortoise toucan tractor trumpet tulip tundra turnip turtle umbrella valley velvet
violin volcano waffle walnut walrus wagon whale whistle willow window winter
wizard wolf yogurt zebra zephyr zinnia badge bench candle dune elbow fabric
glove hollow jungle kiwi marsh nickel pearl rainbow""".split()
)
assert len(WORDS) == len(set(WORDS)) == 256

_CODE_RE = re.compile(r"\s*(?:(\d{4})[\s\-]+([a-z]+)|([a-z]+)[\s\-]+(\d{4}))\s*")


class BadCode(ValueError):
    """Text that is not a table code (4 digits and a word of the list)."""


def new_code() -> str:
    """A fresh table code, ``NNNN-word``, from ``secrets``."""
    return f"{secrets.randbelow(10_000):04d}-{secrets.choice(WORDS)}"


def parse_code(text: str) -> str:
    """The canonical form (``4721-walnut``) of what a person typed: the digits
    and the word in either order, a space or a dash between, any case.
    Raises :class:`BadCode` with a one-line reason."""
    match = _CODE_RE.fullmatch(text.lower()) if isinstance(text, str) else None
    if match is None:
        raise BadCode("a table code is 4 digits and a word, like 4721-walnut")
    digits, word = (match[1], match[2]) if match[1] else (match[4], match[3])
    if word not in WORDS:
        raise BadCode(f"{word!r} is not a table-code word: check the code with the host")
    return f"{digits}-{word}"


def _ids(table_id: bytes, host: PeerKey, joiner: PeerKey) -> tuple[bytes, bytes]:
    """SPAKE2's identities: the table and the host's key (A), the joiner's key (B)."""
    return canonical(CODE_TAG, "host", table_id, host.raw), canonical(
        CODE_TAG, "joiner", joiner.raw
    )


def _macs(
    key: bytes, table_id: bytes, host: PeerKey, joiner: PeerKey, m_a: bytes, m_b: bytes
) -> tuple[bytes, bytes]:
    """(joiner's MAC, host's MAC): each side's confirmation of the PAKE key
    over the whole transcript (table id, both keys, both PAKE messages)."""
    transcript = canonical(CODE_TAG, table_id, host.raw, joiner.raw, m_a, m_b)
    out = []
    for side in ("joiner", "host"):
        side_key = hmac.new(key, canonical(CODE_TAG, "confirm", side), hashlib.sha256).digest()
        out.append(hmac.new(side_key, transcript, hashlib.sha256).digest())
    return out[0], out[1]


class PakeFailed(Exception):
    """The other side's PAKE message or confirmation is wrong (wrong code,
    another table or key, or not a PAKE message at all)."""


@dataclass
class HostPake:
    """The host's side of one joiner's exchange (SPAKE2 side A)."""

    code: str
    table_id: bytes
    host: PeerKey
    joiner: PeerKey
    message: bytes = b""  # ours, to send

    def __post_init__(self) -> None:
        id_a, id_b = _ids(self.table_id, self.host, self.joiner)
        self._spake = SPAKE2_A(self.code.encode("ascii"), idA=id_a, idB=id_b)
        self.message = self._spake.start()

    def check(self, reply: bytes, mac: bytes) -> bytes:
        """The joiner's message and MAC; returns our MAC, or :class:`PakeFailed`."""
        try:
            key = self._spake.finish(reply)
        except Exception as exc:  # spake2 raises ValueError, SPAKEError, NotOnCurve
            raise PakeFailed(f"not a PAKE message: {exc}") from None
        theirs, ours = _macs(key, self.table_id, self.host, self.joiner, self.message, reply)
        if not hmac.compare_digest(theirs, mac):
            raise PakeFailed("wrong table code")
        return ours


class JoinerPake:
    """The joiner's side (SPAKE2 side B): :meth:`answer` the host's message,
    then :meth:`confirm` the host's MAC."""

    def __init__(self, code: str, table_id: bytes, host: PeerKey, joiner: PeerKey) -> None:
        id_a, id_b = _ids(table_id, host, joiner)
        self._spake = SPAKE2_B(code.encode("ascii"), idA=id_a, idB=id_b)
        self.message = self._spake.start()
        self._args = (table_id, host, joiner)
        self._host_mac: bytes | None = None

    def answer(self, host_message: bytes) -> bytes:
        """Our MAC for the host's message (or :class:`PakeFailed`)."""
        try:
            key = self._spake.finish(host_message)
        except Exception as exc:  # as above
            raise PakeFailed(f"not a PAKE message: {exc}") from None
        ours, self._host_mac = _macs(key, *self._args, host_message, self.message)
        return ours

    def confirm(self, mac: bytes) -> None:
        if self._host_mac is None or not hmac.compare_digest(self._host_mac, mac):
            raise PakeFailed("the host does not know the table code")


@dataclass
class Attempt:
    """One counted table-code attempt: a ``pake`` the host sent to
    ``address`` at ``time``, that address's try ``number`` in the block
    window; ``outcome`` is ``open`` until the reply is judged, then
    ``wrong`` (a wrong code or a malformed PAKE message) or ``unfinished``
    (the connection closed or timed out before a reply). A right code gives
    the attempt back and it is never listed."""

    address: str
    time: float
    number: int
    outcome: str = "open"


MAX_ATTEMPTS = 200  # settled attempts kept for the host's screen


@dataclass
class GuessLimit:
    """Table-code attempts the host counts (sans-I/O: the time comes in).

    An attempt is counted when the host sends its ``pake`` (:meth:`reserve`),
    before any reply, so parallel connections cannot test more codes than
    the limit; a right code gives it back (:meth:`give_back`); a wrong one
    or a connection that ends mid-exchange keeps it (:meth:`settle`)."""

    per_address: dict[str, list[float]] = field(default_factory=dict)
    recent: list[float] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)  # settled, oldest first
    total: int = 0  # attempts ever settled (a screen shows the ones it has not shown)

    def _prune(self, now: float) -> None:
        self.recent = [t for t in self.recent if now - t < CODE_WINDOW]
        for host in list(self.per_address):
            kept = [t for t in self.per_address[host] if now - t < CODE_BLOCK]
            if kept:
                self.per_address[host] = kept
            else:
                del self.per_address[host]

    def blocked(self, host: str, now: float) -> str | None:
        """Why ``host`` gets no private exchange now (its own tries are
        spent, or the table is paused), or None."""
        self._prune(now)
        if len(self.per_address.get(host, ())) >= CODE_TRIES:
            return f"{CODE_TRIES} table-code tries from {host}: not answered for a while"
        paused = self.paused_for(now)
        if paused is not None:
            return f"{CODE_TRIES_TOTAL} table-code tries in {CODE_WINDOW:g} s: paused"
        return None

    def address_blocked(self, host: str, now: float) -> bool:
        """``host`` spent its own tries (its connections get no answer)."""
        self._prune(now)
        return len(self.per_address.get(host, ())) >= CODE_TRIES

    def paused_for(self, now: float) -> float | None:
        """Seconds until the table answers private exchanges again, if the
        tries of every address together are spent; else None."""
        self._prune(now)
        over = len(self.recent) - CODE_TRIES_TOTAL
        if over < 0:
            return None
        return max(0.0, sorted(self.recent)[over] + CODE_WINDOW - now)

    def reserve(self, host: str, now: float) -> Attempt:
        """Count one attempt from ``host`` now (the host is sending ``pake``)."""
        self._prune(now)
        times = self.per_address.setdefault(host, [])
        times.append(now)
        self.recent.append(now)
        return Attempt(host, now, len(times))

    def give_back(self, attempt: Attempt) -> None:
        """The code was right: the attempt does not count."""
        for times in (self.per_address.get(attempt.address), self.recent):
            if times is not None and attempt.time in times:
                times.remove(attempt.time)
        if not self.per_address.get(attempt.address, True):
            del self.per_address[attempt.address]
        attempt.outcome = "right"

    def settle(self, attempt: Attempt, outcome: str) -> None:
        """The attempt keeps its count: ``wrong`` or ``unfinished``."""
        if attempt.outcome != "open":
            return
        attempt.outcome = outcome
        self.attempts.append(attempt)
        del self.attempts[:-MAX_ATTEMPTS]
        self.total += 1

    def wrong(self, host: str, now: float) -> None:
        """One wrong code from ``host`` now (reserved and settled at once)."""
        self.settle(self.reserve(host, now), "wrong")


def attempt_line(attempt: Attempt) -> str:
    """The host's line for a counted attempt (from the counter, never from
    text a connection sent)."""
    what = "wrong table code" if attempt.outcome == "wrong" else "table-code exchange not finished"
    return f"{what} (try {attempt.number} of {CODE_TRIES} from {attempt.address})"
