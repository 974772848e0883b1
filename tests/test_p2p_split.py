"""(v3) Two seats of four cannot split the two honest ones after a proven
equivocation (tests/split_schedules.py: seat 0 gives each honest seat
another entry at one seq, seat 1 then gives each the other's branch under a
newterm starting there). An honest seat may stall — a coalition may stop
the table — but never hold seq k final while the other holds another entry
there final: not as the third review ran it, nor when both honest seats
restart (fourth review)."""

from __future__ import annotations

from tests import split_restart_schedules, split_schedules


def test_a_double_newterm_after_an_equivocation_splits_nobody() -> None:
    for held in split_schedules.double_newterm():  # each look, as the acks go on
        assert len(set(held.values())) <= 1, f"split: {held}"


def test_the_split_stays_closed_when_the_honest_seats_restart() -> None:
    # while their link is down, or while they wait for the newterm after
    # their votes (each acked its own branch again at the new vote floor)
    for schedule in (split_schedules.after_restart, split_schedules.limbo_restart):
        held = schedule()
        assert len(set(held.values())) <= 1, (schedule.__name__, held)


def test_a_restart_keeps_the_term_it_followed_and_the_floor_of_its_cuts() -> None:
    # fifth review: a seat that followed terms without voting forgot them
    # on a restart (#3); a restarted seat entered an older newterm and
    # relaxed its cut's floor to it (#10). Each restarted honest seat made
    # the other's branch final: two honest seats final on different entries
    # (sixth review, #4 and #9) and the start its newterm certified
    schedules = split_restart_schedules
    for schedule in (
        schedules.forgotten_term,
        schedules.older_newterm,
        schedules.start_forgotten,
        schedules.second_newterm,
    ):
        held = schedule()
        finals = {h for h in held.values() if h is not None}
        assert len(finals) <= 1, (schedule.__name__, held)
