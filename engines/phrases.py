"""Mao phrases: ids with English and Chinese wordings, and forgiving matching.

Everything a Mao player says is, on the wire, an *utterance*: free text as the
player typed or clicked it. The engine turns each utterance into a
:class:`Phrase` with :func:`parse`, so the log holds what was said and every
peer reads it the same way. Matching forgives case, spacing, punctuation and
full-width forms (``"Have a  nice day!"``, ``"haveaniceday"`` and
``"祝你愉快。"`` are the same phrase) and accepts either language.

A phrase is an id from the catalogue below plus an optional argument:

==================  =========================================  ===============
id (argument)       English                                    中文
==================  =========================================  ===============
``nice_day`` (n)    have a (very ×n) nice day (M9)             祝你(非常×n)愉快
``thank_you`` (n)   thank you / thank you (very ×n) much (M9)  谢谢 / (非常×n)感谢
``badger``          that's the badger (M13)                    那是獾
``last_card``       last card (M14)                            最后一张
``mao``             Mao (M15)                                  毛
``spade`` (rank)    three of spades (M12)                      黑桃3
``suit`` (suit)     hearts (M11, naming the suit after a J)    红心
``point_of_order``  point of order (M32)                       秩序点
``poo_quoted``      "point of order" in quotes: the *name*,     "秩序点"
                    safe during a point of order (M33)
``poo_over`` …      the five phrases that end it (M35)
``rejoin``          rejoining the game (M36)                   重新加入游戏
``new_rule``        introducing a new rule (M36)               引入新规则
``custom`` (text)   a secret rule's own phrase (M27)           (as written)
==================  =========================================  ===============

Penalty phrases (M17–M25, M33–M38) are phrases too: ``bad_card``,
``out_of_turn``, ``fail_10s``, ``cont_fail_10s``, ``fail_say`` (phrase),
``cont_fail_say`` (phrase), ``in_vain``, ``bad_call``, ``poo_in_poo``,
``touching``, ``talking``, ``lying``, ``swearing``, ``ungentlemanly``,
``explaining``, ``asking``, and ``custom`` (a secret rule's penalty phrase).

Each phrase has a canonical *key* (``"nice_day:2"``, ``"spade:3"``,
``"fail_say:last_card"``, ``"custom:two fat ladies"``) used in rule data and
tests; ``Phrase.from_key`` reads it back.

>>> parse("Have a very, very nice day!")
Phrase('nice_day:2')
>>> str(parse("failure to say 'last card'")), parse("黑桃Q").key
('failure to say last card', 'spade:12')
>>> parse('"point of order"').id, parse("point of order").id
('poo_quoted', 'point_of_order')
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from engines.cards import Suit, rank_name

# --- catalogue -------------------------------------------------------------

FIXED: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # id: (kind, English wordings (first is canonical), Chinese wordings)
    "badger": ("say", ("that's the badger",), ("那是獾", "这是獾")),
    "last_card": ("say", ("last card",), ("最后一张",)),
    "mao": ("say", ("Mao",), ("毛",)),
    "point_of_order": ("say", ("point of order",), ("秩序点",)),
    "poo_over": ("say", ("point of order over",), ("秩序点结束",)),
    "poo_end": ("say", ("end point of order",), ("结束秩序点",)),
    "point_taken": ("say", ("point taken",), ("要点已记下",)),
    "disorder": ("say", ("disorder",), ("秩序混乱",)),
    "pick_up": ("say", ("pick up your cards",), ("拿起你们的牌",)),
    "rejoin": ("say", ("rejoining the game",), ("重新加入游戏",)),
    "new_rule": ("say", ("introducing a new rule",), ("引入新规则",)),
    "bad_card": ("penalty", ("bad card",), ("坏牌",)),
    "out_of_turn": ("penalty", ("playing out of turn",), ("轮流出牌", "不按顺序出牌")),
    "fail_10s": ("penalty", ("failure to play within 10 seconds",), ("10秒内未能出牌",)),
    "cont_fail_10s": (
        "penalty",
        ("continued failure to play within 10 seconds",),
        ("持续10秒内未能出牌",),
    ),
    "in_vain": ("penalty", ("taking the name of the Chairman in vain",), ("妄称领袖之名",)),
    "bad_call": ("penalty", ("bad call",), ("坏声明",)),
    "poo_in_poo": (
        "penalty",
        ("saying point of order during a point of order",),
        ("在秩序点中说秩序点",),
    ),
    "touching": ("penalty", ("touching cards during a point of order",), ("在秩序点期间触碰牌",)),
    "talking": ("penalty", ("talking",), ("说话",)),
    "lying": ("penalty", ("lying",), ("说谎",)),
    "swearing": ("penalty", ("swearing",), ("脏话",)),
    "ungentlemanly": ("penalty", ("ungentlemanly conduct",), ("不绅士行为",)),
    "explaining": ("penalty", ("explaining the rules",), ("解释规则",)),
    "asking": ("penalty", ("asking about the rules",), ("询问规则",)),
}
PARAMETRIC = {"nice_day", "thank_you", "spade", "suit", "fail_say", "cont_fail_say", "custom"}
POO_ENDERS = frozenset({"poo_over", "poo_end", "point_taken", "disorder", "pick_up"})
PENALTY_IDS = frozenset(
    {k for k, v in FIXED.items() if v[0] == "penalty"} | {"fail_say", "cont_fail_say"}
)
_QUOTED_IDS = {"poo_quoted"}
ALL_IDS = frozenset(FIXED) | PARAMETRIC | _QUOTED_IDS

RANK_WORDS_EN = {
    1: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", 10: "ten", 11: "jack", 12: "queen", 13: "king",
}  # fmt: skip
_ZH_NUM = {
    "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
    "九": 9, "十": 10, "尖": 1, "勾": 11, "圈": 12, "老k": 13,
}  # fmt: skip
SUIT_WORDS_EN = {Suit.SPADES: "spades", Suit.HEARTS: "hearts", Suit.DIAMONDS: "diamonds",
                 Suit.CLUBS: "clubs"}  # fmt: skip
SUIT_WORDS_ZH = {Suit.SPADES: "黑桃", Suit.HEARTS: "红心", Suit.DIAMONDS: "方块",
                 Suit.CLUBS: "梅花"}  # fmt: skip
_SUIT_ALIASES = {
    "spades": 0, "spade": 0, "黑桃": 0, "hearts": 1, "heart": 1, "红心": 1, "红桃": 1,
    "diamonds": 2, "diamond": 2, "方块": 2, "方片": 2, "clubs": 3, "club": 3, "梅花": 3,
    "草花": 3,
}  # fmt: skip
_QUOTES = "\"'“”‘’「」『』«»`"
MAX_UTTERANCE = 200
"""Longest utterance the engine accepts (characters); longer text is refused."""


class PhraseError(ValueError):
    """A phrase key or value that does not name a phrase."""


def normalize(text: str) -> str:
    """Fold case, width and spacing; drop punctuation: the form phrases are compared in.

    >>> normalize("That's  the BADGER!")
    'thatsthebadger'
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] in "LN")


