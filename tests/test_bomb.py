"""The Bomb game: one test per rule (K1–K25), codec and views."""

from __future__ import annotations

import doctest
from dataclasses import replace

import pytest

import engines.bomb as bomb_module
from engines.bomb import (
    GAME,
    Alliance,
    BombConfig,
    Detonate,
    Kind,
    Pass,
    Phase,
    PlaceBomb,
    PlayToArea,
    Role,
    alliance_of,
    is_pattern,
    related,
    related_faces,
    roles,
    side_of,
    unrelated_faces,
)
from engines.bots import Simulator
from engines.cards import Card, full_deck
from engines.core import (
    Deal,
    IllegalMove,
    MalformedEvent,
    Prove,
    Proved,
    RandomDraw,
    RandomValue,
    Reshuffle,
    Reveal,
    Revealed,
    Timer,
    TimerExpired,
)

C = Card.parse


def cards(text: str) -> tuple[Card, ...]:
    return tuple(C(x) for x in text.split())


def table(
    ids: str, draw: str = "", config: BombConfig | None = None, starter: int = 0
) -> Simulator:
    """Identities ``ids`` (one per seat), the draw pile starting with
    ``draw``; served up to the first seat's turn (its 5 cards drawn)."""
    identities, top = cards(ids), cards(draw)
    config = config or BombConfig()
    t = Simulator(GAME, config, len(identities), deck_seed=0)
    rest = [c for c in full_deck(1) if c not in identities + top]
    t.faces = dict(enumerate(identities + top + tuple(rest)))
    while t.state.phase is Phase.IDENTITIES:
        assert t.serve()
    assert GAME.pending(t.state)[0] == RandomDraw("starter", len(identities))
    t.submit(RandomValue("starter", starter))
    serve(t)
    return t


def serve(t: Simulator) -> None:
    while t.serve():
        pass


def hand_cards(t: Simulator, seat: int) -> list[tuple[int, Card]]:
    return [(p, t.faces[p]) for p in t.state.hands[seat]]


def play(t: Simulator, seat: int, text: str, kind: Kind) -> None:
    """Play the named cards from ``seat``'s hand and let the session answer."""
    wanted = cards(text)
    by_card = {c: p for p, c in hand_cards(t, seat)}
    t.submit(PlayToArea(seat, tuple(by_card[c] for c in wanted), wanted, kind))
    serve(t)


def test_doctests() -> None:
    assert doctest.testmod(bomb_module).failed == 0


# -- cards and identities (K1–K7) ------------------------------------------------------
def test_k1_one_54_card_deck_every_card_identity_or_hand() -> None:
    assert GAME.deck(BombConfig()) == tuple(full_deck(1)) and len(GAME.deck(BombConfig())) == 54
    state = GAME.new(BombConfig(), 4)
    assert state.draw == tuple(range(4, 54))
    assert GAME.pending(state) == tuple(Deal(s, (s,), "identity") for s in range(4))


def test_k2_identity_private_until_the_end() -> None:
    t = table("K♠ 2♥ 7♦ BJ")
    truth = dict(t.faces)
    for seat in range(4):
        view = GAME.view(t.state, seat, truth)
        assert view["identity"] == truth[seat].index
        assert view == GAME.view(t.state, seat, t.known[seat])
        assert all(truth[s].index not in (view["area"] + view["identities"]) for s in range(4))
    assert GAME.view(t.state, 1, {})["identity"] is None


def test_k3_alliances_and_civilians() -> None:
    assert alliance_of(C("3♠")) is alliance_of(C("Q♣")) is Alliance.BLACK
    assert alliance_of(C("3♥")) is alliance_of(C("Q♦")) is Alliance.RED
    assert alliance_of(C("BJ")) is None and Alliance.RED.enemy is Alliance.BLACK


def test_k4_captain_highest_traitor_lowest_single_holder_captain() -> None:
    got = roles(cards("K♠ 2♠ 7♠ Q♥ 5♦ 9♦ RJ"))
    assert got == (
        Role.CAPTAIN,
        Role.TRAITOR,
        Role.MEMBER,
        Role.CAPTAIN,  # only heart: captain only
        Role.TRAITOR,
        Role.CAPTAIN,
        Role.CIVILIAN,
    )
    assert roles(cards("A♣ K♣")) == (Role.TRAITOR, Role.CAPTAIN)  # A is lowest (K4)


