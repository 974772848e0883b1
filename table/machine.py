"""One game at one table, as a pure state machine over the ordered log.

Theory of operation
-------------------
This module joins the two pure layers: a game engine (``engines``) and the
mental-poker deals (``mental_poker``). It does no I/O (h11 style): the
networked session feeds it the log's bodies in log order, and an offline
verifier feeds it the same bodies from a saved log and must reach the same
state and the same verdicts.

*Public side* — :class:`Table`. Every peer holds one and feeds it every body
of the ordered log with its author seat (the log has already checked the
signature). A body is one of (protocol.md §6):

``deal``    a mental-poker message (shuffle pass, lock pass, key reveal,
            relock, identity claim, final reveal) for deal number ``deal``;
``move``    a player event of the game (its ``seat`` must be the author);
``commit``/``open``  commit-reveal of a joint random value;
``timer``   "the seconds of a pending timer passed" (:mod:`table.timers`:
            the sequencer's on v2 logs, a majority's words on v3).

*Races.* Peers act on the state they have seen, so an honest body can reach
the log after another made it pointless. Bodies say ``at`` (how many table
bodies their author had seen); one that no longer applies but did at ``at``
is *stale*: dropped, noted in :attr:`Table.stale`, blamed on nobody; one
that never applied names its author (:mod:`table.timers`).

The engine says what crypto work it needs as ``Request`` values
(``Game.pending``). The table never takes a system event from the wire:
after every body it *derives* them — ``Dealt`` once every other seat has
revealed its keys for the positions, ``Revealed`` once every key is out (the
faces are decrypted from the public values), ``Transferred`` once the new
holder relocked and the old holder revealed, ``Reshuffled`` once a new deal
over the face-up cards has finished both passes, ``RandomValue`` once every
seat has opened its commitment, ``Proved`` once the seat's
identity claim was checked. So every system event is a consequence of signed
messages, and a replay reaches the same state.

*Private side* — :class:`table.seat.Seat`. One per local seat: its deal
secrets, its random-draw values, and its knowledge (faces it decrypted). ``Seat.duties``
lists the bodies this seat owes now (its turn in a pass, keys for a deal or a
reveal, a relock, an identity claim, a commitment, the final reveal). The
session persists ``Seat.secrets_bytes`` *before* publishing anything made
from them.

A body that fails a check is refused with a :class:`~mental_poker.errors.Verdict`
naming the seat responsible and changes nothing. At the end of the game every
seat makes its final reveal and :meth:`Table.audit` re-checks every deal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engines.cards import Card
from engines.core import (
    Deal,
    EngineError,
    Event,
    Game,
    Prove,
    RandomDraw,
    Request,
    Reshuffle,
    Reveal,
    Revealed,
    Timer,
    Transfer,
    game,
)
from mental_poker.context import Context
from mental_poker.deal import DealTable
from mental_poker.deck import Deck
from mental_poker.errors import (
    CheatDetected,
    MentalPokerError,
    NotDecryptable,
    Verdict,
)
from mental_poker.group_api import Group
from mental_poker.groups import group_for
from mental_poker.messages import (
    Complaint,
    DealSetup,
    FinalReveal,
    Handover,
    IdentityClaim,
    KeyReveal,
    LockPass,
    Relock,
    ShufflePass,
    decode_message,
)
from p2p.wire import PROTOCOL_VERSION

from .absence import PATIENCE, Absence, feed_overdue
from .draws import Draws
from .duty import Duty
from .history import StateHistory
from .owing import Look, all_duties
from .seen import SeenHashes, seen_problem, take_seen
from .timers import TimerBook, feed_timer, seen_at


class TableError(ValueError):
    """A body that is not well formed for this table (nobody is blamed: the
    log refuses it before ordering, or the verifier reports it)."""


@dataclass(frozen=True)
class TableSetup:
    """What every seat agrees on before the first deal."""

    table_id: bytes
    game: str
    seats: int
    config: Any = None
    proven: bool = True
    version: int = PROTOCOL_VERSION
    """The table's protocol version (the log header's ``v``): it chooses the
    card group (:func:`~mental_poker.groups.group_for`) and the rules (v2
    logs keep v2 rules; those marked (v3) in protocol.md apply from 3 on)."""
    patience: int = PATIENCE
    """(v3) seconds the table waits for an away seat (§6 *Away*)"""
    turn_time: int | None = None
    """(v3) seconds a person's seat may sit idle on its turn before its own
    peer moves for it (:mod:`table.turn_timer`); None: no turn timer"""

    @property
    def group(self) -> Group:
        """The group this table's deals run over (v3: secp256k1; v2 logs:
        edwards25519)."""
        return group_for(self.version)

    def engine(self) -> Game[Any, Any]:
        return game(self.game)

    def decoded_config(self) -> Any:
        eng = self.engine()
        if self.config is None:
            return eng.Config()
        return eng.decode_config(self.config)


class Table:
    """The public state of one table; feed it every log body in order."""

    def __init__(self, setup: TableSetup) -> None:
        self.setup = setup
        self.game = setup.engine()
        self.config = setup.decoded_config()
        self.state = self.game.new_for(self.config, setup.seats, setup.version)
        self.events: list[Event] = []
        self.auto_moves: set[int] = set()
        """(v3) indices in ``events`` of moves marked ``auto`` (table.turn_timer)"""
        self.deals: list[DealTable] = []
        self.where: dict[int, tuple[int, int]] = {}
        """engine position -> (deal number, position in that deal)"""
        self.open_faces: dict[int, int] = {}
        """positions whose face everyone knows without any deal: a lone card
        "reshuffled" (shuffling one card hides nothing)"""
        self.draws = Draws(setup.seats)  # table.draws: joint random draws
        self.claims: dict[tuple[int, int, int, tuple[int, ...]], bool] = {}
        """checked identity claims not yet answered, by (seat, deal, position
        in that deal, members): True if the proof verified"""
        self.faults: list[Verdict] = []
        self.refusal: tuple[int, str] | None = None
        """(seat, why) when a seat refused the host's setup before acting"""
        self._acted: set[int] = set()  # seats with an accepted body
        self.stale: list[tuple[int, int, str]] = []
        """(author, body number, what) of every stale body dropped"""
        self.count = 0
        self.seen = SeenHashes()  # (v3) each count's `seen` (table/seen.py)
        """table bodies fed so far (refused and stale ones included)"""
        self._reshuffles: dict[tuple[int, ...], int] = {}
        self.passing_from = 0
        """no deal before this one is in its passes (:class:`~table.owing.Look`)"""
        cards = [c.index for c in self.game.deck(self.config)]
        self._new_deal(cards, list(range(len(cards))))
        self._settle()
        self._history = StateHistory(self.game, self.events, self.state)  # after k bodies
        self.timers = TimerBook(setup.seats, setup.version)
        self.timers.note(self.pending(), self.count)
        self._owing: list[frozenset[int]] = []
        self._owing_sets: dict[frozenset[int], frozenset[int]] = {}  # one object per set
        """seats that owed a body after k table bodies"""
        self._first_owed: dict[tuple[int, Any], int] = {}
        """(seat, one unit of duty) -> the body count since which it is owed"""
        self._owed_since: dict[int, int] = {}
        """seat -> since when its oldest duty still owed has been owed"""
        self._overdue_votes: dict[int, set[int]] = {}
        self.absence = Absence(self) if setup.version >= 3 else None
        """(v3) away, the abandon vote and the stop (table/absence.py)"""
        self._note_owed()

    # ------------------------------------------------------------ queries
    @property
    def over(self) -> bool:
        return self.game.is_over(self.state)

    def locate(self, position: int) -> tuple[DealTable, int]:
        deal, local = self.where[position]
        return self.deals[deal], local

    def pending(self) -> tuple[Request, ...]:
        return self.game.pending(self.state)

    def duties(self, seat: int, stopped: bool | None = None) -> list[Duty]:
        """What ``seat`` owes the table now (protocol.md §6, *Who owes
        what*). ``stopped`` (default: a body was refused): the game was
        stopped by a fault, so only final reveals are owed."""
        if stopped is None:
            stopped = self.stopped
        return self._duties(seat, stopped, self.pending(), Look(self))

    def _duties(
        self, seat: int, stopped: bool, pending: tuple[Request, ...], look: Look
    ) -> list[Duty]:
        return all_duties(self, stopped, pending, look)[seat]

    @property
    def stopped(self) -> bool:
        """A body was refused, a seat refused the setup or (v3) the game
        ended abandoned: no more play, only final reveals (protocol.md §7.3)."""
        if self.absence is not None and self.absence.ended is not None:
            return True
        return bool(self.faults) or self.refusal is not None

    def owing_after(self, count: int) -> frozenset[int]:
        """The seats that owed a body after ``count`` table bodies."""
        return self._owing[count]

    def owing(self) -> dict[int, int]:
        """Seats that owe a body now -> the body count since which they have
        owed something without a break (what ``overdue`` complaints cite)."""
        return dict(self._owed_since)

    def audit(self) -> Verdict:
        """After every final reveal: re-check every deal from its keys."""
        for deal in self.deals:
            if not deal.dealt:
                continue
            verdict = deal.audit()
            if not verdict.ok:
                return verdict
        return self.faults[0] if self.faults else Verdict.good()

    # ------------------------------------------------------------ feeding
    def feed(
        self, author: int, body: Any, term: int | None = None, chain_hash: bytes = b""
    ) -> Verdict:
        """Apply one log body by ``author``; a refused body changes nothing
        and its verdict names the seat responsible. ``term``: the term of
        the log entry carrying the body (enables the timer authority rule);
        ``chain_hash``: that entry's hash (what later bodies' ``seen`` name,
        :mod:`table.seen`; empty: not known)."""
        if not isinstance(author, int) or not 0 <= author < self.setup.seats:
            raise TableError(f"no seat {author!r} at this table")
        if term is not None and (not isinstance(term, int) or term < 0):
            raise TableError(f"bad term {term!r}")
        seen = None
        if self.setup.version >= 3:
            body, seen = take_seen(body)
        try:
            if seen is None:
                verdict = self._dispatch(author, body, term)
            else:
                verdict = self._judge_seen(author, body, term, seen)
        except Exception as exc:  # no body ever crashes a peer or verify (§6)
            why = f"{type(exc).__name__}: {exc}"[:200]
            verdict = Verdict.cheat(author, f"its body could not be judged: {why}")
        if verdict.ok:
            self._acted.add(author)
            if self.absence is not None and not (self.stale and self.stale[-1][1] == self.count):
                self.absence.spoke[author] = self.count + 1  # (v3) taken, not stale
            self._settle()
        else:
            self.faults.append(verdict)
        self.count += 1
        self.seen.saw(chain_hash)
        self._history.append(self.state)
        self.timers.note(self.pending(), self.count)
        self._note_owed()
        return verdict

    def _dispatch(self, author: int, body: Any, term: int | None) -> Verdict:
        if not isinstance(body, Mapping) or not isinstance(body.get("t"), str):
            return Verdict.cheat(author, "a table body is a map with a text 't'")
        at = body.get("at")
        if self.setup.version >= 3 and type(at) is int and at > self.count:
            return self._beyond(author, body, term, at)
        if self.absence is not None:  # v3: abandon, and nothing new after a stop
            verdict = self.absence.dispatch(author, body)
            if verdict is not None:
                return verdict
        if body["t"] == "timer":
            return feed_timer(self, author, body, term)
        if body["t"] == "overdue" and self.absence is None:  # v2 logs only
            return feed_overdue(self, self._overdue_votes, author, body)
        if body["t"] == "refuse":
            return self._feed_refuse(author, body)
        if body["t"] == "deal":
            return self._feed_deal(author, body, term)
        handler = {
            "move": self._feed_move,
            "commit": self._feed_draw,
            "open": self._feed_draw,
        }.get(body["t"])
        if handler is None:
            return Verdict.cheat(author, f"unknown table body {body['t']!r:.30}")
        return handler(author, body)

    def saw(self, chain_hash: bytes) -> None:
        """The setup's entry had this chain hash (``seen`` of ``at`` 0)."""
        self.seen.saw(chain_hash)

    def _judge_seen(self, author: int, body: Any, term: int | None, seen: Any) -> Verdict:
        """(v3) A body with ``seen`` (:mod:`table.seen`): one signed for
        another log than this one is judged as a body from beyond the count."""
        problem = seen_problem(seen)
        if problem is not None:
            return Verdict.cheat(author, problem)
        at = body.get("at") if isinstance(body, Mapping) else None
        ours = self.seen.at(at)
        if ours is None or ours == seen or type(at) is not int or at > self.count:
            return self._dispatch(author, body, term)
        return self._beyond(author, body, term, at, other_log=True)

    def _beyond(
        self,
        author: int,
        body: Mapping[str, Any],
        term: int | None,
        at: int,
        other_log: bool = False,
    ) -> Verdict:
        """(v3, protocol.md §6 *Races*) A body signed after ``at`` table
        bodies sits where fewer came before it: its author lied, or the
        entry's sequencer placed it before bodies the author had seen (or a
        failover cut tentative ones). It is judged as if signed now; if that
        refuses it, the log is not the game its author played: the table
        stops there naming nobody (the log cannot tell the two apart),
        unless the author was that sequencer. ``other_log``: its ``seen``
        is not this log's (the author saw other bodies, :mod:`table.seen`)."""
        verdict = self._dispatch(author, {**body, "at": self.count}, term)
        where = (
            f"a body for another log (what it saw after {at} table bodies is not this log's)"
            if other_log
            else f"a body after {at} table bodies, placed after {self.count}"
        )
        return self._order_broken(author, term, where, verdict)

    def _order_broken(
        self, author: int, term: int | None, what: str, verdict: Verdict
    ) -> Verdict:
        """(v3) ``verdict`` on a body of ``author`` that the log may show
        out of the order it was signed in: if it refuses the body, the table
        stops naming nobody ("seat A or the sequencer of term T broke the
        order"), unless the author sequenced that entry too."""
        if verdict.ok or verdict.seat != author:
            return verdict
        if term is not None and term % self.setup.seats == author:
            return verdict  # its author sequenced it too: either way, it is named
        by = "its sequencer" if term is None else f"the sequencer of term {term} (seat "
        by += "" if term is None else f"{term % self.setup.seats})"
        return Verdict.cheat(
            None,
            f"seat {author} signed {what}: "
            f"seat {author} or {by} broke the order; refused here ({verdict.reason:.80})",
        )

    def _out_of_turn(self, deal: DealTable, message: ShufflePass | LockPass) -> bool:
        """(v3) A pass a deal in its passes takes from another seat or phase now."""
        if self.setup.version < 3 or deal.phase not in ("shuffle", "lock"):
            return False
        phase = "shuffle" if isinstance(message, ShufflePass) else "lock"
        return deal.phase != phase or message.seat != deal.next_seat

    def _seen(self, body: Mapping[str, Any]) -> int | None:
        """The body's ``at`` (default: now), None if it names no point of
        this table the author could have seen (:func:`~table.timers.seen_at`)."""
        return seen_at(body, self.count)

    def pending_at(self, at: int) -> tuple[Request, ...]:
        """What the engine asked for after ``at`` table bodies (races)."""
        return self.game.pending(self._history[at])

    def _note_owed(self) -> None:
        """Remember which seats owe a body, and since when each one's oldest
        duty still owed has been owed. Duties are tracked one unit at a time
        (a key per position, a pass, a verdict on one event, …): a seat that
        answers every duty at once never looks overdue, however quickly new
        duties come (a seat saying something in Mao makes every rule author
        owe a verdict), and one that keeps a single unit back does, whatever
        else it sends."""
        stopped, pending, look = self.stopped, self.pending(), Look(self)
        first: dict[tuple[int, Any], int] = {}
        since: dict[int, int] = {}
        everyone = all_duties(self, stopped, pending, look)
        for seat, duties in enumerate(everyone):
            for duty in duties:
                for unit in duty.units():
                    key = (seat, unit)
                    first[key] = self._first_owed.get(key, self.count)
                    since[seat] = min(since.get(seat, self.count), first[key])
        self._first_owed = first
        for seat in list(self._overdue_votes):
            if self._owed_since.get(seat) != since.get(seat):
                del self._overdue_votes[seat]  # a new stretch: earlier votes lapse
        self._owed_since = since
        owing = frozenset(since)
        self._owing.append(self._owing_sets.setdefault(owing, owing))

    def _feed_refuse(self, author: int, body: Mapping[str, Any]) -> Verdict:
        """``refuse``: a seat that finds the host's setup is not the table it
        agreed to (another game, config or proof setting, §7.1) says so
        before it does anything else; the table stops, nobody is blamed
        (who said what before the game is not in the log)."""
        reason = body.get("reason")
        if set(body) != {"t", "reason"} or not isinstance(reason, str) or len(reason) > 300:
            return Verdict.cheat(author, "refuse body: expected t, reason (text ≤ 300)")
        if self.refusal is not None and self.refusal[0] == author:
            return self._stale(author, "refused the setup again (after a restart)")
        if author in self._acted:
            return Verdict.cheat(author, "refused the setup after playing at the table")
        if self.refusal is None:
            self.refusal = (author, reason)
        return Verdict.good()

    def drop_stale(self, author: int, what: str) -> Verdict:
        """Drop a body as stale: recorded in :attr:`stale`, nobody named."""
        return self._stale(author, what)

    def _stale(self, author: int, what: str) -> Verdict:
        self.stale.append((author, self.count, what))
        return Verdict.good()

    def _feed_deal(self, author: int, body: Mapping[str, Any], term: int | None = None) -> Verdict:
        number = body.get("deal")
        if set(body) - {"at"} != {"t", "deal", "msg"} or type(number) is not int:
            return Verdict.cheat(author, "deal body: expected t, deal, msg (and at)")
        at = self._seen(body)
        if at is None:
            return Verdict.cheat(author, f"deal body: 'at' must be 0…{self.count}")
        if not 0 <= number < len(self.deals):
            return Verdict.cheat(author, f"there is no deal {number}")
        deal = self.deals[number]
        try:
            message = decode_message(body["msg"], deal.setup)
        except MentalPokerError as exc:
            return Verdict.cheat(author, f"malformed deal message: {exc}")
        if message.seat != author:
            return Verdict.cheat(author, f"signed a deal message of seat {message.seat}")
        ended = self.absence is not None and self.absence.ended is not None  # (v3) abandoned
        if isinstance(message, FinalReveal) and not (self.over or self.faults or ended):
            return Verdict.cheat(author, "final reveal before the game is over")
        if isinstance(message, ShufflePass | LockPass | Complaint) and (self.over or self.stopped):
            # §6: once the game is over (or stopped) a deal still in its
            # passes is void: a pass that comes late, or the complaint sent
            # in its place (§1.5), is dropped, never finishing or judging
            # that deal (finals would be owed for a deal the honest seats
            # stopped caring about; a complaint only an honest seat still
            # in its passes would send could name a seat after the end)
            what = "complaint" if isinstance(message, Complaint) else "pass"
            return self._stale(author, f"{what} of deal {number} after the game ended")
        if isinstance(message, Relock | Handover):
            to_author = isinstance(message, Relock)
            if not self._transfer_pending(
                self.pending(), number, message.position, author, to_author
            ):
                what = "relock" if to_author else "handover"
                if at < self.count and self._transfer_pending(
                    self.game.pending(self._history[at]),
                    number,
                    message.position,
                    author,
                    to_author,
                ):
                    return self._stale(author, f"{what} of position {message.position} (too late)")
                return Verdict.cheat(
                    author, f"{what} of position {message.position} with no transfer pending for it"
                )
        if isinstance(message, IdentityClaim):
            return self._feed_claim(author, number, deal, message, at)
        if isinstance(message, KeyReveal):
            moving = self._transferring(number)
            shown = sorted({p for p, _ in message.keys} & moving)
            if shown:
                # the old holder hands a card over with a proof, never with
                # its key: out, the key would make the new holder's card
                # everyone's (§1.4 step 4)
                return Verdict.cheat(
                    author, f"reveals keys of position {shown[0]}, a card being handed over"
                )
        if isinstance(message, ShufflePass | LockPass) and self._out_of_turn(deal, message):
            # (v3) no honest seat signs a pass before the one it follows is
            # final: out of turn, the log is not the order it was signed in
            # (passes carry no `at`: sixth review, #10, a forger swapping two)
            what = f"a pass out of turn (expected {deal.phase} of seat {deal.next_seat})"
            return self._order_broken(author, term, what, Verdict.cheat(author, what))
        verdict = deal.feed(message)
        if isinstance(message, FinalReveal) and self._unfit_final(author, verdict):
            # (v3, §6 After a stop) signed for the game its author saw end,
            # perhaps not this stopped table: counted as not sent
            return self._stale(author, f"final reveal of deal {number} ({verdict.reason:.80})")
        if isinstance(message, LockPass) and deal.dealt:
            deal.spend()  # the passes have served: released
        return verdict

    def _unfit_final(self, author: int, verdict: Verdict) -> bool:
        """(v3) A final reveal refused after a stop by a refused body: the
        table froze at the stop, its author signed for the state it saw at
        the end (a forged stop can sit before relocks and handovers the
        final reveal counts), so the refusal is no evidence against it."""
        return (
            self.setup.version >= 3 and bool(self.faults) and not verdict.ok
            and verdict.seat == author
        )  # fmt: skip

    def _transferring(self, number: int) -> set[int]:
        """Positions of deal ``number`` that a pending transfer moves."""
        out = set()
        for request in self.pending():
            if isinstance(request, Transfer):
                for position in request.positions:
                    where = self.where.get(position)
                    if where is not None and where[0] == number:
                        out.add(where[1])
        return out

    def _feed_claim(
        self, author: int, number: int, deal: DealTable, message: IdentityClaim, at: int
    ) -> Verdict:
        """An identity claim answers exactly one pending proof request: the
        card it proves (deal and position in that deal) is the one the
        request names, with the same member set (K12 A/B). A claim about any
        other card, even a true one, would let a seat prove its play against
        a card that is not its identity."""
        key = (author, number, message.position, message.members)
        if key in self.claims:
            return Verdict.cheat(author, "a second identity claim for one proof request")
        if not any(self.claim_key(r) == key for r in self.pending() if isinstance(r, Prove)):
            then = self.game.pending(self._history[at])
            if self.over or any(self.claim_key(r) == key for r in then if isinstance(r, Prove)):
                # overtaken (a timer ended the play or the game): nobody blamed
                return self._stale(author, "identity claim (the proof is no longer asked for)")
            return Verdict.cheat(
                author,
                f"identity claim for position {message.position} of deal {number} "
                "answers no pending proof request (wrong card or set)",
            )
        verdict = deal.feed(message)
        # a false identity proof is answered with a failed verdict (the engine
        # refuses the play) as well as recorded as a fault
        self.claims[key] = verdict.ok
        if not verdict.ok:
            self._settle()
        return verdict

    def claim_key(self, request: Prove) -> tuple[int, int, int, tuple[int, ...]] | None:
        """The claims key that answers a proof request (None: the card is
        not in any deal)."""
        if request.position not in self.where:
            return None
        number, local = self.where[request.position]
        return (request.seat, number, local, tuple(sorted(c.index for c in request.allowed)))

    def _transfer_pending(
        self, pending: tuple[Request, ...], number: int, local: int, author: int, to_author: bool
    ) -> bool:
        """Is a transfer of this card pending to ``author`` (a relock may be
        put on it) or, for a handover, to another seat?"""
        for request in pending:
            if not isinstance(request, Transfer) or (request.seat == author) != to_author:
                continue
            if any(self.where.get(p) == (number, local) for p in request.positions):
                return True
        return False

    def _feed_move(self, author: int, body: Mapping[str, Any]) -> Verdict:
        extra = {"at", "keys", "auto"} if self.setup.version >= 3 else {"at", "keys"}
        if set(body) - extra != {"t", "event"}:  # (v3) auto; v2 logs: no auto
            return Verdict.cheat(author, "move body: expected t, event (and at, keys)")
        if body.get("auto", True) is not True:  # (v3) a turn timer's move, §6
            return Verdict.cheat(author, "move body: auto is true when present")
        at = self._seen(body)
        if at is None:
            return Verdict.cheat(author, f"move body: 'at' must be 0…{self.count}")
        try:
            event = self.game.decode_event(body["event"])
        except EngineError as exc:
            return Verdict.cheat(author, f"malformed move: {exc}")
        if event.SYSTEM or event.author != author:
            return Verdict.cheat(author, f"seat {author} may not submit {event}")
        shown: tuple[DealTable, KeyReveal] | None = None
        cards = event.shown()
        if len(cards) > 1:
            return Verdict.cheat(author, f"{event} shows more than one card at once")
        if cards:
            (position, card) = cards[0]
            checked = self._check_shown(author, body.get("keys"), position, card)
            if isinstance(checked, Verdict):
                return checked
            shown = checked
        elif "keys" in body:
            return Verdict.cheat(author, f"{event} shows no card: it takes no keys")
        try:
            state = self.game.apply(self.state, event)
        except EngineError as exc:
            if at < self.count and self._legal_at(at, event):
                return self._stale(author, f"{event} (too late: {exc})")
            return Verdict.cheat(author, f"illegal move {event}: {exc}")
        if shown is not None:
            deal, keys = shown
            verdict = deal.feed(keys)
            if not verdict.ok:  # not expected: shown_card ran the same checks
                return verdict
        self.state = state
        self.events.append(event)
        if "auto" in body:  # (v3) recorded for the story, ignored by the game
            self.auto_moves.add(len(self.events) - 1)
        return Verdict.good()

    def _check_shown(
        self, author: int, keys: Any, position: int, card: Card
    ) -> tuple[DealTable, KeyReveal] | Verdict | None:
        """A card played face up (Mao M4) is proven by its holder's keys,
        sent with the move: check, without changing anything, that they open
        the position to exactly ``card``. Returns the keys to apply (None if
        the face was already public) or the verdict refusing the move."""

        def refuse(reason: str) -> Verdict:
            return Verdict.cheat(author, f"plays {card} at #{position}: {reason}")

        if position in self.open_faces or position not in self.where:
            face = self.open_faces.get(position)
            if keys is not None or face is None:
                return refuse("no such hidden card" if face is None else "the card is face up")
            return None if face == card.index else refuse(f"the card is {Card(face)}")
        deal, local = self.locate(position)
        if not deal.dealt:
            return refuse("the deck is not dealt yet")
        if any(isinstance(r, Deal | Transfer) and position in r.positions for r in self.pending()):
            # shown before its deal is answered, the card would be everyone's
            # and the deal (answered in order) never could be: a stall
            return refuse("the card is still being dealt")
        public = deal.public_card(local)
        if public is not None:
            if keys is not None:
                return refuse("the card is face up: no keys")
            return None if public == card.index else refuse(f"the card is {Card(public)}")
        layers = deal.outstanding(local)
        if any(layer.seat != author for layer in layers):
            return refuse("the card is not in that seat's hand alone")
        if keys is None:
            return refuse("a card played face up comes with its holder's keys")
        try:
            message = decode_message(keys, deal.setup)
        except MentalPokerError as exc:
            return refuse(f"malformed keys: {exc}")
        if not isinstance(message, KeyReveal) or message.seat != author:
            return refuse("the keys must be its holder's key reveal")
        if {p for p, _ in message.keys} != {local} or len(message.keys) != len(layers):
            return refuse("the keys must open exactly that card")
        try:
            face = deal.shown_card(message, local)
        except CheatDetected as exc:  # checked as a key reveal is (protocol.md §1.1)
            if exc.verdict.seat != author:
                # a point under its layer that another seat sent, or (seat
                # None, unproven deal) a card that is no card of the deal or
                # already public elsewhere: the audit names the cheater
                return exc.verdict
            return refuse("a key does not open its layer")
        except NotDecryptable:
            return refuse("the keys must open exactly that card")
        if face != card.index:
            return refuse(f"its keys open {Card(face)}")
        return deal, message

    def _legal_at(self, at: int, event: Event) -> bool:
        try:
            self.game.apply(self._history[at], event)
        except EngineError:
            return False
        return True

    def _feed_draw(self, author: int, body: Mapping[str, Any]) -> Verdict:
        """``commit``/``open`` of a joint random draw (:mod:`table.draws`)."""
        at = self._seen(body)

        def then() -> tuple[Request, ...] | None:  # what was asked at the body's ``at``
            return None if at is None or at >= self.count else self.pending_at(at)

        return self.draws.feed(author, body, self.pending(), then, self._stale)

    # ------------------------------------------------------------ deriving
    def _apply(self, event: Event) -> None:
        self.state = self.game.apply(self.state, event)
        self.events.append(event)

    def _settle(self) -> None:
        """Answer every pending request the signed messages now satisfy."""
        progress = True
        while progress and not self.over:
            progress = False
            for request in self.pending():
                if isinstance(request, Timer):
                    continue
                event = self._answer(request)
                if event is None:
                    break  # requests are answered in the engine's order
                self._apply(event)
                progress = True
                break

    def _answer(self, request: Request) -> Event | None:
        if isinstance(request, Deal | Transfer):
            if self._readable_by(request.positions, request.seat):
                return request.answer()
            return None
        if isinstance(request, Reveal):
            cards = self._public_cards(request.positions)
            if cards is None:
                return None
            return Revealed(request.positions, tuple(Card(c) for c in cards))
        if isinstance(request, Reshuffle):
            number = self._reshuffles.get(request.new_positions)
            if number is None:
                # every card to reshuffle must be face up first (Mao M26 takes
                # the hands back too: the round is over, so all keys come out)
                faces = self._public_cards(request.positions)
                if faces is None:
                    return None
                if len(faces) == 1:
                    self.open_faces[request.new_positions[0]] = faces[0]
                    return request.answer()
                number = self._new_deal(faces, list(request.new_positions))
                self._reshuffles[request.new_positions] = number
            return request.answer() if self.deals[number].dealt else None
        if isinstance(request, RandomDraw):
            return self.draws.answer(request)
        if isinstance(request, Prove):
            key = self.claim_key(request)
            result = None if key is None else self.claims.pop(key, None)
            return None if result is None else request.answer(result)
        return None  # timers: answered by a timer body only

    def _public_cards(self, positions: tuple[int, ...]) -> list[int] | None:
        """The faces of these positions if every key over them is out."""
        cards = []
        for position in positions:
            if position in self.open_faces:
                cards.append(self.open_faces[position])
                continue
            if position not in self.where:
                return None
            deal, local = self.locate(position)
            card = deal.public_card(local) if deal.dealt else None
            if card is None:
                return None
            cards.append(card)
        return cards

    def _readable_by(self, positions: tuple[int, ...], seat: int) -> bool:
        for position in positions:
            if position in self.open_faces:
                continue
            if position not in self.where:
                return False
            deal, local = self.locate(position)
            if not deal.dealt or deal.readers(local) != frozenset({seat}):
                return False
        return True

    def _new_deal(self, cards: list[int], positions: list[int]) -> int:
        number = len(self.deals)
        for earlier in self.deals:  # in play no longer: their points' parsed forms let go
            earlier.release_points()
        group = self.setup.group
        context = Context(self.setup.table_id, number, group=group)
        deck = Deck.of(cards, group)
        self.deals.append(DealTable(DealSetup(context, self.setup.seats, deck, self.setup.proven)))
        for local, position in enumerate(positions):
            self.where[position] = (number, local)
        return number


__all__ = [
    "Duty",
    "KeyReveal",
    "LockPass",
    "Relock",
    "ShufflePass",
    "Table",
    "TableError",
    "TableSetup",
]