# --- the value ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase: a catalogue id plus its argument (an int, a nested phrase for
    ``fail_say``/``cont_fail_say``, or the text of a ``custom`` phrase)."""

    id: str
    arg: int | str | Phrase | None = None

    def __post_init__(self) -> None:
        if self.id not in ALL_IDS:
            raise PhraseError(f"unknown phrase id {self.id!r}")
        a = self.arg
        if self.id in ("nice_day", "thank_you"):
            ok = isinstance(a, int) and not isinstance(a, bool) and 0 <= a <= 50
        elif self.id == "spade":
            ok = isinstance(a, int) and not isinstance(a, bool) and 1 <= a <= 13
        elif self.id == "suit":
            ok = isinstance(a, int) and not isinstance(a, bool) and 0 <= a <= 3
        elif self.id in ("fail_say", "cont_fail_say"):
            ok = isinstance(a, Phrase) and a.id not in PENALTY_IDS
        elif self.id == "custom":
            ok = isinstance(a, str) and 0 < len(normalize(a)) and len(a) <= MAX_UTTERANCE
        else:
            ok = a is None
        if not ok:
            raise PhraseError(f"bad argument {a!r} for phrase {self.id!r}")

    # -- forms ------------------------------------------------------------
    @property
    def key(self) -> str:
        if self.arg is None:
            return self.id
        if isinstance(self.arg, Phrase):
            return f"{self.id}:{self.arg.key}"
        return f"{self.id}:{self.arg}"

    @classmethod
    def from_key(cls, key: str) -> Phrase:
        if not isinstance(key, str):
            raise PhraseError(f"phrase key must be text, not {type(key).__name__}")
        ident, sep, rest = key.partition(":")
        if ident in ("fail_say", "cont_fail_say") and sep:
            return cls(ident, cls.from_key(rest))
        if ident == "custom" and sep:
            return cls(ident, rest)
        if sep:
            if not re.fullmatch(r"\d{1,3}", rest):
                raise PhraseError(f"bad phrase key {key!r}")
            return cls(ident, int(rest))
        return cls(ident)

    @property
    def is_penalty(self) -> bool:
        return self.id in PENALTY_IDS

    @property
    def cards(self) -> int:
        """Penalty cards this penalty phrase carries (M17, M25)."""
        return 3 if self.id == "in_vain" else 1

    def text(self, lang: str = "en") -> str:
        """The canonical wording in ``"en"`` or ``"zh"``."""
        zh = lang == "zh"
        i, a = self.id, self.arg
        if i in FIXED:
            return FIXED[i][2 if zh else 1][0]
        if i == "poo_quoted":
            return "“秩序点”" if zh else '"point of order"'
        if i == "nice_day":
            return f"祝你{'非常' * a}愉快" if zh else f"have a {'very ' * a}nice day"  # type: ignore[operator]
        if i == "thank_you":
            if zh:
                return "谢谢" if a == 0 else f"{'非常' * a}感谢"  # type: ignore[operator]
            return "thank you" if a == 0 else f"thank you {'very ' * a}much"  # type: ignore[operator]
        if i == "spade":
            return f"黑桃{rank_name(a)}" if zh else f"{RANK_WORDS_EN[a]} of spades"  # type: ignore[index,arg-type]
        if i == "suit":
            s = Suit(a)  # type: ignore[arg-type]
            return SUIT_WORDS_ZH[s] if zh else SUIT_WORDS_EN[s]
        if i in ("fail_say", "cont_fail_say"):
            inner = a.text(lang)  # type: ignore[union-attr]
            if zh:
                return f"{'持续' if i == 'cont_fail_say' else ''}未能说“{inner}”"
            return f"{'continued ' if i == 'cont_fail_say' else ''}failure to say {inner}"
        return str(a)  # custom

    def __str__(self) -> str:
        return self.text("en")

    def __repr__(self) -> str:
        return f"Phrase({self.key!r})"

    def matches(self, utterance: str) -> bool:
        """Whether ``utterance`` says this phrase (forgiving, either language)."""
        if self.id == "custom":
            return normalize(utterance) == normalize(self.arg)  # type: ignore[arg-type]
        return parse(utterance) == self


def custom(text: str) -> Phrase:
    """A secret rule's own phrase (``custom("two fat ladies")``)."""
    return Phrase("custom", text.strip())


