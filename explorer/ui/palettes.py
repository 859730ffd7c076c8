"""Token colours and light/dark themes.

A token's colour is a background picked from a palette by a hash of its id, so the same id
has the same colour everywhere (editor, table, tooltips) and in every run. Every palette has
a light and a dark variant; :func:`contrast_ratio` (WCAG 2) lets tests check that the theme's
text colour stays readable (>= 4.5:1) on every background.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication


@dataclass(frozen=True, slots=True)
class TokenPalette:
    """Background colours for tokens, one list per theme."""

    name: str
    light: tuple[str, ...]
    dark: tuple[str, ...]

    def colors(self, dark: bool) -> tuple[str, ...]:
        """The colours for a dark or light theme."""
        return self.dark if dark else self.light


PALETTES: dict[str, TokenPalette] = {
    p.name: p
    for p in (
        TokenPalette(
            "Pastel",
            ("#ffd6d6", "#ffe8c2", "#fff6b0", "#d9f5c5", "#c6f0e4", "#cde7ff", "#dcd6ff",
             "#f6d3f2", "#e9e3d3", "#d3ecef", "#f2dfc9", "#e1f0c4"),
            ("#6b2b2b", "#6e4a1c", "#5f5a17", "#2f5a25", "#1d5a4c", "#1f4a73", "#463a7a",
             "#6a2d63", "#54503f", "#2b5459", "#634a2f", "#4a5e26"),
        ),
        TokenPalette(
            "Vivid",
            ("#ff9e9e", "#ffc47a", "#f7e463", "#a8e67f", "#7fe0c4", "#8cc8ff", "#b3a6ff",
             "#f59ae8", "#d4c29c", "#9fd9e0"),
            ("#8f1f1f", "#8a4b00", "#6e6400", "#2e6b12", "#0b6b55", "#14558f", "#4b36a3",
             "#8a1f7c", "#5e4f2a", "#1c6670"),
        ),
        TokenPalette(
            "Colour-blind safe",  # Okabe-Ito hues, lightened / darkened for text contrast
            ("#ffd9a6", "#c4e6fa", "#b8eadb", "#fbf6b0", "#b3d5ee", "#ffc9a8", "#f0cde0"),
            ("#7a4d00", "#1f5a7a", "#005c45", "#66620a", "#00457a", "#7a3500", "#6e3a57"),
        ),
    )
}
DEFAULT_PALETTE = "Pastel"

SLOT_MIX = 0x9E3779B1
"""Multiplier of :func:`color_index` (Fibonacci hashing spreads consecutive ids over the
palette)."""


def color_index(token_id: int, size: int) -> int:
    """Stable palette slot of ``token_id`` (same id, same slot, in every run)."""
    return ((token_id * SLOT_MIX) & 0xFFFFFFFF) % size


SHADE_DARKER = {False: 115, True: 155}
"""Theme (dark=True) -> ``QColor.darker`` factor of a colour's second shade. Darker in both
themes: the dark theme's light text keeps its contrast (tested >= 4.5:1)."""


def second_shade(color: QColor, dark: bool) -> QColor:
    """The second shade of a token colour: the same hue, visibly darker."""
    return color.darker(SHADE_DARKER[dark])


def shaded_slots(ids: Iterable[int], size: int, prev_slot: int = -1,
                 prev_shaded: bool = False) -> Iterator[tuple[int, bool]]:
    """``(slot, shaded)`` of each token id in text order: a token takes its colour's second
    shade when it lands on the same slot as the token before it and that one did not, so two
    neighbouring tokens never look like one (``the`` ``the``, or two ids hashed to the same
    colour). A run of same-slot tokens alternates plain, shaded, plain, ...; the shade depends
    on the run only, so an edit recolours nothing beyond the tokens it touches and their run.
    ``prev_slot``/``prev_shaded``: the state after the token before ``ids`` (-1: none).
    """
    for token_id in ids:
        slot = ((token_id * SLOT_MIX) & 0xFFFFFFFF) % size
        prev_shaded = slot == prev_slot and not prev_shaded
        prev_slot = slot
        yield slot, prev_shaded


def _luminance(c: QColor) -> float:
    def chan(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * chan(c.redF()) + 0.7152 * chan(c.greenF()) + 0.0722 * chan(c.blueF())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio of two colours (1..21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def theme_palette(dark: bool) -> QPalette:
    """An application palette for the Fusion style: light or dark."""
    pal = QPalette()
    if not dark:
        return QApplication.style().standardPalette() if QApplication.instance() else pal
    base, window, text = QColor("#1e1f22"), QColor("#2b2d30"), QColor("#e6e6e6")
    role = QPalette.ColorRole
    for r, c in ((role.Window, window), (role.WindowText, text), (role.Base, base),
                 (role.AlternateBase, QColor("#26282b")), (role.Text, text),
                 (role.Button, window), (role.ButtonText, text), (role.ToolTipBase, window),
                 (role.ToolTipText, text), (role.Highlight, QColor("#3d6fb4")),
                 (role.HighlightedText, QColor("#ffffff")), (role.PlaceholderText,
                                                              QColor("#8a8a8a")),
                 (role.Link, QColor("#6cb4ff")), (role.Light, QColor("#3c3f44")),
                 (role.Midlight, QColor("#34373b")), (role.Mid, QColor("#26282b")),
                 (role.Dark, QColor("#141517")), (role.Shadow, QColor("#000000"))):
        pal.setColor(r, c)
    # Disabled widgets must look disabled: dim text, flat buttons.
    disabled = QPalette.ColorGroup.Disabled
    for r, c in ((role.WindowText, DARK_DISABLED_TEXT), (role.Text, DARK_DISABLED_TEXT),
                 (role.ButtonText, DARK_DISABLED_TEXT), (role.Button, QColor("#26282b")),
                 (role.Base, QColor("#232427")), (role.Highlight, QColor("#3a3d42")),
                 (role.HighlightedText, DARK_DISABLED_TEXT)):
        pal.setColor(disabled, r, c)
    return pal


DARK_DISABLED_TEXT = QColor("#6f7378")
"""Text of disabled widgets in the dark theme (clearly dimmer than ``#e6e6e6``)."""


THEME_TEXT = {False: QColor("#000000"), True: QColor("#e6e6e6")}
"""Editor text colour per theme (dark=True); token backgrounds are checked against it."""
