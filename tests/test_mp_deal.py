"""Whole deals among 2, 3, 4 and 10 simulated peers, and a catalogue of
cheating peers: each cheat is rejected and the cheater named."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mental_poker.context import Context
from mental_poker.deal import DealTable
from mental_poker.deck import Deck
from mental_poker.errors import (
    CheatDetected,
    DecodeError,
    InvalidPoint,
    NotDecryptable,
    ProtocolError,
    Verdict,
)
from mental_poker.group import ED25519, count_ops
from mental_poker.group_api import Group
from mental_poker.messages import (
    Complaint,
    DealSetup,
    FinalReveal,
    IdentityClaim,
    KeyReveal,
    LockPass,
    Message,
    Relock,
    ShufflePass,
    decode_message,
    decode_message_bytes,
    encode_message,
)
from mental_poker.proofs import prove_lock, prove_member, prove_shuffle
from mental_poker.seat import (
    DealSecrets,
    make_complaint,
    make_final_reveal,
    make_handover,
    make_identity_claim,
    make_key_reveal,
    make_lock,
    make_relock,
    make_shuffle,
)
from mental_poker.secp256k1 import SECP256K1

HAND = 5

GROUP: Group = ED25519
"""The group of every Table made in a test: edwards25519, or each group in
turn for a test marked ``@each_group`` (the group operations below follow)."""


@pytest.fixture(params=[ED25519, SECP256K1], ids=lambda g: g.name)
def _group(request: pytest.FixtureRequest):
    global GROUP
    GROUP = request.param
    yield request.param
    GROUP = ED25519


each_group = pytest.mark.usefixtures("_group")
"""Run the test once per group (the whole deal and the cheats that apply to any group)."""


def mul(k: int, p: bytes) -> bytes:
    return GROUP.mul(k, p)


def base_mul(k: int) -> bytes:
    return GROUP.base_mul(k)


def add(p: bytes, q: bytes) -> bytes:
    return GROUP.add(p, q)


def inverse(k: int) -> int:
    return GROUP.inverse(k)


def random_scalar() -> int:
    return GROUP.random_scalar()


def is_valid_point(p: bytes) -> bool:
    return GROUP.is_valid_point(p)


def off_curve(p: bytes) -> bytes:
    """A secp256k1 encoding of p's shape that is no point (x³ + 7 no square)."""
    x = int.from_bytes(p[1:], "big")
    for dx in range(1, 100):
        bad = p[:1] + ((x + dx) % 2**256).to_bytes(32, "big")
        if not SECP256K1.is_valid_point(bad):
            return bad
    raise AssertionError("no off-curve x near this one")


class Table:
    """N peers, each with its own secrets and its own tracker; every message
    goes through bytes and is checked by every peer."""

    def __init__(self, seats: int, deck: Deck, *, proven: bool = True, deal: int = 0) -> None:
        deck = Deck.of(deck.cards, GROUP)  # the same cards in the group under test
        self.setup = DealSetup(Context(b"test-table", deal, group=GROUP), seats, deck, proven)
        self.secrets = [DealSecrets.generate(self.setup, s) for s in range(seats)]
        self.tables = [DealTable(self.setup) for _ in range(seats)]

    @property
    def public(self) -> DealTable:
        return self.tables[0]

    def send(self, message: Message) -> list[Verdict]:
        data = encode_message(message)
        return [t.feed(decode_message_bytes(data, self.setup)) for t in self.tables]

    def send_ok(self, message: Message) -> None:
        verdicts = self.send(message)
        assert all(verdicts), verdicts

    def passes(self) -> None:
        for seat in range(self.setup.seats):
            self.send_ok(make_shuffle(self.setup, self.secrets[seat], self.public.expected_input()))
        for seat in range(self.setup.seats):
            self.send_ok(make_lock(self.setup, self.secrets[seat], self.public.expected_input()))
        assert all(t.dealt for t in self.tables)

    def deal(self, positions: dict[int, list[int]]) -> dict[int, list[int]]:
        """Deal positions to seats: every other seat reveals its keys."""
        for seat, hand in positions.items():
            for other in range(self.setup.seats):
                if other != seat:
                    self.send_ok(make_key_reveal(self.secrets[other], hand))
        return {
            seat: [self.tables[seat].decrypt(p, seat, self.secrets[seat]) for p in hand]
            for seat, hand in positions.items()
        }

    def finish(self) -> list[Verdict]:
        for seat in range(self.setup.seats):
            self.send_ok(make_final_reveal(self.secrets[seat]))
        return [t.audit() for t in self.tables]


def hands_of(seats: int) -> dict[int, list[int]]:
    return {s: list(range(HAND * s, HAND * s + HAND)) for s in range(seats)}


# ---------------------------------------------------------------- honest deals


@each_group
@pytest.mark.parametrize(
    ("seats", "copies"),
    [(2, 1), (3, 1), (4, 1), pytest.param(10, 2, marks=pytest.mark.slow)],
)
def test_whole_deal_among_peers(seats: int, copies: int) -> None:
    game = Table(seats, Deck.standard(copies))
    game.passes()
    hands = game.deal(hands_of(seats))
    dealt = [c for hand in hands.values() for c in hand]
    assert len(set(dealt)) == len(dealt) == HAND * seats
    assert all(c in game.setup.deck for c in dealt)

    # Nobody else can read a hand, and guessing with one's own key gives no card.
    for seat, positions in hands_of(seats).items():
        for other in range(seats):
            table = game.tables[other]
            if other == seat:
                assert table.readers(positions[0]) == {seat}
                continue
            with pytest.raises(NotDecryptable):
                table.decrypt(positions[0], other, game.secrets[other])
            wrong = inverse(game.secrets[other].lock_keys[positions[0]])
            assert game.setup.deck.index_of(mul(wrong, table.peeled(positions[0]))) is None
    undealt = HAND * seats
    assert game.public.readers(undealt) == frozenset()

    # Show a card to everyone (the holder reveals its key too).
    game.send_ok(make_key_reveal(game.secrets[0], [0]))
    assert all(t.public_card(0) == hands[0][0] for t in game.tables)
    assert game.public.readers(0) == frozenset(range(seats))

    # Hand a hidden card from seat 0 to seat 1 (Bluff pile pick-up).
    relock, game.secrets[1] = make_relock(game.public, game.secrets[1], 1)
    game.send_ok(relock)
    game.send_ok(make_key_reveal(game.secrets[0], [1]))
    assert game.tables[1].decrypt(1, 1, game.secrets[1]) == hands[0][1]
    assert all(t.readers(1) == {1} for t in game.tables)
    with pytest.raises(NotDecryptable):
        game.tables[0].decrypt(1, 0, game.secrets[0])

    # End of game: every key out, the audit passes for every peer.
    assert all(game.finish())
    assert all(game.tables[2 % seats].public_card(p) is not None for p in range(undealt))

    # Reshuffle a subset of known cards (Bomb K9 / Mao M26): a new deal.
    discard = sorted(game.public.public_card(p) for p in range(HAND))
    again = Table(seats, Deck.of(discard), deal=1)
    again.passes()
    got = again.deal({seats - 1: list(range(len(discard)))})[seats - 1]
    assert sorted(got) == discard


