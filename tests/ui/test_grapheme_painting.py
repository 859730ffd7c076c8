"""Token colours never cut a user-perceived character (grapheme cluster) in two.

Qt shapes every format range on its own, so a colour edge inside a cluster shows a Devanagari
vowel sign on a dotted circle, a flag as two letters, a ZWJ family as separate people. The
painter puts range edges only at grapheme boundaries; a cluster touched by several tokens gets
one "split character" range over the whole of it; the editor's hover lists every token inside
such a cluster and its outline covers the whole cluster.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from conftest import click_table_row, wait_highlighted
from hypothesis import given, settings
from hypothesis import strategies as st
from painting_oracle import (
    expected_ranges,
    grapheme_boundaries,
    painted_ranges,
    shades,
    u16,
)
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor

from explorer.bundled import resource_path
from explorer.engine.offsets import Utf16Map
from explorer.ui.editor import SPLIT_NOTE, cluster_bounds, snap_to_clusters
from explorer.ui.token_painter import (
    SPLIT_COLORS,
    TokenFormats,
    _cut_out,
    block_ranges,
    split_clusters,
)

pytestmark = pytest.mark.usefixtures("no_qt_warnings")

CLUSTERS = {
    "devanagari": "हिन्दी",
    "thai": "เป็นมนุษย์",
    "family": "👨\u200d👩\u200d👧",
    "flag": "🇫🇷",
    "skin-tone": "👍🏽",
    "combining": "e\u0301",
    "cjk-ext-b": "𠀋",
    "flag-after-devanagari": "हि 🇫🇷",  # QTextBoundaryFinder gets this wrong
    "flag-after-emoji": "🦜🇫🇷",  # QTextLayout gets this wrong
    "hangul-jamo": "\u1112\u1161\u11ab",  # conjoining L V T: one syllable
    "zwj-rainbow-flag": "🏳\ufe0f\u200d🌈",
}


def line_of(cluster: str) -> str:
    return f"a {cluster} b {cluster}{cluster} end\nok {cluster}\n"


def assert_edges_on_graphemes(window) -> None:
    block = window.editor.document().begin()
    while block.isValid():
        bounds = set(grapheme_boundaries(block.text()))
        for r in block.layout().formats():
            assert r.start in bounds and r.start + r.length in bounds, (block.text(), r.start,
                                                                        r.length)
        block = block.next()


@pytest.mark.parametrize("cluster", CLUSTERS.values(), ids=CLUSTERS.keys())
def test_range_edges_are_grapheme_boundaries(qtbot, window, cluster):
    text = line_of(cluster)
    window.set_text(text)
    wait_highlighted(qtbot, window)
    assert_edges_on_graphemes(window)
    painted = painted_ranges(window)
    assert painted == expected_ranges(window)
    # cl100k splits each of these characters between tokens (bytes or code points): the whole
    # character is one range in the split style, exactly where the character is.
    split = window.painter.formats.split_color.name()
    start, n = u16("a "), u16(cluster)
    inside = [r for r in painted[0] if r[2] == split and start <= r[0] < start + n]
    assert inside, painted[0]
    if len(grapheme_boundaries(cluster)) == 2:  # one cluster: exactly its span
        assert inside == [(start, n, split)]


@pytest.mark.parametrize("cluster", CLUSTERS.values(), ids=CLUSTERS.keys())
def test_unsplit_tokens_keep_their_colour_at_exact_utf16_ranges(qtbot, window, cluster):
    text = line_of(cluster)
    window.set_text(text)
    wait_highlighted(qtbot, window)
    enc = window.tokenizer.encode(text)
    painted = {(s, n): c for s, n, c in painted_ranges(window)[0]}
    colors = window.painter.formats
    shaded = shades(colors, [t.id for t in enc.tokens])
    for t, shade in zip(enc.tokens, shaded, strict=True):
        if t.token_bytes in (b" end", b" b"):  # whole-character tokens after the cluster
            s16 = u16(text[:t.start])
            assert painted[(s16, u16(text[t.start:t.end]))] == colors.color(t.id, shade).name()


def test_a_cluster_in_one_token_is_not_split(qtbot, window):
    """o200k keeps " हिन्दी" as one token: one range in that token's colour, no split style."""
    with qtbot.waitSignal(window.tokenizer_changed, timeout=30000):
        window.open_source("bundled:o200k_base")
    text = "a हिन्दी b\n"
    window.set_text(text)
    wait_highlighted(qtbot, window)
    tok = next(t for t in window.tokenizer.encode(text).tokens if "हिन्दी" in t.text)
    ranges = painted_ranges(window)[0]
    assert (u16(text[:tok.start]), u16(text[tok.start:tok.end]),
            window.painter.formats.color(tok.id).name()) in ranges
    assert window.painter.formats.split_color.name() not in {c for _, _, c in ranges}
    assert ranges == expected_ranges(window)[0]