def nice_day(sevens: int) -> Phrase:
    """What the player of the ``sevens``-th 7 in a chain says (M9): 1 → no "very"."""
    return Phrase("nice_day", sevens - 1)


def thank_you(sevens: int) -> Phrase:
    """What the player who stops a chain of ``sevens`` 7s says (M9)."""
    return Phrase("thank_you", sevens - 1)


def spade_name(rank: int) -> Phrase:
    return Phrase("spade", rank)


def suit_name(suit: Suit | int) -> Phrase:
    return Phrase("suit", int(suit))


def fail_say(phrase: Phrase, continued: bool = False) -> Phrase:
    return Phrase("cont_fail_say" if continued else "fail_say", phrase)


# --- matching ----------------------------------------------------------------

_FIXED_BY_NORM: dict[str, str] = {}
for _id, (_kind, _en, _zh) in FIXED.items():
    for _w in (*_en, *_zh):
        _FIXED_BY_NORM[normalize(_w)] = _id
for _w in ("that is the badger", "thats a badger"):
    _FIXED_BY_NORM[normalize(_w)] = "badger"
for _w in ("毛主席",):
    _FIXED_BY_NORM[normalize(_w)] = "mao"

_NICE_EN = re.compile(r"havea((?:very)*)niceday")
_NICE_ZH = re.compile(r"祝你((?:非常)*)愉快")
_THANK_EN = re.compile(r"thankyou(?:((?:very)*)much)?|thanks")
_THANK_ZH = re.compile(r"谢谢|((?:非常)+)感谢")
_RANK_EN = "|".join(
    sorted([*RANK_WORDS_EN.values(), "a", "j", "q", "k", *(str(n) for n in range(2, 11))],
           key=len, reverse=True)
)  # fmt: skip
_SPADE_EN = re.compile(rf"({_RANK_EN})ofspades?")
_SPADE_ZH = re.compile(r"黑桃(10|[2-9]|[ajqk]|一|二|两|三|四|五|六|七|八|九|十|尖|勾|圈|老k)")
_SWEARS = tuple(
    normalize(w)
    for w in ("fuck", "shit", "damn", "bastard", "bollocks", "bloody", "crap", "操", "妈的",
              "他妈", "卧槽", "靠")
)  # fmt: skip


