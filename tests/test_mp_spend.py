"""A dealt deal releases what only its passes needed (``DealTable.spend``,
issue 24: memory bounded by the table): its points lose their parsed form,
and no verdict changes.

Differential: the deal scenarios of ``tests/test_mp_deal.py`` run again over
secp256k1 with every peer's tracker doubled; the twin is spent the moment it
is dealt (as the table machine spends its own), and every message's verdict,
every audit and every card read must be the same from both.
"""

from __future__ import annotations

import pytest

import tests.test_mp_deal as scenarios
from mental_poker.deal import DealTable
from mental_poker.secp256k1 import SECP256K1, _Point

PlainTable = scenarios.Table


class TwinTable(PlainTable):
    """Every tracker twice: the second of each pair spent once dealt."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.n = len(self.tables)
        self.tables += [DealTable(self.setup) for _ in range(self.n)]
        self.spent_seats: set[int] = set()

    def send(self, message):
        verdicts = super().send(message)
        assert verdicts[self.n :] == verdicts[: self.n], (message, verdicts)
        for seat, twin in enumerate(self.tables[self.n :]):
            if twin.dealt and seat not in self.spent_seats:  # as the table machine does
                twin.spend()  # the machine releases the points at the next deal:
                twin.release_points()  # here at once, so that play meets plain points
                _no_parsed_points(twin)  # (relocks and handovers bring new ones later)
                self.spent_seats.add(seat)
        return verdicts

    def finish(self):
        audits = super().finish()
        assert audits[self.n :] == audits[: self.n], audits
        return audits


@pytest.fixture
def _twins(monkeypatch: pytest.MonkeyPatch):
    """Deals over secp256k1 (whose points keep a parsed form), twinned."""
    monkeypatch.setattr(scenarios, "GROUP", SECP256K1)
    return _twinned(monkeypatch)


@pytest.fixture
def _ed25519_twins(monkeypatch: pytest.MonkeyPatch):
    """Twinned over edwards25519: the scenarios built on a point of order 8."""
    return _twinned(monkeypatch)


def _twinned(monkeypatch: pytest.MonkeyPatch) -> list[TwinTable]:
    monkeypatch.setattr(scenarios, "Table", TwinTable)
    made: list[TwinTable] = []
    original = TwinTable.__init__

    def init(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(TwinTable, "__init__", init)
    return made


def _no_parsed_points(table: DealTable) -> None:
    points = [
        *(p for s in table.shuffles for p in s.deck),
        *(p for lock in table.locks for p in (*lock.stripped, *lock.locked)),
        *(p for stack in table.layers for layer in stack for p in (layer.before, layer.after)),
        *table.current,
        *table.authors,
    ]
    assert points
    kept = [p for p in points if type(p) is _Point and p.key is not None]
    assert not kept, f"{len(kept)} of {len(points)} points keep their parsed form"
    assert all(s.proof is None for s in table.shuffles)
    assert all(lock.proof is None for lock in table.locks)


def _spent_twins(made: list[TwinTable]) -> None:
    assert made and any(t.spent_seats for t in made)


def test_an_honest_deal_reads_the_same_spent(_twins) -> None:
    scenarios.test_whole_deal_among_peers(3, 1)
    _spent_twins(_twins)
    for game in _twins:  # every hand reads the same from a spent tracker
        for seat in range(game.n):
            twin = game.tables[game.n + seat]
            for position in range(game.setup.size):
                if game.tables[seat].readers(position) == {seat}:
                    mine = game.tables[seat].decrypt(position, seat, game.secrets[seat])
                    assert twin.decrypt(position, seat, game.secrets[seat]) == mine


def test_an_unproven_cheat_is_named_by_the_audit_of_a_spent_deal(_twins) -> None:
    scenarios.test_unproven_deal_cheat_is_named_by_the_final_audit(scenarios._made_up)
    _spent_twins(_twins)


@pytest.mark.parametrize(
    "scenario",
    [
        "test_invalid_point_met_later_names_its_author_not_the_key_revealer",
        "test_a_layer_over_an_invalid_point_does_not_stop_a_key_opening_another",
    ],
)
def test_an_invalid_point_met_after_the_deal_names_its_sender_spent(
    _ed25519_twins, scenario
) -> None:
    # the point was never used before the deal was spent: its first use
    # still refuses it, and the verdict still names the seat that sent it
    getattr(scenarios, scenario)()
    _spent_twins(_ed25519_twins)


def test_an_off_curve_point_met_after_the_deal_names_its_sender_spent(_twins) -> None:
    # secp256k1: seat 0 passes an off-curve point on (unproven), a colluder
    # locks over it; a spent tracker has it as plain bytes, parsed (and
    # refused) only when a key reveal opens that layer
    game = scenarios.Table(3, scenarios.Deck.of(range(9)), proven=False)
    for seat in range(3):
        game.send_ok(
            scenarios.make_shuffle(game.setup, game.secrets[seat], game.public.expected_input())
        )
    honest = scenarios.make_lock(game.setup, game.secrets[0], game.public.expected_input())
    stripped = list(honest.stripped)
    stripped[6] = scenarios.off_curve(stripped[6])
    game.send_ok(scenarios.replace(honest, stripped=tuple(stripped)))
    game.send_ok(scenarios.make_lock(game.setup, game.secrets[1], honest.stripped))
    game.send_ok(scenarios.make_lock(game.setup, game.secrets[2], game.public.expected_input()))
    _spent_twins(_twins)
    verdicts = game.send(scenarios.make_key_reveal(game.secrets[1], [6]))
    assert all(not v.ok and v.seat == 0 for v in verdicts), verdicts


def test_the_audit_names_a_withheld_final_reveal_spent(_twins) -> None:
    scenarios.test_audit_names_a_seat_that_withholds_its_final_reveal()
    _spent_twins(_twins)


@pytest.mark.trio
async def test_a_mao_table_lets_go_of_the_points_of_the_deals_before_the_one_in_play(
    tmp_path,
) -> None:
    # M26: each round is a new deal; the table machine keeps the parsed
    # points of the deal in play only (issue 24: memory bounded by the table)
    from table.bot_table import play_bot_table

    tables = {}
    peers = await play_bot_table(
        "mao", 3, tmp_path, seed=3, time_scale=0.02, rounds=3, processes=0,
        on_session=lambda seat, session: tables.setdefault(seat, session),
    )  # fmt: skip
    assert all(peer.result.clean for peer in peers), [str(p.result) for p in peers]
    deals = tables[0].replay.table.deals
    assert len(deals) >= 3
    for deal in deals[:-1]:
        assert deal.released
        _no_parsed_points(deal)
    last = deals[-1]
    assert not last.released
    assert all(type(p) is _Point for p in last.current)  # as the wire and the passes made them
