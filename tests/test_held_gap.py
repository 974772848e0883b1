"""(v3, review findings 2b/2c) A held event counts as a seat's answer only
if it can enter the chain now: its author's next counter, or contiguous from
it (p2p/censor.py ``HeldEvents.events``, ``Node.held_events``). A decoy
signed far ahead of the counter the seat owes (the event it owes withheld)
never gets sequenced, so it must neither keep the seat from being named as
having left (table/absence.py ``AwayClock.to_sign``) nor hold every honest
seat's timer word (table/clock.py ``_holds_overtaken``)."""

from __future__ import annotations

from types import SimpleNamespace

import msgpack

from table.absence import AwayClock
from table.clock import TimerClock
from tests.p2p_sim import SimNet
from tests.test_absence import _stalled, _tick
from tests.test_session_rules import bluff, starter_timer, until


def _signed(net: SimNet, seat: int, body: dict):
    return net.machines[seat].author(msgpack.packb(body, use_bin_type=True))


def test_a_decoy_past_a_gap_is_no_answer_and_the_leaver_is_named() -> None:
    net = SimNet(3)
    net.run()
    owed = _signed(net, 2, {"t": "deal", "deal": 0, "msg": {"type": "keys"}})  # withheld
    decoy = _signed(net, 2, {"t": "deal"})  # counter + 1: sent to every peer
    for peer in (0, 1):
        net.machines[peer].receive(2, {"k": "submit", "ev": decoy.to_wire()}, 1.0)
    net.run()
    peer = net.machines[1]
    assert all(decoy not in [e.event for e in m.chain] for m in net.machines), "never sequenced"
    assert peer.held_events(2) == [] and peer.held_since(2) is None
    # the table: seat 2 owes and is past the patience; the decoy spares it not
    local = _stalled(3, holdout=2)
    table = local.table
    clock = AwayClock(me=1, duty_wait=1.0, patience=2.0)
    _tick(clock, table, 0.0, 5.0)
    body = clock.to_sign(table, 5.0, lambda s: bool(peer.held_events(s)))
    assert body is not None and body["away"] == [2] and body["why"] == "patience"
    # the owed event arrives: now both can enter the chain, and it is spared
    peer.receive(2, {"k": "submit", "ev": owed.to_wire()}, 6.0)
    assert peer.held_events(2) == [owed, decoy] and peer.held_since(2) == 1.0
    again = AwayClock(me=1, duty_wait=1.0, patience=2.0)
    _tick(again, table, 0.0, 5.0)
    assert again.to_sign(table, 5.0, lambda s: bool(peer.held_events(s))) is None


def test_a_decoy_far_ahead_holds_no_timer_word() -> None:
    """The B3 starter window: a seat holding only another seat's decoy (a
    ``deal`` body 60 counters ahead) still signs its timer word; holding the
    A♠ shown (a move the timer would make stale) it does not."""
    local = bluff(3, b"decoy")
    until(local, lambda: starter_timer(local) is not None)
    table = local.table
    purpose = starter_timer(local).purpose
    seat = next(s for s in range(3) if "show" in table.game.legal_kinds(table.state, s))
    me = (seat + 1) % 3
    net = SimNet(3)
    net.run()
    machine = net.machines[seat]
    for _ in range(60):
        machine.author(b"\x80")  # counters the seat never sends
    decoy = _signed(net, seat, {"t": "deal"})
    peer = net.machines[me]
    peer.receive(seat, {"k": "submit", "ev": decoy.to_wire()}, 1.0)
    clock = SimpleNamespace(node=peer, me=me)
    assert peer.held_events(seat) == []
    assert TimerClock._holds_overtaken(clock, table, purpose) is False
    # a contiguous, malformed non-move body holds nothing either (judged on a copy)
    net = SimNet(3)
    net.run()
    peer, author = net.machines[me], net.machines[seat]
    junk = _signed(net, seat, {"t": "deal", "deal": 0, "msg": {}})
    peer.receive(seat, {"k": "submit", "ev": junk.to_wire()}, 1.0)
    assert peer.held_events(seat) == [junk]
    assert TimerClock._holds_overtaken(SimpleNamespace(node=peer, me=me), table, purpose) is False
    # the A♠ shown, contiguous: it holds the word (the sequencer must take it first)
    net = SimNet(3)
    net.run()
    peer = net.machines[me]
    position = next(iter(table.state.hands[seat]))
    show = {"t": "move", "event": {"kind": "show", "seat": seat, "position": position}}
    shown = _signed(net, seat, show)
    peer.receive(seat, {"k": "submit", "ev": shown.to_wire()}, 1.0)
    assert peer.held_events(seat) == [shown]
    assert TimerClock._holds_overtaken(SimpleNamespace(node=peer, me=me), table, purpose) is True
    assert author is not None
