"""The timer rules of the table (table/timers.py, protocol.md §7.2) on the
pure table, no sockets: on v3 a timer fires at the body that brings the
word of the ⌊n/2⌋+1-th distinct seat, any seat may sign one, a word that
raced the timer's end is stale and a word about a timer never pending names
its author; v2 logs keep the sequencer-only rule."""

from __future__ import annotations

import copy

from engines.bots import sensible_bots
from engines.core import Timer
from table.local import LocalTable
from table.machine import TableSetup
from tests.test_session_rules import bluff, starter_timer, until


def _word(table, purpose: str, at: int | None = None) -> dict:
    return {"t": "timer", "purpose": purpose, "at": table.count if at is None else at}


def test_a_timer_fires_on_the_word_of_a_majority_of_the_seats() -> None:
    for seats, quorum in ((2, 2), (3, 2), (4, 3), (5, 3)):
        local = bluff(seats, f"quorum-{seats}".encode())
        until(local, lambda local=local: starter_timer(local) is not None)  # B3: A♠ window
        table = local.table
        purpose = starter_timer(local).purpose
        assert table.timers.quorum == quorum
        before = table.game.encode(table.state)
        # any seat may sign, whichever seat leads the entry's term: here the
        # seats from the last one down, all in term 0 (seat 0 sequences)
        words = list(range(seats - 1, seats - 1 - quorum, -1))
        for n, seat in enumerate(words[:-1], start=1):
            assert table.feed(seat, _word(table, purpose), term=0).ok
            again = table.feed(seat, _word(table, purpose), term=0)  # its word again
            assert again.ok and "second word" in table.stale[-1][2]
            assert table.timers.signed(purpose) == frozenset(words[:n])
            assert table.game.encode(table.state) == before, "fewer than a majority"
        assert table.feed(words[-1], _word(table, purpose), term=0).ok
        assert table.game.encode(table.state) != before, "the majority's word fired it"
        assert table.timers.signed(purpose) == frozenset()  # fired: its words are spent
        assert not table.faults


def test_stale_and_false_words_on_v3() -> None:
    local = bluff(3, b"words")
    until(local, lambda: starter_timer(local) is not None)
    table = local.table
    purpose, seen = starter_timer(local).purpose, table.count
    assert table.feed(2, _word(table, purpose), term=0).ok  # one word, kept
    until(local, lambda: starter_timer(local) is None)  # A♠ shown meanwhile
    faults = len(table.faults)
    # a word that raced the end of its timer: stale, nobody named
    assert table.feed(1, _word(table, purpose, seen), term=0).ok
    assert "stopped" in table.stale[-1][2] and len(table.faults) == faults
    # each false word names its author and stops the table (v3: later bodies
    # are then ignored), so each is tried on its own copy
    other = copy.deepcopy(table)
    # a word about a timer that was not pending at the point it names
    verdict = table.feed(1, _word(table, purpose), term=0)
    assert not verdict.ok and verdict.seat == 1 and "no pending timer" in verdict.reason
    # (v3) an 'at' beyond the count: seat 1 or the sequencer (seat 0) broke
    # the order, the log cannot say which (§6 Races): the table stops naming
    # nobody; the same word sequenced by its own author names it
    mine = copy.deepcopy(other)
    verdict = other.feed(1, _word(other, purpose, other.count + 5), term=0)
    assert not verdict.ok and verdict.seat is None and "broke the order" in verdict.reason
    verdict = mine.feed(1, _word(mine, purpose, mine.count + 5), term=1)
    assert not verdict.ok and verdict.seat == 1 and "no pending timer" in verdict.reason


def test_words_for_a_timer_lapse_when_it_stops() -> None:
    """A word counts for one pending timer: once the timer stopped (the A♠
    shown), the words for it are gone with it."""
    local = bluff(3, b"lapse")
    until(local, lambda: starter_timer(local) is not None)
    table = local.table
    purpose = starter_timer(local).purpose
    assert table.feed(0, _word(table, purpose), term=0).ok
    assert table.timers.signed(purpose) == {0}
    until(local, lambda: starter_timer(local) is None)
    assert table.timers.signed(purpose) == frozenset()


def _bomb(version: int) -> LocalTable:
    setup = TableSetup(b"k25", "bomb", 3, proven=False, version=version)
    local = LocalTable(setup, sensible_bots("bomb", 3, 1), seed=1)
    for _ in range(23):  # issue 28: 23 bodies into the game
        assert local.step()
    assert Timer("time-limit", 3600) in local.table.pending()
    return local