def _rank_from_word(word: str) -> int:
    for rank, name in RANK_WORDS_EN.items():
        if word == name:
            return rank
    if word in _ZH_NUM:
        return _ZH_NUM[word]
    if word in ("a", "j", "q", "k"):
        return {"a": 1, "j": 11, "q": 12, "k": 13}[word]
    return int(word)


def _parse_norm(n: str) -> Phrase | None:
    if n in _FIXED_BY_NORM:
        return Phrase(_FIXED_BY_NORM[n])
    if n in _SUIT_ALIASES:
        return Phrase("suit", _SUIT_ALIASES[n])
    for pattern, word in ((_NICE_EN, "very"), (_NICE_ZH, "非常")):
        m = pattern.fullmatch(n)
        if m:
            return Phrase("nice_day", len(m.group(1)) // len(word))
    m = _THANK_EN.fullmatch(n)
    if m:
        return Phrase("thank_you", len(m.group(1) or "") // 4)
    m = _THANK_ZH.fullmatch(n)
    if m:
        return Phrase("thank_you", 0 if m.group(1) is None else len(m.group(1)) // 2)
    for pattern in (_SPADE_EN, _SPADE_ZH):
        m = pattern.fullmatch(n)
        if m:
            return Phrase("spade", _rank_from_word(m.group(1)))
    for prefix, ident in (
        ("continuedfailuretosay", "cont_fail_say"),
        ("failuretosay", "fail_say"),
        ("持续未能说", "cont_fail_say"),
        ("未能说", "fail_say"),
    ):
        if n.startswith(prefix) and len(n) > len(prefix):
            inner = _parse_norm(n[len(prefix) :])
            if inner is not None and not inner.is_penalty:
                return Phrase(ident, inner)
            return None
    return None


def parse(utterance: str) -> Phrase | None:
    """The catalogue phrase ``utterance`` says, or None for free talk.

    A custom (secret-rule) phrase is never returned: compare with
    :meth:`Phrase.matches` instead, since only the rule's author knows it.
    """
    if not isinstance(utterance, str):
        return None
    stripped = unicodedata.normalize("NFKC", utterance).strip()
    if len(stripped) >= 2 and stripped[0] in _QUOTES and stripped[-1] in _QUOTES:
        inner = _parse_norm(normalize(stripped[1:-1]))
        if inner is not None and inner.id == "point_of_order":
            return Phrase("poo_quoted")
    return _parse_norm(normalize(stripped))


def parse_penalty(utterance: str) -> Phrase:
    """A penalty phrase as called by a player: a catalogue penalty, or else a
    custom phrase (which only a secret rule's author can uphold)."""
    found = parse(utterance)
    if found is not None and found.is_penalty:
        return found
    if not isinstance(utterance, str) or not normalize(utterance):
        raise PhraseError("a penalty needs a penalty phrase")
    if len(utterance) > MAX_UTTERANCE:
        raise PhraseError(f"penalty phrase longer than {MAX_UTTERANCE} characters")
    return custom(utterance)


def is_swearing(utterance: str) -> bool:
    """Chat that contains a swear word (M38, detectable from text)."""
    n = normalize(utterance)
    return any(w in n for w in _SWEARS)


_ASK_MARKERS = ("?", "？", "吗", "为什么")
_RULE_WORDS = ("rule", "规则", "why", "how do", "what did i", "allowed", "怎么")
_EXPLAIN_WORDS = ("rule", "规则", "because", "you have to", "you must", "you need to",
                  "必须", "因为", "要说")  # fmt: skip


def is_asking(utterance: str) -> bool:
    """Chat asking about the rules (M38): a question that mentions rules."""
    t = unicodedata.normalize("NFKC", utterance).casefold()
    return any(q in t for q in _ASK_MARKERS) and any(w in t for w in _RULE_WORDS)


def is_explaining(utterance: str) -> bool:
    """Chat explaining the rules (M38): a statement about what the rules demand."""
    t = unicodedata.normalize("NFKC", utterance).casefold()
    return not is_asking(utterance) and any(w in t for w in _EXPLAIN_WORDS)
