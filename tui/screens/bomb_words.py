"""The Bomb game (糊涂炸弹) in a player's words: what each phase asks of
you, and the end told as a story — every identity, alliance and role
(K3/K4), who placed the bomb before whom (K15), who blew up whom (K17) and
why that side won (K18–K25), with names where the table has them.

>>> from engines.cards import Card
>>> ids = (Card.parse("K♠"), Card.parse("Q♥"), Card.parse("2♥"))
>>> identity_line(1, ids, lambda s: ["you", "bob", "carol"][s], "en")
'bob: Q♥ — red alliance (♥), captain'
>>> identity_line(2, ids, lambda s: ["you", "bob", "carol"][s], "en")
'carol: 2♥ — traitor of ♥: plays for the black alliance'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engines.bomb import Alliance, BombState, Role, alliance_of, roles, side_of
from engines.cards import Card

from ..words import register, t

Namer = Callable[[int], str]
"""A seat's name as a person reads it ("you", "bob", else "seat 2")."""

register(
    {
        "you": "你",
        "seat {seat}": "座位{seat}",
        "black alliance": "黑方联盟",
        "red alliance": "红方联盟",
        "captain": "队长",
        "member": "队员",
        "traitor": "叛徒",
        "civilian": "平民",
        "{who}: {card} — {alliance} ({suit}), {role}": (
            "{who}：{card}——{alliance}（{suit}），{role}"
        ),
        "{who}: {card} — traitor of {suit}: plays for the {side}": (
            "{who}：{card}——{suit} 的内奸：替{side}打"
        ),
        "{who}: {card} — civilian (joker), on no side": "{who}：{card}——平民（王牌），不属任何一方",
        # what each phase asks (K9–K17)
        "identity cards are being dealt": "正在发身份牌",
        "drawing who starts": "正在抽签决定谁先出",
        "your turn: space picks cards, a/b/c plays them": "轮到你：空格选牌，a/b/c 出牌",
        "{who} is playing": "{who} 正在出牌",
        "{who}'s cards are being shown": "正在亮出 {who} 的牌",
        "7 cards: place the bomb before a player (←/→, enter)": (
            "满 7 张：把炸弹放在一名玩家面前（←/→，回车）"
        ),
        "{who} is placing the bomb": "{who} 正在放炸弹",
        "the bomb is in front of {target}": "炸弹在 {target} 面前",
        "identities are being revealed": "正在亮身份",
        "game over": "游戏结束",
        "bomb before: ▶ {target} (enter places it)": "炸弹放在：▶ {target}（回车放下）",
        # the end (K17–K25)
        "{placer} placed the bomb in front of {target}.": "{placer} 把炸弹放在 {target} 面前。",
        "{assassin} shouted “detonate!” and blew up {target}.": (
            "{assassin} 喊了“炸掉！”，炸了 {target}。"
        ),
        "Nobody detonated before the time limit.": "时限到了也没人引爆。",
        "{assassin} ({arole}) killed {target}, the enemy captain: the {side} wins (K18).": (
            "{assassin}（{arole}）炸死了敌方队长 {target}：{side}赢（K18）。"
        ),
        "{assassin} ({arole}) killed {target}, a traitor of their own alliance: "
        "the {side} wins (K19).": "{assassin}（{arole}）炸死了本方内奸 {target}：{side}赢（K19）。",
        "The assassin ({assassin}) was a civilian: a civilian who detonates loses alone, "
        "both alliances win (K22).": (
            "刺客（{assassin}）是平民：平民引爆只有自己输，两个联盟都赢（K22）。"
        ),
        "The target ({target}) was a civilian: the civilians and the {lost} lose, "
        "the {side} wins (K23).": "目标（{target}）是平民：平民和{lost}输，{side}赢（K23）。",
        "The assassin ({assassin}, {arole}) was not a captain — only captains may kill (K5): "
        "the {lost} loses, the {side} wins (K20).": (
            "刺客（{assassin}，{arole}）不是队长——只有队长能杀人（K5）：{lost}输，{side}赢（K20）。"
        ),
        "The target ({target}, {trole}) was neither an enemy captain nor a traitor of the "
        "assassin's own alliance: the assassination failed, the {lost} loses, "
        "the {side} wins (K20).": (
            "目标（{target}，{trole}）既不是敌方队长，也不是刺客本方的内奸："
            "暗杀失败，{lost}输，{side}赢（K20）。"
        ),
        "The hour is up: both alliances lose, the civilians win (K25).": (
            "一小时到了：两个联盟都输，平民赢（K25）。"
        ),
        "Civilians not killed win too (K24).": "没被炸的平民也赢（K24）。",
        "{who} broke K12 (a play did not fit their identity) and loses.": (
            "{who} 违反了 K12（出的牌与身份不符），判输。"
        ),
        "Winners: {names}.": "赢家：{names}。",
        "nobody": "没有人",
        "the {alliance}": "{alliance}",
    }
)

SUITS = {Alliance.BLACK: "♠♣", Alliance.RED: "♥♦"}


def alliance_word(alliance: Alliance, lang: str) -> str:
    return t("black alliance" if alliance is Alliance.BLACK else "red alliance", lang)


