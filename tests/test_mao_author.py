"""A person's seat as a Mao rule author (M27–M30): engines.mao_author.RuleAuthor
answers the author's duties for the person's session, like a bot's."""

from __future__ import annotations

import pytest

from engines.cards import Card
from engines.core import IllegalMove
from engines.mao import GAME
from engines.mao_author import RuleAuthor
from engines.mao_events import AddRule, PlayCard, RevealRule, RuleVerdict
from engines.mao_rules import M29_EXAMPLES, Cond, Effect, Rule, RuleError
from tests.test_mao import three
from tests.test_mao_script import Script

HEARTS_LOVE = Rule("play", (Cond("suit", (1,)),), (Effect("require", phrase="I love you"),))


def _won(hands: list[list[str]] | None = None, top: str = "") -> Script:
    """Seat 0 wins round 0; round 1 is dealt ``hands`` (scripted) or at random."""
    s = three([["5♣", "K♣"], ["4♣", "Q♥"]], "2♣")
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    s.table.submit(PlayCard(0, s.position(0, "K♣"), Card.parse("K♣"), ("Mao",)))
    if hands is None:
        s.serve()
    else:
        s.deal(hands, top)
    return s


def test_the_author_commits_only_a_valid_rule_and_only_when_it_may() -> None:
    s = _won()
    me = RuleAuthor(salt_source=lambda n: bytes(n))
    assert me.act(GAME, s.state, 0, {}) is None  # nothing queued: the person is thinking
    assert not me.may_write(s.state, 1) and me.may_write(s.state, 0)
    with pytest.raises(RuleError, match="needs a penalty phrase"):
        me.commit(s.state, 0, Rule("play", (), (Effect("forbid"),)))
    assert me.written == []
    event = me.commit(s.state, 0, HEARTS_LOVE)
    assert not me.may_write(s.state, 0)  # one rule on its way
    assert me.act(GAME, s.state, 0, {}) == event and isinstance(event, AddRule)
    assert me.act(GAME, s.state, 0, {}) is None  # sent once
    s.submit(event)
    assert s.state.rules[0].author == 0 and me.mine(s.state, 0) == {0: HEARTS_LOVE}


def test_the_author_judges_its_rule_and_reveals_it_and_survives_a_restart() -> None:
    s = _won([["3♦", "9♠"], ["Q♥", "5♠"]], "2♥")  # round 1: seat 1 starts
    me = RuleAuthor(salt_source=lambda n: bytes(n))
    s.submit(me.commit(s.state, 0, HEARTS_LOVE))
    hand = s.state.hands[1]
    q = next(p for p in hand if str(s.table.faces[p]) == "Q♥")
    s.submit(PlayCard(1, q, s.table.faces[q], ()))
    again = RuleAuthor()
    again.import_secrets(me.export_secrets())  # what the session keeps on disk
    verdict = again.act(GAME, s.state, 0, {})
    assert isinstance(verdict, RuleVerdict) and verdict.effects[0].phrase == (
        "failure to say I love you"
    )
    s.submit(verdict)
    assert s.notes()[-1] == (1, "failure to say I love you")
    with pytest.raises(IllegalMove):
        s.submit(AddRule(0, ""))  # no second rule for one win
    s.vote_all("end")
    reveal = again.act(GAME, s.state, 0, {})
    assert isinstance(reveal, RevealRule) and reveal.rule == HEARTS_LOVE
    s.submit(reveal)
    assert s.state.phase == "over" and GAME.outcome(s.state).cheaters == ()


def test_the_author_may_pass() -> None:
    s = _won()
    me = RuleAuthor()
    s.submit(me.commit(s.state, 0, None))
    assert s.state.rules == () and s.state.awaiting_rule == -1
    assert M29_EXAMPLES  # the catalogue the bots draw from is still there