def test_k5_only_captains_may_kill_traitors_side_with_enemy() -> None:
    assert side_of(C("2♠"), Role.TRAITOR) is Alliance.RED
    assert side_of(C("2♠"), Role.MEMBER) is Alliance.BLACK
    out = judge("K♠ 2♠ 7♠ Q♥ 3♥", assassin=2, target=3)  # a member kills a captain
    assert "K20" in out.reason and set(out.winners) == {1, 3}  # red + black traitor


def test_k6_ace_as_one_or_fourteen_and_jokers_wild() -> None:
    assert is_pattern(cards("Q♠ K♥ A♦")) and is_pattern(cards("A♠ 2♥ 3♦"))
    assert is_pattern(cards("A♠ 4♥ 7♦ 10♣")) and is_pattern(cards("8♠ 8♥ 8♦"))
    assert is_pattern(cards("5♠ BJ 9♦")) and is_pattern(cards("BJ RJ"))
    assert not is_pattern(cards("K♠ A♥ 2♦"))  # no wrapping past the ace
    assert not is_pattern(cards("5♠ 6♥"))  # two cards must be a pair
    assert not is_pattern(cards("5♠ 6♥ 8♦")) and not is_pattern(cards("7♠"))
    assert is_pattern(cards("9♠ 5♥ 7♦"))  # order of play does not matter


def test_k7_related_by_suit_or_rank_jokers_to_all() -> None:
    assert related(C("7♠"), C("2♠")) and related(C("7♠"), C("7♦"))
    assert not related(C("7♠"), C("8♦"))
    assert related(C("RJ"), C("8♦")) and related(C("8♦"), C("BJ"))


# -- flow (K8–K16) ----------------------------------------------------------------
def test_k8_public_area_and_bomb_beside_the_table() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 8♣")
    assert t.state.area == () and t.state.bomb is None and t.state.round == 1
    play(t, 0, "3♣ 4♣ 5♣", Kind.C)
    assert GAME.view(t.state, 2, {})["area"] == [c.index for c in cards("3♣ 4♣ 5♣")]


def test_k9_bomb_holder_refills_to_five_and_reshuffle_when_empty() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠ 9♣ 10♣ J♣ Q♣ K♣ 3♦ 4♦")
    play(t, 0, "3♣ 4♣ 5♣ 6♣ 7♣", Kind.C)  # seat 0 empties its hand
    play(t, 1, "8♣ 8♥ 8♠", Kind.C)  # 8 cards: bomb in front of seat 1
    assert t.state.bomb == 1 and t.state.phase is Phase.WINDOW
    for s in range(3):
        t.submit(Pass(s))
    # round 2: seat 1 (2 cards left) refills to 5, then seat 2 starts
    assert next(r for r in GAME.pending(t.state) if isinstance(r, Deal)).seat == 1
    serve(t)
    assert len(t.state.hands[1]) == 5 and t.state.turn == 2 and t.state.round == 2
    # empty the draw pile, then the discard pile is reshuffled into new positions
    t.state = replace(t.state, draw=())
    discard = t.state.discard
    t.state = replace(t.state, hands=(t.state.hands[0], (), t.state.hands[2]))
    t.state = bomb_module._draw(t.state, 1, 5)
    work = GAME.pending(t.state)
    assert work[0] == Reshuffle(discard, tuple(range(54, 54 + len(discard))))
    assert work[1] == Deal(1, tuple(range(54, 59)))
    serve(t)
    assert {t.faces[p] for p in t.state.hands[1]} <= set(cards("3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠"))
    assert all(t.state.face(p) is None for p in t.state.draw)


def test_k10_round_starts_after_last_actor_first_round_random() -> None:
    t = table("K♠ 2♥ 7♦ 5♠", starter=2)
    assert t.state.turn == 2
    t2 = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠ 9♣ 10♣ J♣ Q♣ K♣ 3♦ 4♦")
    play(t2, 0, "3♣ 4♣ 5♣ 6♣", Kind.C)
    play(t2, 1, "8♣ 8♥ 8♠", Kind.C)  # exactly 7: seat 1 acted last
    t2.submit(PlaceBomb(1, 0))
    t2.submit(TimerExpired("detonation"))
    serve(t2)
    assert t2.state.turn == 2 and t2.state.round == 2