@each_group
def test_identity_claims_for_bomb() -> None:
    game = Table(3, Deck.standard())
    game.passes()
    position = 7
    card = game.deal({2: [position]})[2][0]
    related = [c for c in range(54) if c % 13 == card % 13 or c >= 52]  # same rank, jokers
    claim = make_identity_claim(game.tables[2], game.secrets[2], position, related)
    game.send_ok(claim)  # K12 A
    hand = [c for c in range(54) if c not in related][:4]
    claim = make_identity_claim(
        game.tables[2], game.secrets[2], position, game.public.complement(hand)
    )
    game.send_ok(claim)  # K12 B
    with pytest.raises(ProtocolError):  # an honest peer cannot even make a false claim
        make_identity_claim(
            game.tables[2], game.secrets[2], position, game.public.complement([card])
        )
    with pytest.raises(NotDecryptable):  # only the sole holder can claim
        make_identity_claim(game.tables[0], game.secrets[0], position, [card])
    assert all(game.finish())


def test_secrets_survive_a_crash() -> None:
    game = Table(2, Deck.standard())
    game.passes()
    _, game.secrets[0] = make_relock(game.public, game.secrets[0], 30)
    data = game.secrets[0].to_bytes()
    assert DealSecrets.from_bytes(data) == game.secrets[0]
    for bad in (b"", b"\xc1", data[:-3], msgpack.packb({"v": 2}), msgpack.packb([1, 2])):
        with pytest.raises(DecodeError):
            DealSecrets.from_bytes(bad)
    wrong = msgpack.unpackb(data)
    wrong["permutation"] = [0] * len(wrong["permutation"])
    with pytest.raises(DecodeError):
        DealSecrets.from_bytes(msgpack.packb(wrong, use_bin_type=True))
    other_deal = replace(game.setup, context=Context(b"test-table", 9))
    with pytest.raises(ProtocolError):
        make_shuffle(other_deal, game.secrets[0], game.public.setup.deck.points)


def test_setup_round_trips_and_validates() -> None:
    setup = DealSetup(Context(b"t", 3), 4, Deck.standard(2), proven=False)
    assert DealSetup.from_wire(setup.to_wire()) == setup
    for bad in ({}, dict(setup.to_wire(), seats=1), dict(setup.to_wire(), cards=[1, 1])):
        with pytest.raises(DecodeError):
            DealSetup.from_wire(bad)


# ---------------------------------------------------------------- cheaters


def started(seats: int = 3, proven: bool = True) -> Table:
    game = Table(seats, Deck.standard(), proven=proven)
    game.send_ok(make_shuffle(game.setup, game.secrets[0], game.public.expected_input()))
    return game


def assert_cheater(game: Table, message: Message, seat: int) -> None:
    before = (game.public.phase, game.public.next_seat)
    verdicts = game.send(message)
    assert all(not v.ok and v.seat == seat for v in verdicts), verdicts
    assert (game.public.phase, game.public.next_seat) == before  # nothing changed


def cheat_shuffle(game: Table, seat: int, tamper) -> ShufflePass:
    """Seat's shuffle with ``tamper(out, xs, s, perm)`` applied to its output
    deck, and a proof made for the tampered deck as if it were honest."""
    sec = game.secrets[seat]
    xs = game.public.expected_input()
    s, perm = sec.shuffle_key, sec.permutation
    out = [mul(s, xs[perm[i]]) for i in range(len(xs))]
    tamper(out, xs, s, perm)
    gamma = base_mul(s)
    ctx = game.setup.context.at("shuffle", seat)
    proof = prove_shuffle(ctx, xs, out, gamma, s, perm) if game.setup.proven else None
    return ShufflePass(seat, tuple(out), gamma, proof)


def _duplicate(out: list, xs: tuple, s: int, perm: tuple) -> None:
    out[1] = out[0]


def _made_up(out: list, xs: tuple, s: int, perm: tuple) -> None:
    out[2] = base_mul(random_scalar())


def _other_ciphertext(out: list, xs: tuple, s: int, perm: tuple) -> None:
    out[2] = xs[perm[2]]  # passed on without re-encryption under s


def _tagged(out: list, xs: tuple, s: int, perm: tuple) -> None:
    out[3] = mul(random_scalar(), xs[perm[3]])  # a different key for one card


@each_group
@pytest.mark.parametrize("tamper", [_duplicate, _made_up, _other_ciphertext, _tagged])
def test_cheating_shuffle_is_rejected_and_named(tamper) -> None:
    game = started()
    assert_cheater(game, cheat_shuffle(game, 1, tamper), seat=1)
    honest = make_shuffle(game.setup, game.secrets[1], game.public.expected_input())
    game.send_ok(honest)  # the deal can go on once the seat sends an honest pass


@each_group
def test_tagging_in_the_lock_pass_is_rejected_and_named() -> None:
    game = Table(3, Deck.standard())
    for seat in range(3):
        game.send_ok(make_shuffle(game.setup, game.secrets[seat], game.public.expected_input()))
    game.send_ok(make_lock(game.setup, game.secrets[0], game.public.expected_input()))
    sec, xs = game.secrets[1], game.public.expected_input()
    locked = tuple(mul(k, x) for k, x in zip(sec.lock_keys, xs, strict=True))
    s_inv = inverse(sec.shuffle_key)
    stripped = [mul(s_inv, x) for x in locked]
    stripped[5] = mul(random_scalar(), stripped[5])  # one card passed on tagged
    ctx = game.setup.context.at("lock", 1)
    proof = prove_lock(ctx, xs, locked, stripped, sec.shuffle_key, sec.lock_keys)
    assert_cheater(game, LockPass(1, tuple(stripped), proof, locked), seat=1)


def lock_reading_another_position(game: Table, seat: int, i: int, j: int) -> LockPass:
    """The lock-pass break (issue 9 §1) by ``seat`` of ``game``."""
    return forged_lock(game.setup, game.secrets[seat], game.public.expected_input(), i, j)