def test_split_style_is_consistent_in_both_themes(qtbot, window):
    from explorer.ui.palettes import PALETTES, THEME_TEXT, contrast_ratio

    for dark in (False, True):
        f = TokenFormats("Pastel", dark)
        assert f.split_color.name() == SPLIT_COLORS[dark][0]
        assert f.split.underlineStyle() == f.split.UnderlineStyle.DashUnderline
        assert contrast_ratio(f.split_color, THEME_TEXT[dark]) >= 4.5
        for p in PALETTES.values():  # never one of the token colours
            assert f.split_color.name() not in p.colors(dark)
    window.set_text(line_of("🇫🇷"))
    window.set_dark(True)
    wait_highlighted(qtbot, window)
    assert SPLIT_COLORS[True][0] in {c for _, _, c in painted_ranges(window)[0]}
    assert painted_ranges(window) == expected_ranges(window)
    assert_edges_on_graphemes(window)


def test_split_clusters_unit_cases():
    text = "a👍🏽b"  # clusters: a | 👍🏽 (2 code points) | b
    # a token edge between the hand and the skin tone: the whole cluster is split
    assert split_clusters(text, [(0, 2), (2, 3), (3, 4)]) == [(1, 3)]
    # a token wholly inside the cluster
    assert split_clusters(text, [(0, 1), (1, 2), (2, 3), (3, 4)]) == [(1, 3)]
    # whole clusters: nothing split
    assert split_clusters(text, [(0, 1), (1, 3), (3, 4)]) == []
    # overlapping tokens (byte-level BPE: both touch the cluster)
    assert split_clusters(text, [(0, 3), (1, 3), (3, 4)]) == [(1, 3)]
    # tokens sharing one span (partial UTF-8 of one character)
    assert split_clusters("𠀋x", [(0, 1), (1, 2)], shared=[0]) == [(0, 1)]
    # a shared span inside a multi-code-point cluster takes the whole cluster
    assert split_clusters(text, [(0, 1), (1, 2), (2, 3), (3, 4)], shared=[1]) == [(1, 3)]
    # overlapping tokens where every code point is a cluster: just the overlap
    assert split_clusters("abc", [(0, 2), (1, 3)]) == [(1, 2)]
    # neighbouring split clusters merge into one run
    t2 = "🇫🇷🇯🇵"
    assert split_clusters(t2, [(0, 1), (1, 3), (3, 4)]) == [(0, 4)]


def test_graphemes_agree_with_uax29_on_the_samples():
    from explorer.bundled import resource_path
    from explorer.ui.graphemes import Graphemes

    for name in ("multilingual", "emoji"):
        for line in resource_path(f"samples/{name}.txt").read_text("utf-8").splitlines():
            n = Utf16Map(line).length_utf16
            g = Graphemes(line)
            assert g.length16 == n
            assert [x for x in range(n + 1) if g.is_boundary(x)] == grapheme_boundaries(line)


def test_editor_cluster_helpers():
    text = "x हिन्दी 🇫🇷"
    assert cluster_bounds(text, 2) == (2, 4)  # हि
    assert cluster_bounds(text, 3) == (2, 4)
    assert cluster_bounds(text, 5) == (4, 8)  # न्दी (one cluster under Unicode 15.1 rules)
    f = text.index("🇫🇷")
    assert cluster_bounds(text, f + 2) == (f, f + 4)
    assert snap_to_clusters(text, f + 2, f + 4) == (f, f + 4)
    assert snap_to_clusters("plain", 1, 3) == (1, 3)


