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
error is about (n+2)/L per challenge, the others 1/L; L ≈ 2**252, so each is above 128 bits even
against 2**100 hash queries.

Verifiers raise :class:`ProofError` with the failing check named. They need
no validated points: every point given to a verifier is multiplied in it
(received points before any sum of them), and the multiplication validates
it (``group.py``), raising :class:`InvalidPoint` with the point. Handover and
identity verifiers multiply the layer's ``before`` V before its ``after`` W
(protocol.md §1.1 fixes that order: it decides whom a verdict names).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from .context import Context, u64
from .errors import DecodeError, ProofError
from .group import (
    IDENTITY,
    G,
    L,
    Rng,
    add,
    base_mul,
    decode_scalar,
    encode_scalar,
    hash_items,
    hash_to_point,
    hash_to_scalar,
    msm,
    mul,
    parse_points,
    pmap,
    point_sum,
    random_scalar,
    run_chunked,
    sub,
)

SHUFFLE_LABEL = b"nodealer/v1/shuffle-proof"
LOCK_LABEL = b"nodealer/v1/lock-proof"
IDENTITY_LABEL = b"nodealer/v1/identity-proof"
HANDOVER_LABEL = b"nodealer/v1/handover-proof"
GENERATOR_LABEL = b"nodealer/v1/generator"
MAX_CARDS = 54 * 16


# ---------------------------------------------------------------- wire helpers


def _scalars(value: object, n: int, what: str) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or len(value) != n:
        raise DecodeError(f"{what}: expected a list of {n} scalars")
    return tuple(decode_scalar(s) for s in value)


def _fields(obj: object, keys: tuple[str, ...], what: str) -> dict:
    if not isinstance(obj, dict) or set(obj) != set(keys):
        raise DecodeError(f"{what}: expected a map with exactly the keys {keys}")
    return obj


# ---------------------------------------------------------------- generators


@cache
def generator(i: int) -> bytes:
    """Independent generator number i (0 = H₀, 1…n = position generators)."""
    return hash_to_point(GENERATOR_LABEL, u64(i))


@lru_cache(maxsize=16)
def _generators(n: int) -> tuple[bytes, tuple[bytes, ...], bytes]:
    hs = tuple(generator(i + 1) for i in range(n))
    return generator(0), hs, point_sum(list(hs))


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

    KEYS = ("c", "chain", "e", "s", "s_hat", "s_prime")

    def to_wire(self) -> dict:
        return {
            "c": list(self.c),
            "chain": list(self.chain),
            "e": encode_scalar(self.e),
            "s": [encode_scalar(x) for x in (self.s1, self.s2, self.s3, self.s4)],
            "s_hat": [encode_scalar(x) for x in self.s_hat],
            "s_prime": [encode_scalar(x) for x in self.s_prime],
        }

    @classmethod
    def from_wire(cls, obj: object, n: int) -> ShuffleProof:
        f = _fields(obj, cls.KEYS, "shuffle proof")
        s = _scalars(f["s"], 4, "shuffle proof s")
        return cls(
            parse_points(f["c"], n, "shuffle proof c"),
            parse_points(f["chain"], n, "shuffle proof chain"),
            decode_scalar(f["e"]),
            *s,
            _scalars(f["s_hat"], n, "shuffle proof s_hat"),
            _scalars(f["s_prime"], n, "shuffle proof s_prime"),
        )


def _shuffle_prefix(
    ctx: Context, xs: Sequence[bytes], ys: Sequence[bytes], gamma: bytes, c: Sequence[bytes]
) -> bytes:
    return hash_items(
        SHUFFLE_LABEL, *ctx.items(), u64(len(xs)), GENERATOR_LABEL, gamma, *xs, *ys, *c
    )


def _shuffle_challenge(prefix: bytes, chain: Sequence[bytes], ts: Sequence[bytes]) -> int:
    return hash_to_scalar(prefix, b"e", *chain, *ts)