def forged_lock(
    setup: DealSetup, secrets: DealSecrets, xs: Sequence[bytes], i: int, j: int
) -> LockPass:
    """The lock-pass break (issue 9 §1): at its position i the seat
    publishes ``locked[i] = s·X[j]`` and ``stripped[i] = X[j]`` (X its input
    deck), every other position honest, and the best proof it can make.
    Position i then carries card j under keys only this seat knows once the
    others reveal theirs for i."""
    g = setup.context.group  # the deal's (a table's: its version's, protocol.md §1.1)
    s = secrets.shuffle_key
    locked = [g.mul(k, x) for k, x in zip(secrets.lock_keys, xs, strict=True)]
    locked[i] = g.mul(s, xs[j])
    stripped = [g.mul(g.inverse(s), x) for x in locked]
    proof = None
    if setup.proven:
        keys = list(secrets.lock_keys)
        keys[i] = s  # as if X[i] were X[j]: the only key it knows for locked[i]
        proof = prove_lock(setup.context.at("lock", secrets.seat), xs, locked, stripped, s, keys)
    return LockPass(secrets.seat, tuple(stripped), proof, tuple(locked))


def _read_with_own_shuffle_key(game: Table, seat: int, i: int) -> int | None:
    """What the cheating seat reads at i once every other seat revealed
    its keys there: the others' keys and its shuffle key off the value."""
    table = game.public
    product = game.secrets[seat].shuffle_key
    for layer in table.layers[i]:
        if layer.seat != seat:
            assert layer.key is not None
            product = product * layer.key % GROUP.order
    return table.setup.deck.index_of(mul(inverse(product), table.ciphertext(i)))


@each_group
def test_the_lock_attack_works_where_nothing_proves_the_lock_keys() -> None:
    """The attack is real: in an unproven deal seat 0 reads card j, dealt
    to nobody, from the others' key reveals for its own position i (the
    audit names it only at the end, after the secret leaked)."""
    game = Table(3, Deck.standard(), proven=False)
    for seat in range(3):
        game.send_ok(make_shuffle(game.setup, game.secrets[seat], game.public.expected_input()))
    game.send_ok(lock_reading_another_position(game, 0, 1, 4))
    for seat in (1, 2):
        game.send_ok(make_lock(game.setup, game.secrets[seat], game.public.expected_input()))
    for other in (1, 2):
        game.send_ok(make_key_reveal(game.secrets[other], [1]))
    stolen = _read_with_own_shuffle_key(game, 0, 1)
    for seat in (1, 2):
        game.send_ok(make_final_reveal(game.secrets[seat]))
    assert stolen is not None and stolen == game.tables[0].decrypt(4, 0, game.secrets[0])
    # only its own final reveal, long after the leak, gives it away
    verdicts = game.send(make_final_reveal(game.secrets[0]))
    assert all(not v.ok and v.seat == 0 and "position 1" in v.reason for v in verdicts)


@each_group
@pytest.mark.parametrize(("cheater", "i", "j"), [(0, 1, 4), (1, 2, 7), (0, 0, 1)])
def test_a_lock_pass_reading_another_position_is_refused_and_named(
    cheater: int, i: int, j: int
) -> None:
    """Issue 9 §1, proven: seat 0 reading position j; a middle seat
    reading a card that goes to a later seat; seat 0 reading seat 1's Bomb
    identity (positions 0, 1, 2 are the identities). Refused at the lock
    pass, naming the seat; the honest pass is then accepted."""
    game = Table(3, Deck.standard())
    for seat in range(3):
        game.send_ok(make_shuffle(game.setup, game.secrets[seat], game.public.expected_input()))
    for seat in range(cheater):
        game.send_ok(make_lock(game.setup, game.secrets[seat], game.public.expected_input()))
    assert_cheater(game, lock_reading_another_position(game, cheater, i, j), cheater)
    assert all(not t.locks or t.locks[-1].seat != cheater for t in game.tables)
    for seat in range(cheater, 3):
        game.send_ok(make_lock(game.setup, game.secrets[seat], game.public.expected_input()))
    assert all(game.finish())


@each_group
def test_out_of_turn_and_replayed_passes_are_rejected() -> None:
    game = started()
    assert_cheater(game, make_shuffle(game.setup, game.secrets[2], game.public.expected_input()), 2)
    first = make_shuffle(game.setup, game.secrets[0], game.setup.deck.points)
    assert_cheater(game, first, 0)  # seat 0 again
    # seat 1 replays seat 0's proven pass as its own: the proof is bound to seat 0
    replayed = ShufflePass(1, first.deck, first.gamma, first.proof)
    assert_cheater(game, replayed, 1)
    assert_cheater(game, make_key_reveal(game.secrets[1], [0]), 1)  # no reveals before the lock


@each_group
def test_wrong_per_card_key_is_rejected_and_named() -> None:
    game = Table(3, Deck.standard())
    game.passes()
    honest = make_key_reveal(game.secrets[2], [4, 5])
    bad = KeyReveal(2, ((4, honest.keys[0][1]), (5, random_scalar())), GROUP)
    verdicts = game.send(bad)
    assert all(not v.ok and v.seat == 2 and "position 5" in v.reason for v in verdicts)
    assert game.public.layers[4][2].key is None  # the good key was not applied either
    stolen = KeyReveal(1, ((4, game.secrets[2].lock_keys[4]),), GROUP)  # another seat's key
    assert all(not v.ok and v.seat == 1 for v in game.send(stolen))
    bad_final = FinalReveal(0, random_scalar(), make_final_reveal(game.secrets[0]).keys, GROUP)
    assert all(not v.ok and v.seat == 0 for v in game.send(bad_final))
    partial = replace(make_final_reveal(game.secrets[0]), keys=honest.keys[:0])
    assert all(not v.ok and v.seat == 0 for v in game.send(partial))


@each_group
def test_false_identity_claims_are_rejected_and_named() -> None:
    game = Table(3, Deck.standard())
    game.passes()
    card = game.deal({1: [9]})[1][0]
    table, sec = game.tables[1], game.secrets[1]
    layer = table.sole_layer(9, 1)
    ctx = game.setup.context.at("identity", 1)
    for claimed in ([c for c in range(54) if c != card][:3], game.public.complement([card])):
        pts = [(m, game.setup.deck.point(m)) for m in claimed]
        lie = prove_member(
            ctx, pts, layer.before, layer.after, table.peeled(9), sec.lock_keys[9], claimed[0]
        )
        verdicts = game.send(IdentityClaim(1, 9, tuple(claimed), lie))
        assert all(not v.ok and v.seat == 1 for v in verdicts)
    honest = make_identity_claim(table, sec, 9, [card])
    assert all(not v.ok and v.seat == 0 for v in game.send(replace(honest, seat=0)))
    game.send_ok(honest)