FLAG_TEXT = "go 🇫🇷 now\n"


def test_hover_on_a_split_cluster_lists_every_token(qtbot, window):
    window.set_text(FLAG_TEXT)
    wait_highlighted(qtbot, window)
    enc = window.tokenizer.encode(FLAG_TEXT)
    f = FLAG_TEXT.index("🇫🇷")
    inside = [t for t in enc.tokens if t.start < f + 2 and t.end > f]
    assert len(inside) > 2  # cl100k: the flag is spread over several byte tokens
    line = FLAG_TEXT.split("\n")[0]
    for col in (u16(line[:f]), u16(line[:f]) + 2):  # either half of the flag
        tip = window.editor.tooltip_for(0, line, col)
        assert tip.startswith(SPLIT_NOTE.format(n=2))
        for t in inside:  # every token that makes the flag up, with its bytes
            assert f"<td>{t.id}</td>" in tip
            assert t.token_bytes.hex(" ").upper() in tip
    # a real hover point: the mouse over the second half of the flag
    cur = QTextCursor(window.editor.document())
    cur.setPosition(u16(line[:f]))
    left = window.editor.cursorRect(cur).center()
    cur.setPosition(u16(line[:f + 2]))
    right = window.editor.cursorRect(cur).center()
    point = QPoint((left.x() + 3 * right.x()) // 4, left.y())
    assert window.editor.char_at(point) == (0, u16(line[:f]))
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    vp = window.editor.viewport()
    QApplication.sendEvent(vp, QHelpEvent(QHelpEvent.Type.ToolTip, point, vp.mapToGlobal(point)))
    assert QToolTip.isVisible() and QToolTip.text().startswith(SPLIT_NOTE.format(n=2))
    QToolTip.hideText()
    # past the end of the line there is no token
    assert window.editor.char_at(QPoint(right.x() + 400, left.y())) is None


def test_click_and_table_link_tokens_inside_a_cluster(qtbot, window):
    window.set_text(FLAG_TEXT)
    wait_highlighted(qtbot, window)
    enc = window.tokenizer.encode(FLAG_TEXT)
    f = FLAG_TEXT.index("🇫🇷")
    f16 = u16(FLAG_TEXT[:f])
    # a click on the flag makes its first token current
    cur = QTextCursor(window.editor.document())
    cur.setPosition(f16)
    rect = window.editor.cursorRect(cur)
    qtbot.mouseClick(window.editor.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(rect.center().x() + 3, rect.center().y()))
    first = next(i for i, t in enumerate(enc.tokens) if t.end > f and t.start <= f)
    assert window.linker.current == first
    # a token wholly inside the flag (the second regional indicator): selecting its row makes
    # it current and outlines the whole flag, never half of it
    inner = next(i for i, t in enumerate(enc.tokens) if (t.start, t.end) == (f + 1, f + 2))
    click_table_row(qtbot, window, inner)
    assert window.linker.current == inner
    sel = window.editor.extraSelections()
    assert len(sel) == 1
    assert (sel[0].cursor.selectionStart(), sel[0].cursor.selectionEnd()) == (f16, f16 + 4)
    # and the table lists it with its own bytes
    row_bytes = window.table_model.index(inner, 3).data()
    assert enc.tokens[inner].token_bytes.hex(" ").upper()[:8] in row_bytes.upper()


def test_colours_shifted_for_an_edit_stay_on_whole_clusters(qtbot, window, worker_results):
    """Before the result lands, a ZWJ typed between two emoji joins them into one cluster:
    the shifted colours must not keep an edge inside it."""
    text = "a 😀😀 b\n"  # cl100k: " 😀" is one token, the second 😀 three bytes
    window.set_text(text)
    wait_highlighted(qtbot, window)
    block = window.editor.document().begin()
    cur = QTextCursor(window.editor.document())
    cur.setPosition(u16("a 😀"))
    cur.insertText("\u200d")  # synchronous: the new result cannot have landed yet
    window.paint_hold.expired.emit()  # as if it came too late: the shift is made now
    bounds = set(grapheme_boundaries(block.text()))
    ranges = [(r.start, r.length) for r in block.layout().formats()]
    assert ranges and all(s in bounds and s + n in bounds for s, n in ranges), ranges
    assert all(a[0] + a[1] <= b[0] for a, b in pairwise(ranges))
    wait_highlighted(qtbot, window)
    assert painted_ranges(window) == expected_ranges(window)
    assert_edges_on_graphemes(window)


def _cut_out_by_points(spans, split, split_format):
    """Reference for ``_cut_out``: each code point outside the runs keeps its token's
    format, runs of neighbouring code points of one token become one span."""
    inside = {x for s, e in split for x in range(s, e)}
    out = [(s, e, split_format) for s, e in split]
    for s, e, fmt in spans:
        run = None
        for x in range(s, e):
            if x in inside:
                run = None
                continue
            if run is not None and run[1] == x:
                run[1] = x + 1
            else:
                run = [x, x + 1]
                out.append(run)
                run.append(fmt)
    return sorted(((s, e, f) for s, e, f in out), key=lambda r: r[0])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=30), st.data())