def _shuffle_weights(prefix: bytes, n: int) -> list[int]:
    return [hash_to_scalar(prefix, b"u", u64(j)) for j in range(n)]


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
    n = len(xs)
    inv = [0] * n
    for i, j in enumerate(perm):
        inv[j] = i
    h0, hs, _ = _generators(n)
    r = [random_scalar(rng) for _ in range(n)]
    c = pmap(lambda j: add(base_mul(r[j]), hs[inv[j]]), range(n))
    prefix = _shuffle_prefix(ctx, xs, ys, gamma, c)
    u = _shuffle_weights(prefix, n)
    up = [u[perm[i]] for i in range(n)]
    r_hat = [random_scalar(rng) for _ in range(n)]
    # ĉᵢ = r̂ᵢ·G + u′ᵢ·ĉᵢ₋₁ in closed form ĉᵢ = Rᵢ·G + Uᵢ·H₀, so that the
    # points can be computed in parallel instead of along the chain.
    big_r, big_u, acc_r, acc_u = [], [], 0, 1
    for i in range(n):
        acc_r = (r_hat[i] + up[i] * acc_r) % L
        acc_u = acc_u * up[i] % L
        big_r.append(acc_r)
        big_u.append(acc_u)
    chain = pmap(lambda i: add(base_mul(big_r[i]), mul(big_u[i], h0)), range(n))
    r_bar = sum(r) % L
    r_tilde = sum(rj * uj for rj, uj in zip(r, u, strict=True)) % L
    w1, w2, w3, w4 = (random_scalar(rng) for _ in range(4))
    w_hat = [random_scalar(rng) for _ in range(n)]
    w_prime = [random_scalar(rng) for _ in range(n)]
    t1, t2, t5 = base_mul(w1), base_mul(w2), base_mul(w4)
    t3 = add(base_mul(w3), msm(list(zip(w_prime, hs, strict=True))))
    t4 = msm([((s * w_prime[inv[j]] - w4 * u[j]) % L, xs[j]) for j in range(n)])
    prev = [h0, *chain[:-1]]
    t_hat = pmap(lambda i: add(base_mul(w_hat[i]), mul(w_prime[i], prev[i])), range(n))
    e = _shuffle_challenge(prefix, chain, [t1, t2, t3, t4, t5, *t_hat])
    return ShuffleProof(
        tuple(c),
        tuple(chain),
        e,
        (w1 + e * r_bar) % L,
        (w2 + e * big_r[-1]) % L,
        (w3 + e * r_tilde) % L,
        (w4 + e * s) % L,
        tuple((w_hat[i] + e * r_hat[i]) % L for i in range(n)),
        tuple((w_prime[i] + e * up[i]) % L for i in range(n)),
    )


