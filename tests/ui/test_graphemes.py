"""The one grapheme definition (``regex``'s ``\\X``) and every UI place that asks it.

The oracle (:func:`painting_oracle.grapheme_boundaries`) walks ``\\X`` matches and counts
UTF-16 units by encoding, independently of :class:`Utf16Map` and of the helper's bisecting.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from painting_oracle import grapheme_boundaries, u16

from explorer.engine.offsets import Utf16Map
from explorer.ui.editor import cluster_bounds, snap_to_clusters
from explorer.ui.graphemes import WHOLE_LINE, Graphemes, boundaries, cluster_at

CASES = {
    "flag-after-emoji": "🦜🇫🇷",  # Qt's QTextLayout puts a boundary inside the flag
    "flags-run": "🇫🇷🇯🇵🇩🇪x🇺",
    "zwj-family": "👨\u200d👩\u200d👧\u200d👦 ok",
    "zwj-rainbow": "🏳\ufe0f\u200d🌈!",
    "skin-tone": "👍🏽👋🏿x",
    "devanagari": "हिन्दी क्षत्रिय",
    "hangul-jamo": "\u1112\u1161\u11ab\u1100\u1161 한",
    "combining": "e\u0301a\u0308\u0301\u0323 x",
    "flag-after-devanagari": "हि 🇫🇷",
    "crlf": "a\r\nb",
    "astral-cjk": "𠀋𠀋a",
}

TRICKY = ["a", " ", "e", "\u0301", "\u200d", "\ufe0f", "🇫", "🇷", "👍", "🏽", "👨", "🦜",
          "ह", "ि", "्", "न", "\u1112", "\u1161", "\u11ab", "한", "𠀋", "\r", "\n"]


def oracle_cluster(text: str, x16: int) -> tuple[int, int]:
    b = grapheme_boundaries(text)
    for s, e in pairwise(b):
        if s <= x16 < e:
            return s, e
    raise AssertionError(x16)


def check_against_oracle(text: str) -> None:
    g = Graphemes(text)
    n = u16(text)
    assert g.length16 == n
    bounds = grapheme_boundaries(text)
    assert [x for x in range(n + 1) if g.is_boundary(x)] == bounds
    for x in range(n + 1):
        assert g.down(x) == max(b for b in bounds if b <= x)
        assert g.up(x) == min(b for b in bounds if b >= x)
    for x in range(n):
        assert cluster_bounds(text, x) == oracle_cluster(text, x)


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_boundaries_match_the_oracle(text):
    check_against_oracle(text)


def test_flag_after_emoji_is_one_cluster_everywhere():
    text = "🦜🇫🇷"
    assert grapheme_boundaries(text) == [0, 2, 6]
    assert cluster_bounds(text, 4) == (2, 6)  # the second regional indicator
    assert snap_to_clusters(text, 4, 6) == (2, 6)
    assert cluster_at(text, 2) == (1, 3)  # code points
    assert boundaries(text) == [0, 1, 3]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), max_size=14).map("".join))
def test_random_tricky_text_matches_the_oracle(text):
    check_against_oracle(text.replace("\n", ""))  # a block never holds a line break
    # cluster_at (code points, whole document) gives the same clusters, line by line
    pos = 0
    for line in text.split("\n"):
        m = Utf16Map(line)
        for cp in range(len(line)):
            s16, e16 = oracle_cluster(line, m.to_utf16(cp))
            assert cluster_at(text, pos + cp) == (pos + m.to_codepoint(s16),
                                                  pos + m.to_codepoint(e16))
        if pos + len(line) < len(text):
            assert cluster_at(text, pos + len(line)) == (pos + len(line), pos + len(line) + 1)
        pos += len(line) + 1


def test_cluster_at_on_a_long_line_keeps_flags_paired():
    """Past WHOLE_LINE the search is windowed; a run of flags must still pair from its start."""
    line = "x" + "🇫🇷" * (WHOLE_LINE // 2 + 50)  # odd offset of the run start
    text = f"first\n{line}\nlast"
    base = text.index(line)
    for cp in (1, 2, 501, 502, len(line) - 1, len(line) - 2):
        s = 1 + (cp - 1) // 2 * 2
        assert cluster_at(text, base + cp) == (base + s, base + s + 2), cp
    assert cluster_at(text, base) == (base, base + 1)
    devanagari = "हिन्दी " * 1000
    text = f"{devanagari}\n"
    for cp in (0, 1, 3000, 5999):
        s16, e16 = oracle_cluster(devanagari, cp)  # BMP only: UTF-16 == code points
        assert cluster_at(text, cp) == (s16, e16)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), min_size=1, max_size=8).map("".join),
       st.integers(0, 2**32))
def test_cluster_bounds_on_a_long_line_match_the_oracle(piece, seed):
    """Past WHOLE_LINE, cluster_bounds searches near the column and maps only the line's
    start to UTF-16: the clusters are still the whole line's (emoji, flags, CJK Extension B,
    combining marks, Devanagari). Each repeat starts with a letter, so no cluster is longer
    than the search's reach (a cluster of thousands of combining marks is not: by design,
    as for cluster_at)."""
    import random

    piece = "a" + piece.replace("\n", "")
    line = piece * (WHOLE_LINE // len(piece) + 2)
    n = u16(line)
    cols = [*random.Random(seed).sample(range(n), 40), 0, n - 1, n, n + 3, -1]
    for x in cols:
        expected = oracle_cluster(line, x) if 0 <= x < n else (x, x)
        assert cluster_bounds(line, x) == expected, x


@pytest.mark.usefixtures("no_qt_warnings")
def test_outline_and_hover_of_a_flag_after_an_emoji_cover_the_whole_flag(qtbot, window):
    """Qt's layout put a boundary between the flag's two regional indicators after an emoji:
    the outline of the token inside the second one covered half the flag."""
    from conftest import click_table_row, wait_highlighted

    from explorer.ui.editor import SPLIT_NOTE

    text = "go 🦜🇫🇷 ok\n"
    window.set_text(text)
    wait_highlighted(qtbot, window)
    enc = window.tokenizer.encode(text)
    f = text.index("🇫🇷")
    f16 = u16(text[:f])
    inner = next(i for i, t in enumerate(enc.tokens) if (t.start, t.end) == (f + 1, f + 2))
    click_table_row(qtbot, window, inner)
    sel = window.editor.extraSelections()
    assert [(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in sel] == [
        (f16, f16 + 4)]
    line = text.split("\n")[0]
    tip = window.editor.tooltip_for(0, line, f16 + 2)  # hover over the second indicator
    assert tip.startswith(SPLIT_NOTE.format(n=2))
    for t in enc.tokens[inner - 1:inner + 1]:
        assert f"<td>{t.id}</td>" in tip


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=24))
def test_a_text_without_joiners_is_one_cluster_per_code_point(text):
    """Graphemes skips the ``\\X`` search where no code point can join another (JOINERS):
    such a text must be one cluster per code point by ``\\X`` too, and the result is the
    oracle's either way (random code points of the whole range: most texts have none)."""
    from explorer.ui.graphemes import JOINERS

    if JOINERS.search(text) is None:
        assert boundaries(text) == list(range(len(text) + 1))
    check_against_oracle(text.replace("\n", "").replace("\r", "").replace("\x85", "")
                         .replace("\u2028", "").replace("\u2029", ""))


def test_no_joiner_pairs_sampled_over_every_code_point():
    """Pairs (and triples) of code points none of which is a joiner never form a cluster,
    sampled over every plane (the rules that join two code points all need a joiner)."""
    import random

    from explorer.ui.graphemes import CLUSTER, JOINERS

    rng = random.Random(7)
    points = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    loners = [chr(c) for c in points if JOINERS.match(chr(c)) is None]
    assert 1_000_000 < len(loners) < len(points)
    for _ in range(20_000):
        text = "".join(rng.choice(loners) for _ in range(rng.choice((2, 3))))
        assert len(CLUSTER.findall(text)) == len(text), [hex(ord(c)) for c in text]
