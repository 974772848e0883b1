"""A game's story told event by event for one reading seat: one line per
event (a Bomb play's cards are not told again when they turn face up), who
was right after a Bluff challenge and who took the pile, separators between
rounds; kept so that it can be told again (F2) or rebuilt from a log (a
seat going back to its table). Each line comes from :func:`tui.story.story`.
"""

from __future__ import annotations

import re

from table.names import SeatNames

from .story import SEPARATOR, story
from .turn_clock import auto_mark, mark_line

_CARD = re.compile(r"(?:10|[2-9AJQK])[♠♥♦♣]|[RB]J")
_ROUND_ENDS = (  # a round's last event: the next line starts a new round
    re.compile(r"^seat \d+ adds (?:a secret rule|no rule)"),  # M29: the round winner's rule
)


class StoryTeller:
    """A game's story for one reading seat, event by event: one line per
    event (a Bomb play's cards are not told again when they turn face up),
    who was right after a Bluff challenge and who took the pile, and a
    separator between rounds. It keeps every event it was told, so the
    story can be told again in another language (F2) or rebuilt from a log
    (a seat that went back to its table).

    >>> teller = StoryTeller(SeatNames(("ann", "bob", "carol"), me=0))
    >>> teller.tell("seat 1 plays 7♠ (#3) 7♥ (#4) (C)")
    ['bob plays 7♠ 7♥ (kind C: a pair or a sequence)']
    >>> teller.tell("reveal #3=7♠ #4=7♥")
    []
    >>> _ = teller.tell("seat 1 places the bomb in front of seat 2"), teller.tell("seat 2 passes")
    >>> teller.tell("seat 2 plays 9♠ (#5) (A)")  # K16: nobody detonated, the next round
    ['── round 2 ──', 'carol plays 9♠ (kind A: related to the identity)']
    >>> teller = StoryTeller(SeatNames(("ann", "bob", "carol"), me=0))
    >>> _ = teller.tell("seat 1 places 1, claims 1 × 6")
    >>> _ = teller.tell("seat 2 places 2, claims 2 × 7")
    >>> teller.tell("seat 0 challenges: 吹牛!")
    ['you challenge: Bluff!']
    >>> teller.tell("reveal #3=7♠ #9=7♥")
    ['cards shown: 7♠ 7♥', 'carol was honest: you take 3 cards', '── new pile ──']
    >>> teller.tell("seat 0 places 1, claims 1 × 8 (auto)")  # the turn timer's move
    ['you place 1, claim 1 × 8 (auto)']
    >>> teller.retell("zh")[-1]
    '你 扣下 1 张，声称 1 张 8（自动）'
    """

    def __init__(self, names: SeatNames | None = None) -> None:
        self.names = names
        self.events: list[str] = []
        self._reset()

    def _reset(self) -> None:
        self._echo: list[str] | None = None  # cards a play named: their reveal is not news
        self._placer: int | None = None  # Bluff: the latest claim's seat, count and rank
        self._claim: tuple[int, str] = (0, "")
        self._pile = 0  # Bluff: cards on the pile
        self._challenger: int | None = None
        self._bomb_placed = False  # Bomb: the round's bomb is down; the next play starts a round
        self._detonators: list[int] = []  # Bomb (v3): who detonated in the window
        self.round = 1

    def tell(self, event: str, lang: str = "en") -> list[str]:
        """The lines a person reads for one more event (maybe none)."""
        self.events.append(event)
        return self._lines(event, lang)

    def retell(self, lang: str = "en") -> list[str]:
        """The whole story so far again (in ``lang``)."""
        self._reset()
        return [line for event in self.events for line in self._lines(event, lang)]

    def _lines(self, event: str, lang: str) -> list[str]:
        """The lines of one event; a turn timer's move (table.turn_timer)
        is told as any move, marked "(auto)"."""
        event, auto = auto_mark(event)
        lines = self._event_lines(event, lang)
        if auto:
            for i, line in enumerate(lines):
                if not line.startswith(SEPARATOR):
                    lines[i] = mark_line(line, lang)
                    break
        return lines

    def _event_lines(self, event: str, lang: str) -> list[str]:
        race = self._race(event, lang)
        if race is not None:
            return race
        line = story(event, lang, self.names)
        if line is None:
            return []
        english = story(event) or ""  # the facts, whatever the language
        cards = _CARD.findall(english)
        if english.startswith("cards shown: "):
            if self._echo is not None and sorted(cards) == sorted(self._echo):
                self._echo = None
                return []
            if self._challenger is not None and self._placer is not None:
                return [line, *self._verdict(cards, lang)]
        self._echo = cards if re.match(r"^seat \d+ (plays|shows) ", english) else None
        placed = re.match(r"^seat (\d+) places (\d+), claims (\d+) × (\S+)$", english)
        if placed:
            self._placer, self._challenger = int(placed.group(1)), None
            self._claim = (int(placed.group(3)), placed.group(4))
            self._pile += int(placed.group(2))
        challenged = re.match(r"^seat (\d+) challenges", english)
        if challenged:
            self._challenger = int(challenged.group(1))
        out = [line]
        detonated = re.match(r"^seat (\d+): detonate!$", english)
        if detonated:
            self._detonators.append(int(detonated.group(1)))
        if re.match(r"^seat \d+ places the bomb ", english):
            self._bomb_placed = True
        elif self._bomb_placed and re.match(r"^seat \d+ plays ", english):
            self._bomb_placed = False  # K16: the window closed and nobody detonated
            self.round += 1
            out.insert(0, separator("round", lang, self.round))
        if any(pattern.match(event) for pattern in _ROUND_ENDS):
            self.round += 1
            out.append(separator("round", lang, self.round))
        return out

    def _race(self, event: str, lang: str) -> list[str] | None:
        """(v3) K17 as a race: several detonations crossed, and the lot
        that made one of them the assassin (None: not such an event).

        >>> teller = StoryTeller(SeatNames(("ann", "bob", "carol"), me=0))
        >>> _ = teller.tell("seat 2: 炸掉!"), teller.tell("seat 0: 炸掉!")
        >>> teller.tell("time up: race")
        ['carol and you detonated at once: the assassin is drawn by lot']
        >>> teller.tell("random assassin=1")
        ['the lot falls on carol: the assassin (K17)']
        >>> teller.retell("zh")[-2:]
        ['carol、你 同时引爆：抽签决定谁是刺客', '抽签结果：carol 是刺客']
        """
        names = self.names or SeatNames.numbered(0)
        zh = lang == "zh"
        if event == "time up: race" and len(self._detonators) > 1:
            who = names.listed(self._detonators, lang)
            if zh:
                return [f"{who} 同时引爆：抽签决定谁是刺客"]
            return [f"{who} detonated at once: the assassin is drawn by lot"]
        lot = re.match(r"^random assassin=(\d+)$", event)
        if lot is None:
            return None
        drawn = sorted(self._detonators)
        value = int(lot.group(1))
        if not 0 <= value < len(drawn):
            return []  # the table refuses such a draw; nothing to tell
        who = names.who(drawn[value], lang)
        return [f"抽签结果：{who} 是刺客" if zh else f"the lot falls on {who}: the assassin (K17)"]

    def _verdict(self, shown: list[str], lang: str) -> list[str]:
        """B7/B8: the challenged claim was true (the challenger takes the
        pile) or a bluff (its player takes it), from the cards turned up."""
        names = self.names or SeatNames.numbered(0)
        placer, challenger, (count, rank) = self._placer, self._challenger, self._claim
        assert placer is not None and challenger is not None
        matching = sum(1 for card in shown if card[:-1] == rank or card in ("RJ", "BJ"))
        honest = matching >= count
        taker, pile = (challenger if honest else placer), self._pile
        self._placer = self._challenger = None
        self._pile, self._echo = 0, None
        who, taking = names.who(placer, lang), names.who(taker, lang)
        if lang == "zh":
            said = "没有吹牛" if honest else "吹牛了"
            line = f"{who} {said}：{taking} 收走 {pile} 张牌"
        else:
            you = placer == names.me
            said = ("were" if you else "was") + " honest" if honest else "bluffed"
            takes = "take" if taker == names.me else "takes"
            line = f"{who} {said}: {taking} {takes} {pile} card{'s' if pile != 1 else ''}"
        return [line, separator("pile", lang)]


def separator(kind: str, lang: str = "en", number: int = 0) -> str:
    """A line between rounds ("── round 2 ──") or piles ("── new pile ──")."""
    if kind == "round":
        said = f"第 {number} 轮" if lang == "zh" else f"round {number}"
    else:
        said = "新的一叠" if lang == "zh" else "new pile"
    return f"{SEPARATOR} {said} {SEPARATOR}"
