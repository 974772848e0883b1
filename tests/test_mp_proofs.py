"""The three proofs (shuffle-proof.md §Tests): honest proofs verify, every
listed cheat and every single corruption is rejected."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mental_poker import proofs
from mental_poker.context import Context
from mental_poker.deck import Deck
from mental_poker.errors import DecodeError, InvalidPoint, NonCanonicalScalar, ProofError
from mental_poker.group import (
    IDENTITY,
    L,
    add,
    base_mul,
    decode_point,
    encode_scalar,
    inverse,
    msm,
    mul,
    random_permutation,
    random_scalar,
)
from mental_poker.proofs import (
    LockProof,
    MemberProof,
    ShuffleProof,
    prove_lock,
    prove_member,
    prove_shuffle,
    verify_lock,
    verify_member,
    verify_shuffle,
)

CTX = Context(b"table-A", 4)
SHUFFLE = CTX.at("shuffle", 1)
LOCK = CTX.at("lock", 1)
IDENT = CTX.at("identity", 1)
ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")


def shuffled(n: int) -> tuple[list[bytes], list[bytes], bytes, int, tuple[int, ...]]:
    xs = list(Deck.of(range(n)).points)
    s, perm = random_scalar(), random_permutation(n)
    ys = [mul(s, xs[perm[i]]) for i in range(n)]
    return xs, ys, base_mul(s), s, perm


def rejected(ctx: Context, xs: list[bytes], ys: list[bytes], gamma: bytes, wire: object) -> bool:
    """Decode from the wire like a peer would, then verify."""
    try:
        proof = ShuffleProof.from_wire(wire, len(xs))
        verify_shuffle(ctx, xs, [decode_point(y) for y in ys], decode_point(gamma), proof)
    except (ProofError, DecodeError):
        return True
    return False


# ---------------------------------------------------------------- shuffle


@pytest.mark.parametrize("n", [2, 3, 54, 108])
def test_honest_shuffle_proof_verifies(n: int) -> None:
    xs, ys, gamma, s, perm = shuffled(n)
    proof = prove_shuffle(SHUFFLE, xs, ys, gamma, s, perm)
    verify_shuffle(SHUFFLE, xs, ys, gamma, proof)
    again = ShuffleProof.from_wire(proof.to_wire(), n)
    assert again == proof
    assert len(proof.c) == len(proof.chain) == len(proof.s_hat) == len(proof.s_prime) == n


def test_duplicated_card_is_rejected() -> None:
    xs, _, gamma, s, perm = shuffled(6)
    bad_perm = (perm[1], *perm[1:])  # one input twice, another missing
    bad_ys = [mul(s, xs[bad_perm[i]]) for i in range(6)]
    proof = prove_shuffle(SHUFFLE, xs, bad_ys, gamma, s, bad_perm)
    with pytest.raises(ProofError):
        verify_shuffle(SHUFFLE, xs, bad_ys, gamma, proof)


def test_replaced_card_is_rejected() -> None:
    xs, ys, gamma, s, perm = shuffled(6)
    bad_ys = list(ys)
    bad_ys[2] = base_mul(random_scalar())  # a made-up point
    proof = prove_shuffle(SHUFFLE, xs, bad_ys, gamma, s, perm)
    with pytest.raises(ProofError):
        verify_shuffle(SHUFFLE, xs, bad_ys, gamma, proof)


def test_deck_made_with_two_keys_is_rejected() -> None:
    xs, ys, _, s, perm = shuffled(6)
    other = random_scalar()
    tagged = list(ys)
    tagged[4] = mul(other, xs[perm[4]])  # one card tagged with another key
    for key in (s, other):
        proof = prove_shuffle(SHUFFLE, xs, tagged, base_mul(key), key, perm)
        with pytest.raises(ProofError):
            verify_shuffle(SHUFFLE, xs, tagged, base_mul(key), proof)


def test_proof_replayed_in_another_context_is_rejected() -> None:
    xs, ys, gamma, s, perm = shuffled(4)
    proof = prove_shuffle(SHUFFLE, xs, ys, gamma, s, perm)
    for ctx in (
        SHUFFLE.at("shuffle", 2),
        SHUFFLE.at("lock", 1),
        replace(SHUFFLE, deal=5),
        replace(SHUFFLE, table_id=b"table-B"),
        replace(SHUFFLE, version=2),
    ):
        with pytest.raises(ProofError):
            verify_shuffle(ctx, xs, ys, gamma, proof)


def test_every_single_changed_point_or_scalar_is_rejected() -> None:
    xs, ys, gamma, s, perm = shuffled(3)
    proof = prove_shuffle(SHUFFLE, xs, ys, gamma, s, perm)
    wire = proof.to_wire()
    other_point = base_mul(random_scalar())
    count = 0
    for key, value in wire.items():
        items = value if isinstance(value, list) else [value]
        for j in range(len(items)):
            changed = list(items)
            if key in ("c", "chain"):
                changed[j] = other_point
            else:
                changed[j] = encode_scalar((int.from_bytes(changed[j], "little") + 1) % L)
            bad = dict(wire, **{key: changed if isinstance(value, list) else changed[0]})
            assert rejected(SHUFFLE, xs, ys, gamma, bad), (key, j)
            count += 1
    assert count == 4 * 3 + 1 + 4  # c, chain, s_hat, s_prime; e; s1..s4; ...
    for j in range(3):  # ... and every input card, output card and Γ
        for deck in ("xs", "ys"):
            xs2, ys2 = list(xs), list(ys)
            (xs2 if deck == "xs" else ys2)[j] = other_point
            assert rejected(SHUFFLE, xs2, ys2, gamma, wire)
    assert rejected(SHUFFLE, xs, ys, other_point, wire)
    assert rejected(SHUFFLE, xs, list(reversed(ys)), gamma, wire)


def test_non_canonical_scalar_is_rejected_on_decode_small_order_point_on_verify() -> None:
    xs, ys, gamma, s, perm = shuffled(3)
    wire = prove_shuffle(SHUFFLE, xs, ys, gamma, s, perm).to_wire()
    e = int.from_bytes(wire["e"], "little")
    with pytest.raises(NonCanonicalScalar):  # same value mod L, not canonical
        ShuffleProof.from_wire(dict(wire, e=(e + L).to_bytes(32, "little")), 3)
    torsioned = add(wire["c"][0], ORDER_8)
    # proof points are only parsed; the verification's multiplication refuses it
    parsed = ShuffleProof.from_wire(dict(wire, c=[torsioned, *wire["c"][1:]]), 3)
    with pytest.raises(InvalidPoint) as caught:
        verify_shuffle(SHUFFLE, xs, ys, gamma, parsed)
    assert caught.value.point == torsioned
    with pytest.raises(DecodeError):
        ShuffleProof.from_wire(dict(wire, c=wire["c"][:2]), 3)
    with pytest.raises(DecodeError):
        ShuffleProof.from_wire({**wire, "extra": 1}, 3)
    with pytest.raises(DecodeError):
        ShuffleProof.from_wire([wire], 3)


def test_identity_as_gamma_is_rejected() -> None:
    xs, ys, gamma, s, perm = shuffled(3)
    proof = prove_shuffle(SHUFFLE, xs, ys, gamma, s, perm)
    with pytest.raises(InvalidPoint):
        decode_point(IDENTITY)
    with pytest.raises(ProofError):
        verify_shuffle(SHUFFLE, xs, ys, IDENTITY, proof)
    with pytest.raises(ProofError):
        verify_lock(LOCK, xs, ys, ys, IDENTITY, LockProof(1, 1, (1,) * len(xs)))


def test_gamma_must_be_in_the_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why Γ is hashed: if it were not, a prover could publish Γ′ = γ′·G for a
    key γ′ ≠ s chosen after the challenge, then "strip" γ′ instead of s and
    corrupt every card while every proof passes."""
    xs, ys, gamma, s, perm = shuffled(4)
    honest_prefix = proofs._shuffle_prefix

    def weak_prefix(ctx, xs, ys, gamma, c):  # Γ left out
        return honest_prefix(ctx, xs, ys, b"", c)

    monkeypatch.setattr(proofs, "_shuffle_prefix", weak_prefix)
    forged, gamma2, gamma2_key = _forge_free_gamma(xs, ys, s, perm)
    assert gamma2 != gamma and gamma2_key != s
    verify_shuffle(SHUFFLE, xs, ys, gamma2, forged)  # the weak verifier is fooled
    keys = [random_scalar() for _ in ys]
    locked = [mul(k, y) for k, y in zip(keys, ys, strict=True)]
    stripped = [mul(inverse(gamma2_key), x) for x in locked]  # strips the wrong key
    proof = prove_lock(LOCK, ys, locked, stripped, gamma2_key, keys)
    verify_lock(LOCK, ys, locked, stripped, gamma2, proof)
    assert not set(stripped) & set(xs)  # every card is now garbage
    monkeypatch.setattr(proofs, "_shuffle_prefix", honest_prefix)
    with pytest.raises(ProofError):  # the real verifier is not
        verify_shuffle(SHUFFLE, xs, ys, gamma2, forged)