def identity_line(seat: int, identities: tuple[Card, ...], name: Namer, lang: str) -> str:
    """K3/K4/K21: one seat's identity, alliance and role, in words."""
    card = identities[seat]
    role = roles(identities)[seat]
    if role is Role.CIVILIAN:
        return t("{who}: {card} — civilian (joker), on no side", lang, who=name(seat), card=card)
    alliance = alliance_of(card)
    assert alliance is not None and card.suit is not None
    suit = str(card)[-1]
    if role is Role.TRAITOR:
        return t("{who}: {card} — traitor of {suit}: plays for the {side}", lang,
                 who=name(seat), card=card, suit=suit,
                 side=alliance_word(alliance.enemy, lang))  # fmt: skip
    return t("{who}: {card} — {alliance} ({suit}), {role}", lang, who=name(seat), card=card,
             alliance=alliance_word(alliance, lang), suit=suit,
             role=t(role.value, lang))  # fmt: skip


def _role_words(seat: int, identities: tuple[Card, ...], lang: str) -> str:
    card = identities[seat]
    role = roles(identities)[seat]
    if role is Role.CIVILIAN:
        return t("civilian", lang)
    return f"{card} {t(role.value, lang)}"


def ending(state: BombState, name: Namer, lang: str) -> list[str]:
    """K15–K25: the end of a Bomb game as sentences (empty before the identities are known)."""
    ids = state.identities
    if not ids or state.result is None:
        return []
    out: list[str] = []
    a, target = state.assassin, state.bomb
    if target is not None:
        out.append(t("{placer} placed the bomb in front of {target}.", lang,
                     placer=name(state.last_actor), target=name(target)))  # fmt: skip
    if a is None or target is None:
        out.append(t("Nobody detonated before the time limit.", lang))
        out.append(t("The hour is up: both alliances lose, the civilians win (K25).", lang))
    else:
        out.append(t("{assassin} shouted “detonate!” and blew up {target}.", lang,
                     assassin=name(a), target=name(target)))  # fmt: skip
        out.append(_why(state, a, target, name, lang))
    for seat in state.result.cheaters:
        out.append(t("{who} broke K12 (a play did not fit their identity) and loses.", lang,
                     who=name(seat)))  # fmt: skip
    winners = ", ".join(name(s) for s in state.result.winners) or t("nobody", lang)
    out.append(t("Winners: {names}.", lang, names=winners))
    return out


def _why(state: BombState, a: int, target: int, name: Namer, lang: str) -> str:
    """K18–K24: why this side won, as the engine judged it (``engines.bomb._judge``)."""
    ids = state.identities
    role = roles(ids)
    mine = side_of(ids[a], role[a])
    words: dict[str, Any] = {"assassin": name(a), "target": name(target),
                             "arole": _role_words(a, ids, lang),
                             "trole": _role_words(target, ids, lang)}  # fmt: skip
    if role[a] is Role.CIVILIAN or mine is None:
        return t("The assassin ({assassin}) was a civilian: a civilian who detonates loses "
                 "alone, both alliances win (K22).", lang, **words)  # fmt: skip
    words["side"] = alliance_word(mine, lang)
    words["lost"] = alliance_word(mine.enemy, lang)
    enemy_captain = role[target] is Role.CAPTAIN and alliance_of(ids[target]) != alliance_of(ids[a])
    own_traitor = role[target] is Role.TRAITOR and alliance_of(ids[target]) == alliance_of(ids[a])
    if role[a] is Role.CAPTAIN and enemy_captain:
        return t("{assassin} ({arole}) killed {target}, the enemy captain: the {side} wins (K18).",
                 lang, **words)  # fmt: skip
    if role[a] is Role.CAPTAIN and own_traitor:
        return t("{assassin} ({arole}) killed {target}, a traitor of their own alliance: "
                 "the {side} wins (K19).", lang, **words)  # fmt: skip
    words["side"], words["lost"] = words["lost"], words["side"]
    if role[target] is Role.CIVILIAN:
        return t("The target ({target}) was a civilian: the civilians and the {lost} lose, "
                 "the {side} wins (K23).", lang, **words)  # fmt: skip
    if role[a] is not Role.CAPTAIN:
        line = t("The assassin ({assassin}, {arole}) was not a captain — only captains may "
                 "kill (K5): the {lost} loses, the {side} wins (K20).", lang,
                 **words)  # fmt: skip
    else:
        line = t("The target ({target}, {trole}) was neither an enemy captain nor a traitor "
                 "of the assassin's own alliance: the assassination failed, the {lost} loses, "
                 "the {side} wins (K20).", lang, **words)  # fmt: skip
    if any(r is Role.CIVILIAN for r in role):
        line += " " + t("Civilians not killed win too (K24).", lang)
    return line


def phase_words(view: dict[str, Any], me: int, name: Namer, lang: str) -> str:
    """What the table is doing now, in words (never an engine phase name)."""
    phase, turn = view["phase"], view["turn"]
    if phase == "identities":
        return t("identity cards are being dealt", lang)
    if phase == "starter":
        return t("drawing who starts", lang)
    if phase == "turn":
        if turn == me and "play" in view["may"]:
            return t("your turn: space picks cards, a/b/c plays them", lang)
        return t("{who} is playing", lang, who=name(turn))
    if phase == "playing":
        return t("{who}'s cards are being shown", lang, who=name(turn))
    if phase == "place_bomb":
        if "place_bomb" in view["may"]:
            return t("7 cards: place the bomb before a player (←/→, enter)", lang)
        return t("{who} is placing the bomb", lang, who=name(turn))
    if phase == "window" and view["bomb"] is not None:
        return t("the bomb is in front of {target}", lang, target=name(view["bomb"]))
    if phase == "judging":
        return t("identities are being revealed", lang)
    return t("game over", lang)