@each_group
@pytest.mark.parametrize("tamper", [_made_up, _other_ciphertext, _tagged])
def test_unproven_deal_cheat_is_named_by_the_final_audit(tamper) -> None:
    game = started(proven=False)
    game.send_ok(cheat_shuffle(game, 1, tamper))  # not detectable without a proof ...
    game.send_ok(make_shuffle(game.setup, game.secrets[2], game.public.expected_input()))
    for seat in range(3):
        game.send_ok(make_lock(game.setup, game.secrets[seat], game.public.expected_input()))
    for seat in range(3):
        game.send(make_final_reveal(game.secrets[seat]))
    audits = [t.audit() for t in game.tables]
    assert all(not v.ok and v.seat == 1 for v in audits), audits  # ... but the audit names it


def test_unproven_duplicate_is_still_caught_at_once() -> None:
    game = started(proven=False)
    assert_cheater(game, cheat_shuffle(game, 1, _duplicate), seat=1)


@each_group
def test_audit_names_a_seat_that_withholds_its_final_reveal() -> None:
    game = Table(2, Deck.of(range(10)))
    game.passes()
    game.send_ok(make_final_reveal(game.secrets[0]))
    verdict = game.public.audit()
    assert not verdict.ok and verdict.seat == 1


# ------------------------------------------- invalid points (validated on use)

ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
"""A point of order 8: adding it to a card leaves the prime-order subgroup."""


def _torsioned(out: list, xs: tuple, s: int, perm: tuple) -> None:
    # secp256k1 has no torsion (cofactor 1): its invalid points are off the curve
    out[2] = add(out[2], ORDER_8) if GROUP is ED25519 else off_curve(out[2])


@each_group
def test_invalid_point_in_a_proven_shuffle_is_rejected_and_named() -> None:
    game = started()
    bad = cheat_shuffle(game, 1, _torsioned)
    assert not is_valid_point(bad.deck[2])
    assert_cheater(game, bad, seat=1)  # the proof's multiplications refuse the point


@each_group
def test_invalid_point_in_an_unproven_pass_draws_a_complaint_naming_its_author() -> None:
    game = started(proven=False)
    game.send_ok(cheat_shuffle(game, 1, _torsioned))  # decks are only parsed ...
    with pytest.raises(InvalidPoint):  # ... the next seat cannot multiply it
        make_shuffle(game.setup, game.secrets[2], game.public.expected_input())
    complaint = make_complaint(game.public, 2)
    assert complaint == Complaint(2, 2)
    assert_cheater(game, complaint, seat=1)


def test_false_or_out_of_turn_complaints_name_the_complainer() -> None:
    game = started(proven=False)
    assert_cheater(game, Complaint(1, 0), seat=1)  # the point is valid
    assert_cheater(game, Complaint(2, 0), seat=2)  # not its pass
    with pytest.raises(ProtocolError):
        make_complaint(game.public, 1)  # an honest seat finds nothing to complain about
    first = Table(2, Deck.of(range(6)), proven=False)
    assert_cheater(first, Complaint(0, 3), seat=0)  # the deck points are always valid
    first.passes()
    assert_cheater(first, Complaint(0, 3), seat=0)  # no complaint once dealt


def test_unproven_last_stripped_deck_is_checked_at_once() -> None:
    # every later step multiplies it, so an honest seat must never meet an
    # invalid point there: the last lock pass is refused and its seat named
    game = Table(2, Deck.of(range(8)), proven=False)
    for seat in range(2):
        game.send_ok(make_shuffle(game.setup, game.secrets[seat], game.public.expected_input()))
    game.send_ok(make_lock(game.setup, game.secrets[0], game.public.expected_input()))
    honest = make_lock(game.setup, game.secrets[1], game.public.expected_input())
    stripped = list(honest.stripped)
    stripped[4] = add(stripped[4], ORDER_8)
    bad = replace(honest, stripped=tuple(stripped))
    verdicts = game.send(bad)
    assert all(not v.ok and v.seat == 1 and "point 4" in v.reason for v in verdicts), verdicts
    game.send_ok(honest)


def colluders_over_an_invalid_point(position: int) -> Table:
    """Unproven, 3 seats: seat 0 passes on an invalid stripped point at
    ``position``; seat 1 (colluding) locks over it without complaining, so
    its lock layer there has the invalid point as its ``before``."""
    game = Table(3, Deck.of(range(9)), proven=False)
    for seat in range(3):
        game.send_ok(make_shuffle(game.setup, game.secrets[seat], game.public.expected_input()))
    honest = make_lock(game.setup, game.secrets[0], game.public.expected_input())
    stripped = list(honest.stripped)
    stripped[position] = bad_point = add(stripped[position], ORDER_8)
    game.send_ok(replace(honest, stripped=tuple(stripped)))
    # the colluder locks the clean deck: its layer still has the invalid
    # point as its input, since every tracker takes seat 0's published deck
    game.send_ok(make_lock(game.setup, game.secrets[1], honest.stripped))
    game.send_ok(make_lock(game.setup, game.secrets[2], game.public.expected_input()))
    assert game.public.layers[position][1].before == bad_point
    return game


def test_invalid_point_met_later_names_its_author_not_the_key_revealer() -> None:
    # Seat 1's key reveal for that position is correct, but opening its
    # layer multiplies the invalid point: the verdict names seat 0, who sent
    # it. (An honest seat never has a layer over an invalid point: it would
    # have complained instead of locking.)
    game = colluders_over_an_invalid_point(6)
    verdicts = game.send(make_key_reveal(game.secrets[1], [6]))
    assert all(not v.ok and v.seat == 0 for v in verdicts), verdicts
    finals = game.send(make_final_reveal(game.secrets[1]))
    assert all(not v.ok and v.seat == 0 for v in finals), finals


def test_a_layer_over_an_invalid_point_does_not_stop_a_key_opening_another() -> None:
    # protocol.md §1.1: a key opens the seat's oldest layer it fits, and a
    # layer over an invalid point fits no key. Seat 1 (colluder) relocks the
    # position whose lock layer sits on seat 0's invalid point: its relock
    # key alone is accepted, whatever order a tracker tries the layers in.
    game = colluders_over_an_invalid_point(6)
    relock, game.secrets[1] = make_relock(game.public, game.secrets[1], 6)
    game.send_ok(relock)
    game.send_ok(KeyReveal(1, ((6, game.secrets[1].relock_keys[-1][1]),)))
    assert game.public.layers[6][-1].key is not None
    # its lock key still names seat 0, who sent the point under that layer
    lock_key = KeyReveal(1, ((6, game.secrets[1].lock_keys[6]),))
    assert all(not v.ok and v.seat == 0 for v in game.send(lock_key))