def _forge_free_gamma(
    xs: list[bytes], ys: list[bytes], s: int, perm: tuple[int, ...]
) -> tuple[ShuffleProof, bytes, int]:
    """The honest prover's steps, except that t₅ = τ·G is committed instead
    of ω₄·G and Γ′ is solved for after the challenge: s₄·G − e·Γ′ = t₅."""
    n = len(xs)
    inv = [perm.index(j) for j in range(n)]
    h0, hs, _ = proofs._generators(n)
    r = [random_scalar() for _ in range(n)]
    c = [add(base_mul(r[j]), hs[inv[j]]) for j in range(n)]
    prefix = proofs._shuffle_prefix(SHUFFLE, xs, ys, b"unused", c)
    u = proofs._shuffle_weights(prefix, n)
    up = [u[perm[i]] for i in range(n)]
    r_hat = [random_scalar() for _ in range(n)]
    chain, prev, acc = [], h0, 0
    for i in range(n):
        chain.append(add(base_mul(r_hat[i]), mul(up[i], prev)))
        acc = (r_hat[i] + up[i] * acc) % L
        prev = chain[-1]
    w1, w2, w3, w4, tau = (random_scalar() for _ in range(5))
    w_hat = [random_scalar() for _ in range(n)]
    w_prime = [random_scalar() for _ in range(n)]
    t3 = add(base_mul(w3), msm(list(zip(w_prime, hs, strict=True))))
    t4 = msm([((s * w_prime[inv[j]] - w4 * u[j]) % L, xs[j]) for j in range(n)])
    prevs = [h0, *chain[:-1]]
    t_hat = [add(base_mul(w_hat[i]), mul(w_prime[i], prevs[i])) for i in range(n)]
    ts = [base_mul(w1), base_mul(w2), t3, t4, base_mul(tau), *t_hat]
    e = proofs._shuffle_challenge(prefix, chain, ts)
    s4 = (w4 + e * s) % L
    gamma2_key = (s4 - tau) * inverse(e) % L
    r_tilde = sum(a * b for a, b in zip(r, u, strict=True)) % L
    proof = ShuffleProof(
        tuple(c),
        tuple(chain),
        e,
        (w1 + e * sum(r)) % L,
        (w2 + e * acc) % L,
        (w3 + e * r_tilde) % L,
        s4,
        tuple((w_hat[i] + e * r_hat[i]) % L for i in range(n)),
        tuple((w_prime[i] + e * up[i]) % L for i in range(n)),
    )
    return proof, base_mul(gamma2_key), gamma2_key


