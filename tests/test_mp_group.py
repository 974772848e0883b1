"""The card group and deck encoding: validation of everything received."""

from __future__ import annotations

import doctest
from collections import Counter

import pytest

import mental_poker.context as context_module
import mental_poker.deck as deck_module
import mental_poker.errors as errors_module
from mental_poker import group
from mental_poker.context import Context
from mental_poker.deck import Deck, card_point
from mental_poker.errors import DecodeError, InvalidPoint, NonCanonicalScalar
from mental_poker.group import (
    IDENTITY,
    L,
    SeededRng,
    add,
    base_mul,
    decode_point,
    decode_scalar,
    encode_scalar,
    inverse,
    is_valid_point,
    msm,
    mul,
    parse_point,
    pmap,
    random_permutation,
    random_scalar,
)

# A point of order 8 (a torsion point of edwards25519).
ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
# y = p + 1: a non-canonical encoding (of the identity's y = 1).
NON_CANONICAL = bytes.fromhex("ee" + "ff" * 30 + "7f")


@pytest.mark.parametrize("module", [context_module, deck_module, errors_module])
def test_doctests(module: object) -> None:
    assert doctest.testmod(module).failed == 0


def test_scalar_round_trip_and_canonical_decoding() -> None:
    k = random_scalar()
    assert 1 <= k < L
    assert decode_scalar(encode_scalar(k)) == k
    with pytest.raises(NonCanonicalScalar):  # k + L encodes the same value, not canonically
        decode_scalar((k % 2**128 + L).to_bytes(32, "little"))
    with pytest.raises(NonCanonicalScalar):
        decode_scalar(L.to_bytes(32, "little"))
    with pytest.raises(NonCanonicalScalar):
        decode_scalar(b"\x01" * 31)
    with pytest.raises(NonCanonicalScalar):
        decode_scalar("not bytes")
    with pytest.raises(NonCanonicalScalar):
        decode_scalar(bytes(32), nonzero=True)
    assert decode_scalar(bytes(32)) == 0


def test_point_validation_rejects_every_bad_kind() -> None:
    p = base_mul(random_scalar())
    assert decode_point(p) == p
    assert not is_valid_point(ORDER_8)
    torsioned = add(p, ORDER_8)  # libsodium adds it silently ...
    assert torsioned != p
    for bad in (IDENTITY, ORDER_8, torsioned, NON_CANONICAL, bytes(32), b"\xff" * 32):
        with pytest.raises(InvalidPoint):  # ... but decoding never lets it in
            decode_point(bad)
    for bad in (p[:31], p + b"\x00", None, 5, list(p)):
        with pytest.raises(InvalidPoint):
            decode_point(bad)
    with pytest.raises(InvalidPoint):  # and a multiplication refuses it too
        mul(5, torsioned)


def test_every_point_decode_refuses_a_multiplication_refuses_too() -> None:
    # Lazy validation rests on this: parse_point only checks the shape, and
    # the first mul() of the point runs libsodium's full check (group.py).
    p = base_mul(random_scalar())
    for bad in (ORDER_8, add(p, ORDER_8), NON_CANONICAL, bytes(32), b"\xff" * 32):
        assert parse_point(bad) == bad
        for k in (0, 1, 7, L - 1):  # a zero scalar never calls libsodium: checked anyway
            with pytest.raises(InvalidPoint) as caught:
                mul(k, bad)
            assert caught.value.point == bad
    with pytest.raises(InvalidPoint):  # the identity: refused on the wire ...
        parse_point(IDENTITY)
    assert mul(5, IDENTITY) == IDENTITY  # ... and passed through as a computed value
    assert mul(0, p) == IDENTITY


def test_commutative_cipher() -> None:
    d = card_point(7)
    a, b = random_scalar(), random_scalar()
    assert mul(a, mul(b, d)) == mul(b, mul(a, d))
    assert mul(inverse(a), mul(b, mul(a, d))) == mul(b, d)
    assert mul(L, d) == IDENTITY and mul(0, d) == IDENTITY


