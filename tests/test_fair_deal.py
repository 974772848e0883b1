"""The fair deal at the table (issue 9): a Bomb identity claim answers only
the proof request it was made for, every seat's duties are public and a seat
that keeps the table waiting is named (``overdue``), never a stalled table
that blames nobody."""

from __future__ import annotations

from engines.bomb import Detonate, Kind, Pass, Phase, PlayToArea, Prove, related_faces
from engines.bots import Bot, sensible_bots
from engines.cards import Card
from engines.core import Deal, Timer, Transfer, to_data
from engines.mao import turn_of
from engines.mao_events import Draw, MaoConfig, PlayCard, Say
from mental_poker.seat import (
    make_identity_claim,
    make_key_reveal,
)
from table.duty import Duty, deal_body
from table.local import LocalTable
from table.machine import Table, TableSetup


def _opening(local: LocalTable) -> tuple[int, int, int] | None:
    """The Bomb break's opening: it is seat a's turn; a holds the card at
    position a of a reshuffle deal d > 0 (position number a is also the
    engine position of a's identity in deal 0) and a card X whose related
    faces (K12 A for a play of X) are all in deal d and include that card.
    Returns (a, the position of the card at (d, a), the position of X)."""
    table, state = local.table, local.table.state
    if state.phase is not Phase.TURN or state.work:
        return None
    a = state.turn
    known = local.seats[a].knowledge()
    for position in state.hands[a]:
        number, local_position = table.where[position]
        if number < 1 or local_position != a or position not in known:
            continue
        cards = set(table.deals[number].setup.deck.cards)
        for x in state.hands[a]:
            if x not in known:
                continue
            allowed = {c.index for c in related_faces((known[x],))}
            if allowed <= cards and known[position].index in allowed:
                return a, position, x
    return None


