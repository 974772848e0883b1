"""The v3 absence rules at the table (table/absence.py, protocol.md §6
*Away*): a seat that keeps the table waiting is never named a cheater on a
v3 table; the present seats end the game *abandoned* by their signed word,
naming the leaver and what it owed; an abandon that raced the answer names
nobody; after a stop, late bodies are recorded and ignored, never named."""

from __future__ import annotations

from engines.bots import sensible_bots
from table.absence import AwayClock, fmt_away
from table.local import LocalTable
from table.machine import TableSetup


def _stall(local: LocalTable, holdout: int) -> None:
    """Play until the holdout owes something while nobody else does."""
    for _ in range(2000):
        owing = local.table.owing()
        if holdout in owing and len(owing) == 1:
            return
        for seat in local.seats:
            if seat.seat == holdout and local.table.duties(holdout):
                continue
            bodies = seat.duties()
            if bodies:
                for body in bodies:
                    local.feed(seat.seat, body)
                break
        else:
            local.step()
    raise AssertionError("the holdout never owed anything")


def _stalled(seats: int, holdout: int, version: int = 3) -> LocalTable:
    setup = TableSetup(b"away", "bluff", seats, proven=False, version=version)
    local = LocalTable(setup, sensible_bots("bluff", seats, 1), seed=1)
    _stall(local, holdout)
    return local


def _abandon(table, away, why="patience", at=None) -> dict:
    return {"t": "abandon", "away": away, "why": why, "at": table.count if at is None else at}


def test_every_present_seat_ends_it_abandoned_naming_only_the_leaver() -> None:
    local = _stalled(4, holdout=2)
    table = local.table
    since = table.owing()[2]
    for voter in (0, 1):
        assert table.feed(voter, _abandon(table, [2])).ok
        assert table.absence.ended is None and not table.stopped  # not every present seat yet
    assert table.feed(3, _abandon(table, [2], "vote")).ok
    ended = table.absence.ended
    assert ended is not None and ended.seats == (2,) and ended.since == (since,)
    assert "its keys" in ended.owed[0] or "pass" in ended.owed[0]
    assert "seat 2 left the table" in str(ended) and "voted" in str(ended)
    assert not table.faults, "leaving is not cheating"
    assert table.stopped and all(d.kind == "final" for s in range(4) for d in table.duties(s))
    # the leaver wakes up: what it owed, sequenced after the stop, is
    # recorded and ignored, never named
    late = local.seats[2].duties()
    assert late
    for body in late:
        assert table.feed(2, body).ok
    assert not table.faults and table.stale[-1][0] == 2
    assert "after the game stopped" in table.stale[-1][2]


def test_an_abandon_that_raced_the_answer_names_nobody() -> None:
    local = _stalled(3, holdout=1)
    table = local.table
    at = table.count
    assert table.feed(0, _abandon(table, [1])).ok
    for body in local.seats[1].duties():  # the answer lands first
        assert table.feed(1, body).ok
    assert 1 not in table.owing() or table.owing()[1] > at
    verdict = table.feed(2, _abandon(table, [1], at=at))
    assert verdict.ok and not table.faults and table.absence.ended is None
    assert table.stale[-1][0] == 2 and "owes nothing" in table.stale[-1][2]


def test_votes_lapse_when_the_seat_answers() -> None:
    local = _stalled(3, holdout=1)
    table = local.table
    assert table.feed(0, _abandon(table, [1])).ok
    for body in local.seats[1].duties():
        table.feed(1, body)
    _stall(local, holdout=1)  # it owes again: a new stretch
    assert table.feed(2, _abandon(table, [1])).ok
    assert table.absence.ended is None, "seat 0's vote was about the earlier stretch"
    assert table.feed(0, _abandon(table, [1])).ok
    assert table.absence.ended is not None and table.absence.ended.seats == (1,)