def test_k11_no_cards_at_turn_start_draw_five() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣")
    assert len(t.state.hands[0]) == 5 and t.state.hands[1] == ()
    play(t, 0, "3♣ 4♣ 5♣", Kind.C)
    assert len(t.state.hands[1]) == 5 and t.state.turn == 1


def test_k12_a_one_to_three_cards_proof_of_relation() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♠ 4♥ 9♦ J♣ Q♦")
    wanted = cards("3♠ 4♥")
    ps = tuple(p for p, c in hand_cards(t, 0) if c in wanted)
    t.submit(PlayToArea(0, ps, wanted, Kind.A))
    prove = next(r for r in GAME.pending(t.state) if isinstance(r, Prove))
    assert prove.seat == 0 and prove.position == 0 and prove.purpose == "K12 A"
    assert set(prove.allowed) == set(related_faces(wanted)) and C("K♠") in prove.allowed
    assert Reveal(ps, "play") in GAME.pending(t.state)
    serve(t)
    assert t.state.history[-1].rule is Kind.A and len(t.state.area) == 2
    with pytest.raises(IllegalMove, match="one, two or three"):
        ps, cs = zip(*hand_cards(t, 1)[:4], strict=True)
        GAME.apply(t.state, PlayToArea(1, ps, cs, Kind.A))


def test_k12_b_whole_hand_none_related() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♥ 4♥ 9♦ J♣ Q♦")
    hand = hand_cards(t, 0)
    with pytest.raises(IllegalMove, match="all your hand"):
        GAME.apply(t.state, PlayToArea(0, (hand[0][0],), (hand[0][1],), Kind.B))
    ps, cs = zip(*hand, strict=True)
    t.submit(PlayToArea(0, ps, cs, Kind.B))
    prove = next(r for r in GAME.pending(t.state) if isinstance(r, Prove))
    assert set(prove.allowed) == set(unrelated_faces(cs))
    serve(t)  # K♠ relates to none of 3♥ 4♥ 9♦ J♣ Q♦
    assert len(t.state.area) == 5 and t.state.hands[0] == ()
    t2 = table("K♠ 2♥ 7♦", draw="3♥ BJ 9♦ J♣ Q♦")
    ps, cs = zip(*hand_cards(t2, 0), strict=True)
    with pytest.raises(IllegalMove, match="every identity relates"):
        GAME.apply(t2.state, PlayToArea(0, ps, cs, Kind.B))  # a joker relates to all


def test_k12_c_pair_or_sequence_checked_directly() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♥ 3♣ 9♦ J♣ Q♦")
    by = {c: p for p, c in hand_cards(t, 0)}
    with pytest.raises(IllegalMove, match="K12 C"):
        GAME.apply(t.state, PlayToArea(0, (by[C("3♥")], by[C("9♦")]), cards("3♥ 9♦"), Kind.C))
    t.submit(PlayToArea(0, (by[C("3♥")], by[C("3♣")]), cards("3♥ 3♣"), Kind.C))
    assert not any(isinstance(r, Prove) for r in GAME.pending(t.state))  # no proof for C
    serve(t)
    assert len(t.state.area) == 2


def test_k13_naming_other_faces_is_caught() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♥ 3♣ 9♦ J♣ Q♦")
    p = hand_cards(t, 0)[2][0]  # really 9♦
    t.submit(PlayToArea(0, (p,), cards("K♦"), Kind.A))  # named K♦ (relates to K♠)
    t.submit(Proved(0, 0, True))  # a proof for K♦ would pass
    t.serve()  # the reveal shows 9♦
    out = GAME.outcome(t.state)
    assert out.cheaters == (0,) and out.winners == () and "K13" in out.reason


def test_k13_failed_identity_proof_is_caught() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♥ 4♥ 9♦ J♣ Q♦")
    p, c = hand_cards(t, 0)[0]
    t.submit(PlayToArea(0, (p,), (c,), Kind.A))  # 3♥ does not relate to K♠
    prove = next(r for r in GAME.pending(t.state) if isinstance(r, Prove))
    assert t.faces[prove.position] not in prove.allowed  # an honest verifier refuses it
    serve(t)
    assert GAME.outcome(t.state).cheaters == (0,)


