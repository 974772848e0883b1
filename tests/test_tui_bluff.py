"""A person plays Bluff in the TUI (issue 12): Textual's Pilot plays a whole
game against a bot through key presses only — real peers on 127.0.0.1, the
person's seat driven by the screen through its session — and the game ends
with the game-over screen and a log that verifies."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from textual.widgets import RichLog, Static

from engines.bluff import GAME, Challenge, Phase
from engines.bluff import Claim as _Claim
from p2p.identity import Identity
from tests.bluff_table import BluffApp, Table, persons_turn
from tui.app import PlayApp
from tui.screens.over import GameOverScreen


def _keys_for(app: PlayApp) -> list[str]:
    """What a person presses now, reading only the screen's view."""
    view = app.table_screen.view
    if view is None:
        return []
    may = set(view["may"])
    if "show" in may:
        return ["s"]
    if "accept" in may:
        return ["a"]
    if "challenge" in may and view["last"] and view["last"]["placed"] < 2 and view["pile"] > 6:
        return ["c"]
    if "play" in may:
        return ["space", "enter"]  # the card under the cursor, the lowest legal claim
    return []


@pytest.mark.slow
def test_a_whole_bluff_game_through_key_presses(tmp_path) -> None:
    asyncio.run(_play_bluff(tmp_path))


async def _play_bluff(tmp_path) -> None:
    home = tmp_path / "me"
    app = PlayApp(
        "bluff",
        2,
        bots_home=tmp_path / "bots",
        own=(Identity.load_or_create(home), home),
        proven=False,
        seed=3,
        time_scale=0.02,
    )
    pressed = 0
    async with app.run_test(size=(100, 34)) as pilot:
        for _ in range(3000):
            await pilot.pause(0.05)
            if isinstance(app.screen, GameOverScreen):
                break
            keys = _keys_for(app)
            if keys:
                await pilot.press(*keys)
                pressed += len(keys)
                await pilot.pause(0.1)
        else:
            pytest.fail("the game did not end")
        screen = app.screen
        assert isinstance(screen, GameOverScreen)
        assert "clean:" in screen.verdict
        await pilot.press("q")
    assert pressed > 0 and app.exit_code == 0
    (log,) = home.glob("tables/*/log")
    assert log.exists()


def test_only_legal_claims_are_offered() -> None:
    """B5: the screen offers the engine's legal claims, lowest first."""
    from engines.bluff import BluffConfig, Claim

    state = GAME.new(BluffConfig(), 2)
    claims = GAME.legal_claims(state, limit=2)
    assert claims[0] == Claim(1, 1) and len(claims) == 26
    assert all(c.count == 1 for c in GAME.legal_claims(state, limit=1))


# ---------------------------------------------------------------- a person's keys (issue 26)


def _text(app: BluffApp, selector: str) -> str:
    return str(app.screen_.query_one(selector, Static).render())


def _claim_shown(app: BluffApp) -> str:
    found = re.search(r"claim: (\d+ × \w+)", _text(app, "#claim"))
    assert found, _text(app, "#claim")
    return found.group(1)


def test_claim_keys_work_with_the_story_log_focused() -> None:
    """Row 1: ↑/↓ and +/− choose the claim even when the story log has the
    focus (it scrolls on ↑/↓); ←/→ still move along the hand."""
    asyncio.run(_claim_keys())


async def _claim_keys() -> None:
    table = Table().until(persons_turn)
    app = BluffApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(table.snap(), table.lines())
        await pilot.pause()
        story = app.screen_.query_one("#story", RichLog)
        story.focus()
        await pilot.pause()
        assert app.focused is story
        legal = GAME.legal_claims(table.state, limit=8)
        assert _claim_shown(app) == str(legal[0])
        await pilot.press("up")
        assert _claim_shown(app) == str(legal[1])
        await pilot.press("up", "up")
        assert _claim_shown(app) == str(legal[3])
        await pilot.press("down")
        assert _claim_shown(app) == str(legal[2])
        await pilot.press("plus")  # one card more, same rank (B5)
        more = _Claim(legal[2].count + 1, legal[2].rank)
        assert _claim_shown(app) == str(more)
        await pilot.press("minus")
        assert _claim_shown(app) == str(legal[2])
        cursor = app.screen_.cursor
        await pilot.press("right")
        assert app.screen_.cursor == cursor + 1
        # the chosen claim goes out with the picked card
        await pilot.press("space", "enter")
        ((event, seen),) = app.submitted
        assert event.claim == legal[2] and len(event.positions) == 1
        assert seen == table.snap().count
        # until the play is on the table (it may be refused) nothing is lost
        screen = app.screen_
        assert screen.chosen == legal[2] and len(screen._hand_widget().picked) == 1
        table.sim.submit(event)
        app.show(table.snap())
        assert screen.chosen is None and not screen._hand_widget().picked


