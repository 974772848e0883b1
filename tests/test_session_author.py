"""A person's Mao rule survives a crash of their peer (issue 13): the rule
and its salt were saved with the seat's secrets before its commitment was
signed; the restarted session keeps them until the screen hands over its
rule author (:meth:`TableSession.adopt_player`), which takes them back and
then judges the rule (M28) and reveals it at the end (M31), and every log
verifies clean.

A real table on 127.0.0.1: seat 0 a sensible bot (host and sequencer), seat
1 a person — their moves through ``submit_move`` chosen by a sensible brain,
their rule written with :class:`~engines.mao_author.RuleAuthor`, as the TUI
does. The deals are seeded (``deterministic_deals``); on them, with the
seeds below, the person wins round 0; the test says so if that changes."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from engines.bots import sensible_bots
from engines.bots.mao import SensibleBot
from engines.core import Event, to_data
from engines.mao_author import RuleAuthor
from engines.mao_events import MaoConfig, Say, Vote
from engines.mao_rules import Cond, Effect, Rule
from engines.mao_state import judged_of
from p2p.node import Node
from table.session import MoveRefused, TableSession
from table.verify import verify_log
from tests.p2p_mesh import make_table

HEARTS_LOVE = Rule("play", (Cond("suit", (1,)),), (Effect("require", phrase="I love you"),))
ME = 1
TABLE = b"author-resume"
"""The table id: with the seeded deals it fixes every deal."""
BOT_SEED = 4
BRAIN = 1
ROUNDS = 2
"""The bot proposes to end the game once two rounds were won (M31)."""
CONFIG = to_data(MaoConfig(hand_size=3, timeout=60))


class Person:
    """The person's choices at seat 1 (what the TUI's keys would send)."""

    def __init__(self, author: RuleAuthor) -> None:
        self.author = author
        self.brain = SensibleBot(BRAIN)

    def choose(self, state: Any, known: Any) -> Event | None:
        if state.phase != "play":
            return None
        if state.awaiting_rule == ME:
            if self.author.may_write(state, ME):
                self.author.commit(state, ME, HEARTS_LOVE)  # the session sends it
            return None
        p = state.proposal
        if p is not None and ME not in (*p.yes, *p.no):
            return Vote(ME, sum(state.wins) >= ROUNDS)
        if state.poo >= 0 and state.poo != ME:
            return Say(ME, ("point taken",))
        if state.judgements or state.calls or state.requests or state.turn != ME:
            return None
        owed = state.owes(ME)
        if owed:
            return Say(ME, tuple(str(o) for o in owed))
        mine = self.author.active_rules(state, ME)
        self.brain.learned.update(state)
        return self.brain.turn(
            state,
            ME,
            known,
            lambda valid: self.brain._choose(state, ME, valid, mine),
            lambda card: self.brain._extra(state, ME, card, mine),
        )


async def _person(session: TableSession, person: Person, until: Any) -> None:
    """Play the person's seat until ``until()`` or the game's end."""
    while session.result is None and not until():
        snap = session.snapshot
        if snap.state is not None and session.table is not None:
            event = person.choose(snap.state, snap.known)
            if event is not None:
                try:
                    await session.submit_move(event)
                except MoveRefused:
                    pass  # overtaken (the table moved): choose again
        await trio.sleep(0.02)


def _where(session: TableSession) -> str:
    state = session.snapshot.state
    tail = "\n".join(str(u) for u in session.updates[-20:])
    pending = "no table" if state is None else (
        f"round={state.round} wins={state.wins} phase={state.phase} judgements="
        f"{state.judgements} requests={state.requests} calls={state.calls} awaiting_rule="
        f"{state.awaiting_rule} poo={state.poo} proposal={state.proposal} turn={state.turn}"
    )  # fmt: skip
    return f"the person's seat did not get to the end; its updates end:\n{tail}\n{pending}"


def _mine(session: TableSession) -> int | None:
    state = session.snapshot.state
    if state is None:
        return None
    return next((i for i, r in enumerate(state.rules) if r.author == ME), None)


@pytest.mark.trio
@pytest.mark.slow
async def test_the_person_s_rule_is_judged_and_revealed_after_a_crash(
    tmp_path, deterministic_deals
) -> None:
    ids, spec = make_table(2, TABLE)
    homes = [tmp_path / "bot", tmp_path / "person"]
    bot = sensible_bots("mao", 2, BOT_SEED)[0]
    bot.rounds = ROUNDS

    def node(seat: int) -> Node:
        return Node(ids[seat], spec, home=homes[seat], host="127.0.0.1", timeout=2.0)

    host = node(0)
    # a long duty_wait: the bot must not name the person while their peer is down
    bot_session = TableSession(
        host, game="mao", config=CONFIG, proven=False, player=bot, time_scale=1.0, duty_wait=120
    )
    options: dict[str, Any] = {"game": "mao", "config": CONFIG, "proven": False, "time_scale": 1.0}
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            nursery.start_soon(bot_session.run)
            # ---- before the crash: round 0 won, the rule written and committed
            first = node(1)
            author = RuleAuthor()
            with trio.fail_after(90):
                async with trio.open_nursery() as peer:
                    await peer.start(first.run)
                    await first.connect(*host.listen_address)
                    session = TableSession(first, **options)
                    peer.start_soon(session.run)
                    while session.snapshot.state is None:
                        await trio.sleep(0.02)
                    session.adopt_player(author)  # what MaoScreen.refresh_table does
                    await _person(
                        session,
                        Person(author),
                        lambda: _mine(session) is not None or session.snapshot.state.wins[0] > 0,
                    )
                    state = session.snapshot.state
                    assert state.wins[0] == 0, (
                        f"the bot won round 0: on table {TABLE!r} with seeds {BOT_SEED}/{BRAIN} "
                        "the person wins it (did the dealing, the bots or the engine change?)"
                    )
                    slot = _mine(session)
                    assert author.mine(state, ME) == {slot: HEARTS_LOVE}
                    judged_before = len(judged_of(state.rules[slot]))
                    peer.cancel_scope.cancel()  # the crash: the peer and its author are gone
            first.store.close()
            del author, session
            # ---- after: the same identity and store, a fresh author from the screen
            again = node(1)
            author = RuleAuthor()
            with trio.move_on_after(60) as late:
                async with trio.open_nursery() as peer:
                    await peer.start(again.run)
                    await again.connect(*host.listen_address)
                    session = TableSession(again, **options)
                    peer.start_soon(session.run)
                    while session.snapshot.state is None or session.snapshot.count < 1:
                        await trio.sleep(0.02)
                    assert author.written == []
                    session.adopt_player(author)  # the screen's author, as after a restart
                    assert [r for r, _s, _c in author.written] == [HEARTS_LOVE]
                    await _person(session, Person(author), lambda: False)
                    with trio.move_on_after(30):
                        while bot_session.result is None:
                            await trio.sleep(0.05)
                    peer.cancel_scope.cancel()
            result = session.result
            assert not late.cancelled_caught and result is not None, _where(session)
            assert bot_session.result is not None, "the bot's session did not finish"
            nursery.cancel_scope.cancel()
        again.store.close()
    finally:
        host.store.close()
    state = session.snapshot.state
    rule = state.rules[slot]
    assert state.phase == "over" and rule.status == "revealed" and rule.rule == HEARTS_LOVE
    verdicts = judged_of(rule)
    assert len(verdicts) > judged_before, "the restored author judged plays under its rule"
    assert not rule.faults, rule.faults  # every verdict re-checked against the revealed rule
    assert result.clean and bot_session.result.clean, (result, bot_session.result)
    for path in (again.store.log_path, host.store.log_path):
        report = verify_log(path)
        assert report.exit_code == 0, report.lines()