def test_the_early_k25_time_limit_of_one_seat_ends_a_v2_game_not_a_v3_one(
    deterministic_deals,
) -> None:
    """Issue 28 point 2 on the pure table: the sequencer's word alone, 23
    bodies into the game, that the hour (K25) is up. A v2 table takes it (the
    game ends, civilians win); a v3 table keeps it as one word of the two it
    needs and plays on."""
    old = _bomb(2).table
    timer = {"t": "timer", "purpose": "time-limit", "term": 0, "at": old.count}
    assert old.feed(0, timer, term=0).ok and not old.faults
    assert old.state.ended_by == "time limit"  # the identities are revealed: K25 judged
    new = _bomb(3).table
    timer = {**timer, "at": new.count}
    assert new.feed(0, timer, term=0).ok and not new.state.ended_by and not new.faults
    assert new.timers.signed("time-limit") == {0}
    assert Timer("time-limit", 3600) in new.pending()


def test_a_word_dated_before_its_timer_started_names_its_author() -> None:
    """No clock can run a timer out before the body that started it: a
    word whose ``at`` says so (the v3 ``--cheat timer``) names its author."""
    local = bluff(3, b"before")
    until(local, lambda: starter_timer(local) is not None)
    table = local.table
    purpose = starter_timer(local).purpose
    since = table.timers.started(purpose)
    assert since and starter_timer(local) not in table.pending_at(since - 1)
    verdict = table.feed(1, _word(table, purpose, since - 1), term=0)
    assert not verdict.ok and verdict.seat == 1 and "before it started" in verdict.reason


class _Held:
    """A signed event another seat sent us, as ``Node.held_events`` gives it."""

    def __init__(self, author: int, body) -> None:
        self.author, self.body = author, body

    def decoded_body(self):
        if isinstance(self.body, Exception):
            raise self.body
        return self.body


def test_a_seat_holding_an_event_the_timer_would_make_stale_signs_no_word() -> None:
    """table.clock: while this seat holds another seat's signed event that
    the log lacks and the timer would make stale (the A♠ shown, B3), it
    does not sign the timer out; events the timer leaves alone, and junk,
    do not hold it."""
    from types import SimpleNamespace

    from table.clock import TimerClock

    local = bluff(3, b"held")
    until(local, lambda: starter_timer(local) is not None)
    table = local.table
    purpose = starter_timer(local).purpose
    seat = next(s for s in range(3) if "show" in table.game.legal_kinds(table.state, s))
    position = next(iter(table.state.hands[seat]))
    show = {"t": "move", "event": {"kind": "show", "seat": seat, "position": position}}
    cases = {
        "show": ([_Held(seat, show)], True),
        # (v3, review 2c) a body the table would refuse now holds nothing
        "bad keys": ([_Held(seat, {"t": "deal", "deal": 0, "msg": {}})], False),
        "word": ([_Held(seat, {"t": "timer", "purpose": purpose, "at": 0})], False),
        "junk": ([_Held(seat, ValueError("not msgpack")), _Held(seat, [1, 2])], False),
        "illegal": ([_Held(seat, {"t": "move", "event": {"kind": "play", "seat": seat}})], False),
        "none": ([], False),
    }
    for name, (held, holds) in cases.items():
        me = (seat + 1) % 3
        node = SimpleNamespace(held_events=lambda s, held=held: [e for e in held if e.author == s])
        clock = SimpleNamespace(node=node, me=me)
        assert TimerClock._holds_overtaken(clock, table, purpose) is holds, name
    # a node without held events (v2 peers) holds nothing
    clock = SimpleNamespace(node=SimpleNamespace(), me=0)
    assert TimerClock._holds_overtaken(clock, table, purpose) is False


def test_a_held_crypto_body_holds_the_timer_only_if_the_table_takes_it_now() -> None:
    """(v3, review 2c) table.clock: a held body that is not a move holds the
    timer words while a copy of the table accepts it now (a seat's owed
    keys, on their way), not when the table would refuse or drop it."""
    from table.clock import _overtaken

    local = bluff(3, b"held-keys")
    for _ in range(500):  # to a point where a seat owes a deal body
        owed = {s.seat: s.duties() for s in local.seats}
        seat = next((s for s, bodies in owed.items() if bodies), None)
        if seat is not None:
            break
        local.step()
    assert seat is not None, "no seat ever owed a deal body"
    table, body = local.table, owed[seat][0]
    before = table.count
    assert _overtaken(table, None, _Held(seat, body)) is True
    assert table.count == before, "judged on a copy"
    other = (seat + 1) % 3
    wrong = dict(body, deal=body.get("deal", 0) + 7) if body["t"] == "deal" else {"t": "deal"}
    assert _overtaken(table, None, _Held(seat, wrong)) is False
    assert _overtaken(table, None, _Held(other, {"t": "abandon"})) is False  # QUIET
