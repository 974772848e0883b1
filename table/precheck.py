"""The pass proofs of a saved log verified ahead of ``nodealer verify``'s
replay, in a second process: the second core.

Theory of operation
-------------------
A proven deal's shuffle and lock proofs are most of what ``verify`` computes
(a 20-round 6-seat Mao: 348 proofs, about 80,000 variable-base
multiplications). Most of them can be stated without replaying the log
(:class:`PassReader`: every pass but the first shuffle of a reshuffle, whose
input deck is the faces the game reads), so a second process reads the same
file (``python -m table.precheck LOG``), states them and checks each with the
single verifier, while the replay works through the moves. A process, not a
thread: libsecp256k1 and libsodium release the GIL for every call, and a
thread that must win the GIL back after every multiplication while the
replay runs Python waits up to the switch interval each time (it checked
next to nothing before the replay caught up with it and waited for it).

What comes back (:class:`ProofsAhead`) is only a lookup for
:func:`~mental_poker.batch.checked_elsewhere`: for each entry that may hold a
pass, the :func:`~mental_poker.batch.statement_key` of each check stated
there and whether it held. The replay takes a check as verified only for the
very same statement (the key hashes everything the verifier reads) found
good; anything else (a check not stated ahead, one that failed, a child that
never started, died or said garbage) answers False and the replay verifies
the check itself and reaches its own verdict. The child decides nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgpack

from mental_poker import group
from mental_poker.batch import Check, LockCheck, ShuffleCheck, statement_key
from mental_poker.context import Context
from mental_poker.deck import Deck
from mental_poker.errors import MentalPokerError
from mental_poker.messages import DealSetup, LockPass, ShufflePass, decode_message
from p2p.envelope import Entry, TableSpec
from p2p.store import RecordStream, table_of

from .replay import SetupError, parse_setup


class PassReader:
    """The shuffle and lock proofs of a log's bodies that can be stated
    without replaying it (every pass but the first shuffle of a reshuffle,
    whose input deck is the faces the game reads), one body at a time in log
    order: what a :class:`~mental_poker.batch.Prechecker` verifies ahead of
    the replay. Only a guess at what the replay will check: a pass out of
    turn or malformed is simply left out (the replay checks whatever it
    meets itself, and a lookup answers only for the very same statement).
    Holds the last deck of each deal still in its passes, nothing more."""

    def __init__(self, spec: TableSpec, setup_body: Any) -> None:
        self.spec = spec
        self.seats = 0
        self._first: tuple[bytes, ...] = ()
        self._deals: dict[int, _Passes] = {}
        try:
            setup = parse_setup(spec, setup_body)
        except SetupError:
            return
        if not setup.proven:
            return
        self.seats = setup.seats
        self._group = setup.group
        cards = (c.index for c in setup.engine().deck(setup.decoded_config()))
        self._first = Deck.of(cards, self._group).points

    def take(self, body: Any) -> list[Check]:
        """The proof checks the next body of the log states (most: none)."""
        if not self.seats or not isinstance(body, dict) or body.get("t") != "deal":
            return []
        number, msg = body.get("deal"), body.get("msg")
        if type(number) is not int or not isinstance(msg, dict) or number < 0:
            return []
        if msg.get("type") not in ("shuffle", "lock"):
            return []
        points = msg.get("deck") or msg.get("stripped") or ()
        if not isinstance(points, (list, tuple)) or len(points) < 2:
            return []  # malformed: the replay meets it and names its author
        n = len(points)
        context = Context(self.spec.table_id, number, group=self._group)
        try:
            placeholder = DealSetup(context, self.seats, Deck.of(range(n), self._group), True)
            message = decode_message(msg, placeholder)
        except (MentalPokerError, ValueError, TypeError):
            return []
        passes = self._deals.get(number)
        if passes is None:
            passes = self._deals[number] = _Passes(self._first if number == 0 else None)
        checks = passes.take(message, self.seats, context)
        if passes.locks == self.seats:
            passes.deck, passes.gammas = None, {}  # dealt: later passes are out of turn
        return checks


@dataclass
class _Passes:
    """One deal's passes as :class:`PassReader` has met them: the deck the
    next pass takes (None: not known), each seat's Γ, how many of each."""

    deck: tuple[bytes, ...] | None
    gammas: dict[int, bytes] = field(default_factory=dict)
    shuffles: int = 0
    locks: int = 0

    def take(self, message: Any, seats: int, context: Context) -> list[Check]:
        deck_in, checks = self.deck, []
        if isinstance(message, ShufflePass) and not self.locks:
            if message.seat != self.shuffles:
                return []
            if message.proof is not None and deck_in is not None:
                ctx = context.at("shuffle", message.seat)
                checks.append(
                    ShuffleCheck(
                        message.seat, ctx, deck_in, message.deck, message.gamma, message.proof
                    )
                )
            self.shuffles += 1
            self.gammas[message.seat] = message.gamma
            self.deck = message.deck
        elif isinstance(message, LockPass) and self.shuffles == seats:
            if message.seat != self.locks or self.locks == seats:
                return []
            if message.proof is not None and deck_in is not None:
                ctx, gamma = context.at("lock", message.seat), self.gammas[message.seat]
                checks.append(
                    LockCheck(
                        message.seat,
                        ctx,
                        deck_in,
                        message.locked,
                        message.stripped,
                        gamma,
                        message.proof,
                    )
                )
            self.locks += 1
            self.deck = message.stripped
        return checks