# ---------------------------------------------------------------- lock


def locked_deck(n: int) -> tuple[list[bytes], list[bytes], list[bytes], bytes, int, list[int]]:
    """A lock pass: input deck, locked, stripped, Γ, shuffle key, lock keys."""
    s = random_scalar()
    xs = [mul(s, p) for p in Deck.of(range(n)).points]
    keys = [random_scalar() for _ in range(n)]
    locked = [mul(k, x) for k, x in zip(keys, xs, strict=True)]
    return xs, locked, [mul(inverse(s), x) for x in locked], base_mul(s), s, keys


def test_honest_lock_proof_verifies_and_round_trips() -> None:
    xs, locked, stripped, gamma, s, keys = locked_deck(54)
    proof = prove_lock(LOCK, xs, locked, stripped, s, keys)
    verify_lock(LOCK, xs, locked, stripped, gamma, proof)
    assert LockProof.from_wire(proof.to_wire(), 54) == proof
    with pytest.raises(DecodeError):
        LockProof.from_wire(proof.to_wire(), 53)


def test_lock_with_a_tagged_card_or_another_key_is_rejected() -> None:
    xs, locked, stripped, gamma, s, keys = locked_deck(8)
    tagged = list(stripped)
    tagged[3] = mul(random_scalar(), stripped[3])
    with pytest.raises(ProofError):
        verify_lock(LOCK, xs, locked, tagged, gamma, prove_lock(LOCK, xs, locked, tagged, s, keys))
    other = random_scalar()
    with pytest.raises(ProofError):  # proving with a key that is not the one behind Γ
        verify_lock(
            LOCK, xs, locked, stripped, gamma, prove_lock(LOCK, xs, locked, stripped, other, keys)
        )
    proof = prove_lock(LOCK, xs, locked, stripped, s, keys)
    for ctx in (LOCK.at("lock", 0), LOCK.at("shuffle", 1), replace(LOCK, deal=9)):
        with pytest.raises(ProofError):
            verify_lock(ctx, xs, locked, stripped, gamma, proof)
    with pytest.raises(ProofError):  # a permutation is not a strip
        verify_lock(LOCK, xs, locked, stripped[::-1], gamma, proof)
    with pytest.raises(ProofError):  # the proof is bound to the input deck
        verify_lock(LOCK, xs[::-1], locked, stripped, gamma, proof)


