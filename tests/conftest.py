"""Shared fixtures."""

from __future__ import annotations

import pytest

import table.draws as draws_module
from mental_poker.group import SeededRng
from mental_poker.seat import DealSecrets


@pytest.fixture
def deterministic_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every deal secret and draw value from a seeded stream, so that a game
    between seeded bots goes the same way every run (tests must not depend
    on how fresh secrets happen to deal)."""
    generate = DealSecrets.generate.__func__  # type: ignore[attr-defined]

    def seeded(cls, setup, seat, rng=None):
        ctx = setup.context
        label = b"%s/%d/%d" % (ctx.table_id, ctx.deal, seat)
        return generate(cls, setup, seat, SeededRng(label))

    monkeypatch.setattr(DealSecrets, "generate", classmethod(seeded))
    draws = SeededRng(b"draws")
    monkeypatch.setattr(draws_module.secrets, "token_bytes", lambda n: draws(n))