def test_k14_area_face_up_turn_passes_until_seven() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠")
    play(t, 0, "3♣ 4♣ 5♣", Kind.C)
    assert t.state.turn == 1 and t.state.phase is Phase.TURN
    assert [t.state.face(p) for p in t.state.area] == list(cards("3♣ 4♣ 5♣"))
    with pytest.raises(IllegalMove, match="turn"):
        GAME.apply(t.state, PlayToArea(0, t.state.hands[0][:1], cards("6♣"), Kind.C))


def test_k15_exactly_seven_place_bomb_more_bomb_on_player() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠")
    play(t, 0, "3♣ 4♣ 5♣ 6♣", Kind.C)
    play(t, 1, "8♣ 8♥ 8♠", Kind.C)
    assert t.state.phase is Phase.PLACE_BOMB and GAME.legal_kinds(t.state, 1) == {"place_bomb"}
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, PlaceBomb(0, 2))
    with pytest.raises(IllegalMove, match="no seat 5"):
        GAME.apply(t.state, PlaceBomb(1, 5))
    t.submit(PlaceBomb(1, 2))
    assert t.state.bomb == 2 and t.state.phase is Phase.WINDOW
    # more than 7 is K9's test: the bomb goes in front of the player


def test_k16_detonation_window_pass_or_timeout_clears_area() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠")
    play(t, 0, "3♣ 4♣ 5♣ 6♣", Kind.C)
    play(t, 1, "8♣ 8♥ 8♠", Kind.C)
    t.submit(PlaceBomb(1, 2))
    assert Timer("detonation", 10) in GAME.pending(t.state)
    t.submit(Pass(0))
    with pytest.raises(IllegalMove, match="already passed"):
        GAME.apply(t.state, Pass(0))
    t.submit(TimerExpired("detonation"))
    assert t.state.area == () and len(t.state.discard) == 7 and t.state.bomb == 2
    assert Timer("detonation", 10) not in GAME.pending(t.state)
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, TimerExpired("detonation"))


def test_k17_detonation_ends_game_and_reveals_identities() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠")
    play(t, 0, "3♣ 4♣ 5♣ 6♣", Kind.C)
    play(t, 1, "8♣ 8♥ 8♠", Kind.C)
    t.submit(PlaceBomb(1, 2))
    t.submit(Detonate(0))
    assert GAME.pending(t.state) == (Reveal((0, 1, 2), "identities"),)
    assert GAME.legal_kinds(t.state, 1) == frozenset()
    t.serve()
    out = GAME.outcome(t.state)
    assert out is not None and GAME.view(t.state, 1, {})["identities"] == [
        c.index for c in cards("K♠ 2♥ 7♦")
    ]


def _window(race: bool) -> Simulator:
    t = table("K♠ 2♥ 7♦ 3♦", draw="3♣ 4♣ 5♣ 6♣ 7♣ 8♣ 8♥ 8♠")
    t.state = replace(t.state, race=race)
    play(t, 0, "3♣ 4♣ 5♣ 6♣", Kind.C)
    play(t, 1, "8♣ 8♥ 8♠", Kind.C)
    t.submit(PlaceBomb(1, 2))
    return t


def test_k17_v3_one_detonator_is_the_assassin_once_the_race_closes() -> None:
    # (v3) a detonation leaves the window open for the race timer: a shout
    # that crossed it on the wire is not ordered by the log
    t = _window(race=True)
    t.submit(Pass(3))
    t.submit(Detonate(0))
    assert t.state.phase is Phase.WINDOW and t.state.detonators == (0,)
    assert GAME.pending(t.state) == (
        Timer("race", bomb_module.RACE_SECONDS),
        Timer("time-limit", 3600),
    )
    assert GAME.legal_kinds(t.state, 0) == frozenset()  # it already detonated
    assert GAME.legal_kinds(t.state, 3) == frozenset({"detonate"})  # passed: may still shout
    assert GAME.legal_kinds(t.state, 1) == frozenset({"detonate"})  # no pass any more
    with pytest.raises(IllegalMove, match="already detonated"):
        GAME.apply(t.state, Detonate(0))
    with pytest.raises(IllegalMove, match="window is closing"):
        GAME.apply(t.state, Pass(1))
    with pytest.raises(IllegalMove):  # the 10 s timer is no longer what closes it
        GAME.apply(t.state, TimerExpired("detonation"))
    t.submit(TimerExpired("race"))
    assert t.state.phase is Phase.JUDGING and t.state.assassin == 0


