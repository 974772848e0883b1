"""Mao phrases: ids, both wordings, forgiving matching (issue 4)."""

import doctest

import pytest

import engines.phrases as phrases_module
from engines.phrases import (
    Phrase,
    PhraseError,
    custom,
    fail_say,
    is_asking,
    is_explaining,
    is_swearing,
    nice_day,
    normalize,
    parse,
    parse_penalty,
    spade_name,
    thank_you,
)


def test_doctests() -> None:
    assert doctest.testmod(phrases_module).failed == 0


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Have a nice day", "nice_day:0"),
        ("have a VERY  nice day!!", "nice_day:1"),
        ("祝你非常非常愉快。", "nice_day:2"),
        ("thank you", "thank_you:0"),
        ("Thank you very much.", "thank_you:1"),
        ("非常非常感谢", "thank_you:2"),
        ("That's the badger", "badger"),
        ("那是獾", "badger"),
        ("last card", "last_card"),
        ("最后一张！", "last_card"),
        ("MAO", "mao"),
        ("毛", "mao"),
        ("three of spades", "spade:3"),
        ("Queen of Spades", "spade:12"),
        ("黑桃Q", "spade:12"),
        ("黑桃10", "spade:10"),
        ("hearts", "suit:1"),
        ("梅花", "suit:3"),
        ("point of order", "point_of_order"),
        ("秩序点", "point_of_order"),
        ("'point of order'", "poo_quoted"),
        ("“秩序点”", "poo_quoted"),
        ("Point taken.", "point_taken"),
        ("拿起你们的牌", "pick_up"),
        ("failure to say last card", "fail_say:last_card"),
        ("Continued failure to say 'thank you very much'", "cont_fail_say:thank_you:1"),
        ("未能说“那是獾”", "fail_say:badger"),
        ("taking the name of the chairman in vain", "in_vain"),
        ("妄称领袖之名", "in_vain"),
        ("坏声明", "bad_call"),
        ("bad card", "bad_card"),
    ],
)
def test_forgiving_matching_in_both_languages(text: str, key: str) -> None:
    assert parse(text) == Phrase.from_key(key)


def test_wordings_round_trip_in_both_languages() -> None:
    samples = [
        nice_day(1), nice_day(3), thank_you(1), thank_you(4), spade_name(1), spade_name(10),
        Phrase("suit", 2), Phrase("badger"), Phrase("last_card"), Phrase("mao"),
        fail_say(Phrase("last_card")), fail_say(nice_day(2), continued=True),
        Phrase("poo_in_poo"), Phrase("touching"), Phrase("cont_fail_10s"), Phrase("rejoin"),
    ]  # fmt: skip
    for phrase in samples:
        for lang in ("en", "zh"):
            assert parse(phrase.text(lang)) == phrase, (phrase, lang)
        assert Phrase.from_key(phrase.key) == phrase


def test_free_talk_is_not_a_phrase() -> None:
    assert parse("nice weather today") is None
    assert parse("") is None
    assert parse("failure to say hello") is None


def test_custom_phrases_compare_forgivingly() -> None:
    assert custom("Two fat ladies").matches("two-fat ladies!")
    assert not custom("two fat ladies").matches("two thin ladies")
    assert parse_penalty("Colour clash") == custom("Colour clash")
    assert parse_penalty("bad card") == Phrase("bad_card")


def test_bad_phrase_values_are_refused() -> None:
    for bad in ("nosuch", "nice_day:x", "spade:14", "fail_say:bad_card", "suit:9"):
        with pytest.raises(PhraseError):
            Phrase.from_key(bad)
    with pytest.raises(PhraseError):
        parse_penalty("  ...  ")
    with pytest.raises(PhraseError):
        Phrase("custom", "")


def test_penalty_cards() -> None:
    assert Phrase("in_vain").cards == 3
    assert Phrase("bad_card").cards == 1


def test_conduct_keywords() -> None:
    assert is_swearing("oh SHIT")
    assert not is_swearing("lovely")
    assert is_asking("what is the rule about hearts?")
    assert is_asking("为什么罚我？这是什么规则")
    assert not is_asking("nice game?")
    assert is_explaining("you must say the badger because it's the rule")
    assert not is_explaining("good luck")


def test_normalize() -> None:
    assert normalize("Ｈａｖｅ a  NICE day!") == "haveaniceday"