class Patient:
    """A sensible Bomb bot that never detonates (K17): rounds go on, the
    discard pile is reshuffled again and again (K9), and reshuffle decks
    grow until a play's related faces (K12 A) can all lie in one."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def act(self, game, state, seat, known):
        event = self.bot.act(game, state, seat, known)
        if isinstance(event, Detonate):
            return None if seat in state.passed else Pass(seat)
        return event


def _bomb_until_opening() -> tuple[LocalTable, int, int, int]:
    for seed in range(1, 40):
        setup = TableSetup(f"claim-{seed}".encode(), "bomb", 3, proven=True)
        bots = [Patient(bot) for bot in sensible_bots("bomb", 3, seed)]
        local = LocalTable(setup, bots, seed=seed)
        while local.step():
            if len(local.table.deals) > 1:
                found = _opening(local)
                if found:
                    return local, *found
    raise AssertionError("no seeded game offered the opening (bots or engine changed?)")


def test_k12_identity_claim_about_a_reshuffled_card_is_refused(deterministic_deals) -> None:
    """Issue 9 §2: seat a plays kind A (K12) with the card it holds at
    position a of a reshuffle deal, then proves a true statement about THAT
    card instead of its identity (deal 0, position a). Filed under (seat,
    position, members) without the deal, the claim used to answer the proof
    request and the play was accepted; now it is refused, naming the seat."""
    local, a, position, x = _bomb_until_opening()
    table = local.table
    number, local_position = table.where[position]
    knowledge = local.seats[a].knowledge()
    play = PlayToArea(a, (x,), (knowledge[x],), Kind.A)
    assert table.feed(a, local.seats[a].move_body(play)).ok
    (prove,) = [r for r in table.pending() if isinstance(r, Prove)]
    assert prove.position == a and knowledge[position] in prove.allowed  # a true claim ...
    members = tuple(sorted(c.index for c in prove.allowed))
    deal = table.deals[number]  # ... about the card at position a of deal `number`
    claim = make_identity_claim(deal, local.seats[a].secrets[number], local_position, members)
    before = table.game.encode(table.state)
    verdict = table.feed(a, deal_body(number, claim))
    assert not verdict.ok and verdict.seat == a
    assert "answers no pending proof request" in verdict.reason
    assert table.game.encode(table.state) == before and not table.claims
    assert any(r == prove for r in table.pending())  # still waiting for the real proof


def test_a_claim_for_no_request_or_a_second_claim_is_refused(deterministic_deals) -> None:
    local, a, _, _ = _bomb_until_opening()
    table = local.table
    # a true claim about its identity with no play (no request pending)
    members = tuple(range(54))
    claim = make_identity_claim(table.deals[0], local.seats[a].secrets[0], a, members)
    verdict = table.feed(a, deal_body(0, claim))
    assert not verdict.ok and verdict.seat == a and "no pending proof request" in verdict.reason


def test_duties_are_public_and_match_what_a_seat_sends(deterministic_deals) -> None:
    """Table.duties (what every peer can see a seat owes) and Seat.duties
    (the bodies it makes with its secrets) agree at every step of a game."""
    setup = TableSetup(b"duties", "bluff", 3, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 3, 2), seed=2)
    kinds = {"keys": "keys", "pass": None, "final": "final", "relock": "relock"}
    seen: set[str] = set()
    for _ in range(20_000):  # to the end of the game, final reveals included
        for seat in local.seats:
            public = [d for d in local.table.duties(seat.seat) if d.kind != "move"]
            bodies = seat.duties()
            assert bool(public) == bool(bodies), (public, bodies)
            for duty in public:
                seen.add(duty.kind)
                wanted = kinds.get(duty.kind)
                if wanted is not None:
                    assert any(b["t"] == "deal" and b["msg"]["type"] == wanted for b in bodies)
        if not local.step():
            break
    assert {"pass", "keys", "final"} <= seen
    assert local.table.owing() == {}


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


def _replayed(local: LocalTable) -> Table:
    table = Table(local.setup)
    for author, body in local.log:
        assert table.feed(author, body).ok
    return table


def test_a_seat_that_keeps_its_keys_is_named_by_a_majority_of_the_others() -> None:
    setup = TableSetup(b"overdue", "bluff", 4, proven=False, version=2)  # v2 logs: overdue
    local = LocalTable(setup, sensible_bots("bluff", 4, 1), seed=1)
    _stall(local, holdout=2)
    table = local.table
    since = table.owing()[2]
    vote = {"t": "overdue", "seat": 2, "at": table.count}
    local.feed(0, vote)
    assert not table.faults  # one of three others is not enough
    for bad, reason in (
        ({"t": "overdue", "seat": 2}, "at"),
        ({"t": "overdue", "seat": 0, "at": table.count}, "owed nothing"),
        ({"t": "overdue", "seat": 3, "at": 0}, "owed nothing"),
        ({"t": "overdue", "seat": 1, "at": table.count}, "not another seat"),
        ({"t": "overdue", "seat": 2, "at": table.count, "x": 1}, "expected"),
    ):
        other = _replayed(local)  # a false complaint names its author
        verdict = other.feed(1, bad)
        assert not verdict.ok and verdict.seat == 1 and reason in verdict.reason, verdict
    verdict = table.feed(3, {"t": "overdue", "seat": 2, "at": table.count})
    assert not verdict.ok and verdict.seat == 2
    assert (
        "kept the table waiting" in verdict.reason and f"since table body {since}" in verdict.reason
    )
    assert table.faults == [verdict]  # the game is stopped: final reveals only
    assert all(d.kind == "final" for seat in range(4) for d in table.duties(seat))


def test_an_overdue_complaint_overtaken_by_the_duty_is_stale() -> None:
    setup = TableSetup(b"overdue-race", "bluff", 2, proven=False, version=2)  # v2 logs: overdue
    local = LocalTable(setup, sensible_bots("bluff", 2, 1), seed=1)
    _stall(local, holdout=1)
    table = local.table
    at = table.count
    for body in local.seats[1].duties():
        assert table.feed(1, body).ok
    verdict = table.feed(0, {"t": "overdue", "seat": 1, "at": at})
    assert verdict.ok and table.stale[-1][0] == 0 and not table.faults


def test_a_mao_author_that_never_judges_its_rule_is_named(deterministic_deals) -> None:
    """Issue 10: a rule author owes its verdicts (M28) before any turn; they
    are public duties, so an author that lost its rule (or keeps quiet) is
    named by the others instead of stalling the table forever."""
    config = to_data(MaoConfig(hand_size=3))
    setup = TableSetup(b"mao-owed", "mao", 3, config=config, proven=False, version=2)  # v2: overdue
    local = LocalTable(setup, sensible_bots("mao", 3, 2), seed=2)
    for _ in range(20_000):
        owed = local.table.game.owed(local.table.state)
        if owed:
            break
        assert local.step(), "the game ended before any rule was judged"
    author = min(owed)
    table = local.table
    assert Duty("move", what=owed[author]) in table.duties(author)
    assert "verdict" in owed[author] and author in table.owing()
    others = [s for s in range(3) if s != author]
    assert table.feed(others[0], {"t": "overdue", "seat": author, "at": table.count}).ok
    verdict = table.feed(others[1], {"t": "overdue", "seat": author, "at": table.count})
    assert not verdict.ok and verdict.seat == author and "verdict for rule" in verdict.reason


def _mao_with_an_active_rule(seats: int) -> tuple[LocalTable, int]:
    for seed in range(1, 40):
        setup = TableSetup(b"mao-say", "mao", seats, proven=False, version=2)  # v2 logs: overdue
        local = LocalTable(setup, sensible_bots("mao", seats, seed), seed=seed)
        table = local.table
        for _ in range(4000):
            state = table.state
            active = [r for r in state.rules if r.status == "active"]
            if (
                state.phase == "play"
                and active
                and not state.judgements
                and not any(table.duties(s) for s in range(seats))
            ):
                return local, active[0].author
            if not local.step():
                break
    raise AssertionError("no seeded Mao game got a rule in force")


def test_a_seat_kept_busy_by_another_is_not_overdue(deterministic_deals) -> None:
    """Review of issue 9: any seat may speak in Mao, and every `say` makes
    each rule author owe a verdict (M28). An author that answers each one at
    once, while the next `say` always lands first, must never look overdue:
    duties are timed one by one, not as one unbroken stretch."""
    local, author = _mao_with_an_active_rule(4)
    table = local.table
    talker = (author + 1) % 4

    def feed(seat: int, body: dict) -> None:
        assert table.feed(seat, body).ok

    def say() -> None:
        feed(talker, local.seats[talker].move_body(Say(talker, ("hello",)), at=table.count))

    say()
    first = table.owing()[author]
    for _ in range(30):
        event = local.bots[author].act(table.game, table.state, author, {})
        assert event is not None and event.KIND == "verdict", event
        verdict = local.seats[author].move_body(event, at=table.count)
        say()  # the talker's next say lands before the author's verdict
        feed(author, verdict)
    assert table.owing()[author] > first, "each verdict started a new duty"
    others = [s for s in range(4) if s not in (author, talker)]
    for voter in others:  # the honest seats time (author, since): a fresh since
        assert table.feed(voter, {"t": "overdue", "seat": author, "at": first}).ok
    assert not table.faults and author not in {v.seat for v in table.faults}


def test_an_honest_claim_or_commit_overtaken_by_a_timer_is_stale(deterministic_deals) -> None:
    """Review of issue 9: the time-limit timer (K25) landing
    just before an honest identity claim or draw commitment used to name the
    honest seat; with the body's `at` it is stale, nobody blamed."""
    for seed in range(1, 30):
        setup = TableSetup(f"race-{seed}".encode(), "bomb", 3, proven=False)
        local = LocalTable(setup, sensible_bots("bomb", 3, seed), seed=seed)
        table = local.table
        while not table.over:
            proves = [r for r in table.pending() if isinstance(r, Prove)]
            if proves and table.claim_key(proves[0]) not in table.claims:
                seat = proves[0].seat
                bodies = local.seats[seat].duties()
                (claim,) = [
                    b for b in bodies if b["t"] == "deal" and b["msg"]["type"] == "identity"
                ]
                timer = {"t": "timer", "purpose": "time-limit", "at": table.count}
                for word in range(table.timers.quorum):  # v3: a majority's words (§7.2)
                    assert table.feed(word, timer, term=0).ok
                assert table.feed(seat, claim, term=0).ok
                assert table.stale[-1][0] == seat and not table.faults
                break
            local.step()
        else:
            continue
        break
    else:
        raise AssertionError("no seeded game asked for an identity proof")
    setup = TableSetup(b"race-commit", "bomb", 3, proven=False)
    local = LocalTable(setup, sensible_bots("bomb", 3, 1), seed=1)
    table = local.table
    while table.state.phase is not Phase.STARTER:
        local.step()
    (commit,) = local.seats[1].duties()
    assert commit["t"] == "commit"
    timer = {"t": "timer", "purpose": "time-limit", "at": table.count}
    for word in range(table.timers.quorum):
        assert table.feed(word, timer, term=0).ok
    assert table.feed(1, commit, term=0).ok and table.stale and not table.faults


