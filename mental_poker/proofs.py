"""The three zero-knowledge proofs of a deal (non-interactive, Fiat–Shamir).

Theory of operation
-------------------
1. :func:`prove_shuffle` / :func:`verify_shuffle` — exponentiation shuffle:
   public X (input deck), Y (output deck), Γ; the prover knows s ≠ 0 and a
   permutation π with ``Y[i] = s·X[π(i)]`` and ``Γ = s·G``. This is the
   Terelius–Wikström proof of a shuffle (permutation commitment + commitment
   chain, as specified by Haenni–Locher–Koenig–Dubuis for re-encryption
   mix-nets) with the re-encryption relation replaced by "same scalar", and
   Γ added so that the key is pinned (and tied to the later strip proof).
2. :func:`prove_lock` / :func:`verify_lock` — the lock pass: every position
   is locked with a fresh key (``locked[i] = k[i]·input[i]``), then the
   shuffle key is removed (``locked[i] = s·stripped[i]``, the stripped deck
   is passed on). One Σ-protocol under one challenge proves both: a
   Chaum–Pedersen proof ``log_G Γ = log_{stripped[i]} locked[i]`` for every
   i (one nonce, one response) and a Schnorr proof of knowledge of each
   ``k[i]`` (one nonce and one response per position). Without the second
   part a seat could publish ``locked[i] = s·input[j]`` for another
   position j, and the others' key reveals for a card dealt to it at i
   would then decrypt position j for it.
   :func:`prove_handover` / :func:`verify_handover` — the same
   Chaum–Pedersen relation for one card: a seat takes the key of one of its
   layers ``(V, W)`` off a position's current value P without revealing it,
   ``P = k·Q`` with ``W = k·V`` (a hidden card handed to another seat).
3. :func:`prove_member` / :func:`verify_member` — a hidden card's identity
   is in a public set S (Bomb K12 A; K12 B is membership in the complement):
   a Cramer–Damgård–Schoenmakers OR of Chaum–Pedersen proofs
   ``log_V W = log_{D_c} C′`` over the members c of S.

All three are sent in the compact (challenge, response) form: instead of the
prover's commitments t the proof carries the challenge e; the verifier
recomputes every t from the responses and accepts only if hashing them gives
back e. It is the same Σ-protocol (each t is a function of the statement,
e and the responses), with a smaller proof and n+5 fewer points to validate.

Every hash starts with a domain label and the :class:`Context` items
(version, table, deal, step, seat), then the whole statement (n, Γ, every
input and output point, every commitment). Soundness: the shuffle proof's
error is about (n+2)/q per challenge, the others 1/q, for the group order
q (edwards25519: L ≈ 2**252; secp256k1: N ≈ 2**256), so each is above 128
bits even against 2**100 hash queries.

Every function works in the group of its context (``ctx.group``,
:mod:`mental_poker.group_api`); a proof object keeps that group for its wire
form (scalar encoding). A difference ``a − e·W`` is computed as
``a + (−e mod order)·W``: the same point, and no negation needed (secp256k1
through coincurve has none).

Verifiers raise :class:`ProofError` with the failing check named. They need
no validated points: every point given to a verifier is multiplied in it
(received points before any sum of them), and the multiplication validates
it (``group.py``), raising :class:`InvalidPoint` with the point. Handover and
identity verifiers multiply the layer's ``before`` V before its ``after`` W
(protocol.md §1.1 fixes that order: it decides whom a verdict names).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache

from .context import Context, u64
from .errors import DecodeError, ProofError
from .group import ED25519, G
from .group_api import Group, hash_items
from .parallel import pmap, run_chunked
from .rand import Rng

SHUFFLE_LABEL = b"nodealer/v1/shuffle-proof"
LOCK_LABEL = b"nodealer/v1/lock-proof"
IDENTITY_LABEL = b"nodealer/v1/identity-proof"
HANDOVER_LABEL = b"nodealer/v1/handover-proof"
GENERATOR_LABEL = b"nodealer/v1/generator"
MAX_CARDS = 54 * 16


# ---------------------------------------------------------------- wire helpers


def _scalars(g: Group, value: object, n: int, what: str) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or len(value) != n:
        raise DecodeError(f"{what}: expected a list of {n} scalars")
    return tuple(g.decode_scalar(s) for s in value)


def _fields(obj: object, keys: tuple[str, ...], what: str) -> dict:
    if not isinstance(obj, dict) or set(obj) != set(keys):
        raise DecodeError(f"{what}: expected a map with exactly the keys {keys}")
    return obj


# ---------------------------------------------------------------- generators


@cache
def generator(i: int, group: Group = ED25519) -> bytes:
    """Independent generator number i (0 = H₀, 1…n = position generators)."""
    return group.hash_to_point(GENERATOR_LABEL, u64(i))


@lru_cache(maxsize=16)
def _generators(n: int, g: Group = ED25519) -> tuple[bytes, tuple[bytes, ...], bytes]:
    """H₀, the n position generators, and −Σ Hᵢ (what the verifiers add)."""
    hs = tuple(generator(i + 1, g) for i in range(n))
    return generator(0, g), hs, g.neg(g.point_sum(list(hs)))


# ---------------------------------------------------------------- 1. shuffle


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """``c`` permutation commitments, ``chain`` commitment chain ĉ,
    challenge ``e``, responses ``s1…s4``, ``s_hat``, ``s_prime``."""

    c: tuple[bytes, ...]
    chain: tuple[bytes, ...]
    e: int
    s1: int
    s2: int
    s3: int
    s4: int
    s_hat: tuple[int, ...]
    s_prime: tuple[int, ...]
    group: Group = field(default=ED25519, repr=False, compare=False)

    KEYS = ("c", "chain", "e", "s", "s_hat", "s_prime")

    def to_wire(self) -> dict:
        enc = self.group.encode_scalar
        return {
            "c": list(self.c),
            "chain": list(self.chain),
            "e": enc(self.e),
            "s": [enc(x) for x in (self.s1, self.s2, self.s3, self.s4)],
            "s_hat": [enc(x) for x in self.s_hat],
            "s_prime": [enc(x) for x in self.s_prime],
        }

    @classmethod
    def from_wire(cls, obj: object, n: int, group: Group = ED25519) -> ShuffleProof:
        f = _fields(obj, cls.KEYS, "shuffle proof")
        s = _scalars(group, f["s"], 4, "shuffle proof s")
        return cls(
            group.parse_points(f["c"], n, "shuffle proof c"),
            group.parse_points(f["chain"], n, "shuffle proof chain"),
            group.decode_scalar(f["e"]),
            *s,
            _scalars(group, f["s_hat"], n, "shuffle proof s_hat"),
            _scalars(group, f["s_prime"], n, "shuffle proof s_prime"),
            group,
        )


def _shuffle_prefix(
    ctx: Context, xs: Sequence[bytes], ys: Sequence[bytes], gamma: bytes, c: Sequence[bytes]
) -> bytes:
    return hash_items(
        SHUFFLE_LABEL, *ctx.items(), u64(len(xs)), GENERATOR_LABEL, gamma, *xs, *ys, *c
    )


def _shuffle_challenge(
    prefix: bytes, chain: Sequence[bytes], ts: Sequence[bytes], g: Group = ED25519
) -> int:
    return g.hash_to_scalar(prefix, b"e", *chain, *ts)


def _shuffle_weights(prefix: bytes, n: int, g: Group = ED25519) -> list[int]:
    return [g.hash_to_scalar(prefix, b"u", u64(j)) for j in range(n)]


def prove_shuffle(
    ctx: Context,
    xs: Sequence[bytes],
    ys: Sequence[bytes],
    gamma: bytes,
    s: int,
    perm: Sequence[int],
    rng: Rng | None = None,
) -> ShuffleProof:
    """Prove ``ys[i] == s·xs[perm[i]]`` for all i and ``gamma == s·G``."""
    g = ctx.group
    q, add, mul, base_mul, random_scalar = g.order, g.add, g.mul, g.base_mul, g.random_scalar
    n = len(xs)
    inv = [0] * n
    for i, j in enumerate(perm):
        inv[j] = i
    h0, hs, _ = _generators(n, g)
    r = [random_scalar(rng) for _ in range(n)]
    c = pmap(lambda j: add(base_mul(r[j]), hs[inv[j]]), range(n))
    prefix = _shuffle_prefix(ctx, xs, ys, gamma, c)
    u = _shuffle_weights(prefix, n, g)
    up = [u[perm[i]] for i in range(n)]
    r_hat = [random_scalar(rng) for _ in range(n)]
    # ĉᵢ = r̂ᵢ·G + u′ᵢ·ĉᵢ₋₁ in closed form ĉᵢ = Rᵢ·G + Uᵢ·H₀, so that the
    # points can be computed in parallel instead of along the chain.
    big_r, big_u, acc_r, acc_u = [], [], 0, 1
    for i in range(n):
        acc_r = (r_hat[i] + up[i] * acc_r) % q
        acc_u = acc_u * up[i] % q
        big_r.append(acc_r)
        big_u.append(acc_u)
    chain = pmap(lambda i: add(base_mul(big_r[i]), mul(big_u[i], h0)), range(n))
    r_bar = sum(r) % q
    r_tilde = sum(rj * uj for rj, uj in zip(r, u, strict=True)) % q
    w1, w2, w3, w4 = (random_scalar(rng) for _ in range(4))
    w_hat = [random_scalar(rng) for _ in range(n)]
    w_prime = [random_scalar(rng) for _ in range(n)]
    t1, t2, t5 = base_mul(w1), base_mul(w2), base_mul(w4)
    t3 = add(base_mul(w3), g.msm(list(zip(w_prime, hs, strict=True))))
    t4 = g.msm([((s * w_prime[inv[j]] - w4 * u[j]) % q, xs[j]) for j in range(n)])
    prev = [h0, *chain[:-1]]
    t_hat = pmap(lambda i: add(base_mul(w_hat[i]), mul(w_prime[i], prev[i])), range(n))
    e = _shuffle_challenge(prefix, chain, [t1, t2, t3, t4, t5, *t_hat], g)
    return ShuffleProof(
        tuple(c),
        tuple(chain),
        e,
        (w1 + e * r_bar) % q,
        (w2 + e * big_r[-1]) % q,
        (w3 + e * r_tilde) % q,
        (w4 + e * s) % q,
        tuple((w_hat[i] + e * r_hat[i]) % q for i in range(n)),
        tuple((w_prime[i] + e * up[i]) % q for i in range(n)),
        g,
    )


def verify_shuffle(
    ctx: Context, xs: Sequence[bytes], ys: Sequence[bytes], gamma: bytes, proof: ShuffleProof
) -> None:
    """Raise :class:`ProofError` unless ``proof`` shows that ``ys`` is ``xs``
    permuted with every card multiplied by the scalar behind ``gamma``.
    Points need not be validated beforehand: each of them is multiplied
    here, and an invalid one raises InvalidPoint."""
    g = ctx.group
    q, add, mul, base_mul = g.order, g.add, g.mul, g.base_mul
    n = len(xs)
    if n == 0:
        raise ProofError("shuffle proof: empty deck")
    if not (len(ys) == n and len(proof.c) == n and len(proof.chain) == n):
        raise ProofError("shuffle proof: lengths differ from the deck")
    if len(proof.s_hat) != n or len(proof.s_prime) != n:
        raise ProofError("shuffle proof: response lengths differ from the deck")
    if gamma == g.identity:
        raise ProofError("shuffle proof: Γ is the identity")
    h0, hs, minus_h_sum = _generators(n, g)
    e, c, chain, sp = proof.e, proof.c, proof.chain, proof.s_prime
    minus_e = -e % q
    prefix = _shuffle_prefix(ctx, xs, ys, gamma, c)
    u = _shuffle_weights(prefix, n, g)
    prod_u = 1
    for uj in u:
        prod_u = prod_u * uj % q
    # Terms that multiply each received point come first: that validates
    # every point (group_api.py), so an invalid one raises InvalidPoint
    # naming itself before any sum of points is formed.
    t3 = add(
        base_mul(proof.s3),
        g.msm(
            [*zip(sp, hs, strict=True), *(((-e * uj) % q, cj) for uj, cj in zip(u, c, strict=True))]
        ),
    )
    t4 = g.msm(
        [
            *zip(sp, ys, strict=True),
            *(((-proof.s4 * uj) % q, xj) for uj, xj in zip(u, xs, strict=True)),
        ]
    )
    t5 = add(base_mul(proof.s4), mul(minus_e, gamma))
    prev = [h0, *chain[:-1]]
    t_hat = pmap(
        lambda i: g.point_sum(
            [base_mul(proof.s_hat[i]), mul(sp[i], prev[i]), mul(minus_e, chain[i])]
        ),
        range(n),
    )
    c_sum = g.point_sum(run_chunked(lambda part: g.point_sum(list(part)), c))
    t1 = add(base_mul(proof.s1), mul(minus_e, add(c_sum, minus_h_sum)))
    t2 = add(base_mul(proof.s2), mul(minus_e, add(chain[-1], mul(-prod_u % q, h0))))
    if _shuffle_challenge(prefix, chain, [t1, t2, t3, t4, t5, *t_hat], g) != e:
        raise ProofError("shuffle proof does not verify")


# ---------------------------------------------------------------- 2. lock


@dataclass(frozen=True, slots=True)
class LockProof:
    """Compact proof of a lock pass: challenge ``e``, response ``z`` for the
    shuffle key s (``locked[i] = s·stripped[i]``, ``Γ = s·G``) and one
    response per position, ``z_lock``, for the lock keys
    (``locked[i] = k[i]·input[i]``)."""

    e: int
    z: int
    z_lock: tuple[int, ...]
    group: Group = field(default=ED25519, repr=False, compare=False)

    KEYS = ("e", "z", "z_lock")

    def to_wire(self) -> dict:
        enc = self.group.encode_scalar
        return {
            "e": enc(self.e),
            "z": enc(self.z),
            "z_lock": [enc(x) for x in self.z_lock],
        }

    @classmethod
    def from_wire(cls, obj: object, n: int, group: Group = ED25519) -> LockProof:
        f = _fields(obj, cls.KEYS, "lock proof")
        return cls(
            group.decode_scalar(f["e"]),
            group.decode_scalar(f["z"]),
            _scalars(group, f["z_lock"], n, "lock proof z_lock"),
            group,
        )


def _lock_prefix(
    ctx: Context,
    gamma: bytes,
    xs: Sequence[bytes],
    locked: Sequence[bytes],
    stripped: Sequence[bytes],
) -> bytes:
    return hash_items(LOCK_LABEL, *ctx.items(), u64(len(xs)), gamma, *xs, *locked, *stripped)


def _lock_challenge(
    prefix: bytes,
    a1: bytes,
    strip_commits: Sequence[bytes],
    key_commits: Sequence[bytes],
    g: Group = ED25519,
) -> int:
    return g.hash_to_scalar(prefix, b"e", a1, *strip_commits, *key_commits)


def prove_lock(
    ctx: Context,
    xs: Sequence[bytes],
    locked: Sequence[bytes],
    stripped: Sequence[bytes],
    s: int,
    keys: Sequence[int],
    rng: Rng | None = None,
) -> LockProof:
    """Prove ``locked[i] == keys[i]·xs[i]`` (knowledge of each lock key) and
    ``locked[i] == s·stripped[i]`` for every i, with ``Γ = s·G``."""
    g = ctx.group
    q, mul = g.order, g.mul
    n = len(xs)
    gamma = g.base_mul(s)
    prefix = _lock_prefix(ctx, gamma, xs, locked, stripped)
    omega = g.random_scalar(rng)
    rho = [g.random_scalar(rng) for _ in range(n)]
    strip_commits = pmap(lambda y: mul(omega, y), stripped)
    key_commits = pmap(lambda i: mul(rho[i], xs[i]), range(n))
    e = _lock_challenge(prefix, g.base_mul(omega), strip_commits, key_commits, g)
    return LockProof(e, (omega + e * s) % q, tuple((rho[i] + e * keys[i]) % q for i in range(n)), g)


def verify_lock(
    ctx: Context,
    xs: Sequence[bytes],
    locked: Sequence[bytes],
    stripped: Sequence[bytes],
    gamma: bytes,
    proof: LockProof,
) -> None:
    """Raise :class:`ProofError` unless the seat knows a key ``k[i]`` with
    ``locked[i] == k[i]·xs[i]`` for every i, and ``locked[i] == s·stripped[i]``
    for the s of Γ. ``xs`` (the seat's input deck) must already be valid:
    the previous pass's proof multiplied it."""
    g = ctx.group
    add, mul = g.add, g.mul
    n = len(xs)
    if n == 0 or len(locked) != n or len(stripped) != n or len(proof.z_lock) != n:
        raise ProofError("lock proof: lengths differ from the deck")
    if gamma == g.identity:
        raise ProofError("lock proof: Γ is the identity")
    minus_e, z, zk = -proof.e % g.order, proof.z, proof.z_lock

    def recompute(i: int) -> tuple[bytes, bytes]:
        # locked[i] first: it is the point this message most depends on
        e_locked = mul(minus_e, locked[i])
        return add(mul(z, stripped[i]), e_locked), add(mul(zk[i], xs[i]), e_locked)

    pairs = pmap(recompute, range(n))
    a1 = add(g.base_mul(z), mul(minus_e, gamma))
    prefix = _lock_prefix(ctx, gamma, xs, locked, stripped)
    if _lock_challenge(prefix, a1, [p[0] for p in pairs], [p[1] for p in pairs], g) != proof.e:
        raise ProofError("lock proof does not verify")


# ---------------------------------------------------------------- handover


@dataclass(frozen=True, slots=True)
class HandoverProof:
    """Compact Chaum–Pedersen proof ``log_V W = log_Q P``: ``e``, ``z``."""

    e: int
    z: int
    group: Group = field(default=ED25519, repr=False, compare=False)

    def to_wire(self) -> dict:
        return {"e": self.group.encode_scalar(self.e), "z": self.group.encode_scalar(self.z)}

    @classmethod
    def from_wire(cls, obj: object, group: Group = ED25519) -> HandoverProof:
        f = _fields(obj, ("e", "z"), "handover proof")
        return cls(group.decode_scalar(f["e"]), group.decode_scalar(f["z"]), group)


def _handover_prefix(ctx: Context, v: bytes, w: bytes, q: bytes, p: bytes) -> bytes:
    return hash_items(HANDOVER_LABEL, *ctx.items(), v, w, q, p)


def prove_handover(
    ctx: Context, v: bytes, w: bytes, q: bytes, p: bytes, key: int, rng: Rng | None = None
) -> HandoverProof:
    """Prove ``w == key·v`` and ``p == key·q`` (q: the value with the key taken off)."""
    g = ctx.group
    nonce = g.random_scalar(rng)
    prefix = _handover_prefix(ctx, v, w, q, p)
    e = g.hash_to_scalar(prefix, b"e", g.mul(nonce, v), g.mul(nonce, q))
    return HandoverProof(e, (nonce + e * key) % g.order, g)


def verify_handover(
    ctx: Context, v: bytes, w: bytes, q: bytes, p: bytes, proof: HandoverProof
) -> None:
    """Raise :class:`ProofError` unless ``log_v w == log_q p``."""
    g = ctx.group
    add, mul, minus_e = g.add, g.mul, -proof.e % g.order
    a1 = add(mul(proof.z, v), mul(minus_e, w))
    a2 = add(mul(proof.z, q), mul(minus_e, p))
    if g.hash_to_scalar(_handover_prefix(ctx, v, w, q, p), b"e", a1, a2) != proof.e:
        raise ProofError("handover proof does not verify")


# ---------------------------------------------------------------- 3. identity


@dataclass(frozen=True, slots=True)
class MemberProof:
    """CDS OR-proof: one (challenge, response) pair per member of S, in the
    order of S (ascending card index)."""

    e: tuple[int, ...]
    z: tuple[int, ...]
    group: Group = field(default=ED25519, repr=False, compare=False)

    def to_wire(self) -> dict:
        enc = self.group.encode_scalar
        return {"e": [enc(x) for x in self.e], "z": [enc(x) for x in self.z]}

    @classmethod
    def from_wire(cls, obj: object, size: int, group: Group = ED25519) -> MemberProof:
        f = _fields(obj, ("e", "z"), "identity proof")
        return cls(
            _scalars(group, f["e"], size, "identity proof e"),
            _scalars(group, f["z"], size, "identity proof z"),
            group,
        )


def _member_prefix(
    ctx: Context, members: Sequence[int], v: bytes, w: bytes, c_prime: bytes
) -> bytes:
    return hash_items(
        IDENTITY_LABEL,
        *ctx.items(),
        u64(len(members)),
        *(m.to_bytes(4, "big") for m in members),
        v,
        w,
        c_prime,
    )


def prove_member(
    ctx: Context,
    members: Sequence[tuple[int, bytes]],
    v: bytes,
    w: bytes,
    c_prime: bytes,
    key: int,
    true_card: int,
    rng: Rng | None = None,
) -> MemberProof:
    """Prove ``w == key·v`` and ``c_prime == key·D`` for the point D of some
    member of ``members`` (``(card index, point)``, ascending), without
    saying which (it is ``true_card``)."""
    g = ctx.group
    q, add, mul = g.order, g.add, g.mul
    index = [m for m, _ in members].index(true_card)
    size = len(members)
    es = [g.random_scalar(rng) for _ in range(size)]
    zs = [g.random_scalar(rng) for _ in range(size)]
    nonce = g.random_scalar(rng)

    def commit(j: int) -> tuple[bytes, bytes]:
        d = members[j][1]
        if j == index:
            return mul(nonce, v), mul(nonce, d)
        minus_e = -es[j] % q
        return add(mul(zs[j], v), mul(minus_e, w)), add(mul(zs[j], d), mul(minus_e, c_prime))

    commitments = pmap(commit, range(size))
    prefix = _member_prefix(ctx, [m for m, _ in members], v, w, c_prime)
    e = g.hash_to_scalar(prefix, b"e", *(p for pair in commitments for p in pair))
    es[index] = (e - sum(es[:index]) - sum(es[index + 1 :])) % q
    zs[index] = (nonce + es[index] * key) % q
    return MemberProof(tuple(es), tuple(zs), g)


def verify_member(
    ctx: Context,
    members: Sequence[tuple[int, bytes]],
    v: bytes,
    w: bytes,
    c_prime: bytes,
    proof: MemberProof,
) -> None:
    """Raise :class:`ProofError` unless the proof shows ``log_v w == log_D c_prime``
    for the point D of some member."""
    g = ctx.group
    q, add, mul = g.order, g.add, g.mul
    size = len(members)
    if size == 0 or len(proof.e) != size or len(proof.z) != size:
        raise ProofError("identity proof: one pair per member of the set is needed")

    def commit(j: int) -> tuple[bytes, bytes]:
        d, minus_e, zj = members[j][1], -proof.e[j] % q, proof.z[j]
        return add(mul(zj, v), mul(minus_e, w)), add(mul(zj, d), mul(minus_e, c_prime))

    commitments = pmap(commit, range(size))
    prefix = _member_prefix(ctx, [m for m, _ in members], v, w, c_prime)
    e = g.hash_to_scalar(prefix, b"e", *(p for pair in commitments for p in pair))
    if sum(proof.e) % q != e:
        raise ProofError("identity proof does not verify")


__all__ = [
    "G",
    "HandoverProof",
    "LockProof",
    "MemberProof",
    "ShuffleProof",
    "generator",
    "prove_handover",
    "prove_lock",
    "prove_member",
    "prove_shuffle",
    "verify_handover",
    "verify_lock",
    "verify_member",
    "verify_shuffle",
]
