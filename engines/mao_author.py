"""A person's duties as a Mao rule author (M27–M30), kept by their own peer.

A person who wins a Mao round writes a secret rule (the TUI's rule builder);
from then on their *session* owes the table a verdict on every judged event
(M28) and the rule's reveal when it is dropped or the game ends (M30/M31).
A person cannot be asked to judge every event by hand, and must not be able
to judge wrongly by a slip of the finger, so :class:`RuleAuthor` does it:
it is the session's ``player`` for a person's seat, exactly as a bot is for
a bot's seat, but it only answers duties — it never plays, says, calls or
votes for the person.

It is the same machinery the Mao bots use (``engines.bots.mao``): the rule
and its salt are exported with :meth:`export_secrets` (the session stores
them, fsynced, before it signs the commitment), the verdicts are
:func:`engines.mao.author_verdict`, deterministic and re-checked by every
peer when the rule is revealed. :meth:`commit` validates the rule against
the author's other rules in force (``mao_rules.validate``, the engine's
reason when it refuses) and queues the ``add_rule`` event the session sends
on its next turn to act — after it has saved the secret.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from engines.bots.mao import _Author
from engines.cards import Card
from engines.core import Event
from engines.mao import MaoState
from engines.mao_events import AddRule
from engines.mao_rules import SALT_BYTES, Rule, commitment, validate


class RuleAuthor(_Author):
    """The duties of a person's seat as a rule author (see the module docstring)."""

    def __init__(self, salt_source: Callable[[int], bytes] = secrets.token_bytes) -> None:
        super().__init__(seed=0, salt_source=salt_source)
        self._queued: AddRule | None = None

    # -- from the person (the screen) ---------------------------------------------
    def may_write(self, state: MaoState, seat: int) -> bool:
        """Whether ``seat`` owes or may add a rule now, and none is on its way."""
        if self._queued is not None or state.phase in ("ending", "over"):
            return False
        return state.awaiting_rule == seat or state.credits[seat] > 0

    def others(self, state: MaoState, seat: int) -> tuple[Rule, ...]:
        """The author's other rules in force (a new rule must fit with them)."""
        return tuple(sorted(self.active_rules(state, seat), key=str))

    def commit(self, state: MaoState, seat: int, rule: Rule | None) -> AddRule:
        """Queue the commitment to ``rule`` (None: add no rule, M27). Raises
        :class:`~engines.mao_rules.RuleError` with the engine's reason for a
        rule that is malformed, contradictory or breaks the game."""
        if rule is None:
            event = AddRule(seat, "")
        else:
            validate(rule, self.others(state, seat))
            salt = self.salt_source(SALT_BYTES)
            commit = commitment(rule, salt)
            self.written.append((rule, salt, commit))
            self._mine_cache = None
            event = AddRule(seat, commit)
        self._queued = event
        return event

    def mine(self, state: MaoState, seat: int) -> dict[int, Rule]:
        """The rules this author wrote, by slot (for the screen to show)."""
        return {slot: rule for slot, (rule, _salt) in self._mine(state, seat).items()}

    # -- the session's player -------------------------------------------------------
    def act(self, game: Any, state: MaoState, seat: int, known: dict[int, Card]) -> Event | None:
        """Verdicts for my rules, in event order (M28); reveals when due (M30);
        the queued commitment once the table waits for it (M27)."""
        if state.phase == "over":
            return None
        owed = self.author_owes(state, seat)
        if owed is not None:
            return owed
        queued = self._queued
        if queued is not None and (state.awaiting_rule == seat or state.credits[seat] > 0):
            self._queued = None
            return queued
        return None
