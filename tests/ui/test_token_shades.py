"""Neighbouring tokens never share a background: a token with the same colour as the one
before it takes that colour's second shade (runs alternate), in the editor and in the oracle."""

from __future__ import annotations

from itertools import pairwise
from types import SimpleNamespace

import pytest
from conftest import wait_highlighted
from painting_oracle import expected_ranges, painted_ranges
from PySide6.QtGui import QColor, QTextCursor

from explorer.ui.palettes import (
    PALETTES,
    THEME_TEXT,
    color_index,
    contrast_ratio,
    second_shade,
    shaded_slots,
)
from explorer.ui.token_painter import RUN_LOOKBACK, TokenFormats, shade_state

pytestmark = pytest.mark.usefixtures("no_qt_warnings")


def test_runs_of_one_slot_alternate_and_other_slots_reset():
    size = 12
    a = 5
    b = next(i for i in range(1, 100) if color_index(i, size) != color_index(a, size))
    twin = next(i for i in range(a + 1, 10_000) if color_index(i, size) == color_index(a, size))
    ids = [a, a, a, b, a, twin, a, b, b]
    shaded = [s for _, s in shaded_slots(ids, size)]
    assert shaded == [False, True, False, False, False, True, False, False, True]
    # Resuming from a state gives what one pass gives.
    first = list(shaded_slots(ids[:5], size))
    slot, last = first[-1]
    assert list(shaded_slots(ids[5:], size, slot, last)) == list(shaded_slots(ids, size))[5:]


@pytest.mark.parametrize("palette", PALETTES)
@pytest.mark.parametrize("dark", [False, True])
def test_second_shades_stay_readable_and_distinct(palette, dark):
    colors = [QColor(c) for c in PALETTES[palette].colors(dark)]
    for c in colors:
        shade = second_shade(c, dark)
        assert contrast_ratio(shade, THEME_TEXT[dark]) >= 4.5, (palette, c.name())
        assert contrast_ratio(shade, c) >= 1.15, (palette, c.name())  # visibly another tone
    formats = TokenFormats(palette, dark)
    assert formats.color(7, True) != formats.color(7)


def adjacent_same_colour(window) -> list[tuple[int, int]]:
    """(block, UTF-16 position) where two touching ranges share a background."""
    out = []
    for block, ranges in painted_ranges(window).items():
        for (s0, n0, c0), (s1, _, c1) in pairwise(ranges):
            if s0 + n0 == s1 and c0 == c1:
                out.append((block, s1))
    return out


def test_repeated_tokens_show_every_boundary(qtbot, window):
    text = ("the the the the the\n" + " the" * 9 + "\n" + "ab" * 40 + "\n"
            + "=" * 64 + "\n" + "日本語の日本語の日本語\n" + "😀😀😀😀 👍🏽👍🏽\n" + "\n\n\n"
            + "x = [0, 0, 0, 0, 0, 0]\n")
    window.set_text(text)
    wait_highlighted(qtbot, window)
    painted = painted_ranges(window)
    assert painted == expected_ranges(window)
    assert adjacent_same_colour(window) == []
    # The repeated " the" line really does use both shades of one colour.
    the = window.tokenizer.encode(" the").tokens[0].id
    formats = window.painter.formats
    colours = {c for _, _, c in painted[1]}
    assert {formats.color(the).name(), formats.color(the, True).name()} <= colours


def test_an_edit_reshades_a_run_that_goes_on_past_its_line(qtbot, window):
    """cl100k: "\\n" (198) and "to" (998) share a colour, "the" (1820) does not. In
    "the\\nto\\n" the second line's "to" is shaded (after an unshaded "\\n"); typing "to" over
    "the" shades the "\\n" instead, so "to" on the next line, a line the edit did not touch,
    turns plain."""
    formats = window.painter.formats
    nl, to, the = (window.tokenizer.encode(s).tokens[0].id for s in ("\n", "to", "the"))
    assert formats.color(nl) == formats.color(to) != formats.color(the)
    window.set_text("the\nto\n")
    wait_highlighted(qtbot, window)
    assert painted_ranges(window)[1] == [(0, 2, formats.color(to, True).name())]
    cur = window.editor.textCursor()
    cur.setPosition(0)
    cur.setPosition(3, QTextCursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cur)
    qtbot.keyClicks(window.editor, "to")
    wait_highlighted(qtbot, window)
    assert window.text() == "to\nto\n"
    assert painted_ranges(window)[1] == [(0, 2, formats.color(to).name())]
    assert painted_ranges(window) == expected_ranges(window)


def test_a_keystroke_works_out_its_own_line_and_only_the_head_of_the_next(
        qtbot, window, monkeypatch):
    """The line after an edit holds the tokens it held: when its first token's range is
    the one it shows, its colours all stay, so it is not worked out whole (a long line of
    a complex script cost ~1 ms a keystroke)."""
    from explorer.ui import token_painter

    window.set_text("alpha beta\ngamma delta\nepsilon zeta\n")
    wait_highlighted(qtbot, window)
    calls: list[tuple[int, bool]] = []
    real = token_painter.block_ranges

    def counting(doc, line, text, formats, first_only=False):
        calls.append((line, first_only))
        return real(doc, line, text, formats, first_only)

    monkeypatch.setattr(token_painter, "block_ranges", counting)
    cur = window.editor.textCursor()
    cur.setPosition(len("alpha beta\ngamma"))
    window.editor.setTextCursor(cur)
    qtbot.keyClicks(window.editor, "x")
    wait_highlighted(qtbot, window)
    assert window.text() == "alpha beta\ngammax delta\nepsilon zeta\n"
    assert painted_ranges(window) == expected_ranges(window)
    assert (1, False) in calls and (2, True) in calls and (2, False) not in calls, calls


class _CountingIds(list):
    """A segment's ids that count how many are read."""

    reads = 0

    def __getitem__(self, i):
        _CountingIds.reads += 1
        return super().__getitem__(i)


def test_a_long_run_is_followed_back_only_so_far():
    """Thousands of blank lines, each one ``<0x0A>`` token of the same id: a block's first
    token must not walk back to the start of the run (painting every block was quadratic)."""
    segments = [SimpleNamespace(ids=_CountingIds([13] * 50_000)) for _ in range(3)]
    doc = SimpleNamespace(segments=segments)
    _CountingIds.reads = 0
    slot, _ = shade_state(doc, 2, 40_000, 12)
    assert slot == color_index(13, 12)
    assert _CountingIds.reads <= RUN_LOOKBACK + 2
    # a short run is followed exactly, across segments
    short = [SimpleNamespace(ids=[1, 13, 13]), SimpleNamespace(ids=[13, 5])]
    states = list(shaded_slots([1, 13, 13, 13], 12))  # 13 plain, shaded, plain
    assert shade_state(SimpleNamespace(segments=short), 1, 1, 12) == states[-1]