def test_a_card_shown_with_keys_is_read_as_feed_reads_it() -> None:
    # Unproven: seat 0's lock pass makes position 1 open to position 0's card.
    # Shown face up with its keys (Mao M4) after position 0 went public, the
    # card is refused as feed would refuse it: a verdict naming nobody (the
    # audit names seat 0) and nothing applied.
    game = Table(3, Deck.of(range(6)), proven=False)
    for seat in range(3):
        game.send_ok(make_shuffle(game.setup, game.secrets[seat], game.public.expected_input()))
    xs, sec = game.public.expected_input(), game.secrets[0]
    honest = make_lock(game.setup, sec, xs)
    stripped = list(honest.stripped)
    stripped[1] = mul(inverse(sec.shuffle_key) * sec.lock_keys[1], xs[0])
    game.send_ok(replace(honest, stripped=tuple(stripped)))
    for seat in (1, 2):
        game.send_ok(make_lock(game.setup, game.secrets[seat], game.public.expected_input()))
    for seat in (1, 2):  # positions 0 and 1 dealt to seat 0
        game.send_ok(make_key_reveal(game.secrets[seat], [0, 1]))
    game.send_ok(make_key_reveal(sec, [0]))  # position 0 goes public
    table = game.public
    with pytest.raises(CheatDetected) as caught:
        table.shown_card(make_key_reveal(sec, [1]), 1)
    assert caught.value.verdict.seat is None and "same card" in caught.value.verdict.reason
    assert table.outstanding(1) and 1 not in table.public  # nothing applied
    for seat in range(3):  # seat 0's final reveal exposes it: applied, nobody named yet
        game.send(make_final_reveal(game.secrets[seat]))
    assert all(not v.ok and v.seat == 0 for v in (t.audit() for t in game.tables))


def test_unproven_invalid_shuffle_point_ignored_by_a_colluder_is_named_by_the_audit() -> None:
    game = started(proven=False)
    game.send_ok(cheat_shuffle(game, 1, _torsioned))
    # seat 2 colludes: it shuffles as if the point were fine (a made-up point)
    xs = list(game.public.expected_input())
    xs[2] = base_mul(random_scalar())
    game.send_ok(make_shuffle(game.setup, game.secrets[2], xs))
    for seat in range(3):
        game.send_ok(make_lock(game.setup, game.secrets[seat], game.public.expected_input()))
    for seat in range(3):
        game.send(make_final_reveal(game.secrets[seat]))
    audits = [t.audit() for t in game.tables]
    assert all(not v.ok and v.seat == 1 for v in audits), audits


# ---------------------------------------------------------------- decoding


def test_messages_round_trip_through_bytes() -> None:
    game = Table(2, Deck.of(range(6)))
    game.passes()
    relock, _ = make_relock(game.public, game.secrets[1], 2)
    for message in (
        make_key_reveal(game.secrets[0], [1, 2]),
        relock,
        make_final_reveal(game.secrets[1]),
        game.public.shuffles[1],
        game.public.locks[0],
    ):
        assert decode_message_bytes(encode_message(message), game.setup) == message


def test_malformed_messages_raise_decode_errors() -> None:
    game = Table(2, Deck.of(range(6)))
    good = make_shuffle(game.setup, game.secrets[0], game.setup.deck.points).to_wire()
    for bad in (
        None,
        [],
        {"type": "nope"},
        dict(good, seat=2),
        dict(good, seat=True),
        dict(good, deck=good["deck"][:5]),
        dict(good, gamma=b"\x01" + bytes(31)),
        dict(good, proof=None),
        {**good, "more": 1},
        {"type": "keys", "seat": 0, "keys": [[6, b"\x01" * 32]]},
        {"type": "keys", "seat": 0, "keys": [[0, bytes(32)]]},
        {"type": "relock", "seat": 0, "position": 0, "point": b"x"},
        {"type": "identity", "seat": 0, "position": 0, "members": [2, 1], "proof": {}},
    ):
        with pytest.raises(DecodeError):
            decode_message(bad, game.setup)
    unproven = replace(game.setup, proven=False)
    with pytest.raises(DecodeError):
        decode_message(good, unproven)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash_the_decoder(data: bytes) -> None:
    setup = DealSetup(Context(b"t", 0), 2, Deck.of(range(4)))
    try:
        decode_message_bytes(data, setup)
    except DecodeError:
        pass


def test_relock_feed_checks() -> None:
    game = Table(2, Deck.of(range(6)))
    game.passes()
    same = Relock(0, 3, game.public.ciphertext(3))
    assert all(not v.ok and v.seat == 0 for v in game.send(same))
    with pytest.raises(ProtocolError):
        Table(2, Deck.of(range(6))).public.ciphertext(0)


@pytest.mark.trio
async def test_heavy_steps_run_in_worker_threads_off_the_event_loop() -> None:
    import trio

    setup = DealSetup(Context(b"trio-table", 0), 2, Deck.standard())
    secrets = [DealSecrets.generate(setup, s) for s in range(2)]
    table = DealTable(setup)
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.sleep(0.001)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(heartbeat)
        for make in (make_shuffle, make_lock):
            for seat in range(2):
                message = await trio.to_thread.run_sync(
                    make, setup, secrets[seat], table.expected_input()
                )
                assert await trio.to_thread.run_sync(table.feed, message)
        nursery.cancel_scope.cancel()
    assert table.dealt
    assert ticks > 5  # the loop kept running while proofs were made and checked


_SMALL = DealSetup(Context(b"corrupt", 0), 2, Deck.of(range(4)))
_SMALL_SECRETS = [DealSecrets.generate(_SMALL, s) for s in range(2)]


def _wire_slots(obj: object, path: tuple = ()) -> list[tuple]:
    if isinstance(obj, bytes):
        return [path]
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _wire_slots(v, (*path, k))]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _wire_slots(v, (*path, i))]
    return []


def _flip(obj: object, path: tuple, offset: int, xor: int) -> object:
    if not path:
        data = bytearray(obj)  # type: ignore[arg-type]
        data[offset % len(data)] ^= xor
        return bytes(data)
    if isinstance(obj, dict):
        return {k: _flip(v, path[1:], offset, xor) if k == path[0] else v for k, v in obj.items()}
    return [_flip(v, path[1:], offset, xor) if i == path[0] else v for i, v in enumerate(obj)]