def test_a_stale_challenge_is_refused_and_said() -> None:
    """Row 3: ``c`` pressed just as the table moved on is not taken for the
    new claim: the screen names the new claim and sends nothing; ``c`` again
    challenges it, with the table it was seen on."""
    asyncio.run(_stale_challenge())


async def _stale_challenge() -> None:
    table = Table().until(persons_turn)
    first = table.snap()
    # the table moves on: the person places, the next seats claim again
    table.until(lambda s: persons_turn(s) and len(s.pile) != len(first.state.pile))
    second = table.snap()
    app = BluffApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(first)
        await pilot.pause(GRACE_WAIT)
        app.show(second)  # a new claim shows...
        await pilot.press("c")  # ...and c comes at once: meant for the one before
        await pilot.pause()
        assert app.submitted == []
        said = [n.message for n in app._notifications]
        claim = str(second.state.last.claim)
        assert any("moved on" in m and claim in m for m in said), said
        await pilot.press("c")  # the new claim is seen now: c challenges it
        assert app.submitted == [(Challenge(0), second.count)]


GRACE_WAIT = 1.2  # seconds: longer than tui.screens.bluff.GRACE


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("seed", [5, 4], ids=["honest", "bluffed"])
def test_a_challenge_is_told_as_a_story_with_the_cards_taken_marked(seed, lang) -> None:
    """Row 9: who was right, who takes how many cards, in words; the cards
    the person took marked ``+`` (not only in colour)."""
    asyncio.run(_challenge_story(seed, lang))


async def _challenge_story(seed: int, lang: str) -> None:
    table = Table(seed=seed).until(persons_turn)
    before = table.snap()
    last = before.state.last
    table.challenge(0)
    after = table.snap()
    taker = after.state.holder(last.positions[0])
    app = BluffApp(lang)
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(before)
        app.show(after)
        await pilot.pause()
        news = _text(app, "#news")
        n = len(set(after.state.hands[taker]) - set(before.state.hands[taker]))
        faces = [str(after.state.face(p)) for p in last.positions]
        matching = sum(1 for f in faces if f[:-1] == str(last.claim).split(" × ")[1])
        honest = matching >= last.claim.count  # B7
        assert (taker == 0) == honest
        who = f"seat {last.seat}" if lang == "en" else f"座位{last.seat}"
        if lang == "en":
            verdict = "was honest" if honest else "bluffed"
            cards = "1 card" if n == 1 else f"{n} cards"
            takes = f"you take {cards}" if honest else f"seat {last.seat} takes {cards}"
        else:
            verdict = "说的是真的" if honest else "吹牛了"
            takes = f"你收下 {n} 张牌" if honest else f"座位{last.seat}收下 {n} 张牌"
        assert news.startswith(f"{who} {verdict}" if lang == "en" else f"{who}{verdict}"), news
        assert news.endswith(takes) and all(f in news for f in faces), news
        assert news in _story(app)
        hand = _text(app, "#hand")
        fresh = app.screen_._hand_widget().fresh
        if honest:  # the person took the pile: every card new to the hand is marked +
            assert fresh == set(after.state.hands[0]) - set(before.state.hands[0])
            caption, cards = hand.split("\n", 1)
            assert cards.count("+") == len(fresh) and ("+ new" in caption or "新收的牌" in caption)
        else:
            assert not fresh and "+" not in hand


