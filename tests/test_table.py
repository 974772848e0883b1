"""The table machine (table.machine): whole games of every game played by bots
through real mental-poker deals, replayed offline from the log, and bodies
from a cheating or confused seat refused with the seat named."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.bluff import BluffConfig, Start
from engines.bots import sensible_bots
from engines.core import RandomValue, to_data
from mental_poker.group import encode_scalar, random_scalar
from table.local import LocalTable, TableFault
from table.machine import Table, TableSetup


def play(game: str, seats: int, seed: int, proven: bool, version: int = 3) -> LocalTable:
    setup = TableSetup(f"test-{game}-{seed}".encode(), game, seats, proven=proven, version=version)
    local = LocalTable(setup, sensible_bots(game, seats, seed), seed=seed)
    local.play()
    return local


def replay(setup: TableSetup, log: list) -> Table:
    table = Table(setup)
    for author, body in log:
        verdict = table.feed(author, body)
        assert verdict.ok, verdict
    return table


@pytest.mark.parametrize(
    ("game", "seats"),
    [("bluff", 2), ("bluff", 3), ("bomb", 4), ("mao", 3)],
)
def test_whole_proven_game_ends_audited_and_replays(game: str, seats: int) -> None:
    local = play(game, seats, seed=7, proven=True)
    table = local.table
    assert table.over and all(not d.missing_final() for d in table.deals if d.dealt)
    assert table.audit().ok
    outcome = table.game.outcome(table.state)
    assert outcome is not None and not outcome.cheaters  # (K25 may leave no winner)
    # every deal's positions were really dealt through mental poker
    assert all(deal.dealt for deal in table.deals)
    again = replay(local.setup, local.log)
    assert table.game.encode(again.state) == table.game.encode(table.state)
    assert again.audit().ok


@pytest.mark.slow
@pytest.mark.parametrize("game", ["bluff", "bomb", "mao"])
def test_many_unproven_games_finish(game: str) -> None:
    lo, hi = {"bluff": (2, 6), "bomb": (3, 9), "mao": (3, 8)}[game]
    for seed in range(4):
        seats = lo + (seed * 3) % (hi - lo + 1)
        local = play(game, seats, seed, proven=False)
        assert local.table.audit().ok


def test_each_seat_knows_only_its_own_cards() -> None:
    setup = TableSetup(b"know", "bluff", 3, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 3, 1))
    while not local.table.events or local.seats[0].duties() or local.seats[1].duties():
        local.step()
        if local.table.game.legal_kinds(local.table.state, 0):
            break
    hands = [set(seat.knowledge()) for seat in local.seats]
    assert all(hands), "every seat was dealt something"
    for a in range(3):
        for b in range(3):
            if a != b:
                assert not hands[a] & hands[b], "two seats read the same hidden card"
    # a seat cannot decrypt another seat's card with its own secrets
    table, seat0 = local.table, local.seats[0]
    other = next(iter(hands[1]))
    deal, position = table.locate(other)
    with pytest.raises(Exception, match="another seat"):
        deal.decrypt(position, 0, seat0.secrets[0])


def _until_deal_request(local: LocalTable) -> None:
    """Run the shuffle and lock passes, stop before anyone reveals keys."""
    while not local.table.deals[0].dealt:
        local.step()


def test_wrong_key_is_refused_and_names_the_seat() -> None:
    setup = TableSetup(b"cheat-key", "bluff", 2, proven=True)
    local = LocalTable(setup, sensible_bots("bluff", 2, 0))
    _until_deal_request(local)
    table = local.table
    before = table.game.encode(table.state)
    (body,) = [b for b in local.seats[1].duties() if b["msg"]["type"] == "keys"]
    forged = copy.deepcopy(body)
    forged["msg"]["keys"][0][1] = encode_scalar(random_scalar())
    verdict = table.feed(1, forged)
    assert not verdict.ok and verdict.seat == 1 and "does not open" in verdict.reason
    assert table.game.encode(table.state) == before
    assert table.feed(1, body).ok  # the honest body still goes through


def test_body_signed_for_another_seat_is_refused() -> None:
    setup = TableSetup(b"cheat-seat", "bluff", 2, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 2, 0))
    (body,) = local.seats[0].duties()
    verdict = local.table.feed(1, body)
    assert not verdict.ok and verdict.seat == 1 and "of seat 0" in verdict.reason


def test_move_for_another_seat_and_illegal_move_are_refused() -> None:
    # several refusals on one table: a v2 table goes on judging after one
    # (a v3 table stops and ignores what follows: tests/test_absence.py)
    local = play("bluff", 2, seed=3, proven=False, version=2)
    table = Table(local.setup)
    # replay until the first move, then try it under the wrong author
    for author, body in local.log:
        if body["t"] == "move":
            mover = body["event"]["seat"]
            wrong = table.feed(1 - mover, body)
            assert not wrong.ok and wrong.seat == 1 - mover
            break
        assert table.feed(author, body).ok
    before = table.game.encode(table.state)
    verdict = table.feed(
        1 - mover, {"t": "move", "event": {"kind": "challenge", "seat": 1 - mover}}
    )
    assert not verdict.ok and verdict.seat == 1 - mover and "illegal" in verdict.reason
    assert table.game.encode(table.state) == before


def test_random_draw_opening_must_match_commitment() -> None:
    # B3: with the random start rule the starter is a commit-reveal draw
    config = to_data(BluffConfig(start=Start.RANDOM))
    setup = TableSetup(b"draw", "bluff", 2, config=config, proven=False, version=2)  # judged twice
    local = LocalTable(setup, sensible_bots("bluff", 2, 0))
    for _ in range(200):
        opens = [(s.seat, b) for s in local.seats for b in s.duties() if b["t"] == "open"]
        if opens:
            break
        local.step()
    else:
        pytest.fail("no random draw happened")
    author, body = opens[0]
    verdict = local.table.feed(author, dict(body, value=bytes(32)))
    assert not verdict.ok and verdict.seat == author and "commitment" in verdict.reason
    assert local.table.feed(author, body).ok
    while local.step():
        pass
    assert any(isinstance(e, RandomValue) for e in local.table.events)
    # the refused opening stays on the record: the audit names its author
    audit = local.table.audit()
    assert not audit.ok and audit.seat == author


def test_final_reveal_only_after_the_game() -> None:
    local = play("bluff", 2, seed=5, proven=False)
    finals = [(a, b) for a, b in local.log if b["t"] == "deal" and b["msg"]["type"] == "final"]
    assert len(finals) == 2
    verdict = Table(local.setup).feed(*finals[0])
    assert not verdict.ok and "before the game is over" in verdict.reason


def test_tampered_log_is_caught_on_replay_naming_the_author() -> None:
    local = play("bluff", 2, seed=2, proven=True)
    log = copy.deepcopy(local.log)
    index = next(
        i for i, (_, b) in enumerate(log) if b["t"] == "deal" and b["msg"]["type"] == "keys"
    )
    author, body = log[index]
    body["msg"]["keys"][0][1] = encode_scalar(random_scalar())
    table = Table(local.setup)
    for i, (who, entry) in enumerate(log):
        verdict = table.feed(who, entry)
        if i == index:
            assert not verdict.ok and verdict.seat == author
            break
        assert verdict.ok


def test_cheating_seat_in_local_table_raises_fault() -> None:
    setup = TableSetup(b"fault", "bluff", 2, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 2, 0))
    with pytest.raises(TableFault, match="seat 0"):
        local.feed(0, {"t": "nonsense"})


junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.binary(max_size=40) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
body_like = st.fixed_dictionaries(
    {"t": st.sampled_from(["deal", "move", "commit", "open", "timer", "x"])},
    optional={"deal": junk, "msg": junk, "event": junk, "purpose": junk, "value": junk},
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(author=st.integers(0, 1), body=st.one_of(junk, body_like))
def test_arbitrary_bodies_never_crash_or_change_state(author: int, body: object) -> None:
    table = Table(TableSetup(b"junk", "bluff", 2, proven=False))
    before = table.game.encode(table.state)
    verdict = table.feed(author, body)
    assert not verdict.ok and verdict.seat == author
    assert table.game.encode(table.state) == before


def _mao_until_play(seed: int = 1) -> tuple[LocalTable, int, int]:
    """A Mao table at the first moment a seat may play and holds a hidden
    card: (table, seat, position)."""
    setup = TableSetup(b"mao-face", "mao", 3, proven=False, version=2)  # judged twice
    local = LocalTable(setup, sensible_bots("mao", 3, seed))
    for _ in range(2000):
        table = local.table
        for seat in local.seats:
            if "play" not in table.game.legal_kinds(table.state, seat.seat):
                continue
            for position in seat.knowledge():
                deal, p = table.locate(position) if position in table.where else (None, 0)
                if deal is not None and deal.public_card(p) is None:
                    return local, seat.seat, position
        local.step()
    pytest.fail("no seat could play")


def test_m4_a_card_played_face_up_must_be_the_card_its_keys_open() -> None:
    from engines.mao_events import PlayCard

    local, seat, position = _mao_until_play()
    table, me = local.table, local.seats[seat]
    true_card = me.knowledge()[position]
    wrong = next(c for c in table.game.deck(table.config) if c != true_card)
    before = table.game.encode(table.state)
    lie = me.move_body(PlayCard(seat, position, wrong))
    verdict = table.feed(seat, lie)
    assert not verdict.ok and verdict.seat == seat and f"keys open {true_card}" in verdict.reason
    no_keys = me.move_body(PlayCard(seat, position, true_card))
    del no_keys["keys"]
    verdict = table.feed(seat, no_keys)
    assert not verdict.ok and "comes with its holder's keys" in verdict.reason
    assert table.game.encode(table.state) == before
    assert table.feed(seat, me.move_body(PlayCard(seat, position, true_card))).ok
    deal, local_pos = table.locate(position)
    assert deal.public_card(local_pos) == true_card.index


def _off_curve(after: int) -> bytes:
    """A 33-byte string of the right shape that is no secp256k1 point: the
    first x above ``after`` whose x³ + 7 is not a square."""
    from mental_poker.secp256k1 import SECP256K1

    x = after + 1
    while SECP256K1.is_valid_point(b"\x02" + x.to_bytes(32, "big")):
        x += 1
    return b"\x02" + x.to_bytes(32, "big")


@pytest.mark.parametrize("version", [2, 3])
def test_m4_face_up_over_an_invalid_point_names_its_sender(version: int) -> None:
    # Unproven deal, seats 0 and 1 collude: seat 0's stripped deck carries an
    # invalid point under the cards dealt to seat 1 (v2 logs: a torsion point
    # added to the card's; v3, cofactor 1: an x off the curve), and seat 1
    # locks the clean deck instead of complaining. When seat 1 plays such a
    # card face up, the keys are checked as a key reveal (protocol.md §1.1):
    # the body is refused naming seat 0, the sender of the point; nothing
    # crashes.
    from engines.cards import Card
    from engines.core import Deal
    from engines.mao_events import PlayCard
    from mental_poker.groups import group_for
    from mental_poker.seat import make_lock

    g = group_for(version)
    order_8 = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")

    def spoil(point: bytes, i: int) -> bytes:
        return g.add(point, order_8) if version < 3 else _off_curve(1000 * i)

    setup = TableSetup(b"mao-invalid", "mao", 3, proven=False, version=version)
    local = LocalTable(setup, sensible_bots("mao", 3, 1))
    plain, clean, torsioned = local.feed, [], []

    def feed(author: int, body: dict) -> None:
        msg = body.get("msg") if body.get("t") == "deal" and body.get("deal") == 0 else None
        if msg is not None and msg["type"] in ("lock", "complaint") and author in (0, 1):
            table = local.table
            if author == 0:
                body = copy.deepcopy(body)
                clean[:] = body["msg"]["stripped"]
                for request in table.pending():
                    if isinstance(request, Deal) and request.seat == 1:
                        torsioned.extend(table.where[p][1] for p in request.positions)
                for i in torsioned:
                    body["msg"]["stripped"][i] = spoil(clean[i], i)
            else:  # an honest seat 1 would have complained
                deal = table.deals[0]
                lock = make_lock(deal.setup, local.seats[1].secrets[0], tuple(clean))
                body = {"t": "deal", "deal": 0, "msg": lock.to_wire()}
        plain(author, body)

    local.feed = feed  # type: ignore[method-assign]
    for _ in range(3000):
        table = local.table
        deal = table.deals[0]
        if deal.dealt and "play" in table.game.legal_kinds(table.state, 1):
            hidden = [p for p in torsioned if deal.readers(p) == frozenset({1})]
            if hidden:
                break
        local.step()
    else:
        pytest.fail("seat 1 never held a card over the torsioned points")
    position = next(p for p, (d, i) in table.where.items() if (d, i) == (0, hidden[0]))
    product = 1
    for seat in local.seats:  # the card, read with every seat's keys (a test's view)
        product = product * seat.secrets[0].lock_keys[hidden[0]] % g.order
    card = Card(deal.setup.deck.index_of(g.mul(g.inverse(product), deal.current[hidden[0]])))
    before = table.game.encode(table.state)
    verdict = table.feed(1, local.seats[1].move_body(PlayCard(1, position, card)))
    assert not verdict.ok and verdict.seat == 0, verdict
    assert table.game.encode(table.state) == before


def test_relock_only_for_a_pending_transfer() -> None:
    from mental_poker.seat import make_relock

    setup = TableSetup(b"relock", "bluff", 2, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 2, 0))
    while not local.table.events or any(s.duties() for s in local.seats):
        local.step()
    table = local.table
    deal, position = table.locate(table.state.hands[0][0])
    relock, _ = make_relock(deal, local.seats[1].secrets[0], position)
    verdict = table.feed(1, {"t": "deal", "deal": 0, "msg": relock.to_wire()})
    assert not verdict.ok and verdict.seat == 1 and "no transfer pending" in verdict.reason


def test_b7_picked_up_cards_are_readable_by_the_taker_alone() -> None:
    # a pile pick-up moves hidden cards by relock + handover: no key that
    # would open them for everyone is ever revealed before the final reveal
    from engines.core import Transferred

    for seed in range(10):
        setup = TableSetup(f"pickup-{seed}".encode(), "bluff", 3, proven=False)
        local = LocalTable(setup, sensible_bots("bluff", 3, seed), seed=seed)
        while not local.table.over:
            local.step()
            moved = [e for e in local.table.events if isinstance(e, Transferred)]
            if moved:
                event = moved[0]
                for position in event.positions:
                    deal, p = local.table.locate(position)
                    if deal.public_card(p) is None:
                        assert deal.readers(p) == frozenset({event.seat})
                return
    pytest.fail("no pile was picked up in ten games")


def test_a_pass_that_comes_after_the_game_ended_is_stale_and_owes_no_final() -> None:
    """protocol.md §6: a Mao reshuffle still in its passes when the table
    votes to end (M31) is void. Its next pass, reaching the log late, is
    stale (nobody named): the deal is never dealt, no final is owed for it
    and the audit holds (review of 2026-12-01: a late pass finished the deal
    and left every seat owing a final nobody would send)."""
    from engines.mao_events import Propose, Vote

    setup = TableSetup(b"void-reshuffle", "mao", 3, proven=False)
    local = LocalTable(setup, sensible_bots("mao", 3, 5), seed=5)
    table = local.table
    while not (len(table.deals) > 1 and table.deals[-1].shuffles):  # a reshuffle, one pass in
        assert local.step() and len(local.log) < 20_000
    deal = len(table.deals) - 1
    late = local.seats[table.deals[deal].next_seat].duties()
    assert [b["t"] for b in late] == ["deal"] and late[0]["msg"]["type"] == "shuffle"
    local.feed(0, local.seats[0].move_body(Propose(0, "end")))  # M31: the proposer's yes
    for seat in (1, 2):  # and the others' yes
        if not table.over:
            local.feed(seat, local.seats[seat].move_body(Vote(seat, True)))
    assert table.over
    stale = len(table.stale)
    local.feed(table.deals[deal].next_seat, late[0])  # accepted as stale, nobody named
    assert len(table.stale) == stale + 1 and "after the game ended" in table.stale[-1][2]
    assert not table.deals[deal].dealt and not table.faults
    # the complaint a seat sends instead of its pass (§1.5) is stale too: a
    # false one would name its author in play, and a true one could name a
    # seat only because someone still sent it after the end (review)
    complaint = {"t": "deal", "deal": deal, "msg": {"type": "complaint", "seat": 1, "position": 0}}
    local.feed(1, complaint)
    assert "complaint of deal" in table.stale[-1][2] and not table.faults
    while local.step():  # the finals of the dealt deals, none for the void one
        pass
    assert table.audit().ok
