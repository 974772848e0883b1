"""The colours of every screen: a dark and a light theme whose text reads
at least 4.5:1 against its background (WCAG 2's contrast ratio), with or
without colour (``NO_COLOR``: Textual turns every colour into a grey of
the same luminance, so the pairs below keep their distance in grey too).

Red suits, the hand's cursor, claims and verdicts are drawn with colour
names (``red``, ``yellow``, ``green``, ``cyan``) by the screens. Textual
maps a name either through the app's *ANSI theme* or, when it reads the
name itself, to the pure CSS colour (``red`` = #FF0000, 4.0:1 on white).
Each theme here comes with an ANSI theme whose colours read well on that
theme's background, and :class:`NamedColours` sends the pure CSS colours
to the same ones, so every screen's red is the palette's red.

:func:`contrast` and :func:`luminance` are WCAG 2.x's formulas; the tests
render every screen in each palette and check every character with them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from textual.color import Color
from textual.filter import LineFilter
from textual.theme import Theme

MINIMUM = 4.5
"""WCAG 2 AA contrast for text."""

DARK, LIGHT = "nodealer-dark", "nodealer-light"
THEMES = (DARK, LIGHT)
"""F3 goes round these."""

DARK_THEME = Theme(
    name=DARK,
    primary="#5FA8FF",
    secondary="#B48EFF",
    accent="#FFB454",
    warning="#FFB454",
    error="#FF7A7A",
    success="#6BD66B",
    foreground="#E6E6E6",
    background="#121212",
    surface="#1C1C1C",
    panel="#262626",
    dark=True,
    variables={
        "text-muted": "#B8B8B8",
        "text-disabled": "#9A9A9A",
        "footer-key-foreground": "#FFB454",
        "footer-description-foreground": "#E6E6E6",
        "footer-background": "#262626",
        "footer-item-background": "#262626",
        "block-cursor-foreground": "#121212",
        "block-cursor-background": "#5FA8FF",
        "block-cursor-text-style": "bold",
        "block-cursor-blurred-foreground": "#E6E6E6",
        "block-cursor-blurred-background": "#3A3A3A",
        "input-cursor-foreground": "#121212",
        "input-cursor-background": "#E6E6E6",
        "input-selection-background": "#5FA8FF 40%",
        "markdown-h1-color": "#5FA8FF",
        "markdown-h2-color": "#5FA8FF",
        "markdown-h3-color": "#E6E6E6",
        "markdown-code-foreground": "#FFB454",
    },
)

LIGHT_THEME = Theme(
    name=LIGHT,
    primary="#0B5CAD",
    secondary="#6B3FA0",
    accent="#8A4B00",
    warning="#8A4B00",
    error="#B00020",
    success="#1E6B1E",
    foreground="#1A1A1A",
    background="#FAFAFA",
    surface="#F0F0F0",
    panel="#E4E4E4",
    dark=False,
    variables={
        "text-muted": "#4A4A4A",
        "text-disabled": "#5A5A5A",
        "footer-key-foreground": "#094E94",
        "footer-description-foreground": "#1A1A1A",
        "footer-background": "#E4E4E4",
        "footer-item-background": "#E4E4E4",
        "block-cursor-foreground": "#FAFAFA",
        "block-cursor-background": "#0B5CAD",
        "block-cursor-text-style": "bold",
        "block-cursor-blurred-foreground": "#1A1A1A",
        "block-cursor-blurred-background": "#C8C8C8",
        "input-cursor-foreground": "#FAFAFA",
        "input-cursor-background": "#1A1A1A",
        "input-selection-background": "#0B5CAD 30%",
        "markdown-h1-color": "#0B5CAD",
        "markdown-h2-color": "#0B5CAD",
        "markdown-h3-color": "#1A1A1A",
        "markdown-code-foreground": "#8A4B00",
    },
)


def _ansi(background: str, foreground: str, normal: list[str], bright: list[str]) -> TerminalTheme:
    def rgb(hex_: str) -> tuple[int, int, int]:
        return int(hex_[1:3], 16), int(hex_[3:5], 16), int(hex_[5:7], 16)

    return TerminalTheme(rgb(background), rgb(foreground), [rgb(c) for c in normal],
                         [rgb(c) for c in bright])  # fmt: skip


# black, red, green, yellow, blue, magenta, cyan, white (then the bright ones)
ANSI_DARK = _ansi(
    "#121212", "#E6E6E6",
    ["#121212", "#FF7A7A", "#6BD66B", "#FFD75F", "#5FA8FF", "#D78CFF", "#5FD7D7", "#E6E6E6"],
    ["#8A8A8A", "#FF9E9E", "#8AE68A", "#FFE38A", "#8AC0FF", "#E3AEFF", "#8AE6E6", "#FFFFFF"],
)  # fmt: skip
ANSI_LIGHT = _ansi(
    "#FAFAFA", "#1A1A1A",
    ["#1A1A1A", "#B00020", "#1E6B1E", "#7A5200", "#0B5CAD", "#8A2BA0", "#006B6B", "#5A5A5A"],
    ["#4A4A4A", "#A0001C", "#185C18", "#6B4700", "#094E94", "#7A2590", "#005C5C", "#3A3A3A"],
)  # fmt: skip


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0 black … 1 white).

    >>> luminance((255, 255, 255)), luminance((0, 0, 0))
    (1.0, 0.0)
    """

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio of two colours (1 … 21).

    >>> round(contrast((255, 255, 255), (0, 0, 0)), 1)
    21.0
    >>> round(contrast((119, 119, 119), (255, 255, 255)), 2)
    4.48
    """
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


NAMED = {
    (255, 0, 0): 1,  # red
    (0, 128, 0): 2,  # green
    (0, 255, 0): 2,  # lime
    (255, 255, 0): 3,  # yellow
    (0, 0, 255): 4,  # blue
    (255, 0, 255): 5,  # magenta
    (0, 255, 255): 6,  # cyan
}
"""The pure CSS colours a colour name becomes -> its ANSI number."""


class NamedColours(LineFilter):
    """Draws the pure CSS colours of colour names (see :data:`NAMED`) in the
    current ANSI theme's colours. Runs before ``NO_COLOR``'s grey filter,
    so the greys are those of the palette's colours."""

    def __init__(self, ansi_theme: Callable[[], TerminalTheme]) -> None:
        super().__init__()
        self._ansi_theme = ansi_theme

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        theme = self._ansi_theme()
        return [
            Segment(text, None if style is None else _named(style, theme), control)
            for text, style, control in segments
        ]


@lru_cache(1024)
def _named(style: Style, theme: TerminalTheme) -> Style:
    color, bgcolor = style.color, style.bgcolor
    new_color = _swap(color, theme)
    new_bgcolor = _swap(bgcolor, theme)
    if new_color is color and new_bgcolor is bgcolor:
        return style
    return style + Style.from_color(new_color, new_bgcolor)


def _swap(color: RichColor | None, theme: TerminalTheme) -> RichColor | None:
    if color is None or color.triplet is None:
        return color
    number = NAMED.get(tuple(color.triplet))
    if number is None:
        return color
    return RichColor.from_triplet(theme.ansi_colors[number])