@settings(max_examples=150, deadline=None)
@given(step=st.integers(0, 4), data=st.data())
def test_any_single_corruption_of_a_published_value_is_caught(step: int, data) -> None:
    """Corrupt one byte of any point or scalar of one message (shuffle, lock,
    or a key reveal): it is rejected at once naming its author (a locked
    point is bound by the lock proof made over it)."""
    table = DealTable(_SMALL)
    makers = [make_shuffle, make_shuffle, make_lock, make_lock]
    for i, make in enumerate(makers[:step]):
        assert table.feed(make(_SMALL, _SMALL_SECRETS[i % 2], table.expected_input()))
    if step < 4:
        author = step % 2
        wire = makers[step](_SMALL, _SMALL_SECRETS[author], table.expected_input()).to_wire()
    else:
        author = data.draw(st.integers(0, 1), label="revealer")
        wire = make_key_reveal(_SMALL_SECRETS[author], range(4)).to_wire()
    path = data.draw(st.sampled_from(_wire_slots(wire)), label="element")
    bad = _flip(wire, path, data.draw(st.integers(0, 31)), data.draw(st.integers(1, 255)))
    try:
        message = decode_message(bad, _SMALL)
    except DecodeError:
        return
    verdict = table.feed(message)
    assert not verdict.ok and verdict.seat == author


def test_own_seat_skips_only_the_proofs_of_its_own_passes() -> None:
    game = started()
    cheat = cheat_shuffle(game, 1, _tagged)
    mine = DealTable(game.setup, own_seat=1)
    observer = DealTable(game.setup)
    for table in (mine, observer):
        assert table.feed(game.public.shuffles[0])
    assert mine.feed(cheat)  # a peer does not re-check the proof it just made ...
    verdict = observer.feed(cheat)  # ... everyone else does
    assert not verdict.ok and verdict.seat == 1
    dup = cheat_shuffle(game, 1, _duplicate)
    assert not DealTable(game.setup, own_seat=1).feed(dup)  # out of turn: still checked


def test_the_audit_redoes_only_the_passes_whose_proof_it_did_not_verify() -> None:
    game = Table(3, Deck.standard())
    game.tables[1] = DealTable(game.setup, own_seat=1)  # its own proofs are not verified
    unproven = Table(3, Deck.standard(), proven=False)
    for g in (game, unproven):
        g.passes()
        g.deal(hands_of(3))
        for seat in range(3):
            g.send_ok(make_final_reveal(g.secrets[seat]))
    n = game.setup.size
    with count_ops() as observer:
        assert game.tables[0].audit()
    with count_ops() as own:
        assert game.tables[1].audit()
    with count_ops() as none_proven:
        assert unproven.tables[0].audit()
    assert observer["var"] == 0  # every proof checked on arrival: nothing to redo
    assert own["var"] == 2 * n  # its own shuffle and lock, from its revealed key
    assert none_proven["var"] == 2 * 3 * n  # every pass


def test_queries_about_a_missing_position_raise_a_typed_error() -> None:
    game = Table(2, Deck.of(range(6)))
    game.passes()
    for query in (
        lambda: game.public.readers(6),
        lambda: game.public.ciphertext(-1),
        lambda: game.public.decrypt(99, 0, game.secrets[0]),
        lambda: game.public.peeled("1"),
        lambda: make_key_reveal(game.secrets[0], [6]),
        lambda: game.public.decrypt(0, 1, game.secrets[0]),
    ):
        with pytest.raises(ProtocolError):
            query()


# ---------------------------------------------------------------- review findings


@pytest.mark.parametrize("kind", [[1], {}, {"shuffle": 1}])
def test_unhashable_message_type_is_a_decode_error_not_a_crash(kind: object) -> None:
    setup = DealSetup(Context(b"t", 0), 2, Deck.of(range(4)))
    with pytest.raises(DecodeError):
        decode_message({"type": kind, "seat": 0}, setup)
    with pytest.raises(DecodeError):
        decode_message_bytes(msgpack.packb({"type": kind}), setup)


def _duplicating_shuffle(game: Table, seat: int, twin: int) -> tuple[ShufflePass, int, int]:
    """Seat's unproven shuffle whose output ``twin`` is a copy of output
    ``twin + 1`` under another key s′ (a distinct point); stripping s′ there
    in the lock pass makes both positions hold the same card. Returns the
    pass, ``twin`` and s′."""
    sec = game.secrets[seat]
    xs = game.public.expected_input()
    s, perm = sec.shuffle_key, sec.permutation
    out = [mul(s, xs[perm[i]]) for i in range(len(xs))]
    other = random_scalar()
    out[twin] = mul(other, xs[perm[twin + 1]])
    return ShufflePass(seat, tuple(out), base_mul(s), None), twin, other


@each_group
def test_feed_verdicts_do_not_depend_on_a_peers_private_decryption() -> None:
    """Every tracker must reach the same verdicts from the same messages: a
    seat's own decryption of its hand must not change what it says about a
    later public reveal (else peers disagree on faults)."""
    game = Table(2, Deck.of(range(6)), proven=False)
    game.send_ok(make_shuffle(game.setup, game.secrets[0], game.public.expected_input()))
    bad, twin, other = _duplicating_shuffle(game, 1, 2)
    game.send_ok(bad)
    game.send_ok(make_lock(game.setup, game.secrets[0], game.public.expected_input()))
    # seat 1 strips s′ at the copied position, so that it reads to a card again
    sec = game.secrets[1]
    xs = game.public.expected_input()
    locked = tuple(mul(k, x) for k, x in zip(sec.lock_keys, xs, strict=True))
    stripped = [mul(inverse(sec.shuffle_key), x) for x in locked]
    stripped[twin] = mul(inverse(other), locked[twin])
    game.send_ok(LockPass(1, tuple(stripped), None, locked))
    # position twin is dealt to seat 0, which reads it privately ...
    game.send_ok(make_key_reveal(game.secrets[1], [twin]))
    first = game.tables[0].decrypt(twin, 0, game.secrets[0])
    # ... then the original is shown to everyone: the same card again
    verdicts = game.send(make_key_reveal(game.secrets[0], [twin + 1]))
    verdicts += game.send(make_key_reveal(game.secrets[1], [twin + 1]))
    assert verdicts[2:] == [verdicts[2]] * 2, verdicts  # every peer says the same
    assert all(t.public_card(twin + 1) == first for t in game.tables)
    # when both are public, every peer flags it, with no seat (the audit names it)
    verdicts = game.send(make_key_reveal(game.secrets[0], [twin]))
    assert all(not v.ok and v.seat is None for v in verdicts), verdicts
    for seat in range(2):
        game.send(make_final_reveal(game.secrets[seat]))
    assert all(not v.ok and v.seat == 1 for v in (t.audit() for t in game.tables))