def verify_shuffle(
    ctx: Context, xs: Sequence[bytes], ys: Sequence[bytes], gamma: bytes, proof: ShuffleProof
) -> None:
    """Raise :class:`ProofError` unless ``proof`` shows that ``ys`` is ``xs``
    permuted with every card multiplied by the scalar behind ``gamma``.
    Points need not be validated beforehand: each of them is multiplied
    here, and an invalid one raises InvalidPoint."""
    n = len(xs)
    if n == 0:
        raise ProofError("shuffle proof: empty deck")
    if not (len(ys) == n and len(proof.c) == n and len(proof.chain) == n):
        raise ProofError("shuffle proof: lengths differ from the deck")
    if len(proof.s_hat) != n or len(proof.s_prime) != n:
        raise ProofError("shuffle proof: response lengths differ from the deck")
    if gamma == IDENTITY:
        raise ProofError("shuffle proof: Γ is the identity")
    h0, hs, h_sum = _generators(n)
    e, c, chain, sp = proof.e, proof.c, proof.chain, proof.s_prime
    prefix = _shuffle_prefix(ctx, xs, ys, gamma, c)
    u = _shuffle_weights(prefix, n)
    prod_u = 1
    for uj in u:
        prod_u = prod_u * uj % L
    # Terms that multiply each received point come first: that validates
    # every point (group.py), so an invalid one raises InvalidPoint naming
    # itself before any sum of points is formed.
    t3 = add(
        base_mul(proof.s3),
        msm(
            [*zip(sp, hs, strict=True), *(((-e * uj) % L, cj) for uj, cj in zip(u, c, strict=True))]
        ),
    )
    t4 = msm(
        [
            *zip(sp, ys, strict=True),
            *(((-proof.s4 * uj) % L, xj) for uj, xj in zip(u, xs, strict=True)),
        ]
    )
    t5 = sub(base_mul(proof.s4), mul(e, gamma))
    prev = [h0, *chain[:-1]]
    t_hat = pmap(
        lambda i: sub(add(base_mul(proof.s_hat[i]), mul(sp[i], prev[i])), mul(e, chain[i])),
        range(n),
    )
    c_sum = point_sum(run_chunked(lambda part: point_sum(list(part)), c))
    t1 = sub(base_mul(proof.s1), mul(e, sub(c_sum, h_sum)))
    t2 = sub(base_mul(proof.s2), mul(e, sub(chain[-1], mul(prod_u, h0))))
    if _shuffle_challenge(prefix, chain, [t1, t2, t3, t4, t5, *t_hat]) != e:
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

    KEYS = ("e", "z", "z_lock")

    def to_wire(self) -> dict:
        return {
            "e": encode_scalar(self.e),
            "z": encode_scalar(self.z),
            "z_lock": [encode_scalar(x) for x in self.z_lock],
        }

    @classmethod
    def from_wire(cls, obj: object, n: int) -> LockProof:
        f = _fields(obj, cls.KEYS, "lock proof")
        return cls(
            decode_scalar(f["e"]),
            decode_scalar(f["z"]),
            _scalars(f["z_lock"], n, "lock proof z_lock"),
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
    prefix: bytes, a1: bytes, strip_commits: Sequence[bytes], key_commits: Sequence[bytes]
) -> int:
    return hash_to_scalar(prefix, b"e", a1, *strip_commits, *key_commits)


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
    n = len(xs)
    gamma = base_mul(s)
    prefix = _lock_prefix(ctx, gamma, xs, locked, stripped)
    omega = random_scalar(rng)
    rho = [random_scalar(rng) for _ in range(n)]
    strip_commits = pmap(lambda y: mul(omega, y), stripped)
    key_commits = pmap(lambda i: mul(rho[i], xs[i]), range(n))
    e = _lock_challenge(prefix, base_mul(omega), strip_commits, key_commits)
    return LockProof(e, (omega + e * s) % L, tuple((rho[i] + e * keys[i]) % L for i in range(n)))


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
    n = len(xs)
    if n == 0 or len(locked) != n or len(stripped) != n or len(proof.z_lock) != n:
        raise ProofError("lock proof: lengths differ from the deck")
    if gamma == IDENTITY:
        raise ProofError("lock proof: Γ is the identity")
    e, z, zk = proof.e, proof.z, proof.z_lock

    def recompute(i: int) -> tuple[bytes, bytes]:
        # locked[i] first: it is the point this message most depends on
        e_locked = mul(e, locked[i])
        return sub(mul(z, stripped[i]), e_locked), sub(mul(zk[i], xs[i]), e_locked)

    pairs = pmap(recompute, range(n))
    a1 = sub(base_mul(z), mul(e, gamma))
    prefix = _lock_prefix(ctx, gamma, xs, locked, stripped)
    if _lock_challenge(prefix, a1, [p[0] for p in pairs], [p[1] for p in pairs]) != e:
        raise ProofError("lock proof does not verify")


# ---------------------------------------------------------------- handover


