"""A Mao ``reveal_rule`` naming a negative rule number (M30): refused with a
clear message when decoded, by the engine if it gets there anyway (it once
raised IndexError, or opened the *last* rule, and crashed peers), and a table
body carrying one names its author."""

from __future__ import annotations

import pytest

from engines.cards import Card
from engines.core import IllegalMove, MalformedEvent, game, to_data
from engines.mao import GAME
from engines.mao_events import MaoConfig, PlayCard, RevealRule
from engines.mao_rules import M29_EXAMPLES
from table.machine import Table, TableSetup
from tests.test_mao_script import Script

RULE = M29_EXAMPLES["red on black"]
SALT = bytes(range(32))


def _bad_reveal_data(seat: int) -> dict:
    data = to_data(RevealRule(seat, 0, SALT.hex(), RULE))
    data["slot"] = -1
    return data


def test_a_reveal_of_slot_minus_one_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match=r"slot must be a rule's number"):
        RevealRule(0, -1, SALT.hex(), RULE)
    with pytest.raises(MalformedEvent, match=r"slot must be a rule's number"):
        game("mao").decode_event(_bad_reveal_data(0))
    assert RevealRule(0, 0, SALT.hex(), RULE).slot == 0  # slot 0 is a rule's number


def test_the_engine_refuses_slot_minus_one_even_when_the_last_rule_is_the_seats() -> None:
    # seat 0 wins a round and writes a rule; the table votes to end: it must be revealed
    s = Script([["5♣", "K♣"], ["4♣", "Q♥"]], "2♣", config=MaoConfig(hand_size=2))
    s.play(0, "5♣", "last card")
    s.play(1, "4♣", "last card")
    s.table.submit(PlayCard(0, s.position(0, "K♣"), Card.parse("K♣"), ("Mao",)))
    s.deal([["5♦", "K♣"], ["5♠", "2♥"]], "5♣")
    slot = s.add_rule(0, RULE, SALT)
    s.vote_all("end")
    assert s.state.phase == "ending" and s.state.rules[slot].status == "active"
    forged = RevealRule(0, 0, SALT.hex(), RULE)
    object.__setattr__(forged, "slot", -1)  # as if it had slipped past the decoder
    before = GAME.encode(s.state)
    with pytest.raises(IllegalMove, match=r"seat 0 is not the author of rule -1"):
        GAME.apply(s.state, forged)
    assert GAME.encode(s.state) == before  # rule 0 was not opened through slot -1
    s.reveal(slot)
    assert s.state.phase == "over" and s.state.rules[slot].status == "revealed"


def test_a_table_body_carrying_slot_minus_one_names_its_author() -> None:
    table = Table(TableSetup(b"reveal-slot", "mao", 3, proven=False))
    before = table.game.encode(table.state)
    verdict = table.feed(2, {"t": "move", "event": _bad_reveal_data(2)})
    assert not verdict.ok and verdict.seat == 2
    assert "malformed move" in verdict.reason and "slot must be" in verdict.reason
    assert table.game.encode(table.state) == before