@each_group
def test_relock_after_own_final_reveal_is_rejected_and_named() -> None:
    """A layer added after its owner's final reveal could never be opened:
    the audit could then name nobody. The relock itself is refused."""
    game = Table(2, Deck.of(range(6)))
    game.passes()
    game.send_ok(make_final_reveal(game.secrets[0]))
    relock, _ = make_relock(game.public, game.secrets[0], 3)
    layers_before = [len(stack) for stack in game.public.layers]
    verdicts = game.send(relock)
    assert all(not v.ok and v.seat == 0 for v in verdicts), verdicts
    assert [len(stack) for stack in game.public.layers] == layers_before
    game.send_ok(make_final_reveal(game.secrets[1]))
    assert all(t.audit() for t in game.tables)


@each_group
def test_audit_names_the_owner_of_a_layer_never_opened() -> None:
    game = Table(2, Deck.of(range(6)))
    game.passes()
    relock, game.secrets[1] = make_relock(game.public, game.secrets[1], 2)
    game.send_ok(relock)
    for seat in range(2):
        game.send_ok(make_final_reveal(game.secrets[seat]))
    game.public.layers[2][-1].key = None  # as if the relock key had never been given
    verdict = game.public.audit()
    assert not verdict.ok and verdict.seat == 1, verdict


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("permutation", [0.0, 1.0, 2.0, 3.0]),
        ("permutation", [0, "a", 2, 3]),
        ("permutation", [0, 1, 2, None]),
        ("v", True),
        ("v", 1.0),
    ],
)
def test_secrets_from_bytes_is_strict_about_types(field: str, value: object) -> None:
    data = _SMALL_SECRETS[0].to_bytes()
    obj = msgpack.unpackb(data)
    obj[field] = value
    with pytest.raises(DecodeError):
        DealSecrets.from_bytes(msgpack.packb(obj, use_bin_type=True))
    with pytest.raises(DecodeError):
        DealSecrets.from_bytes("not bytes")  # type: ignore[arg-type]


def test_final_reveal_of_a_seat_with_many_relocks_still_decodes() -> None:
    """Every Bluff pick-up adds a relock layer; a long game can give one seat
    more keys than ``positions × MAX_SEATS``. Its honest final reveal must
    not be refused as malformed (which would blame an honest seat)."""
    game = Table(2, Deck.of(range(2)))
    game.passes()
    for _ in range(40):  # the card goes back and forth, seat 1 relocks each time
        relock, game.secrets[1] = make_relock(game.public, game.secrets[1], 0)
        game.send_ok(relock)
    game.send_ok(make_final_reveal(game.secrets[0]))
    final = make_final_reveal(game.secrets[1])
    assert len(final.keys) > 2 * 16
    game.send_ok(final)
    assert all(t.audit() for t in game.tables)


def test_key_flood_is_refused_before_any_group_operation() -> None:
    """A key reveal costs a scalar multiplication per pair: more distinct
    pairs than the seat has layers is refused at once (no work), and a pair
    repeated many times is checked once."""
    from mental_poker import group

    game = Table(2, Deck.of(range(6)))
    game.passes()
    flood = KeyReveal(1, tuple((p % 6, random_scalar()) for p in range(7)))
    with group.count_ops() as ops:
        verdict = game.public.feed(flood)
    assert not verdict.ok and verdict.seat == 1
    assert "7 keys revealed for 6 layers" in str(verdict)  # seat 1's layers, all counted
    assert ops["var"] == 0
    honest = make_key_reveal(game.secrets[1], [2])
    repeated = KeyReveal(1, honest.keys * 500)
    with group.count_ops() as ops:
        assert game.public.feed(repeated)
    assert ops["var"] <= 2 * len(honest.keys) + 2
    assert game.public.layers[2][1].key == honest.keys[0][1]


@each_group
def test_relock_to_a_point_its_seat_cannot_open_is_pinned_on_that_seat() -> None:
    """A relock carries no proof. A point that is not key·current (here: a
    copy of another position's value, and a made-up point) cannot gain its
    author a card: it can never reveal a key for that layer, so its reveal
    and its final reveal are refused and the audit names it, never the
    previous holder whose keys keep opening its own layers."""
    for forged in ("copy", "made-up"):
        game = Table(3, Deck.of(range(8)))
        game.passes()
        game.deal({0: [4]})
        point = game.public.ciphertext(5) if forged == "copy" else base_mul(random_scalar())
        game.send_ok(Relock(2, 4, point))  # accepted: nothing to check yet
        game.send_ok(make_key_reveal(game.secrets[0], [4]))  # the old holder hands it over
        with pytest.raises(ProtocolError):  # seat 2 itself cannot read it
            game.tables[2].decrypt(4, 2, game.secrets[2])
        attempt = KeyReveal(2, ((4, game.secrets[2].lock_keys[4]), (4, random_scalar())), GROUP)
        assert all(not v.ok and v.seat == 2 for v in game.send(attempt))
        game.send_ok(make_final_reveal(game.secrets[0]))
        game.send_ok(make_final_reveal(game.secrets[1]))
        assert all(not v.ok and v.seat == 2 for v in game.send(make_final_reveal(game.secrets[2])))
        assert all(not v.ok and v.seat == 2 for v in (t.audit() for t in game.tables))


# ---------------------------------------------------------------- confidentiality


def _observer_reads(table: DealTable, position: int) -> set[int]:
    """Every card an observer can read at ``position`` from public values
    alone: each public point of the position (every layer's before/after,
    the current value, the lock messages' values there) with the inverse
    product of any subset of the keys revealed over it."""
    from itertools import combinations

    from mental_poker.group import L as order

    points = {table.ciphertext(position)}
    for layer in table.layers[position]:
        points |= {layer.before, layer.after}
    for lock in table.locks:
        points |= {lock.stripped[position], lock.locked[position]}
    keys = [layer.key for layer in table.layers[position] if layer.key is not None]
    found = set()
    for size in range(len(keys) + 1):
        for subset in combinations(keys, size):
            product = 1
            for k in subset:
                product = product * k % order
            for point in points:
                card = table.setup.deck.index_of(mul(inverse(product), point))
                if card is not None:
                    found.add(card)
    return found