def test_deck_points_are_distinct_valid_and_copies_differ() -> None:
    two = Deck.standard(2)
    assert len(two) == 108 and len(set(two.points)) == 108
    assert all(is_valid_point(p) for p in two.points)
    assert card_point(0) != card_point(54)  # A♠ of deck 0 and of deck 1
    assert two.index_of(card_point(107)) == 107
    assert two.index_of(base_mul(1)) is None
    assert 5 in two and 108 not in two and "5" not in two
    with pytest.raises(DecodeError):
        Deck.of([1, 1, 2])
    with pytest.raises(DecodeError):
        Deck.of([3])
    with pytest.raises(DecodeError):
        Deck.of([-1, 2])


def test_deck_encoding_is_no_multiple_of_the_base_point() -> None:
    # The pitfall we avoid: card i = i·G would make Yᵢ = s·i·G checkable.
    assert all(card_point(i) != base_mul(i + 1) for i in range(54))


def test_context_validation_and_binding() -> None:
    ctx = Context(b"t", 1)
    assert ctx.at("shuffle", 2).items() != ctx.at("shuffle", 3).items()
    assert ctx.at("shuffle", 2).items() != ctx.at("lock", 2).items()
    assert Context(b"t", 2).items() != ctx.items()
    for bad in (
        lambda: Context(b"", 1),
        lambda: Context(b"x" * 65, 1),
        lambda: Context(b"t", -1),
        lambda: Context(b"t", True),
        lambda: ctx.at("deal", 0),
        lambda: Context("t", 1),
    ):
        with pytest.raises(DecodeError):
            bad()


def test_pmap_and_msm_match_serial_for_every_worker_count() -> None:
    pts = [card_point(i) for i in range(20)]
    ks = [random_scalar() for _ in pts]
    expected = IDENTITY
    for k, p in zip(ks, pts, strict=True):
        expected = add(expected, mul(k, p)) if expected != IDENTITY else mul(k, p)
    before = group.workers()
    try:
        for n in (1, 2, 3):
            group.set_workers(n)
            assert msm(list(zip(ks, pts, strict=True))) == expected
            assert pmap(lambda p: mul(3, p), pts) == [mul(3, p) for p in pts]
    finally:
        group.set_workers(before)
    with pytest.raises(ValueError):
        group.set_workers(0)


def test_count_ops_counts_each_kind() -> None:
    with group.count_ops() as ops:
        p = base_mul(5)
        mul(7, p)
        add(p, p)
        is_valid_point(p)
    assert ops == Counter({"base": 1, "var": 1, "add": 1, "check": 1})


def test_seeded_rng_is_deterministic_and_permutations_are_uniform() -> None:
    assert SeededRng(b"a")(40) == SeededRng(b"a")(40)
    assert SeededRng(b"a")(40) != SeededRng(b"b")(40)
    perm = random_permutation(54)
    assert sorted(perm) == list(range(54))
    # All 6 orders of 3 items come up about equally often (secrets-backed).
    counts = Counter(random_permutation(3) for _ in range(3000))
    assert len(counts) == 6 and min(counts.values()) > 380
    rng = SeededRng(b"x")
    counts = Counter(random_permutation(3, rng) for _ in range(3000))
    assert len(counts) == 6 and min(counts.values()) > 380


def test_nested_pmap_does_not_deadlock() -> None:
    """A heavy loop called from inside another (e.g. a proof check run over
    several deals with pmap) must not wait on the worker it runs on."""
    import threading

    pts = [card_point(i) for i in range(16)]
    result: list[list[list[bytes]]] = []
    before = group.workers()
    group.set_workers(2)
    try:
        runner = threading.Thread(
            target=lambda: result.append(pmap(lambda p: pmap(lambda q: add(p, q), pts), pts)),
            daemon=True,
        )
        runner.start()
        runner.join(timeout=30)
        assert not runner.is_alive(), "nested pmap deadlocked"
    finally:
        if not runner.is_alive():  # a deadlocked pool cannot be shut down
            group.set_workers(before)
    assert result[0] == [[add(p, q) for q in pts] for p in pts]
