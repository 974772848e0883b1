"""One deal: shuffle pass, lock pass, then key reveals until the final audit.

Theory of operation
-------------------
A *deal* shuffles a public list of known cards (a full deck, two decks for Mao
M1, or the face-up discard pile being reshuffled, Bomb K9 / Mao M26) into
``n`` hidden *positions*. Nobody learns the order unless every seat colludes.

1. Shuffle pass, in seat order. Seat j takes the previous deck X (seat 0: the
   deck points), draws one shuffle key s and a secret permutation π, and
   publishes ``Y[i] = s·X[π(i)]``, ``Γ = s·G`` and a shuffle proof.
2. Lock pass, in seat order. Seat j takes the previous deck X, multiplies
   every position by an independent *lock key* (``L[i] = k[i]·X[i]``, the
   *locked* deck), then strips its shuffle key (``X′[i] = s⁻¹·L[i]``, no
   permutation; the *stripped* deck, passed on), with one lock proof that
   it knows every ``k[i]`` and that the key stripped is the one behind its
   Γ. After the last seat, position i holds
   ``F[i] = (Π_j k_j[i])·D[π(i)]``. Lock before strip, so that every
   published point but F still carries the last seat's shuffle key: the other
   way round, the last seat's stripped deck ``(Π_{j<N−1} k_j)·D`` was
   readable by everyone as soon as the others revealed their keys to deal
   that seat a card. The proof of the lock keys matters as much: a seat
   that could publish ``L[i] = s·X[j]`` (another position's input) would
   read card j from the others' key reveals for a card dealt to it at i.
3. Play. Every hidden value of a position is a stack of *layers*
   ``(seat, before, after)`` with ``after = key·before``: one lock layer per
   seat (before = that seat's input point, after = its locked point) plus
   one *relock* layer whenever a hidden card changes hands (Bluff pile
   pick-up: the new holder puts its own fresh key over the current value,
   then the old holder *hands over*: it takes its key off the value with a
   Chaum–Pedersen proof, never revealing it, since a revealed key would open
   every layer under the relock point to everyone). A revealed key is
   checked at once against its layer, so it needs no proof.

   * deal position i to seat s: every other seat reveals its keys for i;
   * show to everyone: the holder reveals too;
   * :meth:`DealTable.readers` says who can decrypt a position now,
     :meth:`DealTable.decrypt` does it for one seat with its own secrets.
   * identity claims (Bomb K12 A/B): the holder proves, with every other key
     for the position revealed, that the card is in a public set S.
4. Final reveal. At the end every seat reveals its shuffle key and all its
   keys; :meth:`DealTable.audit` then re-checks the whole deal without proofs
   and names any cheater. A shuffle key is never revealed earlier: with all
   of them, anyone could trace the permutations.

:class:`DealTable` is the public tracker (h11-style: it does not know which
seat "we" are; every peer and the offline verifier feed it the same messages
in log order). ``feed`` returns a :class:`Verdict` that depends on the
messages alone (never on what this peer decrypted privately), so every
tracker agrees. A verdict naming a seat rejects the message and changes
nothing. A verdict with no seat (possible only in an unproven deal) means
the message itself was correct and stays applied, but opening a position
exposed an earlier cheat (a non-card, or a card already read publicly);
the audit names its author. :class:`~mental_poker.keys.DealSecrets` is one seat's secret state; the
``make_*`` functions of :mod:`mental_poker.seat` turn it into the seat's
messages; the messages and their codec are :mod:`mental_poker.messages`. Everything on the wire
is plain msgpack-able data (``to_wire``/``decode_message``); see protocol.md §1.

Heavy methods (``feed`` of a pass, ``audit``, the ``make_*`` of passes) are
plain blocking functions: call them with ``trio.to_thread.run_sync``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from .batch import Check, LockCheck, ShuffleCheck, batch_holds, verify_single
from .errors import (
    CheatDetected,
    DecodeError,
    InvalidPoint,
    MentalPokerError,
    NotDecryptable,
    ProtocolError,
    Verdict,
)
from .group_api import Group
from .keys import DealSecrets
from .messages import (
    Complaint,
    DealSetup,
    FinalReveal,
    Handover,
    IdentityClaim,
    KeyReveal,
    LockPass,
    Message,
    Relock,
    ShufflePass,
)
from .parallel import pmap
from .proofs import (
    verify_handover,
    verify_member,
)

# ---------------------------------------------------------------- the tracker


def _pass_key(check: Check) -> tuple[str, int]:
    return ("shuffle" if isinstance(check, ShuffleCheck) else "lock", check.seat)


@dataclass(slots=True)
class Layer:
    """``after = key·before``. ``removed``: taken off the current value by a
    handover (its key stays secret until the final reveal)."""

    seat: int
    before: bytes
    after: bytes
    key: int | None = None
    removed: bool = False


@dataclass
class _Handover:
    seat: int
    position: int
    layer: Layer
    before: bytes
    after: bytes


@dataclass
class _Claim:
    seat: int
    position: int
    members: tuple[int, ...]


@dataclass
class DealTable:
    """Public tracker of one deal. Feed it every message in log order.

    It does not know which seat "we" are unless told: ``own_seat`` is a
    performance option for a caller that feeds its own passes straight from
    :func:`make_shuffle`/:func:`make_lock` (their proofs are not re-verified;
    every other check still applies, and received messages are always
    checked). The table machine, observers and the offline verifier never
    set it: they check everything, so verdicts never depend on who runs the
    tracker.

    ``deferred`` batches the proofs of the passes (protocol.md §1.11): a
    pass is checked at once for everything but its proof, and the proofs
    are verified together, in one sweep (:mod:`mental_poker.batch`), when
    the last lock pass arrives (before the deal can be played), or earlier
    with :meth:`verify_pending`. A failing proof then gives the verdict that
    checking on arrival gives (the first failing pass in pass order, an
    invalid point naming its first sender), but with a later message, and
    the tracker stays failed: every later ``feed`` returns that verdict.
    Off by default: the table machine and the offline verifier check each
    proof on arrival."""

    setup: DealSetup
    own_seat: int | None = None
    deferred: bool = False
    made: list[tuple[tuple[bytes, ...], Message]] = field(default_factory=list)
    """passes this peer's own code made, with the deck each was made on
    (:meth:`made_here`): when the log brings one back unchanged on that same
    deck, its proof is not verified again; anything else is checked"""
    phase: str = "shuffle"
    next_seat: int = 0
    shuffles: list[ShufflePass] = field(default_factory=list)
    locks: list[LockPass] = field(default_factory=list)
    layers: list[list[Layer]] = field(default_factory=list)
    current: list[bytes] = field(default_factory=list)
    public: dict[int, int] = field(default_factory=dict)
    known: dict[int, int] = field(default_factory=dict)
    shuffle_keys: dict[int, int] = field(default_factory=dict)
    claims: list[_Claim] = field(default_factory=list)
    handovers: list[_Handover] = field(default_factory=list)
    authors: dict[bytes, int] = field(default_factory=dict)
    """The seat that first sent each point of an accepted message: points
    of decks are validated on first use, and an invalid one names it."""
    pending: list[tuple[Check | None, int, tuple[bytes, ...]]] = field(default_factory=list)
    """Deferred mode: the passes whose proofs are not verified yet, in pass
    order (their check, or None for a pass not to verify; seat; the points
    they send, recorded in ``authors`` once verified)."""
    failed: Verdict | None = None
    """Deferred mode: the verdict of a failed batch (the tracker is done)."""
    proof_checked: set[tuple[str, int]] = field(default_factory=set)
    """``("shuffle" | "lock", seat)`` of the passes whose proof this tracker
    verified (on arrival or in a batch that held): the audit need not redo
    what such a proof already proved (:meth:`audit`, protocol.md §1.4 step 7)"""
    released: bool = False
    """The points' parsed forms were let go (:meth:`release_points`)."""

    # ------------------------------------------------------------ queries

    @property
    def group(self) -> Group:
        """The deal's group (its context's)."""
        return self.setup.context.group

    def expected_input(self) -> tuple[bytes, ...]:
        """The deck the next seat must transform in the current pass."""
        if self.phase == "shuffle":
            return self.shuffles[-1].deck if self.shuffles else self.setup.deck.points
        if self.phase == "lock":
            return self.locks[-1].stripped if self.locks else self.shuffles[-1].deck
        raise ProtocolError("both passes are over")

    @property
    def dealt(self) -> bool:
        """Both passes are done: positions can be revealed."""
        return self.phase == "play"

    def ciphertext(self, position: int) -> bytes:
        self._require_play(position)
        return self.current[position]

    def outstanding(self, position: int) -> list[Layer]:
        """Layers of this position whose key is still secret."""
        self._require_play(position)
        return [layer for layer in self.layers[position] if layer.key is None and not layer.removed]

    def readers(self, position: int) -> frozenset[int]:
        """Seats that can decrypt this position now: every seat when all
        keys are out, the holder when only its keys are missing, else none."""
        seats = {layer.seat for layer in self.outstanding(position)}
        if not seats:
            return frozenset(range(self.setup.seats))
        return frozenset(seats) if len(seats) == 1 else frozenset()

    def holder(self, position: int) -> int | None:
        """The one seat whose keys are missing, if exactly one."""
        seats = {layer.seat for layer in self.outstanding(position)}
        return next(iter(seats)) if len(seats) == 1 else None

    def public_card(self, position: int) -> int | None:
        """The card at a position every seat can read, once read."""
        return self.public.get(position)

    def sole_layer(self, position: int, seat: int) -> Layer:
        """The only outstanding layer of a position, which must be ``seat``'s."""
        out = self.outstanding(position)
        if len(out) != 1 or out[0].seat != seat:
            raise NotDecryptable(f"position {position}: seat {seat} is not the only key holder")
        return out[0]

    def removed_layers(self, position: int, seat: int) -> list[Layer]:
        """``seat``'s layers of a position that a handover took off."""
        self._require_play(position)
        return [layer for layer in self.layers[position] if layer.seat == seat and layer.removed]

    def own_layer(self, position: int, seat: int) -> Layer:
        """The one outstanding layer of ``seat`` at a position (what a
        handover takes off)."""
        mine = [layer for layer in self.outstanding(position) if layer.seat == seat]
        if len(mine) != 1:
            raise NotDecryptable(f"position {position}: seat {seat} holds no single closed layer")
        return mine[0]

    def peeled(self, position: int) -> bytes:
        """The position's value with every revealed key removed."""
        self._require_play(position)
        product = 1
        for layer in self.layers[position]:
            if layer.key is not None and not layer.removed:
                product = product * layer.key % self.group.order
        return self.group.mul(self.group.inverse(product), self.current[position])

    def complement(self, excluded: Iterable[int]) -> tuple[int, ...]:
        """The deal's cards not in ``excluded`` (the set for Bomb K12 B)."""
        drop = set(excluded)
        return tuple(sorted(c for c in self.setup.deck.cards if c not in drop))

    def missing_final(self) -> list[int]:
        """Seats that have not made their final reveal."""
        return [s for s in range(self.setup.seats) if s not in self.shuffle_keys]

    def decrypt(self, position: int, seat: int, secrets: DealSecrets) -> int:
        """The card at ``position`` for ``seat``, using its own keys for the
        layers still secret. NotDecryptable if another seat's key is missing;
        CheatDetected if the value is not an unused card of the deal."""
        out = self.outstanding(position)
        if secrets.seat != seat:
            raise ProtocolError(f"these are seat {secrets.seat}'s secrets, not seat {seat}'s")
        secrets.check_belongs(self.setup)
        if any(layer.seat != seat for layer in out):
            raise NotDecryptable(f"position {position} still needs another seat's key")
        own = secrets.keys_for(position)
        g = self.group
        product = 1
        for layer in self.layers[position]:
            if layer.removed:
                continue
            key = layer.key
            if key is None:
                key = next((k for k in own if g.mul(k, layer.before) == layer.after), None)
                if key is None:
                    raise ProtocolError(f"own secrets do not open position {position}")
            product = product * key % g.order
        card = self._read(position, g.mul(g.inverse(product), self.current[position]), private=True)
        self.known[position] = card
        return card

    # ------------------------------------------------------------ feeding

    def feed(self, message: Message) -> Verdict:
        """Check and apply one message. A verdict naming a seat rejects the
        message and changes nothing; a verdict with no seat (unproven deal
        only) keeps the correct message applied and flags the deal as broken
        (see the module docstring)."""
        try:
            handler = {
                ShufflePass: self._feed_shuffle,
                LockPass: self._feed_lock,
                KeyReveal: self._feed_keys,
                Relock: self._feed_relock,
                Handover: self._feed_handover,
                IdentityClaim: self._feed_identity,
                FinalReveal: self._feed_final,
                Complaint: self._feed_complaint,
            }[type(message)]
        except KeyError:
            raise DecodeError(f"not a mental-poker message: {message!r:.60}") from None
        if not 0 <= message.seat < self.setup.seats:
            return Verdict.cheat(None, f"no seat {message.seat} at this table")
        if self.failed is not None:
            return self.failed
        if self.pending and isinstance(message, Complaint):
            # a complaint reads ``authors``: the passes before it first
            verdict = self.verify_pending()
            if not verdict:
                return verdict
        verdict = self._handle(handler, message)
        if not verdict and verdict.seat is not None and self.pending:
            # an earlier pass whose proof fails is named first, as on arrival
            earlier = self.verify_pending()
            return verdict if earlier else earlier
        return verdict

    def _handle(self, handler: Callable[[Message], Verdict], message: Message) -> Verdict:
        try:
            return handler(message)
        except CheatDetected as exc:
            return exc.verdict
        except InvalidPoint as exc:
            return self._invalid(exc, message.seat)
        except MentalPokerError as exc:
            return Verdict.cheat(message.seat, str(exc))

    def made_here(self, message: Message) -> None:
        """``message`` (a pass) was just made by this peer's own code, from
        its own secrets, on the deck this tracker expects now: its proof
        holds by construction, and verifying it again when the log brings it
        back only costs time (a quarter of a 4-seat deal's checks). Messages
        are compared whole, and on the same input deck: one altered before
        signing, or met on another deck (a log cut back and rebuilt), is
        verified as usual. Verdicts do not change: an honest proof verifies."""
        self.made.append((self.expected_input(), message))

    def _made(self, msg: Message) -> bool:
        return bool(self.made) and (self.expected_input(), msg) in self.made

    def spend(self) -> None:
        """The deal is dealt (the last lock pass is in): the passes' proofs
        have served (each was checked on arrival or is our own; the audit
        re-checks from the revealed keys only what no proof showed), as have
        our own passes kept to skip their check (:attr:`made`): released,
        for memory bounded by the table, not the game."""
        self.shuffles[:] = [replace(p, proof=None) for p in self.shuffles]
        self.locks[:] = [replace(p, proof=None) for p in self.locks]
        self.made.clear()

    def release_points(self) -> None:
        """Once a later deal is under way (the table machine calls it for the
        deals before a new one): the parsed form each point of this deal
        kept of itself is let go. A point of this process
        (:mod:`mental_poker.secp256k1`) keeps libsecp256k1's parsed key: six
        times the memory of its 33 bytes, some 1,000 points a deal. The
        points of the passes' decks, of the layers, of :attr:`current` and
        the keys of :attr:`authors` become their plain encodings, one object
        per value (the passes' Γ and the points of later relocks and
        handovers keep theirs). Equal as before, and checked as before by
        any later use (parsed, i.e. validated, again: about 10 µs more per
        use, which is why the deal in play keeps them), so no verdict
        changes; an invalid point still names its first sender
        (:attr:`authors`, keyed by the same values)."""
        if self.released or not self.dealt:
            return
        plain: dict[bytes, bytes] = {}

        def bare(point: bytes) -> bytes:
            found = plain.get(point)
            if found is None:
                found = plain[point] = bytes(point)
            return found

        def deck(points: Sequence[bytes]) -> tuple[bytes, ...]:
            return tuple(bare(p) for p in points)

        self.shuffles[:] = [replace(p, deck=deck(p.deck)) for p in self.shuffles]
        self.locks[:] = [
            replace(p, stripped=deck(p.stripped), locked=deck(p.locked)) for p in self.locks
        ]
        for stack in self.layers:
            for layer in stack:
                layer.before, layer.after = bare(layer.before), bare(layer.after)
        self.current[:] = [bare(p) for p in self.current]
        self.authors = {bare(p): seat for p, seat in self.authors.items()}
        self.released = True

    def verify_pending(self) -> Verdict:
        """Deferred mode: verify the proofs of the passes received so far
        together (one sweep); on failure, one by one in pass order, which
        names the seat of the first failing proof as checking on arrival
        would. A failure is final (``failed``)."""
        if self.failed is not None:
            return self.failed
        # the queue stays in place until it is checked: a feed() running
        # meanwhile (another thread) sees it and checks it too, so nothing is
        # dealt on a proof still being checked (the review's race)
        queue = list(self.pending)
        if batch_holds([check for check, _, _ in queue if check is not None]):
            for check, seat, points in queue:
                self._sent(seat, points)
                if check is not None:
                    self.proof_checked.add(_pass_key(check))
            del self.pending[: len(queue)]
            return Verdict.good()
        for check, seat, points in queue:
            if check is not None:
                try:
                    check.single()
                except InvalidPoint as exc:
                    self.failed = self._invalid(exc, seat)
                except MentalPokerError as exc:
                    self.failed = Verdict.cheat(seat, str(exc))
                if self.failed is not None:
                    self.phase = "failed"  # nothing is dealt from this deck
                    self.pending.clear()
                    return self.failed
                self.proof_checked.add(_pass_key(check))
            self._sent(seat, points)
        raise AssertionError("the batch failed but every single check passes")  # pragma: no cover

    def _accept_pass(self, check: Check | None, seat: int, points: tuple[bytes, ...]) -> None:
        """Verify a pass's proof now, or queue it (deferred mode); record
        its points' author once its proof (and every earlier one) holds."""
        if self.deferred and (check is not None or self.pending):
            self.pending.append((check, seat, points))
            return
        if check is not None:
            verify_single(check)  # checked ahead in another thread (verify), or now
            self.proof_checked.add(_pass_key(check))
        self._sent(seat, points)

    def _invalid(self, exc: InvalidPoint, default: int | None) -> Verdict:
        """An invalid point met on first use names the seat that sent it
        (``default``: the point came with the message being checked)."""
        seat = self.authors.get(exc.point, default) if exc.point is not None else default
        return Verdict.cheat(seat, f"sent a point that is not valid: {exc}")

    def _sent(self, seat: int, points: Iterable[bytes]) -> None:
        for point in points:
            self.authors.setdefault(point, seat)

    def _turn(self, phase: str, seat: int) -> None:
        if self.phase != phase or seat != self.next_seat:
            raise CheatDetected(
                Verdict.cheat(
                    seat,
                    f"{phase} pass out of turn (expected {self.phase} of seat {self.next_seat})",
                )
            )

    def _check_distinct(self, seat: int, deck: Sequence[bytes], what: str) -> None:
        if len(set(deck)) != len(deck):
            raise CheatDetected(Verdict.cheat(seat, f"{what} holds the same point twice"))
        if self.group.identity in deck:  # decoding refuses it; this guards direct callers
            raise CheatDetected(Verdict.cheat(seat, f"{what} holds the identity"))

    def _feed_shuffle(self, msg: ShufflePass) -> Verdict:
        self._turn("shuffle", msg.seat)
        self._check_distinct(msg.seat, msg.deck, "shuffled deck")
        if len(msg.deck) != self.setup.size or (msg.proof is None) == self.setup.proven:
            return Verdict.cheat(msg.seat, "shuffle pass does not match the deal setup")
        if msg.gamma == self.group.identity:
            return Verdict.cheat(msg.seat, "Γ is the identity")
        check = None
        if msg.proof is not None and msg.seat != self.own_seat and not self._made(msg):
            ctx = self.setup.context.at("shuffle", msg.seat)
            deck_in = self.expected_input()
            check = ShuffleCheck(msg.seat, ctx, deck_in, msg.deck, msg.gamma, msg.proof)
        self._accept_pass(check, msg.seat, (*msg.deck, msg.gamma))
        self.shuffles.append(msg)
        self._advance("lock")
        return Verdict.good()

    def _feed_lock(self, msg: LockPass) -> Verdict:
        self._turn("lock", msg.seat)
        n = self.setup.size
        if (
            len(msg.stripped) != n
            or len(msg.locked) != n
            or (msg.proof is None) == self.setup.proven
        ):
            return Verdict.cheat(msg.seat, "lock pass does not match the deal setup")
        self._check_distinct(msg.seat, msg.stripped, "stripped deck")
        self._check_distinct(msg.seat, msg.locked, "locked deck")
        check = None
        if msg.proof is not None and msg.seat != self.own_seat and not self._made(msg):
            ctx = self.setup.context.at("lock", msg.seat)
            gamma = self.shuffles[msg.seat].gamma
            deck_in = self.expected_input()
            check = LockCheck(msg.seat, ctx, deck_in, msg.locked, msg.stripped, gamma, msg.proof)
        if not self.setup.proven and msg.seat == self.setup.seats - 1 and msg.seat != self.own_seat:
            # The last stripped deck is what every later step multiplies
            # (reads, relocks, handovers). In a proven deal the lock proof
            # has already checked it; here it is checked at once, so that
            # an honest seat never meets an invalid point after the passes.
            valid = pmap(self.group.is_valid_point, msg.stripped)
            if not all(valid):
                i = valid.index(False)
                seat = self.authors.get(msg.stripped[i], msg.seat)  # its first sender
                return Verdict.cheat(seat, f"point {i} of the last stripped deck is not valid")
        self._accept_pass(check, msg.seat, (*msg.stripped, *msg.locked))
        self.locks.append(msg)
        if len(self.locks) == self.setup.seats and self.pending:
            # deferred mode: every proof holds before the deal can be played
            # (the phase stays "lock" while they are checked)
            verdict = self.verify_pending()
            if not verdict:
                self.locks.pop()  # a refused message is not kept
                return verdict
        self._advance("play")
        if self.phase == "play":
            inputs = [self.shuffles[-1].deck, *(lock.stripped for lock in self.locks[:-1])]
            self.layers = [
                [
                    Layer(lock.seat, deck_in[i], lock.locked[i])
                    for lock, deck_in in zip(self.locks, inputs, strict=True)
                ]
                for i in range(n)
            ]
            self.current = list(self.locks[-1].stripped)
        return Verdict.good()

    def _advance(self, next_phase: str) -> None:
        self.next_seat += 1
        if self.next_seat == self.setup.seats:
            self.phase, self.next_seat = next_phase, 0

    def _match_keys(
        self, seat: int, keys: Sequence[tuple[int, int]], final: bool = False
    ) -> list[tuple[tuple[int, int], Layer]]:
        """Each distinct (position, key) pair with the layer it opens (checked
        in parallel), or CheatDetected. A key opens one layer only, so more
        distinct pairs than the seat has layers is refused before any work.
        A layer a handover removed opens only in the ``final`` reveal: its
        key, out earlier, would let everyone read the card from the values
        under it, though another seat now holds it."""
        self._require_play()
        mul = self.group.mul
        unique = list(dict.fromkeys(keys))
        if not self._owns_at_least(seat, len(unique)):
            owned = sum(layer.seat == seat for stack in self.layers for layer in stack)
            raise CheatDetected(
                Verdict.cheat(seat, f"{len(unique)} keys revealed for {owned} layers")
            )

        def find(pair: tuple[int, int]) -> Layer | InvalidPoint | None:
            """The seat's oldest layer at the position that the key opens;
            a layer over an invalid point opens with no key (protocol.md
            §1.1): if none opens, the first such point, else None."""
            position, key = pair
            invalid = None
            for layer in self.layers[position]:
                if layer.seat != seat or (layer.removed and not final):
                    continue
                if layer.key is not None:
                    if layer.key == key:
                        return layer
                    continue
                try:
                    if mul(key, layer.before) == layer.after:
                        return layer
                except InvalidPoint as exc:
                    invalid = invalid or exc
            return invalid

        found = pmap(find, unique)
        for (position, _), layer in zip(unique, found, strict=True):  # in message order
            if isinstance(layer, InvalidPoint):
                raise layer
            if layer is None:
                raise CheatDetected(
                    Verdict.cheat(
                        seat, f"revealed key for position {position} does not open its layer"
                    )
                )
        return list(zip(unique, found, strict=True))  # type: ignore[arg-type]

    def _owns_at_least(self, seat: int, count: int) -> bool:
        """Whether ``seat`` has at least ``count`` layers (counted only as far
        as needed: a reveal of one or two keys looks at a few stacks)."""
        for stack in self.layers:
            for layer in stack:
                if layer.seat == seat:
                    count -= 1
            if count <= 0:
                return True
        return count <= 0

    def shown_card(self, message: KeyReveal, position: int) -> int:
        """The card ``position`` opens to with the keys of ``message`` added
        to the revealed ones, checked as :meth:`feed` checks a key reveal
        (keys, then the card read) but applying nothing: a card played face
        up with its holder's keys (Mao M4). Raises CheatDetected with the
        verdict ``feed`` would give (seat None: the card is no card of the
        deal or already public elsewhere), NotDecryptable if a key is still
        missing."""
        self._require_play(position)
        g = self.group
        try:
            matched = self._match_keys(message.seat, message.keys)
            opened = {id(layer): key for (_, key), layer in matched}
            product = 1
            for layer in self.layers[position]:
                if layer.removed:
                    continue
                key = layer.key if layer.key is not None else opened.get(id(layer))
                if key is None:
                    raise NotDecryptable(f"position {position} still has a closed layer")
                product = product * key % g.order
            if position in self.public:
                return self.public[position]
            return self._read(position, g.mul(g.inverse(product), self.current[position]))
        except InvalidPoint as exc:
            raise CheatDetected(self._invalid(exc, message.seat)) from exc

    def _apply_keys(self, matched: Sequence[tuple[tuple[int, int], Layer]]) -> Verdict:
        touched = set()
        for (position, key), layer in matched:
            layer.key = key
            touched.add(position)
        verdict = Verdict.good()
        for position in sorted(touched):
            if position in self.public or self.outstanding(position):
                continue
            try:
                self.public[position] = self._read(position, self.peeled(position))
            except CheatDetected as exc:
                verdict = verdict if not verdict.ok else exc.verdict
        return verdict

    def _feed_keys(self, msg: KeyReveal) -> Verdict:
        return self._apply_keys(self._match_keys(msg.seat, msg.keys))

    def _feed_relock(self, msg: Relock) -> Verdict:
        self._require_play(msg.position)
        if msg.seat in self.shuffle_keys:
            # a layer its owner can no longer open: the audit could name nobody
            return Verdict.cheat(msg.seat, "relock after its final reveal")
        before = self.current[msg.position]
        if msg.point == before:
            return Verdict.cheat(msg.seat, "relock with the unit key")
        self.layers[msg.position].append(Layer(msg.seat, before, msg.point))
        self.current[msg.position] = msg.point
        self._sent(msg.seat, (msg.point,))
        self.public.pop(msg.position, None)
        self.known.pop(msg.position, None)
        return Verdict.good()

    def _feed_handover(self, msg: Handover) -> Verdict:
        self._require_play(msg.position)
        layer = self.own_layer(msg.position, msg.seat)
        if all(other.seat == msg.seat for other in self.outstanding(msg.position)):
            return Verdict.cheat(msg.seat, "handover with no new holder's relock over it")
        before = self.current[msg.position]
        ctx = self.setup.context.at("handover", msg.seat)
        verify_handover(ctx, layer.before, layer.after, msg.point, before, msg.proof)
        layer.removed = True
        self.current[msg.position] = msg.point
        self._sent(msg.seat, (msg.point,))
        self.handovers.append(_Handover(msg.seat, msg.position, layer, before, msg.point))
        return Verdict.good()

    def _feed_identity(self, msg: IdentityClaim) -> Verdict:
        self._require_play()
        layer = self.sole_layer(msg.position, msg.seat)
        deck = self.setup.deck
        if any(m not in deck for m in msg.members):
            return Verdict.cheat(msg.seat, "identity claim names a card outside the deal")
        pts = [(m, deck.point(m)) for m in msg.members]
        ctx = self.setup.context.at("identity", msg.seat)
        verify_member(ctx, pts, layer.before, layer.after, self.peeled(msg.position), msg.proof)
        self.claims.append(_Claim(msg.seat, msg.position, msg.members))
        return Verdict.good()

    def _feed_complaint(self, msg: Complaint) -> Verdict:
        """Always a verdict: against the point's first sender if it is
        invalid, against the complainer if it is valid."""
        if self.phase not in ("shuffle", "lock") or msg.seat != self.next_seat:
            return Verdict.cheat(msg.seat, "complaint when it is not its pass")
        if not 0 <= msg.position < self.setup.size:
            return Verdict.cheat(msg.seat, f"complaint about position {msg.position}: no such")
        point = self.expected_input()[msg.position]
        if self.group.is_valid_point(point):
            return Verdict.cheat(
                msg.seat, f"false complaint: point {msg.position} of its input deck is valid"
            )
        # the deck points (seat 0's shuffle input) are always valid, so the
        # point came in an accepted pass: its first sender is named
        return Verdict.cheat(
            self.authors[point], f"point {msg.position} of its deck is not a valid point"
        )

    def _feed_final(self, msg: FinalReveal) -> Verdict:
        self._require_play()
        if msg.seat in self.shuffle_keys:
            return Verdict.cheat(msg.seat, "second final reveal")
        if self.group.base_mul(msg.shuffle_key) != self.shuffles[msg.seat].gamma:
            return Verdict.cheat(msg.seat, "revealed shuffle key does not match its Γ")
        matched = self._match_keys(msg.seat, msg.keys, final=True)
        opened = {id(layer) for _, layer in matched}
        for position, stack in enumerate(self.layers):
            for layer in stack:
                if layer.seat == msg.seat and layer.key is None and id(layer) not in opened:
                    return Verdict.cheat(
                        msg.seat, f"final reveal lacks its key for position {position}"
                    )
        self.shuffle_keys[msg.seat] = msg.shuffle_key
        return self._apply_keys(matched)

    # ------------------------------------------------------------ audit

    def audit(self) -> Verdict:
        """After every final reveal: re-check the whole deal from keys alone
        (each shuffle is a permutation under one key, each strip removes that
        key, every position opens to a distinct card, every identity claim
        holds). Names the first cheater in seat order; an invalid point
        names the seat that sent it. A pass whose proof this tracker
        verified is not redone, nor are the reads made when each position's
        last key came out (protocol.md §1.4 step 7: the same verdicts)."""
        self._require_play()
        try:
            return self._audit()
        except InvalidPoint as exc:
            return self._invalid(exc, None)

    def _audit(self) -> Verdict:
        g, mul = self.group, self.group.mul
        missing = self.missing_final()
        if missing:
            return Verdict.cheat(missing[0], "has not made its final reveal")
        for position, stack in enumerate(self.layers):
            for layer in stack:
                if layer.key is None:
                    return Verdict.cheat(
                        layer.seat, f"its key for position {position} was never revealed"
                    )
        # A pass whose proof this tracker verified (``proof_checked``) needs
        # no re-check: its proof showed the relation for the one key behind
        # its Γ, and the final reveal checked ``s·G == Γ`` (protocol.md §1.4
        # step 7, §1.9). The others (unproven deals, our own passes) are
        # re-checked from the revealed key.
        deck_in: Sequence[bytes] = self.setup.deck.points
        for shuffle in self.shuffles:
            if ("shuffle", shuffle.seat) not in self.proof_checked:
                s_inv = g.inverse(self.shuffle_keys[shuffle.seat])
                undone = pmap(lambda y, s_inv=s_inv: mul(s_inv, y), shuffle.deck)
                if sorted(undone) != sorted(deck_in):
                    return Verdict.cheat(
                        shuffle.seat, "shuffle output is not its input permuted under one key"
                    )
            deck_in = shuffle.deck
        for lock in self.locks:  # each locked point was checked by its key
            if ("lock", lock.seat) in self.proof_checked:
                continue
            s = self.shuffle_keys[lock.seat]
            redone = pmap(lambda x, s=s: mul(s, x), lock.stripped)
            if list(redone) != list(lock.locked):
                return Verdict.cheat(lock.seat, "stripped deck is not its locked deck unkeyed")
        for handover in self.handovers:
            if g.mul(handover.layer.key, handover.after) != handover.before:
                return Verdict.cheat(handover.seat, "handover took off another key than its own")
        size = self.setup.size
        faces: list[int | None] = [self.public.get(p) for p in range(size)]
        if None in faces:
            # every position is read (and checked: a card of the deal, no
            # other public position's) once its last key is out, so after
            # the final reveals this is left only for a position that did
            # not read to a card (an unproven deal's cheat)
            faces = pmap(lambda p: self.setup.deck.index_of(self.peeled(p)), range(size))
        if None in faces or len(set(faces)) != len(faces):
            # unreachable once every check above passed; kept as a guard
            return Verdict.cheat(None, "the positions do not open to the deal's cards")
        for claim in self.claims:
            if faces[claim.position] not in claim.members:
                return Verdict.cheat(
                    claim.seat, f"identity claim for position {claim.position} is false"
                )
        return Verdict.good()

    # ------------------------------------------------------------ helpers

    def _require_play(self, position: int | None = None) -> None:
        if self.phase != "play":
            raise ProtocolError("the shuffle and lock passes are not complete")
        if position is not None and (
            not isinstance(position, int) or not 0 <= position < self.setup.size
        ):
            raise ProtocolError(f"no position {position!r} in this deal")

    def _read(self, position: int, point: bytes, *, private: bool = False) -> int:
        """Map a fully decrypted point to its card; a non-card or a card
        already seen elsewhere is cheating (blamed by the final audit in an
        unproven deal; impossible after checked proofs). ``feed`` compares
        with the public reads only, so that every tracker fed the same
        messages reaches the same verdicts; a seat's own ``decrypt``
        (``private``) also compares with what that seat read before."""
        card = self.setup.deck.index_of(point)
        if card is None:
            raise CheatDetected(
                Verdict.cheat(None, f"position {position} decrypts to no card of the deal")
            )
        earlier = (*self.public.items(), *self.known.items()) if private else self.public.items()
        for other, seen in earlier:
            if seen == card and other != position:
                raise CheatDetected(
                    Verdict.cheat(None, f"positions {other} and {position} hold the same card")
                )
        return card