def _story(app: BluffApp) -> str:
    log = app.screen_.query_one("#story", RichLog)
    return "\n".join(strip.text for strip in log.lines)


def test_a_challenge_that_takes_the_persons_turn_says_who_and_why() -> None:
    asyncio.run(_turn_taken())


async def _turn_taken() -> None:
    table = Table().until(persons_turn)
    before = table.snap()
    last = before.state.last
    other = next(s for s in (1, 2) if s != last.seat)
    table.sim.submit(Challenge(other))  # before the person moved (B6, B10)
    app = BluffApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(before)
        app.show(table.snap())
        await pilot.pause()
        news = _text(app, "#news")
        assert f"seat {other} challenged seat {last.seat}'s {last.claim}" in news, news
        assert f"seat {other} plays next" in news


def test_a_challenge_of_a_last_claim_the_person_could_let_stand_is_said() -> None:
    asyncio.run(_last_claim_taken())


async def _last_claim_taken() -> None:
    table = Table(seed=3).until(lambda s: s.phase is Phase.LAST_CLAIM and s.turn == 0)
    before = table.snap()
    assert "accept" in before.view["may"]  # B11: the person may let it stand
    last = before.state.last
    other = next(s for s in (1, 2) if s != last.seat)
    table.sim.submit(Challenge(other))
    app = BluffApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(before)
        app.show(table.snap())
        await pilot.pause()
        news = _text(app, "#news")
        assert f"seat {other} challenged seat {last.seat}'s last claim {last.claim}" in news, news


def test_the_hand_is_sorted_and_r_sorts_it_by_suit() -> None:
    asyncio.run(_sorted_hand())


async def _sorted_hand() -> None:
    from engines.cards import Card

    table = Table().until(persons_turn)
    app = BluffApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(table.snap())
        await pilot.pause()
        hand = app.screen_._hand_widget()
        cards = [c for _, c in hand.cards]
        assert [c.rank for c in cards] == sorted(c.rank for c in cards)
        await pilot.press("right", "right")
        under = hand.under_cursor()
        await pilot.press("r")
        cards = [c for _, c in hand.cards]
        assert [c.suit for c in cards] == sorted(c.suit for c in cards)
        assert hand.under_cursor() == under  # the cursor keeps its card
        assert "by suit" in _text(app, "#hand")
        await pilot.press("space")  # a picked card is marked in text
        assert "*" + str(under[1]) in _text(app, "#hand")
        assert isinstance(under[1], Card)


def test_the_bell_rings_when_the_turn_comes_and_ctrl_g_silences_it() -> None:
    asyncio.run(_bell())


async def _bell() -> None:
    table = Table().until(lambda s: s.phase is Phase.PLAY and s.turn == 1)
    waiting = table.snap()
    table.until(persons_turn)
    mine = table.snap()
    app = BluffApp()
    rang: list[float] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.bell = lambda: rang.append(time.monotonic())  # type: ignore[method-assign]
        app.bell_on = True  # a terminal's default (headless tests start silent)
        app.show(waiting)
        app.show(mine)
        await pilot.pause()
        assert len(rang) == 1
        app.show(mine)  # the same turn: no second ring
        assert len(rang) == 1
        await pilot.press("ctrl+g")
        assert app.bell_on is False
        app.show(waiting)
        app.show(mine)
        assert len(rang) == 1


def test_the_ace_of_spades_window_counts_down() -> None:
    asyncio.run(_starter())


async def _starter() -> None:
    table = Table().until(lambda s: s.phase is Phase.STARTER)
    app = BluffApp(time_scale=1.0)
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(table.snap())
        await pilot.pause()
        status = _text(app, "#status")
        first = int(re.search(r"(\d+) s left", status).group(1))
        assert 9 <= first <= 10  # B3's 10 s, in real seconds
        assert "your turn" not in status and "who starts" in status  # nobody's turn yet
        await pilot.pause(1.6)
        later = int(re.search(r"(\d+) s left", _text(app, "#status")).group(1))
        assert later < first


def test_card_doctests() -> None:
    import doctest

    import tui.widgets.cards

    assert doctest.testmod(tui.widgets.cards).failed == 0
