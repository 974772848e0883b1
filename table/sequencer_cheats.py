"""Cheating sequencers, to show a table what nodealer catches (``nodealer
play --cheat KIND``) and to test that it does. Unlike the cheats of
:mod:`table.cheats`, which tamper with the bodies a seat signs, these cheat
with what only the sequencer signs - the entries that order the log - so
they must be played by the sequencer: seat 0, the table's host, which
sequences term 0.

Each is an honest :class:`~table.session.TableSession` whose ``__init__``
swaps its node's class for a cheating :class:`~p2p.node.Node` subclass. The
node cheats once, on the first fitting entry it sequences from seq
``CHEAT_FROM`` on, while it is the sequencer:

* ``forged-signature`` - sends, in place of the entry, one it signed around
  another seat's event with the body changed under that seat's signature
  (a move that seat never signed);
* ``replayed-event`` - sends, in place of the entry, one it signed around an
  event of another seat that is already in the chain (a move played twice);
* ``equivocate`` - sends the entry to everyone and then a second, different
  entry it signed for the same seq to the higher half of the other seats,
  to each once its ack shows it holds the first (so that no honest session
  plays from a branch about to be cut: a seat that did would stop at the
  bad body and could be named overdue while it is stopped).

Every honest peer refuses the bad entry, makes a proof against the sequencer
(protocol.md §3.5: a forged-event, a replay or an equivocation proof), keeps
it in its log file, sends it to every peer, skips seat 0's terms and fails
over to seat 1; the game goes on. ``node.proofs`` names seat 0 at every
honest peer, and ``nodealer verify`` on an honest seat's saved log names seat
0 from the proof alone (exit 1).
"""

from __future__ import annotations

from typing import Any

import msgpack

from p2p.envelope import Entry, Event
from p2p.log import Effect, Send
from p2p.node import Node

from .cheat_kind import Cheat
from .session import SessionError, TableSession

CHEAT_FROM = 4  # the first seq a cheating sequencer may cheat on (after the setup)
SEQUENCER = 0  # the seat that sequences term 0


class _CheatingNode(Node):
    """A node that cheats once with an entry it sequences (see subclasses).
    Made by swapping a running node's class: no ``__init__`` of its own."""

    cheated = False

    def _execute(self, effects: list[Effect]) -> None:
        if not self.cheated and self.is_sequencer:
            out: list[Effect] = []
            for effect in effects:
                if not self.cheated and _fresh_entry(effect, self.log.term):
                    assert isinstance(effect, Send)
                    replaced = self._cheat(Entry.from_wire(effect.msg["e"]), effect)
                    if replaced is not None:
                        self.cheated = True
                        out.extend(replaced)
                        continue
                out.append(effect)
            effects = out
        super()._execute(effects)

    def _cheat(self, real: Entry, effect: Send) -> list[Effect] | None:
        """The effects to carry out instead of broadcasting ``real`` (None:
        not this one)."""
        raise NotImplementedError

    def _sign(self, real: Entry, event: Event) -> Entry:
        """An entry we sign as sequencer at ``real``'s place, around ``event``."""
        return Entry.create(self.table, self.identity, real.seq, real.term, real.prev, event)


def _fresh_entry(effect: Effect, term: int) -> bool:
    """A just-sequenced entry of our term going to everyone (not a fetch answer)."""
    if not isinstance(effect, Send) or effect.to is not None or effect.msg.get("k") != "entry":
        return False
    entry = effect.msg["e"]
    return entry["seq"] >= CHEAT_FROM and entry["term"] == term


class ForgingNode(_CheatingNode):
    """Sequences another seat's event with its body changed under the
    author's signature: a forged signature, signed by the sequencer."""

    def _cheat(self, real: Entry, effect: Send) -> list[Effect] | None:
        ev = real.event
        if ev.author == self.seat:
            return None  # another seat's event: a move it never signed
        body = msgpack.packb({"t": "forged", "was": ev.body[:64]}, use_bin_type=True)
        forged = self._sign(real, Event(ev.author, ev.counter, body, ev.sig))
        return [Send(None, {"k": "entry", "e": forged.to_wire()})]


class ReplayingNode(_CheatingNode):
    """Sequences, in place of a new event, another seat's event that is
    already in the chain: that seat's move played twice."""

    def _cheat(self, real: Entry, effect: Send) -> list[Effect] | None:
        earlier = [e for e in self.log.chain[: real.seq - 1] if e.event.author != self.seat]
        if not earlier:
            return None
        again = self._sign(real, earlier[-1].event)
        return [Send(None, {"k": "entry", "e": again.to_wire()})]


class EquivocatingNode(_CheatingNode):
    """Signs two different entries for one seq: the real one for everyone,
    then another for the higher half of the other seats - to each once its
    ack shows it holds the real one (a peer that took the other first would
    play from a branch about to be cut)."""

    _other: tuple[Entry, set[int]] | None = None  # (the other entry, victims left)

    def _cheat(self, real: Entry, effect: Send) -> list[Effect] | None:
        n = self.table.n
        victims = {s for s in range(n) if s != self.seat and s >= (n + 1) // 2}
        if not victims:
            return None
        counter = self.log.next_counter[self.seat]
        body = msgpack.packb({"t": "equivocated"}, use_bin_type=True)
        other = self._sign(real, Event.create(self.table, self.identity, self.seat, counter, body))
        self._other = (other, victims)
        return [effect]

    def _execute(self, effects: list[Effect]) -> None:
        super()._execute(effects)
        if self._other is None or self.machine is None:
            return
        other, victims = self._other
        for seat in sorted(victims):
            ack = self.log.acks.get(seat)
            if ack is not None and ack.seq >= other.seq:
                victims.discard(seat)  # it holds our real entry (or is past it): now the other
                super()._execute([Send(seat, {"k": "entry", "e": other.to_wire()})])
        if not victims:
            self._other = None


class _SequencerCheat(TableSession):
    """An honest session at seat 0 whose node cheats as sequencer."""

    node_class: type[_CheatingNode] = _CheatingNode

    def __init__(self, node: Node, **options: Any) -> None:
        super().__init__(node, **options)
        if self.me != SEQUENCER:
            raise SessionError(
                f"a cheating sequencer plays seat {SEQUENCER} (it sequences term 0), "
                f"not seat {self.me}"
            )
        node.__class__ = self.node_class

    @property
    def cheated(self) -> bool:
        """Whether the node has cheated yet."""
        return bool(getattr(self.node, "cheated", False))


class ForgingSequencer(_SequencerCheat):
    node_class = ForgingNode


class ReplayingSequencer(_SequencerCheat):
    node_class = ReplayingNode


class EquivocatingSequencer(_SequencerCheat):
    node_class = EquivocatingNode


SEQUENCER_CHEATS: tuple[Cheat, ...] = (
    Cheat(
        "forged-signature",
        ForgingSequencer,
        "puts, as sequencer, a move another seat never signed into the log",
        seat=0,
    ),
    Cheat(
        "replayed-event",
        ReplayingSequencer,
        "puts, as sequencer, another seat's move into the log a second time",
        seat=0,
    ),
    Cheat(
        "equivocate",
        EquivocatingSequencer,
        "signs, as sequencer, two different entries for one place",
        seat=0,
    ),
)
"""The cheats a sequencer plays (seat 0); table.cheats.CHEATS lists them too."""


__all__ = [
    "CHEAT_FROM",
    "SEQUENCER_CHEATS",
    "EquivocatingNode",
    "EquivocatingSequencer",
    "ForgingNode",
    "ForgingSequencer",
    "ReplayingNode",
    "ReplayingSequencer",
]