def test_a_locked_point_taken_from_another_position_is_rejected() -> None:
    """The lock-pass break (issue 9): ``locked[i] = s·X[j]``, ``stripped[i]
    = X[j]`` passes a strip-only proof, and the others' key reveals for a
    card dealt at i would then decrypt position j. The lock keys' proof of
    knowledge refuses it, whatever key the prover uses for position i."""
    xs, locked, stripped, gamma, s, keys = locked_deck(6)
    i, j = 1, 4
    locked[i], stripped[i] = mul(s, xs[j]), xs[j]
    for key_i in (keys[i], s, s * keys[j] % L, random_scalar()):
        forged = list(keys)
        forged[i] = key_i
        with pytest.raises(ProofError):
            verify_lock(
                LOCK, xs, locked, stripped, gamma, prove_lock(LOCK, xs, locked, stripped, s, forged)
            )


# ---------------------------------------------------------------- identity


def identity_statement(true_card: int) -> tuple[bytes, bytes, bytes, int]:
    deck = Deck.standard()
    k = random_scalar()
    v = mul(random_scalar(), deck.point(true_card))  # the holder's stripped value
    return v, mul(k, v), mul(k, deck.point(true_card)), k


def members(cards: list[int]) -> list[tuple[int, bytes]]:
    deck = Deck.standard()
    return [(c, deck.point(c)) for c in sorted(cards)]


def test_honest_identity_proof_verifies() -> None:
    v, w, c_prime, k = identity_statement(20)
    for cards in ([20], [3, 20, 40], list(range(54))):
        proof = prove_member(IDENT, members(cards), v, w, c_prime, k, 20)
        verify_member(IDENT, members(cards), v, w, c_prime, proof)
        assert MemberProof.from_wire(proof.to_wire(), len(cards)) == proof


def test_false_membership_and_non_membership_are_rejected() -> None:
    v, w, c_prime, k = identity_statement(20)
    related = [7, 19, 33]  # the claimed set does not hold card 20
    proof = prove_member(IDENT, members(related), v, w, c_prime, k, 19)  # lie: "it is 19"
    with pytest.raises(ProofError):
        verify_member(IDENT, members(related), v, w, c_prime, proof)
    unrelated = [c for c in range(54) if c != 20]  # K12 B: "none of these relates" - false
    proof = prove_member(IDENT, members(unrelated), v, w, c_prime, k, 0)
    with pytest.raises(ProofError):
        verify_member(IDENT, members(unrelated), v, w, c_prime, proof)


def test_identity_proof_is_bound_to_context_statement_and_set() -> None:
    v, w, c_prime, k = identity_statement(20)
    cards = [5, 20, 30]
    proof = prove_member(IDENT, members(cards), v, w, c_prime, k, 20)
    with pytest.raises(ProofError):
        verify_member(IDENT.at("identity", 2), members(cards), v, w, c_prime, proof)
    with pytest.raises(ProofError):
        verify_member(IDENT, members([5, 20, 31]), v, w, c_prime, proof)
    with pytest.raises(ProofError):
        verify_member(IDENT, members(cards), v, w, mul(2, c_prime), proof)
    with pytest.raises(ProofError):
        verify_member(IDENT, members(cards), v, w, c_prime, MemberProof((), ()))


# ---------------------------------------------------------------- hypothesis

_N = 4
_SHUF = shuffled(_N)
_SHUF_PROOF = prove_shuffle(SHUFFLE, *_SHUF[:3], *_SHUF[3:]).to_wire()
_LOCK = locked_deck(_N)
_LOCK_PROOF = prove_lock(LOCK, *_LOCK[:3], _LOCK[4], _LOCK[5]).to_wire()
_MEMBERS = [3, 20, 41]
_IDENT = identity_statement(20)
_MEMBER_PROOF = prove_member(IDENT, members(_MEMBERS), *_IDENT, 20).to_wire()


def _slots(obj: object, path: tuple = ()) -> list[tuple]:
    """Every bytes value inside a wire object, as a path."""
    if isinstance(obj, bytes):
        return [path]
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _slots(v, (*path, k))]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _slots(v, (*path, i))]
    return []