def test_malformed_abandons_and_overdue_name_their_author_on_v3() -> None:
    local = _stalled(3, holdout=1)
    table = local.table
    for bad in (
        {"t": "abandon", "away": [1], "why": "bored", "at": table.count},
        {"t": "abandon", "away": [2, 1], "why": "vote", "at": table.count},
        {"t": "abandon", "away": [0], "why": "vote", "at": table.count},
        # (v3) an 'at' beyond the count is judged as the count (§6 Races):
        # tests/test_verify_forged.py
        {"t": "abandon", "away": [1], "why": "vote"},
        {"t": "overdue", "seat": 1, "at": table.count},  # v3 has no overdue body
    ):
        other = LocalTable(local.setup, sensible_bots("bluff", 3, 1), seed=1)
        for author, body in local.log:
            other.table.feed(author, body)
        verdict = other.table.feed(0, bad)
        assert not verdict.ok and verdict.seat == 0, (bad, verdict)


def test_v2_logs_keep_overdue_and_know_no_abandon() -> None:
    local = _stalled(3, holdout=1, version=2)
    table = local.table
    assert table.absence is None
    verdict = table.feed(0, _abandon(table, [1]))
    assert not verdict.ok and verdict.seat == 0 and "unknown table body" in verdict.reason


def test_after_a_fault_late_bodies_are_ignored_on_v3_only() -> None:
    for version in (2, 3):
        local = _stalled(3, holdout=1, version=version)
        table = local.table
        assert not table.feed(0, {"t": "move", "event": {"kind": "nonsense"}}).ok  # a fault
        late = {"t": "move", "event": {"kind": "nonsense"}}
        verdict = table.feed(2, late)  # signed before seat 2 saw the stop
        if version >= 3:
            assert verdict.ok and len(table.faults) == 1 and table.stale[-1][0] == 2
        else:
            assert not verdict.ok and verdict.seat == 2


def _tick(clock: AwayClock, table, start: float, end: float) -> None:
    """The session's loop: it looks at least every second."""
    now = start
    while now < end:
        clock.look(table.owing(), now)
        now += 1.0


def test_the_clock_says_away_then_signs_on_patience_but_never_a_held_seat() -> None:
    local = _stalled(3, holdout=1)
    table = local.table
    clock = AwayClock(me=0, duty_wait=5.0, patience=60.0)
    assert clock.away(table, 100.0) == []
    assert clock.to_sign(table, 100.0, lambda s: False) is None
    _tick(clock, table, 100.0, 106.0)
    away = clock.away(table, 106.0)
    assert [a.seat for a in away] == [1] and fmt_away(away[0].seconds) == "0:06"
    assert clock.next_due(table, 106.0) == 160.0
    _tick(clock, table, 106.0, 161.0)
    assert clock.to_sign(table, 161.0, lambda s: True) is None  # it holds seat 1's answer
    body = clock.to_sign(table, 161.0, lambda s: False)
    assert body == {"t": "abandon", "away": [1], "why": "patience", "at": table.count}
    assert clock.to_sign(table, 162.0, lambda s: False) is None  # once per stretch
    # a person's vote: signed as "vote"
    other = AwayClock(me=2, duty_wait=5.0, patience=600.0)
    other.look(table.owing(), 100.0)
    assert other.to_sign(table, 101.0, lambda s: False, voted=[1])["why"] == "vote"
    assert fmt_away(3723) == "1:02:03"


def test_a_sleeper_that_wakes_does_not_find_everyone_away() -> None:
    """Its own process stopped 40 s (a gap between two looks): the others'
    waiting time does not grow by it."""
    local = _stalled(3, holdout=1)
    table = local.table
    clock = AwayClock(me=2, duty_wait=5.0, patience=30.0)
    _tick(clock, table, 0.0, 3.0)
    assert clock.away(table, 43.0) == [] and clock.to_sign(table, 43.0, lambda s: False) is None
    _tick(clock, table, 43.0, 46.0)
    assert [a.seat for a in clock.away(table, 46.0)] == [1]  # 3 + 3 seconds of its own clock