def test_a_card_still_being_dealt_cannot_be_shown(deterministic_deals) -> None:
    """Review of issue 9: a Mao seat that played face up (M4) a card whose
    deal to it was still pending made that deal unanswerable: a stall that
    named nobody. Refused; and an honest seat does not see such a card as
    its own yet."""
    setup = TableSetup(b"mao-stall", "mao", 2, proven=False)
    local = LocalTable(setup, sensible_bots("mao", 2, 1), seed=1)
    table = local.table
    for _ in range(5000):
        assert local.step(), "game over before the opening"
        if (
            table.state.phase == "play"
            and all(isinstance(r, Timer) for r in table.pending())
            and not any(table.duties(s) for s in range(2))
            and all("draw" in table.game.legal_kinds(table.state, s) for s in range(2))
        ):
            break
    on_turn = turn_of(table.state)
    other = 1 - on_turn
    assert table.feed(on_turn, local.seats[on_turn].move_body(Draw(on_turn))).ok
    assert table.feed(other, local.seats[other].move_body(Draw(other))).ok  # penalty draw
    deals = [r for r in table.pending() if isinstance(r, Deal)]
    q, p = deals[0].positions[0], deals[1].positions[0]
    assert deals[1].seat == other
    for body in local.seats[on_turn].duties():  # the honest seat's keys for p (and q)
        assert table.feed(on_turn, body).ok
    number, position = table.where[p]
    face = Card(table.deals[number].decrypt(position, other, local.seats[other].secrets[number]))
    assert p not in local.seats[other].knowledge()  # not its card yet
    body = local.seats[other].move_body(PlayCard(other, p, face), at=table.count)
    verdict = table.feed(other, body)
    assert not verdict.ok and verdict.seat == other and "still being dealt" in verdict.reason
    assert q != p