def test_cut_out_keeps_every_code_point_outside_the_split_runs(widths, data):
    # token spans in order (never empty), some overlapping the one before (byte-level BPE)
    spans, pos = [], 0
    for k, w in enumerate(widths):
        back = data.draw(st.integers(0, min(pos, 1)))
        spans.append((pos - back, pos + w, f"fmt{k}"))
        pos += w
    edges = sorted(set(data.draw(st.lists(st.integers(0, max(pos, 1)), max_size=8))))
    split = [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=False) if b > a]
    got = _cut_out(spans, split, "split")
    assert got == _cut_out_by_points(spans, split, "split")


def test_flagged_tokens_keep_their_format_on_the_fast_path(qapp):
    from explorer.engine.formats import load_tokenizer
    from explorer.engine.generators import run_to_end
    from explorer.workers.doctokens import encode_document

    tok = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    text = "hello <|endoftext|> world"
    doc = run_to_end(encode_document(tok, text))
    formats = TokenFormats()
    ranges = block_ranges(doc, 0, text, formats)
    special = [r for r in ranges if r.format.fontUnderline()]
    assert [(r.start, r.length) for r in special] == [(6, len("<|endoftext|>"))]
    assert all(r.format in formats.plain_formats() for r in ranges if r not in special)


def test_a_partial_result_cut_inside_a_line_colours_the_whole_lines_before_it(qapp):
    """A first window that finds no line start to cut at (a Unigram model's tokens crossing
    every line start) shows the text's start as one segment ending at an exact point inside
    a line (``docstore.head_segment``): the lines before are coloured as the full result
    colours them, the cut line up to the cut (as the full result colours that part), the
    lines after are left for it."""
    from explorer.engine.formats import load_tokenizer
    from explorer.engine.generators import run_to_end
    from explorer.workers.docstore import DocTokens, head_segment
    from explorer.workers.doctokens import encode_document

    tok = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    lines = [f"line {k}: naïve 😀 e\u0301 {{'x': [{k}, {k + 1}]}}" for k in range(8)]
    text = "\n".join(lines)
    toks = tok.encode_compact(text)
    cut_line = 5
    inside = text.index(lines[cut_line]) + 10
    end = next(s for s in toks.starts if s >= inside)
    partial = DocTokens(tok, text, [head_segment(text, toks, end)])
    final = run_to_end(encode_document(tok, text))
    formats = TokenFormats()
    cut16 = len(lines[cut_line][:end - text.index(lines[cut_line])].encode("utf-16-le")) // 2
    for k, line in enumerate(lines):
        got = block_ranges(partial, k, line, formats)
        if k <= cut_line:
            want = block_ranges(final, k, line, formats)
            assert got is not None and want is not None
            if k == cut_line:
                want = [r for r in want if r.start + r.length <= cut16]
                assert want and max(r.start + r.length for r in got) == cut16
            assert [(r.start, r.length, r.format) for r in got] == \
                [(r.start, r.length, r.format) for r in want]
        else:
            assert got is None
    # a final result's last line must be the block's whole text
    assert block_ranges(final, 7, lines[7] + "x", formats) is None