def pass_checks(spec: TableSpec, bodies: Sequence[Any]) -> list[Check]:
    """Every check :class:`PassReader` finds in these bodies (the first one
    the setup), in log order."""
    if not bodies:
        return []
    reader = PassReader(spec, bodies[0])
    return [check for body in bodies[1:] for check in reader.take(body)]


def _may_pass(entry: Any, seq: int) -> bool:
    """Whether the read-ahead decodes this entry's body: the setup, and a
    body that may be a pass (msgpack spells a short text as its bytes)."""
    body = entry.event.body
    return seq == 1 or b"shuffle" in body or b"lock" in body


# ---------------------------------------------------------------- the child


def _holds(check: Check) -> bool:
    try:
        check.single()
    except MentalPokerError:
        return False
    return True


def serve(path: Path, out: BinaryIO) -> None:
    """The child's work: every pass proof of the log at ``path`` that
    :class:`PassReader` states, checked in log order; for each entry that
    may hold a pass, ``[seq, [[key, held], ...]]`` (msgpack) on ``out``."""
    group.set_workers(1)  # this process is the second core
    packer = msgpack.Packer(use_bin_type=True)
    spec: TableSpec | None = None
    reader: PassReader | None = None
    for _, record in RecordStream(path):  # no index: a truncated entry only costs time
        if spec is None:
            spec = table_of(record)
            continue
        if record["t"] != "entry":
            continue
        entry = Entry.from_wire(record["e"])
        if not _may_pass(entry, entry.seq):
            continue
        body = entry.event.decoded_body()
        if reader is None:
            reader = PassReader(spec, body)
            continue
        results = [[statement_key(check), _holds(check)] for check in reader.take(body)]
        said = packer.pack([entry.seq, results])
        out.write(len(said).to_bytes(4, "big") + said)
        out.flush()


# ---------------------------------------------------------------- the parent


MIN_LOG_BYTES = 256 * 1024
"""Smaller logs are verified in one process: starting the second one (an
interpreter and its imports, about 0.3 CPU s) would cost more than the
proofs of a short game."""


BUSY = 2.0
"""Load average per core above which no read-ahead process is started:
processes of one program share the share of one when others take the cores
(bench/README.md, the 20-round log on 2 cores: twice as fast at a load of
1.5-2.4, either way at 3.3, slower by up to half at 4-7), and one process
then does the least work."""


def _cores_taken() -> bool:
    """Whether other processes already keep every core busy (False where
    the system says nothing of its load)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows
        return False
    return load > BUSY * (os.cpu_count() or 1)


class ProofsAhead:
    """The child process and what it said, used as the lookup of
    :func:`~mental_poker.batch.checked_elsewhere`; nothing (every lookup
    False) with one worker thread, in a frozen program, on a machine whose
    cores are all taken (:data:`BUSY`), for a log under
    :data:`MIN_LOG_BYTES` or if the child cannot start. Tell it where the
    replay is (:meth:`reached`); a lookup waits for the child only until it
    has passed that entry."""

    def __init__(self, path: Path) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._good: set[bytes] = set()
        self._at = 0  # the child has said all it will about entries up to here
        self._seq = 0  # the replay's entry
        if group.workers() < 2 or getattr(sys, "frozen", False) or _cores_taken():
            return
        try:
            if path.stat().st_size < MIN_LOG_BYTES:
                return
        except OSError:
            return  # the verifier says why it cannot read it
        root = str(Path(__file__).resolve().parent.parent)
        path_env = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "table.precheck", str(path)],
                bufsize=0,  # a read returns what the child has said so far
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=dict(os.environ, PYTHONPATH=path_env),
            )
        except OSError:
            return

    def reached(self, seq: int) -> None:
        """The replay is at entry ``seq``."""
        self._seq = seq

    def __call__(self, check: Check) -> bool:
        if self._process is None:
            return False
        key = statement_key(check)
        while key not in self._good and self._at < self._seq and self._listen():
            pass
        if key in self._good:
            self._good.discard(key)
            return True
        return False

    def _listen(self) -> bool:
        """One message of the child (False: it said its last)."""
        assert self._process is not None and self._process.stdout is not None
        try:
            size = int.from_bytes(_read(self._process.stdout, 4), "big")
            if size > MAX_SAID:
                raise ValueError(f"{size} bytes said at once")
            seq, results = msgpack.unpackb(_read(self._process.stdout, size))
            for key, held in results:
                if type(key) is bytes and held is True:
                    self._good.add(key)
        except Exception:  # the end, or garbage: nothing more is taken from it
            self.close()
            return False
        if type(seq) is int:
            self._at = max(self._at, seq)
        return True

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()  # ours alone; done or not, it has nothing more to say
            process.wait()
            assert process.stdout is not None
            process.stdout.close()

    def __enter__(self) -> ProofsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


MAX_SAID = 1 << 16
"""The most bytes the child says about one entry (a few checks, 40 bytes each)."""


def _read(stream: BinaryIO, size: int) -> bytes:
    out = b""
    while len(out) < size:
        got = stream.read(size - len(out))
        if not got:
            raise EOFError("the read-ahead ended")
        out += got
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m table.precheck LOG``: the child (see the module docstring)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m table.precheck LOG", file=sys.stderr)
        return 2
    try:
        serve(Path(args[0]), sys.stdout.buffer)
    except Exception:
        return 1
    return 0


__all__ = ["PassReader", "ProofsAhead", "pass_checks", "serve"]


if __name__ == "__main__":
    raise SystemExit(main())