@pytest.mark.parametrize("drawn", [0, 1, 2])
def test_k17_v3_detonations_that_cross_draw_the_assassin_by_lot(drawn: int) -> None:
    t = _window(race=True)
    for seat in (3, 0, 2):  # the log's order is not the lot's
        t.submit(Detonate(seat))
    assert t.state.detonators == (0, 2, 3)
    t.submit(TimerExpired("race"))
    assert t.state.phase is Phase.LOT
    assert GAME.pending(t.state)[0] == RandomDraw("assassin", 3)
    assert all(GAME.legal_kinds(t.state, s) == frozenset() for s in range(4))
    with pytest.raises(IllegalMove, match="not a detonator"):
        GAME.apply(t.state, RandomValue("assassin", 3))
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, RandomValue("starter", 1))
    t.submit(RandomValue("assassin", drawn))
    assert t.state.phase is Phase.JUDGING and t.state.assassin == (0, 2, 3)[drawn]
    assert t.state.ended_by == "detonation"


def test_k17_v2_logs_keep_the_first_detonation_in_the_log() -> None:
    t = _window(race=False)
    t.submit(Detonate(3))
    assert t.state.phase is Phase.JUDGING and t.state.assassin == 3
    with pytest.raises(IllegalMove):
        GAME.apply(t.state, TimerExpired("race"))


def test_the_table_plays_v3_tables_by_the_race_and_v2_logs_by_the_first() -> None:
    from table.machine import Table, TableSetup

    for version, race in ((2, False), (3, True)):
        setup = TableSetup(b"t" * 16, "bomb", 4, None, proven=False, version=version)
        assert Table(setup).state.race is race


# -- judging (K18–K25) ----------------------------------------------------------------
def judge(ids: str, assassin: int, target: int) -> object:
    t = table(ids)
    t.state = replace(t.state, phase=Phase.WINDOW, bomb=target)
    t.submit(Detonate(assassin))
    t.serve()
    return GAME.outcome(t.state)


def test_k18_captain_kills_enemy_captain() -> None:
    out = judge("K♠ 2♠ Q♥ 3♥ BJ", assassin=0, target=2)
    assert "K18" in out.reason
    assert set(out.winners) == {0, 3, 4}  # black captain, red traitor, civilian


def test_k19_captain_kills_own_traitor() -> None:
    out = judge("K♠ 2♣ 9♣ Q♥ 3♥", assassin=0, target=1)  # 2♣ is clubs' traitor, black
    assert "K19" in out.reason and set(out.winners) == {0, 2, 4}


def test_k20_anything_else_assassins_side_loses() -> None:
    out = judge("K♠ 2♠ Q♥ 3♥ 9♥", assassin=0, target=4)  # a red member
    assert "K20" in out.reason and set(out.winners) == {1, 2, 4}
    out = judge("K♠ 2♠ Q♥ 3♥ 9♥", assassin=1, target=2)  # a traitor plays for red
    assert "K20" in out.reason and set(out.winners) == {0, 3}  # red lost


def test_k21_traitors_win_and_lose_with_enemy() -> None:
    out = judge("K♠ 2♠ Q♥ 3♥", assassin=2, target=0)
    assert set(out.winners) == {1, 2} and set(out.losers) == {0, 3}


def test_k22_civilian_detonates_loses_alone() -> None:
    out = judge("K♠ 2♠ Q♥ RJ BJ", assassin=3, target=0)
    assert "K22" in out.reason and out.losers == (3,)


def test_k23_civilian_killed_assassins_side_and_civilians_lose() -> None:
    out = judge("K♠ 2♠ Q♥ RJ BJ", assassin=0, target=3)
    assert "K23" in out.reason and set(out.winners) == {1, 2}


def test_k24_civilians_not_killed_win() -> None:
    out = judge("K♠ 2♠ Q♥ 3♥ BJ", assassin=0, target=3)  # K20, civilian alive
    assert 4 in out.winners


