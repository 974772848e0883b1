"""Every character on every screen reads at 4.5:1 or better against its
background (WCAG 2 AA), in the dark theme, the light theme, and under
``NO_COLOR`` (Textual then turns each colour into a grey of the same
luminance) — computed from what Textual renders from the theme and the
stylesheet, character by character, also after the colours are brought
down to a 256-colour terminal's (tmux's default).

Issue 26 measured, before this palette: NO_COLOR red suits 1.65:1, light
theme red suits 3.25:1, ``you may:`` 3.03:1, the hand's cursor 2.04:1."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rich.cells import cell_len
from rich.color import Color as RichColor
from rich.color import ColorSystem
from rich.segment import Segment
from textual._ansi_theme import MONOKAI
from textual.app import App

from tests.test_tui_mao_snapshots import _builder, _table
from tests.test_tui_snapshots import SCREENS, ScreenApp
from tui.palette import DARK, LIGHT, MINIMUM, contrast
from tui.screens.common import Confirm

DIM = 0.5
"""How far a terminal dims ``dim`` text toward its background (at most)."""


def _rgb(color: RichColor | None, fallback: tuple[int, int, int]) -> tuple[int, int, int]:
    if color is None or color.is_default:
        return fallback
    triplet = color.get_truecolor()
    return triplet.red, triplet.green, triplet.blue


def _in_256(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    down = RichColor.from_rgb(*rgb).downgrade(ColorSystem.EIGHT_BIT)
    triplet = down.get_truecolor()
    return triplet.red, triplet.green, triplet.blue


def _is_text(char: str) -> bool:
    """A character that carries words or cards, not a border or a shade."""
    if char.isspace():
        return False
    code = ord(char)
    return not (0x2500 <= code <= 0x259F or 0x2800 <= code <= 0x28FF or 0xE000 <= code <= 0xF8FF)


def _pairs(segment: Segment, page: tuple[int, int, int], ink: tuple[int, int, int]) -> Any:
    style = segment.style
    if style is None:
        return ink, page
    fg, bg = _rgb(style.color, ink), _rgb(style.bgcolor, page)
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = tuple(round(b + (f - b) * DIM) for f, b in zip(fg, bg, strict=True))  # type: ignore[assignment]
    return fg, bg


def too_faint(app: App[Any]) -> list[str]:
    """Every run of text on the screen below :data:`MINIMUM`, described."""
    theme = app.current_theme
    page = _rgb(RichColor.parse(theme.background or "#000000"), (0, 0, 0))
    ink = _rgb(RichColor.parse(theme.foreground or "#ffffff"), (255, 255, 255))
    found: list[str] = []
    screen = app.screen
    # a modal screen dims the screens behind it: those are not meant to be
    # read, only what lies in the modal's own widgets
    regions = [region for widget, (region, _) in screen._compositor.visible_widgets.items()
               if widget is not screen] if screen.is_modal else None  # fmt: skip
    for y, strip in enumerate(screen._compositor.render_strips()):
        x = 0
        for segment in strip:
            start = x
            x += cell_len(segment.text)
            if regions is not None and not any(
                r.y <= y < r.bottom and r.x <= start < r.right for r in regions
            ):
                continue
            text = "".join(c for c in segment.text if _is_text(c))
            if not text:
                continue
            fg, bg = _pairs(segment, page, ink)
            for name, (a, b) in (("truecolor", (fg, bg)), ("256", (_in_256(fg), _in_256(bg)))):
                ratio = contrast(a, b)
                if ratio < MINIMUM:
                    found.append(f"line {y} {text!r}: {ratio:.2f}:1 ({name} {a} on {b})")
    return found


async def _confirm(app: ScreenApp) -> None:
    make, _ = SCREENS["bomb"]
    await make(app)
    await app.push_screen(Confirm("Detonate now? The bomb goes off for everyone.", app.lang))


def _screens() -> dict[str, Any]:
    makers = {name: make for name, (make, _) in SCREENS.items()}
    makers.update({"confirm": _confirm, "mao": _table, "rule builder": _builder})
    return makers


PALETTES = {
    "dark": (DARK, False),
    "light": (LIGHT, False),
    "no_color-dark": (DARK, True),
    "no_color-light": (LIGHT, True),
}


@pytest.mark.parametrize("palette", sorted(PALETTES))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_screen_reads_at_4_5_to_1(
    palette: str, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    theme, no_color = PALETTES[palette]
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    faint: dict[str, list[str]] = {}

    async def look(name: str, make: Any) -> None:
        app = ScreenApp(make, lang)
        async with app.run_test(size=(100, 30)) as pilot:
            app.theme = theme
            await pilot.pause()
            await pilot.pause(0.1)
            found = too_faint(app)
            if name in ("bluff", "bomb", "mao"):  # the cursor on another card, one picked
                await pilot.press("right", "space")
                await pilot.pause()
                found += too_faint(app)
            if found:
                faint[name] = found

    async def all_screens() -> None:
        for name, make in _screens().items():
            await look(name, make)

    asyncio.run(all_screens())
    assert not faint, "\n".join(f"{name}: {line}" for name, ls in faint.items() for line in ls)


def test_the_check_finds_faint_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # the checker itself: NO_COLOR's grey of a pure red on near-black is
    # faint (issue 26's 1.65:1), and is found on a rendered screen
    assert contrast((0x3A, 0x3A, 0x3A), (0x12, 0x12, 0x12)) < MINIMUM
    monkeypatch.setenv("NO_COLOR", "1")

    async def run() -> list[str]:
        async def make(app: ScreenApp) -> None:
            make_bluff, _ = SCREENS["bluff"]
            await make_bluff(app)

        app = ScreenApp(make, "en")
        async with app.run_test(size=(100, 30)) as pilot:
            app.theme = "textual-dark"  # Textual's own colours, as before issue 26
            app.ansi_theme_dark = MONOKAI
            await pilot.pause(0.1)
            return too_faint(app)

    assert asyncio.run(run())