def test_a_second_refuse_from_the_same_seat_is_stale() -> None:
    """Third review: a guest that refused the setup and restarted used to
    refuse again and be named ("refused after playing")."""
    setup = TableSetup(b"refuse-twice", "bluff", 2, proven=False)
    table = Table(setup)
    assert table.feed(1, {"t": "refuse", "reason": "not my game"}).ok
    assert table.refusal == (1, "not my game") and table.stopped
    assert table.feed(1, {"t": "refuse", "reason": "not my game"}).ok
    assert not table.faults and table.stale[-1][0] == 1


def test_the_old_holder_cannot_reveal_its_key_during_a_transfer(deterministic_deals) -> None:
    """Third review: during a Bluff pick-up (B7) the old holder hands a card
    over with a proof; revealing its key instead would make the new holder's
    card everyone's. Refused, naming it."""
    setup = TableSetup(b"transfer-keys", "bluff", 3, proven=False)
    local = LocalTable(setup, sensible_bots("bluff", 3, 4), seed=4)
    table = local.table
    for _ in range(5000):
        transfers = [r for r in table.pending() if isinstance(r, Transfer)]
        if transfers:
            break
        assert local.step(), "no pick-up in this game"
    (transfer,) = transfers
    taker = transfer.seat
    for body in local.seats[taker].duties():  # the new holder relocks first
        assert table.feed(taker, body).ok
    position = transfer.positions[0]
    number, local_position = table.where[position]
    holder = next(
        layer.seat
        for layer in table.deals[number].outstanding(local_position)
        if layer.seat != taker
    )
    keys = make_key_reveal(local.seats[holder].secrets[number], [local_position])
    verdict = table.feed(holder, deal_body(number, keys))
    assert not verdict.ok and verdict.seat == holder and "being handed over" in verdict.reason