def test_k25_time_limit_civilians_win_configurable() -> None:
    t = table("K♠ 2♠ Q♥ BJ", config=BombConfig(time_limit=120))
    assert Timer("time-limit", 120) in GAME.pending(t.state)
    t.submit(TimerExpired("time-limit"))
    t.serve()
    out = GAME.outcome(t.state)
    assert "K25" in out.reason and out.winners == (3,) and set(out.losers) == {0, 1, 2}
    assert Timer("time-limit", 3600) in GAME.pending(table("K♠ 2♠ Q♥").state)
    none = table("K♠ 2♠ Q♥", config=BombConfig(time_limit=0))
    assert not any(isinstance(r, Timer) for r in GAME.pending(none.state))


def test_kind_a_and_b_plays_rechecked_at_the_end() -> None:
    # a faulty verifier let a false kind-A play through: the end catches it
    t = table("K♠ 2♥ 7♦", draw="3♥ 4♥ 9♦ J♣ Q♦ 5♣ 6♣ 8♣ 10♣ J♦")
    p, c = hand_cards(t, 0)[0]  # 3♥: not related to K♠
    t.submit(PlayToArea(0, (p,), (c,), Kind.A))
    t.submit(Proved(0, 0, True))
    serve(t)
    t.state = replace(t.state, phase=Phase.WINDOW, bomb=2)
    t.submit(Detonate(1))
    t.serve()
    out = GAME.outcome(t.state)
    assert out.cheaters == (0,) and 0 not in out.winners


# -- codec ----------------------------------------------------------------------
def test_events_and_config_round_trip_and_strict() -> None:
    for e in (
        PlayToArea(1, (7, 9), cards("3♥ 3♣"), Kind.C),
        PlaceBomb(0, 2),
        Detonate(3),
        Pass(1),
        Proved(2, 2, False),
    ):
        assert GAME.decode_event(e.to_data()) == e
    assert str(PlayToArea(1, (7, 9), cards("3♥ 3♣"), Kind.C)) == "seat 1 plays 3♥ 3♣ (C)"
    bad = {"kind": "play", "seat": 0, "positions": [5], "cards": [3], "rule_": "A"}
    with pytest.raises(MalformedEvent):
        GAME.decode_event(bad)
    with pytest.raises(MalformedEvent, match="Kind"):
        GAME.decode_event({"kind": "play", "seat": 0, "positions": [5], "cards": [3], "rule": "D"})
    with pytest.raises(MalformedEvent, match="distinct"):
        GAME.decode_event(
            {"kind": "play", "seat": 0, "positions": [5, 6], "cards": [3, 3], "rule": "C"}
        )
    with pytest.raises(MalformedEvent, match="one face"):
        GAME.decode_event(
            {"kind": "play", "seat": 0, "positions": [5, 6], "cards": [3], "rule": "C"}
        )
    assert GAME.decode_config(
        {"time_limit": 60, "detonation_seconds": 10, "hand_size": 5}
    ) == BombConfig(60)
    with pytest.raises(MalformedEvent, match="time_limit"):
        GAME.decode_config({"time_limit": -1, "detonation_seconds": 10, "hand_size": 5})
    with pytest.raises(IllegalMove, match="3 to 9"):
        GAME.new(BombConfig(), 2)


def test_system_events_must_answer_pending_work() -> None:
    t = table("K♠ 2♥ 7♦", draw="3♥ 4♥ 9♦ J♣ Q♦")
    before = GAME.encode(t.state)
    for stray in (
        Proved(0, 0, True),
        Revealed((3,), cards("3♥")),
        TimerExpired("detonation"),
        RandomValue("starter", 1),
        Detonate(1),
        PlaceBomb(0, 1),
    ):
        with pytest.raises(IllegalMove):
            GAME.apply(t.state, stray)
    assert GAME.encode(t.state) == before
    with pytest.raises(IllegalMove, match="face up"):
        t2 = table("K♠ 2♥ 7♦", draw="3♣ 4♣ 5♣ 6♣ 7♣")
        play(t2, 0, "3♣ 4♣ 5♣", Kind.C)
        GAME.apply(t2.state, PlayToArea(1, t2.state.hands[1][:1], cards("3♣"), Kind.A))
