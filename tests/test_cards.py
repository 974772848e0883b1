import doctest

import pytest

import engines.cards as cards_module
from engines.cards import Card, Suit, full_deck


def test_doctests() -> None:
    assert doctest.testmod(cards_module).failed == 0


def test_index_layout_matches_protocol() -> None:
    assert Card.parse("A♠").index == 0
    assert Card.parse("K♠").index == 12
    assert Card.parse("A♥").index == 13
    assert Card.parse("2♦").index == 27
    assert Card.parse("K♣").index == 51
    assert Card.parse("BJ").index == 52 and Card.parse("RJ").index == 53
    assert Card.parse("A♠#1").index == 54


def test_round_trip_every_card_of_two_decks() -> None:
    deck = full_deck(2)
    assert len(deck) == 108 and len(set(deck)) == 108
    for card in deck:
        assert Card.parse(str(card)) == card


def test_properties() -> None:
    c = Card.parse("9d")
    assert (c.rank, c.suit, c.is_red, c.is_joker) == (9, Suit.DIAMONDS, True, False)
    j = Card.parse("BJ")
    assert (j.rank, j.suit, j.is_joker, j.is_red) == (0, None, True, False)
    assert len(full_deck(jokers=False)) == 52


@pytest.mark.parametrize("bad", ["", "1♠", "14h", "9x", "♠", "J"])
def test_parse_rejects_with_message(bad: str) -> None:
    with pytest.raises(ValueError, match="not a"):
        Card.parse(bad)


def test_bad_index() -> None:
    with pytest.raises(ValueError):
        Card(-1)
