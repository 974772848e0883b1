"""All the shuffle and lock proofs of a deal checked in one sweep.

Theory of operation
-------------------
Every peer checks every other seat's shuffle proof (§1.6) and lock proof
(§1.7): with N seats, N−1 of each per peer per deal. :func:`verify_batch`
checks a list of them (:class:`ShuffleCheck`, :class:`LockCheck`, in pass
order) together, and :func:`verify_deal_batch` all those of one deal.

What a batch can merge, and why it is no random linear combination here
(protocol.md §1.11 has the counts): our proofs travel in the compact
Fiat–Shamir form (challenge e and responses, no commitments t). A verifier
accepts iff hashing the commitments it recomputes, ``t = f(statement, e,
responses)``, gives back e; so every t of every proof must be computed
exactly, as a point, and a hash equality cannot be combined with random
weights the way the equations ``t == f(…)`` of the commitment form can.
Each t is a linear combination, particular to its proof, of points that are
(apart from the generators) particular to that proof or shared with one
neighbour under other scalars, and neither group's library has a multi-scalar
multiplication: no multiplication can be shared between two proofs. The
sweep therefore computes exactly what the single verifiers compute, with
two savings: ``t₂`` reuses ``e·ĉ_{n−1}`` from ``t̂_{n−1}`` (one
multiplication less per shuffle proof), and all the multiplications of all
the proofs run in one parallel map, then the assembly of every proof's t
in another (two hand-offs to the worker threads instead of four per shuffle
proof and one per lock proof, and no serial tail per proof).

Soundness is exact, not probabilistic: the sweep accepts a proof iff
:func:`~mental_poker.proofs.verify_shuffle` / ``verify_lock`` would (same
points, same hashes); a batch accepts iff every one of its proofs does.
When it does not (a hash that differs, an invalid point, a length), the
checks are run again one by one in pass order, with the single verifiers,
and the first failure is reported: the same proof, and the same exception
naming the same point, as checking them on arrival would have given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import msgpack

from .context import Context
from .errors import InvalidPoint, MentalPokerError, ProofError, Verdict
from .group_api import Group
from .messages import LockPass, ShufflePass
from .parallel import _mark_worker, pmap, workers
from .proofs import (
    LockProof,
    ShuffleProof,
    _generators,
    _lock_challenge,
    _lock_prefix,
    _shuffle_challenge,
    _shuffle_prefix,
    _shuffle_weights,
    verify_lock,
    verify_shuffle,
)

# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class ShuffleCheck:
    """A shuffle proof with its statement (the arguments of ``verify_shuffle``)."""

    seat: int
    ctx: Context
    xs: Sequence[bytes]
    ys: Sequence[bytes]
    gamma: bytes
    proof: ShuffleProof

    def single(self) -> None:
        verify_shuffle(self.ctx, self.xs, self.ys, self.gamma, self.proof)


@dataclass(frozen=True, slots=True)
class LockCheck:
    """A lock proof with its statement (the arguments of ``verify_lock``)."""

    seat: int
    ctx: Context
    xs: Sequence[bytes]
    locked: Sequence[bytes]
    stripped: Sequence[bytes]
    gamma: bytes
    proof: LockProof

    def single(self) -> None:
        verify_lock(self.ctx, self.xs, self.locked, self.stripped, self.gamma, self.proof)


Check = ShuffleCheck | LockCheck


def statement_key(check: Check) -> bytes:
    """SHA-256 of everything a single verifier reads: the kind, the context,
    every point of the statement, Γ and the proof. Two checks with one key
    are the same computation, with the same result."""
    h = hashlib.sha256(b"nodealer/statement")
    h.update(b"shuffle" if isinstance(check, ShuffleCheck) else b"lock")
    for item in check.ctx.items():
        h.update(len(item).to_bytes(4, "big") + item)
    outputs = (check.ys,) if isinstance(check, ShuffleCheck) else (check.locked, check.stripped)
    for deck in (check.xs, *outputs):
        h.update(len(deck).to_bytes(4, "big"))
        h.update(b"".join(deck))
    h.update(check.gamma)
    h.update(msgpack.packb(check.proof.to_wire(), use_bin_type=True))
    return h.digest()


_checked_elsewhere: ContextVar[Callable[[Check], bool] | None] = ContextVar(
    "checked_elsewhere", default=None
)


@contextmanager
def checked_elsewhere(lookup: Callable[[Check], bool]) -> Iterator[None]:
    """Within the block (this thread), :func:`verify_single` takes
    ``lookup(check) is True`` as "this very statement verified" and does not
    verify it again. ``lookup`` must only say True for a check whose
    :func:`statement_key` it verified with the single verifier
    (:class:`Prechecker` does)."""
    token = _checked_elsewhere.set(lookup)
    try:
        yield
    finally:
        _checked_elsewhere.reset(token)


def verify_single(check: Check) -> None:
    """``check.single()``, unless a :func:`checked_elsewhere` lookup has
    already verified this very statement (same key, same result)."""
    lookup = _checked_elsewhere.get()
    if lookup is not None and lookup(check):
        return
    check.single()


def _holds_single(check: Check) -> bool:
    try:
        check.single()
    except MentalPokerError:
        return False
    return True


class Prechecker:
    """Verifies checks ahead of whoever needs them, in background threads
    (one whole check per thread at a time), in the order submitted
    (``nodealer verify``: the proofs of the whole log while the replay
    works through the moves; the second core).

    Used as the lookup of :func:`checked_elsewhere`: True iff an identical
    statement (:func:`statement_key`) was verified here; a check not yet
    started is taken back (the caller verifies it itself, on every core),
    one under way is waited for, one that failed answers False (the caller
    verifies it again and gets the error, and so the verdict, itself)."""

    def __init__(self) -> None:
        # one whole proof per thread (each verified inline there): larger
        # work units than splitting every proof across the threads
        threads = max(1, workers())
        self._pool = ThreadPoolExecutor(threads, "mental-poker-precheck", initializer=_mark_worker)
        self._futures: dict[bytes, Future[bool]] = {}

    def submit(self, checks: Iterable[Check]) -> None:
        for check in checks:
            key = statement_key(check)
            if key not in self._futures:
                self._futures[key] = self._pool.submit(_holds_single, check)

    def __call__(self, check: Check) -> bool:
        future = self._futures.get(statement_key(check))
        if future is None or future.cancel():
            return False
        return future.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Prechecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class Failure:
    """The first check of a batch that fails on its own: its index in the
    batch, its seat, and what the single verifier raised."""

    index: int
    check: Check
    error: MentalPokerError

    @property
    def seat(self) -> int:
        return self.check.seat


# ---------------------------------------------------------------- the sweep


def _well_formed(check: Check) -> bool:
    """The shape checks the single verifiers make before any arithmetic."""
    n = len(check.xs)
    if n == 0 or check.gamma == check.ctx.group.identity:
        return False
    if isinstance(check, ShuffleCheck):
        p = check.proof
        return all(len(v) == n for v in (check.ys, p.c, p.chain, p.s_hat, p.s_prime))
    return all(len(v) == n for v in (check.locked, check.stripped, check.proof.z_lock))


class _Plan:
    """The multiplications one proof needs (``(scalar, point)``; point None
    for the base point), and how to assemble its commitments from them."""

    __slots__ = ("check", "e", "extra", "group", "mults", "prefix", "start")

    def __init__(self, check: Check) -> None:
        self.check = check
        self.group: Group = check.ctx.group
        self.start = 0
        self.extra: object = None
        if isinstance(check, ShuffleCheck):
            self._shuffle(check)
        else:
            self._lock(check)

    def _shuffle(self, c: ShuffleCheck) -> None:
        n, p, g = len(c.xs), c.proof, self.group
        q = g.order
        h0, hs, _ = _generators(n, g)
        e, sp = p.e, p.s_prime
        minus_e = -e % q
        self.prefix = _shuffle_prefix(c.ctx, c.xs, c.ys, c.gamma, p.c)
        u = _shuffle_weights(self.prefix, n, g)
        prod_u = 1
        for uj in u:
            prod_u = prod_u * uj % q
        prev = [h0, *p.chain[:-1]]
        m: list[tuple[int, bytes | None]] = []
        m += zip(sp, hs, strict=True)  # t3: s′ᵢ·Hᵢ          [0, n)
        m += (((-e * uj) % q, cj) for uj, cj in zip(u, p.c, strict=True))  # −e·uⱼ·cⱼ [n, 2n)
        m += zip(sp, c.ys, strict=True)  # t4: s′ᵢ·Yᵢ        [2n, 3n)
        m += (((-p.s4 * uj) % q, xj) for uj, xj in zip(u, c.xs, strict=True))  # [3n, 4n)
        m += zip(sp, prev, strict=True)  # t̂: s′ᵢ·ĉᵢ₋₁     [4n, 5n)
        m += ((minus_e, ci) for ci in p.chain)  # −e·ĉᵢ      [5n, 6n)
        m += ((k, None) for k in p.s_hat)  # ŝᵢ·G             [6n, 7n)
        m += [
            (p.s1, None),
            (p.s2, None),
            (p.s3, None),
            (p.s4, None),
            (minus_e, c.gamma),
            (e * prod_u % q, h0),
        ]  # [7n, 7n+6)
        self.mults = m
        self.e = e

    def _lock(self, c: LockCheck) -> None:
        p = c.proof
        self.prefix = _lock_prefix(c.ctx, c.gamma, c.xs, c.locked, c.stripped)
        minus_e = -p.e % self.group.order
        m: list[tuple[int, bytes | None]] = []
        m += ((minus_e, li) for li in c.locked)  # −E_i = −e·L_i  [0, n)
        m += ((p.z, yi) for yi in c.stripped)  # z·Y_i           [n, 2n)
        m += zip(p.z_lock, c.xs, strict=True)  # z_i·X_i         [2n, 3n)
        m += [(p.z, None), (minus_e, c.gamma)]  # [3n, 3n+2)
        self.mults = m
        self.e = p.e

    def holds(self, r: Sequence[bytes]) -> bool:
        """Assemble the commitments from the products ``r`` (this plan's
        slice) and compare the challenge."""
        c, g = self.check, self.group
        add, identity = g.add, g.identity
        n = len(c.xs)
        if isinstance(c, ShuffleCheck):
            _, _, minus_h_sum = _generators(n, g)
            s1g, s2g, s3g, s4g, minus_e_gamma, h0_term = r[7 * n : 7 * n + 6]
            t3 = g.point_sum([s3g, *(p for p in r[0 : 2 * n] if p != identity)])
            t4 = g.point_sum([p for p in r[2 * n : 4 * n] if p != identity])
            t5 = add(s4g, minus_e_gamma)
            t_hat = [g.point_sum([r[6 * n + i], r[4 * n + i], r[5 * n + i]]) for i in range(n)]
            c_sum = g.point_sum(list(c.proof.c))
            t1 = add(s1g, g.mul(-self.e % g.order, add(c_sum, minus_h_sum)))
            # e·(ĉ_{n−1} − (Πu)·H₀) = e·ĉ_{n−1} − (e·Πu)·H₀, −e·ĉ_{n−1} from t̂
            t2 = add(add(s2g, r[6 * n - 1]), h0_term)
            ts = [t1, t2, t3, t4, t5, *t_hat]
            return _shuffle_challenge(self.prefix, c.proof.chain, ts, g) == self.e
        minus_big_e = r[0:n]
        b = [add(r[n + i], minus_big_e[i]) for i in range(n)]
        k = [add(r[2 * n + i], minus_big_e[i]) for i in range(n)]
        a1 = add(r[3 * n], r[3 * n + 1])
        return _lock_challenge(self.prefix, a1, b, k, g) == self.e


def _products(g: Group, work: Sequence[tuple[int, bytes | None]]) -> list[bytes]:
    mul, base_mul = g.mul, g.base_mul
    return pmap(lambda pair: base_mul(pair[0]) if pair[1] is None else mul(*pair), work)


def batch_holds(checks: Sequence[Check]) -> bool:
    """True iff every proof of ``checks`` verifies (exactly what the single
    verifiers decide, computed in one sweep). False, not an exception, for
    a proof that fails in any way (an invalid point included): then
    :func:`first_failure` says which and why."""
    if not all(_well_formed(c) for c in checks):
        return False
    groups = {c.ctx.group for c in checks}
    if len(groups) > 1:  # no product is shared across two groups
        return all(batch_holds([c for c in checks if c.ctx.group is g]) for g in groups)
    plans = [_Plan(c) for c in checks]
    work: list[tuple[int, bytes | None]] = []
    for plan in plans:
        plan.start = len(work)
        work += plan.mults
    try:
        products = _products(plans[0].group, work) if plans else []
        # every point given to a proof has been multiplied (validated) above
        verdicts = pmap(
            lambda plan: plan.holds(products[plan.start : plan.start + len(plan.mults)]), plans
        )
    except (InvalidPoint, ProofError):
        return False
    return all(verdicts)


def first_failure(checks: Sequence[Check]) -> Failure | None:
    """The single checks in order: the first that fails, or None."""
    for index, check in enumerate(checks):
        try:
            check.single()
        except MentalPokerError as exc:
            return Failure(index, check, exc)
    return None


def verify_batch(checks: Sequence[Check]) -> Failure | None:
    """None iff every proof verifies; else the first failing one in the
    order given (pass order), found by the single checks."""
    if not checks or batch_holds(checks):
        return None
    failure = first_failure(checks)
    if failure is None:  # pragma: no cover - the sweep and the singles agree
        raise AssertionError("the batch failed but every single check passes")
    return failure


# ---------------------------------------------------------------- one deal


def deal_checks(
    context: Context,
    deck: Sequence[bytes] | None,
    shuffles: Sequence[ShufflePass],
    locks: Sequence[LockPass],
    skip: int | None = None,
) -> list[Check]:
    """The proof checks of a deal's passes in pass order (shuffles of seats
    0…N−1, then locks), each against its input deck (``deck``: the deal's
    card points; None when not known yet: the first shuffle is left out),
    leaving out the seat ``skip`` (one's own passes)."""
    checks: list[Check] = []
    deck_in = None if deck is None else tuple(deck)
    for sp in shuffles:
        if sp.proof is not None and sp.seat != skip and deck_in is not None:
            ctx = context.at("shuffle", sp.seat)
            checks.append(ShuffleCheck(sp.seat, ctx, deck_in, sp.deck, sp.gamma, sp.proof))
        deck_in = sp.deck
    gammas = {sp.seat: sp.gamma for sp in shuffles}
    for lp in locks:
        if lp.proof is not None and lp.seat != skip and deck_in is not None:
            ctx = context.at("lock", lp.seat)
            gamma = gammas[lp.seat]
            checks.append(LockCheck(lp.seat, ctx, deck_in, lp.locked, lp.stripped, gamma, lp.proof))
        deck_in = lp.stripped
    return checks


def verify_deal_batch(
    context: Context,
    deck: Sequence[bytes],
    shuffles: Sequence[ShufflePass],
    locks: Sequence[LockPass],
    skip: int | None = None,
) -> Verdict:
    """Every shuffle and lock proof of a proven deal (but seat ``skip``'s)
    in one sweep: ``Verdict.good()``, or the verdict naming the seat of the
    first failing proof in pass order, an invalid point naming the seat that
    first sent it (protocol.md §1.1), as checking each pass on arrival would.

    Only the proofs and the order of the passes are checked here: every pass
    in turn (seats 0, 1, … for the shuffles, then for the locks, no lock
    before the last shuffle), each with a proof. The other checks of §1.5
    (sizes, repeated points, Γ) are :class:`~mental_poker.deal.DealTable`'s:
    a deal is accepted by a tracker, not by this function alone."""
    order = _out_of_order(shuffles, locks, skip)
    if order is not None:
        return order
    failure = verify_batch(deal_checks(context, deck, shuffles, locks, skip))
    if failure is None:
        return Verdict.good()
    error = failure.error
    if not isinstance(error, InvalidPoint):
        return Verdict.cheat(failure.seat, str(error))
    # the seat that first sent the point, among the passes before the
    # failing one, else the failing pass's seat (DealTable.authors)
    passes: list[ShufflePass | LockPass] = [*shuffles, *locks]
    kind = ShufflePass if isinstance(failure.check, ShuffleCheck) else LockPass
    seat = failure.seat
    for msg in passes:
        if isinstance(msg, kind) and msg.seat == failure.seat:
            break
        if error.point in sent_points(msg):
            seat = msg.seat
            break
    return Verdict.cheat(seat, f"sent a point that is not valid: {error}")


def _out_of_order(
    shuffles: Sequence[ShufflePass], locks: Sequence[LockPass], skip: int | None
) -> Verdict | None:
    for kind, passes in (("shuffle", shuffles), ("lock", locks)):
        for i, msg in enumerate(passes):
            if msg.seat != i:
                return Verdict.cheat(msg.seat, f"{kind} pass out of turn (expected seat {i})")
            if msg.proof is None and msg.seat != skip:
                return Verdict.cheat(msg.seat, f"{kind} pass without its proof")
    if locks and len(shuffles) <= max(msg.seat for msg in locks):
        return Verdict.cheat(locks[0].seat, "lock pass before every shuffle pass")
    return None


def sent_points(msg: ShufflePass | LockPass) -> tuple[bytes, ...]:
    """The points a pass sends (what ``DealTable.authors`` records)."""
    if isinstance(msg, ShufflePass):
        return (*msg.deck, msg.gamma)
    return (*msg.stripped, *msg.locked)