@pytest.mark.parametrize("seats", [2, 3])
def test_a_card_dealt_to_the_last_locking_seat_stays_hidden(seats: int) -> None:
    """The last seat of the lock pass used to publish its stripped deck,
    (Π other lock keys)·D: once the others revealed their keys to deal it a
    card, everybody could read that card."""
    game = Table(seats, Deck.of(range(12)))
    game.passes()
    hand = [0, 1, 2]
    cards = game.deal({seats - 1: hand})[seats - 1]
    assert len(set(cards)) == 3
    for position in hand:
        assert _observer_reads(game.public, position) == set()
    game.send_ok(make_key_reveal(game.secrets[seats - 1], [0]))  # shown: now public
    assert _observer_reads(game.public, 0) == {cards[0]}


@each_group
def test_a_handed_over_card_stays_hidden_from_the_other_seats() -> None:
    """Bluff pick-up: the old holder used to reveal its key after the new
    holder relocked, which opened every layer under the relock point to all."""
    game = Table(3, Deck.of(range(12)))
    game.passes()
    card = game.deal({0: [5]})[0][0]
    relock, game.secrets[1] = make_relock(game.public, game.secrets[1], 5)
    game.send_ok(relock)
    game.send_ok(make_handover(game.public, game.secrets[0], 5))
    assert all(t.readers(5) == {1} for t in game.tables)
    assert game.tables[1].decrypt(5, 1, game.secrets[1]) == card
    assert _observer_reads(game.public, 5) == set()
    # and back again: seat 0 relocks, seat 1 hands over its relock layer
    relock, game.secrets[0] = make_relock(game.public, game.secrets[0], 5)
    game.send_ok(relock)
    game.send_ok(make_handover(game.public, game.secrets[1], 5))
    assert game.tables[0].decrypt(5, 0, game.secrets[0]) == card
    assert _observer_reads(game.public, 5) == set()
    assert all(game.finish())


@each_group
def test_bad_handovers_are_rejected_and_named() -> None:
    game = Table(3, Deck.of(range(12)))
    game.passes()
    game.deal({0: [5]})
    early = make_handover(game.public, game.secrets[0], 5)  # nobody relocked yet
    assert all(not v.ok and v.seat == 0 for v in game.send(early))
    relock, game.secrets[1] = make_relock(game.public, game.secrets[1], 5)
    game.send_ok(relock)
    honest = make_handover(game.public, game.secrets[0], 5)
    assert decode_message_bytes(encode_message(honest), game.setup) == honest
    other_key = replace(honest, point=mul(random_scalar(), game.public.ciphertext(5)))
    not_holder = replace(honest, seat=2)  # seat 2's layer there is open
    for bad, seat in ((other_key, 0), (not_holder, 2)):
        before = (game.public.ciphertext(5), [layer.removed for layer in game.public.layers[5]])
        assert all(not v.ok and v.seat == seat for v in game.send(bad))
        after = (game.public.ciphertext(5), [layer.removed for layer in game.public.layers[5]])
        assert after == before
    game.send_ok(honest)
    assert all(not v.ok and v.seat == 0 for v in game.send(honest))  # replayed
    with pytest.raises(DecodeError):
        decode_message(dict(honest.to_wire(), proof={"e": b"\x01" * 32}), game.setup)
    assert all(game.finish())


@each_group
def test_a_handed_over_layer_keeps_its_key_until_the_final_reveal() -> None:
    """Review of issue 9: the old holder revealing the key of the layer it
    handed over would let everyone read, from the lock pass's values, the
    card another seat now holds. Refused (naming it) until the final reveal;
    an honest reveal never includes it."""
    game = Table(3, Deck.of(range(12)))
    game.passes()
    game.deal({0: [5]})
    relock, game.secrets[1] = make_relock(game.public, game.secrets[1], 5)
    game.send_ok(relock)
    game.send_ok(make_handover(game.public, game.secrets[0], 5))
    leak = KeyReveal(0, ((5, game.secrets[0].lock_keys[5]),), GROUP)
    assert all(not v.ok and v.seat == 0 for v in game.send(leak))
    assert make_key_reveal(game.secrets[0], [5], game.public).keys == ()
    assert all(game.finish())  # the final reveal still opens it for the audit


def test_a_pass_made_here_is_not_verified_again_but_an_altered_one_is(monkeypatch) -> None:
    """DealTable.made_here: a peer's own pass, back from the log unchanged
    (through the wire encoding), skips its proof check; the same pass with
    one byte changed before signing is checked and refused."""
    import mental_poker.deal as deal_module

    checked: list[int] = []
    real_shuffle, real_lock = deal_module.ShuffleCheck, deal_module.LockCheck

    def counting(real):
        def make(seat, *args):
            checked.append(seat)
            return real(seat, *args)

        return make

    monkeypatch.setattr(deal_module, "ShuffleCheck", counting(real_shuffle))
    monkeypatch.setattr(deal_module, "LockCheck", counting(real_lock))
    setup = DealSetup(Context(b"made-here", 2), 2, Deck.of(range(6)), proven=True)
    mine = DealSecrets.generate(setup, 0)
    table = DealTable(setup)
    made = make_shuffle(setup, mine, table.expected_input())
    table.made_here(made)
    back = decode_message_bytes(encode_message(made), setup)  # as the log brings it
    assert table.feed(back) and checked == []
    other = DealTable(setup)
    other.made_here(made)
    altered = replace(made, gamma=base_mul(random_scalar()))  # changed before signing
    verdict = other.feed(decode_message_bytes(encode_message(altered), setup))
    assert not verdict and verdict.seat == 0 and checked == [0]


def test_a_pass_made_here_on_another_deck_is_verified() -> None:
    """A log cut back and rebuilt can bring our pass back after another
    previous pass: it is then checked (and its proof, about the old deck,
    fails and names us, as every other tracker says)."""
    setup = DealSetup(Context(b"made-here-2", 2), 2, Deck.of(range(6)), proven=True)
    first, second = DealSecrets.generate(setup, 0), DealSecrets.generate(setup, 0)
    ours = DealSecrets.generate(setup, 1)
    table = DealTable(setup)
    assert table.feed(make_shuffle(setup, first, table.expected_input()))
    made = make_shuffle(setup, ours, table.expected_input())
    table.made_here(made)
    rebuilt = DealTable(setup)
    rebuilt.made = list(table.made)  # what this peer made, kept across the rebuild
    assert rebuilt.feed(make_shuffle(setup, second, rebuilt.expected_input()))
    verdict = rebuilt.feed(made)
    assert not verdict and verdict.seat == 1 and "shuffle proof" in verdict.reason