def test_the_present_seats_follow_a_majority_vote() -> None:
    local = _stalled(4, holdout=3)
    table = local.table
    for voter in (0, 1):
        assert table.feed(voter, _abandon(table, [3], "vote")).ok
    owing = table.owing()
    assert table.absence.vote_majority(range(4), owing) == [(3,)]
    follower = AwayClock(me=2, duty_wait=5.0, patience=600.0)
    # (review 3, A4) it follows only once it sees seat 3 away itself: a
    # majority cannot recruit it against a seat busy with its duty
    assert follower.to_sign(table, 0.0, lambda s: False) is None
    assert follower.to_sign(table, 4.9, lambda s: False) is None
    body = follower.to_sign(table, 5.0, lambda s: False)
    assert body is not None and body["away"] == [3] and body["why"] == "vote"
    assert table.feed(2, body).ok and table.absence.ended.why == "vote"
    # one vote of three is no majority
    local = _stalled(4, holdout=3)
    assert local.table.feed(0, _abandon(local.table, [3], "vote")).ok
    assert local.table.absence.vote_majority(range(4), local.table.owing()) == []
    assert (
        AwayClock(me=2, duty_wait=5.0, patience=600.0).to_sign(local.table, 0.0, lambda s: False)
        is None
    )


def test_votes_for_a_stretch_lapse_when_the_seat_answers() -> None:
    """(review 3, A4c) two seats of four voted "stop waiting" for seat 3,
    which then answered: at its next duty an honest seat does not follow
    those lapsed votes, however long it sees seat 3 owe."""
    local = _stalled(4, holdout=3)
    table = local.table
    for voter in (0, 1):
        assert table.feed(voter, _abandon(table, [3], "vote")).ok
    before = table.owing()[3]
    for _ in range(2000):  # seat 3 answers; play until it owes again
        if 3 in table.owing() and table.owing()[3] != before:
            break
        if not local.step():
            break
    assert 3 in table.owing() and table.owing()[3] != before, "seat 3 never owed again"
    assert table.absence.vote_majority(range(4), table.owing()) == []
    follower = AwayClock(me=2, duty_wait=5.0, patience=600.0)
    follower.look(table.owing(), 0.0)
    assert follower.to_sign(table, 60.0, lambda s: False) is None  # away, but no live votes
    assert table.absence.ended is None


def test_a_leaver_whose_relock_came_after_the_stop_makes_a_good_final_reveal() -> None:
    """A seat signed its relock (keeping the new key) but the log took it
    only after the game ended abandoned around it: the relock is stale, and
    its final reveal must hold only keys of layers in the log (not named)."""
    for seed in range(1, 30):
        setup = TableSetup(b"relock", "bluff", 3, proven=False, version=3)
        local = LocalTable(setup, sensible_bots("bluff", 3, seed), seed=seed)
        table = local.table
        holder = None
        for _ in range(3000):
            owing = [s for s in range(3) if any(d.kind == "relock" for d in table.duties(s))]
            if owing:
                holder = owing[0]
                break
            if not local.step():
                break
        if holder is not None:
            break
    else:
        raise AssertionError("no seeded Bluff game made a seat relock")
    relocks = local.seats[holder].duties()  # made (keys kept), not yet in the log
    assert any(b["msg"]["type"] == "relock" for b in relocks)
    for voter in (s for s in range(3) if s != holder):
        assert table.feed(voter, _abandon(table, [holder])).ok
    assert table.absence.ended is not None
    for body in relocks:  # sequenced after the stop: ignored
        assert table.feed(holder, body).ok
    for seat in local.seats:
        for body in seat.duties(stopped=True):
            verdict = table.feed(seat.seat, body)
            assert verdict.ok, (seat.seat, verdict)
    assert not table.faults