def _corrupt(obj: object, path: tuple, offset: int, xor: int) -> object:
    if not path:
        data = bytearray(obj)  # type: ignore[arg-type]
        data[offset % len(data)] ^= xor
        return bytes(data)
    if isinstance(obj, dict):
        return {
            k: (_corrupt(v, path[1:], offset, xor) if k == path[0] else v) for k, v in obj.items()
        }
    assert isinstance(obj, list)
    return [_corrupt(v, path[1:], offset, xor) if i == path[0] else v for i, v in enumerate(obj)]


def _shuffle_case(wire: dict) -> None:
    xs, ys, gamma = wire["xs"], wire["ys"], wire["gamma"]
    verify_shuffle(
        SHUFFLE,
        [decode_point(x) for x in xs],
        [decode_point(y) for y in ys],
        decode_point(gamma),
        ShuffleProof.from_wire(wire["proof"], _N),
    )


def _lock_case(wire: dict) -> None:
    verify_lock(
        LOCK,
        [decode_point(x) for x in wire["xs"]],
        [decode_point(x) for x in wire["locked"]],
        [decode_point(y) for y in wire["stripped"]],
        decode_point(wire["gamma"]),
        LockProof.from_wire(wire["proof"], _N),
    )


def _member_case(wire: dict) -> None:
    v, w, c_prime = (decode_point(wire[k]) for k in ("v", "w", "c"))
    verify_member(IDENT, members(_MEMBERS), v, w, c_prime, MemberProof.from_wire(wire["proof"], 3))


CASES = {
    "shuffle": (
        _shuffle_case,
        {"xs": _SHUF[0], "ys": _SHUF[1], "gamma": _SHUF[2], "proof": _SHUF_PROOF},
    ),
    "lock": (
        _lock_case,
        {
            "xs": _LOCK[0],
            "locked": _LOCK[1],
            "stripped": _LOCK[2],
            "gamma": _LOCK[3],
            "proof": _LOCK_PROOF,
        },
    ),
    "identity": (
        _member_case,
        {"v": _IDENT[0], "w": _IDENT[1], "c": _IDENT[2], "proof": _MEMBER_PROOF},
    ),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_uncorrupted_cases_verify(kind: str) -> None:
    check, wire = CASES[kind]
    check(wire)


@pytest.mark.parametrize("kind", sorted(CASES))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_single_corruption_is_rejected(kind: str, data: st.DataObject) -> None:
    """Flip any bits of any one byte of any proof element, Γ, or input/output
    card: decoding or verification always fails."""
    check, wire = CASES[kind]
    path = data.draw(st.sampled_from(_slots(wire)), label="element")
    offset = data.draw(st.integers(0, 31), label="byte")
    xor = data.draw(st.integers(1, 255), label="xor")
    with pytest.raises((ProofError, DecodeError)):
        check(_corrupt(wire, path, offset, xor))


def test_shuffle_proof_over_an_empty_deck_is_a_typed_error() -> None:
    """verify_shuffle is public: no input may crash it (IndexError before)."""
    proof = ShuffleProof((), (), 1, 1, 1, 1, 1, (), ())
    with pytest.raises(ProofError):
        verify_shuffle(SHUFFLE, [], [], base_mul(5), proof)


@pytest.mark.parametrize("field", ["c", "chain", "ys"])
def test_every_parsed_point_is_validated_by_the_verification(field: str) -> None:
    # Lazy validation (group.py): whichever point of a proof or an output
    # deck carries a torsion component, verifying refuses exactly that point.
    xs, ys, gamma, s, perm = shuffled(4)
    wire = prove_shuffle(SHUFFLE, xs, ys, gamma, s, perm).to_wire()
    for j in range(4):
        points = list(ys) if field == "ys" else list(wire[field])
        points[j] = torsioned = add(points[j], ORDER_8)
        proof = ShuffleProof.from_wire(wire if field == "ys" else {**wire, field: points}, 4)
        with pytest.raises(InvalidPoint) as caught:
            verify_shuffle(SHUFFLE, xs, points if field == "ys" else ys, gamma, proof)
        assert caught.value.point == torsioned
    keys = [random_scalar() for _ in ys]
    locked = [mul(k, y) for k, y in zip(keys, ys, strict=True)]
    stripped = [mul(inverse(s), x) for x in locked]
    lock = prove_lock(LOCK, ys, locked, stripped, s, keys)
    for deck in ("locked", "stripped"):
        for j in range(4):
            a, b = list(locked), list(stripped)
            target = a if deck == "locked" else b
            target[j] = torsioned = add(target[j], ORDER_8)
            with pytest.raises(InvalidPoint) as caught:
                verify_lock(LOCK, ys, a, b, gamma, lock)
            assert caught.value.point == torsioned
