"""The secp256k1 card group of protocol v3 (protocol.md §1.1, (v3)):
coincurve checked against a pure-Python re-implementation of the curve
written from protocol.md's text, the (v3) test vectors of §1.10 read from
protocol.md itself and recomputed from that text, decode-time validation,
the point at infinity, and a proven deal over the group."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import replace
from pathlib import Path

import pytest

from mental_poker import group as ed25519_module
from mental_poker.batch import verify_deal_batch
from mental_poker.context import Context
from mental_poker.deal import DealTable
from mental_poker.deck import Deck, card_point
from mental_poker.errors import DecodeError, InvalidPoint, NonCanonicalScalar, ProofError
from mental_poker.group import ED25519
from mental_poker.group_api import hash_items
from mental_poker.messages import DealSetup, decode_message_bytes, encode_message
from mental_poker.proofs import (
    HandoverProof,
    ShuffleProof,
    generator,
    prove_handover,
    verify_handover,
)
from mental_poker.rand import SeededRng
from mental_poker.seat import DealSecrets, make_final_reveal, make_lock, make_shuffle
from mental_poker.secp256k1 import H2C_TAG, INFINITY, SECP256K1

g = SECP256K1

# ---------------------------------------------------------------- the reference
# secp256k1 in plain modular arithmetic, from protocol.md §1.1's text (SEC 2 §2.4.1):
# affine points (x, y), None for the point at infinity.

P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
GY = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8

Point = tuple[int, int] | None


def ref_decode(data: bytes) -> Point:
    """§1.1 (v3)'s validity rule: 33 bytes, prefix 02/03, x < p, x³+7 a square."""
    if len(data) != 33 or data[0] not in (2, 3):
        raise ValueError("not a compressed point")
    x = int.from_bytes(data[1:], "big")
    if x >= P:
        raise ValueError("x not canonical")
    y2 = (x**3 + 7) % P
    y = pow(y2, (P + 1) // 4, P)  # p ≡ 3 (mod 4)
    if y * y % P != y2:
        raise ValueError("not on the curve")
    if y % 2 != data[0] % 2:
        y = P - y
    return (x, y)


def ref_encode(point: Point) -> bytes:
    if point is None:
        return b"\x00"
    x, y = point
    return bytes([2 + y % 2]) + x.to_bytes(32, "big")


def ref_add(a: Point, b: Point) -> Point:
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2 and (y1 + y2) % P == 0:
        return None
    if a == b:
        lam = 3 * x1 * x1 * pow(2 * y1, -1, P) % P
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (lam * lam - x1 - x2) % P
    return (x3, (lam * (x1 - x3) - y1) % P)


def ref_mul(k: int, a: Point) -> Point:
    out: Point = None
    k %= N
    while k:
        if k & 1:
            out = ref_add(out, a)
        a = ref_add(a, a)
        k >>= 1
    return out


def ref_hash_to_point(label: bytes, *items: bytes) -> bytes:
    h = hashlib.sha512(b"".join(len(x).to_bytes(4, "big") + x for x in (label, *items))).digest()
    for ctr in range(256):
        x = hashlib.sha256(b"nodealer/v3/secp256k1/try-and-increment" + h + ctr.to_bytes(4, "big"))
        candidate = b"\x02" + x.digest()
        try:
            return ref_encode(ref_decode(candidate))
        except ValueError:
            continue
    raise AssertionError("no point in 256 tries")


G_REF = (GX, GY)


def test_the_reference_is_the_curve() -> None:
    assert (GY * GY - GX**3 - 7) % P == 0
    assert ref_mul(N, G_REF) is None and ref_mul(N + 1, G_REF) == G_REF
    assert ref_encode(G_REF) == g.generator


# ---------------------------------------------------------------- vectors


def _v3_vectors() -> tuple[dict[str, str], list[str]]:
    """The (v3) tables of protocol.md §1.10: value name -> hex, and the
    messages' SHA-256 in table order (the text is the source of truth)."""
    text = (Path(__file__).resolve().parent.parent / "protocol.md").read_text("utf-8")
    part = text[text.index("**(v3) secp256k1.**") : text.index("### 1.11")]
    rows = re.findall(r"^\| (.+?) \| `([0-9a-f]+)` \|$", part, re.M)
    names = {
        "`D_0` (A♠)": "D_0",
        "`D_53` (red joker)": "D_53",
        "`D_54` (A♠, copy 1)": "D_54",
        "`H₀ = gen(0)`": "gen(0)",
        "`gen(1)`": "gen(1)",
        'k = random scalar from `SeededRng("key")`': "k",
        "`k⁻¹ mod L`": "k^-1",
        "`k·D_0`": "k·D_0",
        "`k·G`": "k·G",
        "`−k·G`": "-k·G",
    }
    values = {names[n]: h for n, h in rows if n in names}
    values.update((n[1:11], h) for n, h in rows if n.startswith("`HashS(ctx)`"))
    values.update(re.findall(r"`(Γ_0|F\[2\]) = ([0-9a-f]+)`", part))
    messages = [h for n, h in rows if n.startswith(("shuffle, seat", "lock, seat"))]
    return values, messages


VECTORS, MESSAGE_VECTORS = _v3_vectors()


def test_protocol_md_states_every_v3_vector() -> None:
    assert set(VECTORS) == {
        "D_0", "D_53", "D_54", "gen(0)", "gen(1)", "k", "k^-1", "k·D_0", "k·G", "-k·G",
        "HashS(ctx)", "Γ_0", "F[2]",
    }  # fmt: skip
    assert len(MESSAGE_VECTORS) == 4


def test_encoding_vectors_from_the_reference_and_from_coincurve() -> None:
    card = b"nodealer/v1/card"
    gen = b"nodealer/v1/generator"
    for name, (label, item, ours) in {
        "D_0": (card, (0).to_bytes(4, "big"), card_point(0, g)),
        "D_53": (card, (53).to_bytes(4, "big"), card_point(53, g)),
        "D_54": (card, (54).to_bytes(4, "big"), card_point(54, g)),
        "gen(0)": (gen, (0).to_bytes(8, "big"), generator(0, g)),
        "gen(1)": (gen, (1).to_bytes(8, "big"), generator(1, g)),
    }.items():
        assert ref_hash_to_point(label, item).hex() == VECTORS[name], name
        assert ours.hex() == VECTORS[name], name


def test_scalar_and_cipher_vectors() -> None:
    k = g.random_scalar(SeededRng(b"key"))
    # 64 bytes read big-endian, mod n
    assert k == int.from_bytes(SeededRng(b"key")(64), "big") % N
    assert g.encode_scalar(k).hex() == VECTORS["k"]
    assert g.encode_scalar(g.inverse(k)).hex() == VECTORS["k^-1"]
    d0 = ref_decode(bytes.fromhex(VECTORS["D_0"]))
    assert ref_encode(ref_mul(k, d0)).hex() == VECTORS["k·D_0"]
    assert g.mul(k, card_point(0, g)).hex() == VECTORS["k·D_0"]
    assert ref_encode(ref_mul(k, G_REF)).hex() == VECTORS["k·G"] == g.base_mul(k).hex()
    ctx = Context(b"vector-table", 1, group=g).at("shuffle", 1)
    assert ctx.version == 3 and str(ctx).startswith("v3/")
    digest = hashlib.sha512(b"".join(len(x).to_bytes(4, "big") + x for x in ctx.items()))
    assert (int.from_bytes(digest.digest(), "big") % N).to_bytes(32, "big").hex() == (
        VECTORS["HashS(ctx)"]
    )
    assert g.encode_scalar(g.hash_to_scalar(*ctx.items())).hex() == VECTORS["HashS(ctx)"]


def test_whole_deal_vector() -> None:
    setup = DealSetup(Context(b"vector-table", 1, group=g), 2, Deck.of([0, 1, 52], g))
    table = DealTable(setup)
    rngs = [SeededRng(b"seat" + bytes([s])) for s in range(2)]
    keys = [DealSecrets.generate(setup, s, rngs[s]) for s in range(2)]
    assert [x.permutation for x in keys] == [(2, 1, 0), (1, 2, 0)]
    expected = MESSAGE_VECTORS
    got = []
    for make in (make_shuffle, make_lock):
        for seat in range(2):
            message = make(setup, keys[seat], table.expected_input(), rngs[seat])
            got.append(hashlib.sha256(encode_message(message)).hexdigest())
            assert table.feed(decode_message_bytes(encode_message(message), setup))
    assert got == expected
    assert table.ciphertext(2).hex() == VECTORS["F[2]"]
    assert g.base_mul(keys[0].shuffle_key).hex() == VECTORS["Γ_0"]
    for seat in range(2):
        assert table.feed(make_final_reveal(keys[seat]))
    assert [table.public_card(p) for p in range(3)] == [1, 0, 52]
    assert table.audit()


def _ref_stream(seed: bytes):
    """§1.10's SeededRng, from the text: SHA-512 blocks in counter mode."""
    counter = 0
    while True:
        yield from hashlib.sha512(
            b"nodealer/v1/test-rng" + seed + counter.to_bytes(8, "big")
        ).digest()
        counter += 1


def _ref_take(stream, n: int) -> bytes:
    return bytes(next(stream) for _ in range(n))


def _ref_scalar(stream) -> int:
    """§1.1: 64 bytes read big-endian (v3), mod L, drawn again if 0."""
    while True:
        k = int.from_bytes(_ref_take(stream, 64), "big") % N
        if k:
            return k


def _ref_permutation(stream, n: int) -> list[int]:
    """§1.1: Fisher–Yates with below(b) by rejection."""
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        b = i + 1
        m = (b.bit_length() + 7) // 8 + 1
        while True:
            x = int.from_bytes(_ref_take(stream, m), "big")
            if x < (256**m // b) * b:
                break
        j = x % b
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def test_deal_vectors_recomputed_from_the_text() -> None:
    """Γ_0, F[2], the permutations and the cards read at the end, from the
    text alone: each seat's SeededRng draws its shuffle key, its permutation
    and its 3 lock keys (§1.10), a shuffle puts input perm[i] at output i,
    and F[i] = (Π_j k_j[i])·D_{card at i} (§1.4 step 2)."""
    cards = [0, 1, 52]
    draws = []
    for seat in range(2):
        stream = _ref_stream(b"seat" + bytes([seat]))
        s = _ref_scalar(stream)
        perm = _ref_permutation(stream, 3)
        draws.append((s, perm, [_ref_scalar(stream) for _ in range(3)]))
    assert [perm for _, perm, _ in draws] == [[2, 1, 0], [1, 2, 0]]
    assert ref_encode(ref_mul(draws[0][0], G_REF)).hex() == VECTORS["Γ_0"]
    order = list(cards)
    for _, perm, _ in draws:
        order = [order[perm[i]] for i in range(3)]
    assert order == [1, 0, 52]  # what the positions read after the final reveals
    d = ref_decode(ref_hash_to_point(b"nodealer/v1/card", (52).to_bytes(4, "big")))
    f2 = ref_mul(draws[0][2][2] * draws[1][2][2], d)
    assert ref_encode(f2).hex() == VECTORS["F[2]"]
    k = _ref_scalar(_ref_stream(b"key"))
    assert k.to_bytes(32, "big").hex() == VECTORS["k"]
    assert pow(k, -1, N).to_bytes(32, "big").hex() == VECTORS["k^-1"]
    assert ref_encode(ref_mul(N - k, G_REF)).hex() == VECTORS["-k·G"] == g.neg(g.base_mul(k)).hex()


# ---------------------------------------------------------------- coincurve vs the reference


def test_operations_agree_with_the_reference() -> None:
    for _ in range(12):
        a, b, k = (secrets.randbelow(N - 1) + 1 for _ in range(3))
        pa, pb = ref_mul(a, G_REF), ref_mul(b, G_REF)
        ea, eb = g.base_mul(a), g.base_mul(b)
        assert ea == ref_encode(pa) and eb == ref_encode(pb)
        assert g.mul(k, ea) == ref_encode(ref_mul(k, pa))
        assert g.mul(k, bytes(ea)) == g.mul(k, ea)  # parsed from plain bytes, the same
        assert g.add(ea, eb) == ref_encode(ref_add(pa, pb))
        assert g.add(ea, ea) == ref_encode(ref_add(pa, pa))  # doubling
        assert g.neg(ea) == ref_encode(ref_mul(N - 1, pa))
        assert g.sub(ea, eb) == ref_encode(ref_add(pa, ref_mul(N - 1, pb)))
        assert g.is_valid_point(ea) and ref_decode(ea) == pa


def test_decode_refuses_every_encoding_but_the_canonical_compressed_one() -> None:
    p = g.base_mul(secrets.randbelow(N - 1) + 1)
    x, y = ref_decode(p)  # type: ignore[misc]
    assert g.decode_point(p) == p
    # the smallest x on the curve, and x + p (< 2²⁵⁶): the same point, not canonically
    small = next(x for x in range(1, 100) if _on_curve(x))
    canonical = b"\x02" + small.to_bytes(32, "big")
    assert g.is_valid_point(canonical)
    off = next(b"\x02" + v.to_bytes(32, "big") for v in range(1, 100) if not _on_curve(v))
    bad = [
        b"\x02" + (small + P).to_bytes(32, "big"),  # x ≥ p
        off,  # x³ + 7 no square
        b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big"),  # uncompressed, valid point
        b"\x06" + p[1:],  # hybrid prefix
        b"\x00" + p[1:],
        b"\x05" + p[1:],
        p[:32],
        p + b"\x00",
        INFINITY,  # the point at infinity: computed values only
        b"\x02" + bytes(32),  # x = 0: 7 is no square mod p
    ]
    for data in bad:
        with pytest.raises(ValueError):
            ref_decode(data)
        assert not g.is_valid_point(data), data.hex()
        with pytest.raises(InvalidPoint):
            g.decode_point(data)
    for data in (None, 5, list(p), p.hex()):
        with pytest.raises(InvalidPoint):
            g.decode_point(data)


def _on_curve(x: int) -> bool:
    y2 = (x**3 + 7) % P
    return pow(y2, (P - 1) // 2, P) == 1


def test_a_multiplication_validates_what_parsing_let_through() -> None:
    off = next(b"\x03" + v.to_bytes(32, "big") for v in range(1, 100) if not _on_curve(v))
    assert g.parse_point(off) == off  # decks and proofs: parsed only (33 bytes) ...
    for k in (0, 1, 7, N - 1):  # ... and refused by the first multiplication, even by 0
        with pytest.raises(InvalidPoint) as caught:
            g.mul(k, off)
        assert caught.value.point == off
    with pytest.raises(InvalidPoint):
        g.parse_point(INFINITY)
    with pytest.raises(InvalidPoint):
        g.parse_point(bytes(32))  # an edwards25519-sized point


def test_scalars_are_big_endian_below_n() -> None:
    k = g.random_scalar()
    assert 1 <= k < N and g.decode_scalar(g.encode_scalar(k)) == k
    assert g.encode_scalar(1) == bytes(31) + b"\x01"
    for bad in (N.to_bytes(32, "big"), (2**256 - 1).to_bytes(32, "big"), bytes(31), "x"):
        with pytest.raises(NonCanonicalScalar):
            g.decode_scalar(bad)
    with pytest.raises(NonCanonicalScalar):
        g.decode_scalar(bytes(32), nonzero=True)
    with pytest.raises(ValueError):
        g.encode_scalar(N)


# ---------------------------------------------------------------- the point at infinity


def test_the_point_at_infinity_is_exact_in_every_operation() -> None:
    p = g.base_mul(12345)
    assert g.mul(0, p) == INFINITY and g.mul(N, p) == INFINITY and g.base_mul(N) == INFINITY
    assert g.add(p, g.neg(p)) == INFINITY
    assert g.add(INFINITY, p) == p and g.add(p, INFINITY) == p
    assert g.mul(5, INFINITY) == INFINITY and g.neg(INFINITY) == INFINITY
    assert g.point_sum([]) == INFINITY
    assert g.point_sum([p, g.neg(p), p]) == p  # a partial sum at infinity, then on


def test_a_sum_through_infinity_is_the_same_for_every_worker_count() -> None:
    """Every peer must reach the same verdict whatever its core count: a sum
    whose partial sums cancel for one chunking and not another is exact."""
    pts = [card_point(i, g) for i in range(12)]
    ks = [secrets.randbelow(N - 1) + 1 for _ in pts]
    pairs = list(zip(ks, pts, strict=True))
    pairs += [((N - k) % N, q) for k, q in pairs[:6]]  # the first six cancel out
    expected = ref_encode(
        _ref_sum(ref_mul(k, ref_decode(q)) for k, q in zip(ks[6:], pts[6:], strict=True))
    )
    before = ed25519_module.workers()
    try:
        for n in (1, 2, 3, 5):
            ed25519_module.set_workers(n)
            assert g.msm(pairs) == expected
    finally:
        ed25519_module.set_workers(before)


def _ref_sum(points) -> Point:
    out: Point = None
    for p in points:
        out = ref_add(out, p)
    return out


def test_infinity_enters_a_transcript_as_one_zero_byte() -> None:
    """A handover whose nonce is 0 commits to the point at infinity twice; the
    verifier recomputes exactly that (hashed as 00) and accepts: infinity is
    a value like any other, never an error that could split the peers."""
    ctx = Context(b"t", 0, group=g).at("handover", 1)
    key = g.random_scalar()
    v, q = card_point(3, g), card_point(4, g)
    w, p = g.mul(key, v), g.mul(key, q)
    prefix = hash_items(b"nodealer/v1/handover-proof", *ctx.items(), v, w, q, p)
    e = g.hash_to_scalar(prefix, b"e", b"\x00", b"\x00")
    verify_handover(ctx, v, w, q, p, HandoverProof(e, e * key % N, g))
    with pytest.raises(ProofError):
        verify_handover(ctx, v, w, q, p, HandoverProof(e, (e * key + 1) % N, g))
    verify_handover(ctx, v, w, q, p, prove_handover(ctx, v, w, q, p, key))


# ---------------------------------------------------------------- a deal over secp256k1


def _dealt(seats: int = 3) -> tuple[DealSetup, list[DealSecrets], list[DealTable]]:
    setup = DealSetup(Context(b"secp-table", 0, group=g), seats, Deck.standard(group=g))
    keys = [DealSecrets.generate(setup, s) for s in range(seats)]
    tables = [DealTable(setup) for _ in range(seats)]
    for make in (make_shuffle, make_lock):
        for seat in range(seats):
            data = encode_message(make(setup, keys[seat], tables[seat].expected_input()))
            for table in tables:
                assert table.feed(decode_message_bytes(data, setup))
    return setup, keys, tables


def test_the_wire_carries_33_byte_points_and_big_endian_scalars() -> None:
    setup, keys, tables = _dealt(2)
    shuffle = tables[0].shuffles[1]
    wire = shuffle.to_wire()
    assert all(len(p) == 33 for p in (*wire["deck"], wire["gamma"], *wire["proof"]["c"]))
    assert wire["proof"]["e"] == shuffle.proof.e.to_bytes(32, "big")
    # an edwards25519-sized point in a secp256k1 deal is a decode error
    with pytest.raises(DecodeError):
        decode_message_bytes(encode_message(replace(shuffle, gamma=shuffle.gamma[1:])), setup)
    secrets_back = DealSecrets.from_bytes(keys[0].to_bytes(), g)
    assert secrets_back == keys[0] and secrets_back.group is g
    with pytest.raises(DecodeError):  # the deck must be in the deal's group
        DealSetup(Context(b"t", 0, group=g), 2, Deck.standard())
    assert DealSetup.from_wire(setup.to_wire(), g) == setup


def test_the_batch_over_secp256k1_names_the_first_bad_proof() -> None:
    setup, _, tables = _dealt(3)
    table = tables[0]
    deck = setup.deck.points
    assert verify_deal_batch(setup.context, deck, table.shuffles, table.locks)
    proof = table.shuffles[2].proof
    assert isinstance(proof, ShuffleProof)
    bad = replace(table.shuffles[2], proof=replace(proof, s1=(proof.s1 + 1) % N))
    shuffles = [*table.shuffles[:2], bad]
    verdict = verify_deal_batch(setup.context, deck, shuffles, table.locks)
    assert not verdict and verdict.seat == 2
    # a proof made in one group is no proof in the other
    ed_setup = DealSetup(Context(b"secp-table", 0), 3, Deck.standard())
    assert ed_setup.context.group is ED25519
    with pytest.raises(DecodeError):
        decode_message_bytes(encode_message(table.shuffles[1]), ed_setup)


def test_hash_to_curve_takes_few_tries_and_uses_its_tag() -> None:
    tries = []
    for i in range(54):
        h = hash_items(b"nodealer/v1/card", i.to_bytes(4, "big"))
        for ctr in range(256):
            x = hashlib.sha256(H2C_TAG + h + ctr.to_bytes(4, "big")).digest()
            if g.is_valid_point(b"\x02" + x):
                assert card_point(i, g) == b"\x02" + x
                tries.append(ctr)
                break
    assert len(tries) == 54 and max(tries) < 12


def test_groups_and_points_survive_pickling_and_copies() -> None:
    import copy
    import pickle

    p = g.base_mul(7)
    for group in (g, ED25519):
        assert pickle.loads(pickle.dumps(group)) is group
        assert copy.deepcopy(group) is group
    setup = DealSetup(Context(b"t", 0, group=g), 2, Deck.of(range(4), g))
    back = pickle.loads(pickle.dumps(setup))
    assert back == setup and back.context.group is g and back.deck.group is g
    for clone in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p), copy.copy(p)):
        assert clone == p and g.mul(3, clone) == g.mul(3, p)


def test_a_deferred_deal_over_secp256k1_names_the_first_bad_pass_as_on_arrival() -> None:
    setup = DealSetup(Context(b"deferred", 0, group=g), 3, Deck.of(range(12), g))
    keys = [DealSecrets.generate(setup, s) for s in range(3)]
    honest = DealTable(setup)
    messages = []
    for make in (make_shuffle, make_lock):
        for seat in range(3):
            msg = make(setup, keys[seat], honest.expected_input())
            assert honest.feed(msg)
            messages.append(msg)
    lock = messages[4]  # seat 1's lock pass: one response off
    bad_proof = replace(lock.proof, z=(lock.proof.z + 1) % N)
    messages[4] = replace(lock, proof=bad_proof)
    verdicts = []
    for deferred in (False, True):
        table = DealTable(setup, deferred=deferred)
        verdict = None
        for msg in messages:
            verdict = table.feed(decode_message_bytes(encode_message(msg), setup))
            if not verdict:
                break
        verdicts.append(verdict)
    assert all(v is not None and not v.ok and v.seat == 1 for v in verdicts), verdicts


def test_a_secrets_file_is_read_only_in_the_group_it_was_written_for() -> None:
    """Review: an edwards25519 secrets file loaded as secp256k1 re-read its
    little-endian scalars big-endian and went on; the file now names any
    group but edwards25519 (whose files stay byte for byte as before)."""
    for mine, other in ((g, ED25519), (ED25519, g)):
        setup = DealSetup(Context(b"secrets", 0, group=mine), 2, Deck.of(range(4), mine))
        written = DealSecrets.generate(setup, 0).to_bytes()
        assert DealSecrets.from_bytes(written, mine).group is mine
        with pytest.raises(DecodeError):
            DealSecrets.from_bytes(written, other)


def test_another_groups_point_is_an_invalid_point_in_edwards25519() -> None:
    """Review: a 33-byte secp256k1 point reaching edwards25519's arithmetic
    raised libsodium's TypeError, which no verifier catches."""
    p = g.base_mul(5)
    assert not ed25519_module.is_valid_point(p)
    for op in (
        lambda: ed25519_module.mul(3, p),
        lambda: ed25519_module.add(ed25519_module.G, p),
        lambda: ed25519_module.sub(p, ed25519_module.G),
    ):
        with pytest.raises(InvalidPoint):
            op()
