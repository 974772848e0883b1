"""The proofs of a deal checked in one sweep (mental_poker/batch.py,
protocol.md §1.11): honest deals pass; any single corrupted proof, deck point
or moved proof fails the batch, and the fallback names exactly the seat that
checking each pass on arrival names, in the batch itself and in a deferred
tracker."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mental_poker.batch import (
    Prechecker,
    batch_holds,
    checked_elsewhere,
    deal_checks,
    statement_key,
    verify_batch,
    verify_deal_batch,
)
from mental_poker.context import Context
from mental_poker.deal import DealTable
from mental_poker.deck import Deck
from mental_poker.errors import Verdict
from mental_poker.group import L, add, base_mul, is_valid_point
from mental_poker.messages import Complaint, DealSetup, LockPass, Message, ShufflePass
from mental_poker.seat import DealSecrets, make_final_reveal, make_lock, make_shuffle

CARDS = 5
ORDER_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")


def honest_deal(seats: int, cards: int = CARDS) -> tuple[DealSetup, list[Message], list]:
    setup = DealSetup(Context(b"batch", seats), seats, Deck.of(range(cards)), proven=True)
    secrets = [DealSecrets.generate(setup, s) for s in range(seats)]
    table = DealTable(setup)
    messages: list[Message] = []
    for make in (make_shuffle, make_lock):
        for seat in range(seats):
            msg = make(setup, secrets[seat], table.expected_input())
            messages.append(msg)
            assert table.feed(msg)
    return setup, messages, secrets


DEALS = {seats: honest_deal(seats) for seats in (2, 3, 4)}


def split(messages: list[Message]) -> tuple[list[ShufflePass], list[LockPass]]:
    return (
        [m for m in messages if isinstance(m, ShufflePass)],
        [m for m in messages if isinstance(m, LockPass)],
    )


def batch_verdict(setup: DealSetup, messages: list[Message], skip: int | None = None) -> Verdict:
    shuffles, locks = split(messages)
    return verify_deal_batch(setup.context, setup.deck.points, shuffles, locks, skip)


def first_verdict(setup: DealSetup, messages: list[Message], **options: object) -> Verdict:
    """What a tracker says: the first verdict that is not ok."""
    table = DealTable(setup, **options)  # type: ignore[arg-type]
    for msg in messages:
        verdict = table.feed(msg)
        if not verdict:
            return verdict
    return Verdict.good()


# ---------------------------------------------------------------- honest


@pytest.mark.parametrize("seats", [2, 4, 9])
def test_the_batch_accepts_an_honest_deal(seats: int) -> None:
    setup, messages, secrets = DEALS[seats] if seats in DEALS else honest_deal(seats)
    assert batch_verdict(setup, messages)
    assert batch_verdict(setup, messages, skip=0)
    shuffles, locks = split(messages)
    checks = deal_checks(setup.context, setup.deck.points, shuffles, locks, skip=1)
    assert len(checks) == 2 * (seats - 1) and 1 not in {c.seat for c in checks}
    assert batch_holds(checks) and verify_batch(checks) is None
    # a deferred tracker deals the same deck after one batch
    table = DealTable(setup, deferred=True)
    for msg in messages:
        assert table.feed(msg)
    assert table.dealt and not table.pending
    for s in secrets:
        assert table.feed(make_final_reveal(s))
    assert table.audit()


def test_a_deferred_tracker_deals_nothing_before_the_batch() -> None:
    setup, messages, _ = DEALS[3]
    table = DealTable(setup, deferred=True)
    for msg in messages[:-1]:
        assert table.feed(msg)
    assert not table.dealt and len(table.pending) == len(messages) - 1
    assert table.verify_pending() and not table.pending  # incremental: a partial batch
    assert table.feed(messages[-1]) and table.dealt


# ---------------------------------------------------------------- corruptions


def bump(k: int) -> int:
    return (k + 1) % L


def other_point(p: bytes) -> bytes:
    return add(p, base_mul(7))


def corrupt_shuffle(msg: ShufflePass, field: str, i: int) -> ShufflePass:
    proof = msg.proof
    assert proof is not None
    n = len(msg.deck)
    i %= n
    if field == "deck swap":
        deck = list(msg.deck)
        deck[i], deck[(i + 1) % n] = deck[(i + 1) % n], deck[i]
        return replace(msg, deck=tuple(deck))
    if field == "deck point":
        return replace(msg, deck=_with(msg.deck, i, other_point(msg.deck[i])))
    if field == "deck torsion":
        return replace(msg, deck=_with(msg.deck, i, add(msg.deck[i], ORDER_8)))
    if field == "gamma":
        return replace(msg, gamma=other_point(msg.gamma))
    if field in ("c", "chain"):
        points = getattr(proof, field)
        return replace(
            msg, proof=replace(proof, **{field: _with(points, i, other_point(points[i]))})
        )
    if field in ("e", "s1", "s2", "s3", "s4"):
        return replace(msg, proof=replace(proof, **{field: bump(getattr(proof, field))}))
    if field in ("s_hat", "s_prime"):
        values = getattr(proof, field)
        return replace(msg, proof=replace(proof, **{field: _with(values, i, bump(values[i]))}))
    raise AssertionError(field)


def corrupt_lock(msg: LockPass, field: str, i: int) -> LockPass:
    proof = msg.proof
    assert proof is not None
    n = len(msg.locked)
    i %= n
    if field in ("locked swap", "stripped swap"):
        name = field.split()[0]
        deck = list(getattr(msg, name))
        deck[i], deck[(i + 1) % n] = deck[(i + 1) % n], deck[i]
        return replace(msg, **{name: tuple(deck)})
    if field in ("locked point", "stripped point"):
        name = field.split()[0]
        deck = getattr(msg, name)
        return replace(msg, **{name: _with(deck, i, other_point(deck[i]))})
    if field == "stripped torsion":
        return replace(msg, stripped=_with(msg.stripped, i, add(msg.stripped[i], ORDER_8)))
    if field in ("e", "z"):
        return replace(msg, proof=replace(proof, **{field: bump(getattr(proof, field))}))
    if field == "z_lock":
        return replace(
            msg, proof=replace(proof, z_lock=_with(proof.z_lock, i, bump(proof.z_lock[i])))
        )
    raise AssertionError(field)


def _with(values: tuple, i: int, value: object) -> tuple:
    return (*values[:i], value, *values[i + 1 :])


SHUFFLE_FIELDS = (
    "deck swap",
    "deck point",
    "deck torsion",
    "gamma",
    "c",
    "chain",
    "e",
    "s1",
    "s2",
    "s3",
    "s4",
    "s_hat",
    "s_prime",
)
LOCK_FIELDS = (
    "locked swap",
    "stripped swap",
    "locked point",
    "stripped point",
    "stripped torsion",
    "e",
    "z",
    "z_lock",
)


def corrupted(messages: list[Message], index: int, field: str, i: int) -> list[Message]:
    out = list(messages)
    msg = out[index]
    out[index] = (
        corrupt_shuffle(msg, field, i)
        if isinstance(msg, ShufflePass)
        else corrupt_lock(msg, field, i)  # type: ignore[arg-type]
    )
    return out


def assert_named(setup: DealSetup, bad: list[Message], seat: int) -> None:
    shuffles, locks = split(bad)
    checks = deal_checks(setup.context, setup.deck.points, shuffles, locks)
    assert not batch_holds(checks)
    failure = verify_batch(checks)
    assert failure is not None and failure.seat == seat
    on_arrival = first_verdict(setup, bad)
    batch = batch_verdict(setup, bad)
    deferred = first_verdict(setup, bad, deferred=True)
    assert not on_arrival.ok and on_arrival.seat == seat, on_arrival
    assert batch == on_arrival, (batch, on_arrival)
    assert deferred == on_arrival, (deferred, on_arrival)


@pytest.mark.parametrize("field", SHUFFLE_FIELDS)
@pytest.mark.parametrize("seat", [0, 2])
def test_a_corrupted_shuffle_pass_fails_the_batch_and_is_named(field: str, seat: int) -> None:
    setup, messages, _ = DEALS[3]
    bad = corrupted(messages, seat, field, 1)
    if field == "deck torsion":
        assert not is_valid_point(bad[seat].deck[1])  # type: ignore[union-attr]
    assert_named(setup, bad, seat)


@pytest.mark.parametrize("field", LOCK_FIELDS)
@pytest.mark.parametrize("seat", [0, 2])
def test_a_corrupted_lock_pass_fails_the_batch_and_is_named(field: str, seat: int) -> None:
    setup, messages, _ = DEALS[3]
    assert_named(setup, corrupted(messages, 3 + seat, field, 2), seat)


@pytest.mark.parametrize("kind", [ShufflePass, LockPass])
def test_a_proof_moved_to_another_seat_names_the_seat_it_was_moved_to(kind: type) -> None:
    setup, messages, _ = DEALS[4]
    passes = [m for m in messages if isinstance(m, kind)]
    bad = list(messages)
    at = messages.index(passes[2])
    bad[at] = replace(passes[2], proof=passes[1].proof)
    assert_named(setup, bad, 2)
    swapped = list(bad)  # both ways: the first in pass order is named
    swapped[messages.index(passes[1])] = replace(passes[1], proof=passes[2].proof)
    assert_named(setup, swapped, 1)


def test_an_invalid_point_copied_by_a_later_seat_still_names_its_first_sender() -> None:
    setup, messages, _ = DEALS[3]
    bad = corrupted(messages, 1, "deck torsion", 0)
    point = bad[1].deck[0]  # type: ignore[union-attr]
    later = bad[2]
    assert isinstance(later, ShufflePass)
    bad[2] = replace(later, deck=_with(later.deck, 3, point))
    assert_named(setup, bad, 1)


def test_a_complaint_in_a_deferred_deal_runs_the_batch_first() -> None:
    setup, messages, _ = DEALS[3]
    bad = corrupted(messages, 1, "deck torsion", 2)
    for options in ({}, {"deferred": True}):
        table = DealTable(setup, **options)  # type: ignore[arg-type]
        verdicts = [table.feed(m) for m in bad[:2]]
        if options:  # accepted for now; the complaint of seat 2 checks it
            assert all(verdicts)
            verdict = table.feed(Complaint(2, 2))
        else:
            verdict = verdicts[-1]
        assert verdict.seat == 1 and not verdict.ok


def test_a_cheap_check_failing_later_does_not_hide_an_earlier_bad_proof() -> None:
    setup, messages, _ = DEALS[3]
    bad = corrupted(messages, 0, "s_prime", 0)
    bad[2] = replace(bad[2], deck=(bad[2].deck[0],) * CARDS)  # type: ignore[union-attr]
    assert first_verdict(setup, bad).seat == 0
    assert first_verdict(setup, bad, deferred=True) == first_verdict(setup, bad)


def test_a_failed_deferred_tracker_stays_failed() -> None:
    setup, messages, _ = DEALS[2]
    bad = corrupted(messages, 0, "e", 0)
    table = DealTable(setup, deferred=True)
    verdicts = [table.feed(m) for m in bad]
    assert verdicts[:-1] == [Verdict.good()] * 3 and verdicts[-1].seat == 0
    assert not table.dealt and table.feed(bad[-1]) == verdicts[-1]


ALL_FIELDS = [(kind, f) for kind, fields in ((0, SHUFFLE_FIELDS), (1, LOCK_FIELDS)) for f in fields]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seats=st.sampled_from([2, 3, 4]),
    which=st.integers(0, 15),
    field=st.sampled_from(ALL_FIELDS),
    i=st.integers(0, CARDS - 1),
    skip=st.sampled_from([None, 0, 1]),
)
def test_any_single_corruption_fails_the_batch_and_names_its_seat(
    seats: int, which: int, field: tuple[int, str], i: int, skip: int | None
) -> None:
    setup, messages, _ = DEALS[seats]
    kind, name = field
    seat = which % seats
    if seat == skip:
        seat = (seat + 1) % seats
    index = kind * seats + seat
    bad = corrupted(messages, index, name, i)
    verdict = batch_verdict(setup, bad, skip)
    assert not verdict.ok and verdict.seat == seat, verdict
    assert verdict == first_verdict(setup, bad, own_seat=skip)
    assert first_verdict(setup, bad, own_seat=skip, deferred=True) == verdict


# ------------------------------------------------- the review's findings


def test_a_deferred_deal_is_not_playable_while_its_queue_is_checked(monkeypatch) -> None:
    """§1.11: the last lock pass checks the queue *before* the deal enters
    play, and the queue stays in place while it is checked, so a feed() in
    another thread meanwhile checks it too instead of dealing."""
    import mental_poker.deal as deal_module

    setup, messages, _ = DEALS[3]
    bad = corrupted(messages, 0, "e", 0)  # seat 0's shuffle proof is wrong
    table = DealTable(setup, deferred=True)
    seen: list[tuple[bool, int]] = []
    real = deal_module.batch_holds

    def watching(checks):  # what another thread would see during the check
        seen.append((table.dealt, len(table.pending)))
        return real(checks)

    monkeypatch.setattr(deal_module, "batch_holds", watching)
    verdicts = [table.feed(msg) for msg in bad]
    assert seen == [(False, 2 * 3)]  # not dealt, the whole queue still there
    assert not verdicts[-1] and verdicts[-1].seat == 0 and not table.dealt


def test_the_batch_alone_refuses_passes_out_of_order_or_without_proof() -> None:
    setup, messages, _ = DEALS[3]
    shuffles, locks = split(messages)
    context, deck = setup.context, setup.deck.points
    no_proof = [*locks[:1], replace(locks[1], proof=None), *locks[2:]]
    verdict = verify_deal_batch(context, deck, shuffles, no_proof)
    assert not verdict and verdict.seat == 1 and "without its proof" in verdict.reason
    verdict = verify_deal_batch(context, deck, [shuffles[0], shuffles[2]], [])
    assert not verdict and verdict.seat == 2 and "out of turn" in verdict.reason
    verdict = verify_deal_batch(context, deck, shuffles[:2], locks)
    assert not verdict and "before every shuffle" in verdict.reason
    assert verify_deal_batch(context, deck, shuffles, no_proof, skip=1)  # one's own pass


# ---------------------------------------------------------------- checked ahead


def test_a_prechecker_answers_only_for_the_very_statement_it_verified() -> None:
    setup, messages, _ = DEALS[3]
    shuffles, locks = split(messages)
    checks = deal_checks(setup.context, setup.deck.points, shuffles, locks)
    bad = corrupted(messages, 1, "s_prime", 0)
    bad_checks = deal_checks(setup.context, setup.deck.points, *split(bad))
    with Prechecker() as pre:
        pre.submit([*checks, bad_checks[1]])
        for check in checks:
            assert pre(check)  # verified there (or taken back, then False)
        assert not pre(bad_checks[1])  # it failed: the caller checks it and names the seat
        other = replace(checks[0], ctx=setup.context.at("shuffle", 2))
        assert not pre(other)  # another statement: never answered for
    # a tracker reading the lookup still refuses the bad pass, naming its seat
    with Prechecker() as pre:
        pre.submit(bad_checks)
        with checked_elsewhere(pre):
            verdict = first_verdict(setup, bad)
    assert not verdict and verdict.seat == 1
    with Prechecker() as pre:
        pre.submit(checks)
        with checked_elsewhere(pre):
            assert first_verdict(setup, messages)


def test_a_statement_key_covers_every_input_of_the_check() -> None:
    setup, messages, _ = DEALS[2]
    checks = deal_checks(setup.context, setup.deck.points, *split(messages))
    shuffle, lock = checks[0], checks[2]
    keys = {statement_key(shuffle), statement_key(lock)}
    for variant in (
        replace(shuffle, xs=shuffle.xs[::-1]),
        replace(shuffle, ys=shuffle.ys[::-1]),
        replace(shuffle, gamma=checks[1].gamma),
        replace(shuffle, ctx=setup.context.at("shuffle", 1)),
        replace(shuffle, proof=replace(shuffle.proof, e=bump(shuffle.proof.e))),
        replace(lock, xs=lock.xs[::-1]),
        replace(lock, locked=lock.locked[::-1]),
        replace(lock, stripped=lock.stripped[::-1]),
        replace(lock, proof=replace(lock.proof, z=bump(lock.proof.z))),
    ):
        key = statement_key(variant)
        assert key not in keys
        keys.add(key)