def _all_owing(seats: int) -> LocalTable:
    """Play until every seat owes a body at once (a deal's keys, say)."""
    setup = TableSetup(b"all-owe", "bluff", seats, proven=False, version=3)
    local = LocalTable(setup, sensible_bots("bluff", seats, 1), seed=1)
    for _ in range(2000):
        if len(local.table.owing()) == seats:
            return local
        for seat in local.seats:
            bodies = seat.duties()
            if bodies:
                local.feed(seat.seat, bodies[0])
                break
        else:
            local.step()
    raise AssertionError("the seats never all owed at once")


def test_one_seat_naming_every_other_seat_ends_nothing() -> None:
    """(v3, review finding 0/0b) one seat's lone ``abandon`` naming every
    other seat (all owing, all present, answers on the way) was counted as
    the unanimous word of the seats not named — the author alone — and
    ended the game naming the honest seats. A set must leave more than half
    of the table not named: one naming half or more is stale, naming nobody;
    the game goes on and the named seats' answers count."""
    for seats in (3, 4, 5):
        local = _all_owing(seats)
        table = local.table
        everyone = list(range(1, seats))
        half = everyone[: (seats + 1) // 2] if seats > 3 else everyone
        for away in (everyone, half):
            assert table.feed(0, _abandon(table, away)).ok
            assert table.absence.ended is None and not table.stopped, (seats, away)
            assert not table.faults and table.stale[-1][0] == 0
            assert "not fewer than half" in table.stale[-1][2]
        # the named seats answer: the game goes on, nobody was named
        for seat in everyone:
            for body in local.seats[seat].duties():
                assert table.feed(seat, body).ok
        assert not table.faults and table.absence.ended is None
    # a set that leaves a majority not named still counts (5 seats, 2 named)
    local = _all_owing(5)
    table = local.table
    for voter in (0, 1, 2):
        assert table.feed(voter, _abandon(table, [3, 4])).ok
    assert table.absence.ended is not None and table.absence.ended.seats == (3, 4)


def test_at_two_seats_no_word_ends_the_game_abandoned() -> None:
    """(v3) at two seats the one other seat's word is all there is: it
    cannot show that it is the present side, so an ``abandon`` is stale,
    and the session signs none (it says why when a person asks)."""
    local = _stalled(2, holdout=1)
    table = local.table
    assert table.feed(0, _abandon(table, [1], "vote")).ok
    assert table.absence.ended is None and not table.faults
    assert "not fewer than half" in table.stale[-1][2]
    clock = AwayClock(me=0, duty_wait=1.0, patience=2.0)
    _tick(clock, table, 0.0, 10.0)
    assert clock.to_sign(table, 10.0, lambda s: False) is None  # patience: nothing
    assert clock.to_sign(table, 10.0, lambda s: False, voted=[1]) is None
    assert clock.notes and "two seats" in clock.notes[-1]


def test_the_clock_never_signs_a_set_naming_half_the_table() -> None:
    """Two of three seats past the patience: no ``abandon`` is signed (it
    could not end the game); one held seat of the two leaves a valid set."""
    local = _all_owing(3)
    table = local.table
    clock = AwayClock(me=0, duty_wait=1.0, patience=2.0)
    _tick(clock, table, 0.0, 10.0)
    assert clock.to_sign(table, 10.0, lambda s: False) is None
    assert clock.to_sign(table, 10.0, lambda s: False, voted=[1, 2]) is None
    assert "more than half of the 3" in clock.notes[-1]
    body = clock.to_sign(table, 10.0, lambda s: s == 2)
    assert body is not None and body["away"] == [1]
    # a person's vote for a seat whose answer this peer holds: says why
    other = AwayClock(me=2, duty_wait=1.0, patience=600.0)
    _tick(other, table, 0.0, 10.0)
    assert other.to_sign(table, 10.0, lambda s: True, voted=[1]) is None
    assert "holds an answer of seat 1" in other.notes[-1]