@dataclass(frozen=True, slots=True)
class HandoverProof:
    """Compact Chaum–Pedersen proof ``log_V W = log_Q P``: ``e``, ``z``."""

    e: int
    z: int

    def to_wire(self) -> dict:
        return {"e": encode_scalar(self.e), "z": encode_scalar(self.z)}

    @classmethod
    def from_wire(cls, obj: object) -> HandoverProof:
        f = _fields(obj, ("e", "z"), "handover proof")
        return cls(decode_scalar(f["e"]), decode_scalar(f["z"]))


def _handover_prefix(ctx: Context, v: bytes, w: bytes, q: bytes, p: bytes) -> bytes:
    return hash_items(HANDOVER_LABEL, *ctx.items(), v, w, q, p)


def prove_handover(
    ctx: Context, v: bytes, w: bytes, q: bytes, p: bytes, key: int, rng: Rng | None = None
) -> HandoverProof:
    """Prove ``w == key·v`` and ``p == key·q`` (q: the value with the key taken off)."""
    nonce = random_scalar(rng)
    prefix = _handover_prefix(ctx, v, w, q, p)
    e = hash_to_scalar(prefix, b"e", mul(nonce, v), mul(nonce, q))
    return HandoverProof(e, (nonce + e * key) % L)


def verify_handover(
    ctx: Context, v: bytes, w: bytes, q: bytes, p: bytes, proof: HandoverProof
) -> None:
    """Raise :class:`ProofError` unless ``log_v w == log_q p``."""
    a1 = sub(mul(proof.z, v), mul(proof.e, w))
    a2 = sub(mul(proof.z, q), mul(proof.e, p))
    if hash_to_scalar(_handover_prefix(ctx, v, w, q, p), b"e", a1, a2) != proof.e:
        raise ProofError("handover proof does not verify")


# ---------------------------------------------------------------- 3. identity


@dataclass(frozen=True, slots=True)
class MemberProof:
    """CDS OR-proof: one (challenge, response) pair per member of S, in the
    order of S (ascending card index)."""

    e: tuple[int, ...]
    z: tuple[int, ...]

    def to_wire(self) -> dict:
        return {
            "e": [encode_scalar(x) for x in self.e],
            "z": [encode_scalar(x) for x in self.z],
        }

    @classmethod
    def from_wire(cls, obj: object, size: int) -> MemberProof:
        f = _fields(obj, ("e", "z"), "identity proof")
        return cls(
            _scalars(f["e"], size, "identity proof e"), _scalars(f["z"], size, "identity proof z")
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
    index = [m for m, _ in members].index(true_card)
    size = len(members)
    es = [random_scalar(rng) for _ in range(size)]
    zs = [random_scalar(rng) for _ in range(size)]
    nonce = random_scalar(rng)

    def commit(j: int) -> tuple[bytes, bytes]:
        d = members[j][1]
        if j == index:
            return mul(nonce, v), mul(nonce, d)
        return sub(mul(zs[j], v), mul(es[j], w)), sub(mul(zs[j], d), mul(es[j], c_prime))

    commitments = pmap(commit, range(size))
    prefix = _member_prefix(ctx, [m for m, _ in members], v, w, c_prime)
    e = hash_to_scalar(prefix, b"e", *(p for pair in commitments for p in pair))
    es[index] = (e - sum(es[:index]) - sum(es[index + 1 :])) % L
    zs[index] = (nonce + es[index] * key) % L
    return MemberProof(tuple(es), tuple(zs))


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
    size = len(members)
    if size == 0 or len(proof.e) != size or len(proof.z) != size:
        raise ProofError("identity proof: one pair per member of the set is needed")

    def commit(j: int) -> tuple[bytes, bytes]:
        d, ej, zj = members[j][1], proof.e[j], proof.z[j]
        return sub(mul(zj, v), mul(ej, w)), sub(mul(zj, d), mul(ej, c_prime))

    commitments = pmap(commit, range(size))
    prefix = _member_prefix(ctx, [m for m, _ in members], v, w, c_prime)
    e = hash_to_scalar(prefix, b"e", *(p for pair in commitments for p in pair))
    if sum(proof.e) % L != e:
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
