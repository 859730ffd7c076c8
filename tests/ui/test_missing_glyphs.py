"""Characters no installed font can draw are found, boxed with their code point, and the status
bar names their scripts and the packages that add a font.

The oracle is fontconfig, asked directly (``fc-list :charset=XXXX``: which installed fonts
have the character), independent of Qt. This machine (and CI, the same kind) has no
Devanagari, Thai, Hangul or colour-emoji font; the test fails if none of its candidate
characters lacks a font, rather than passing without testing anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import wait_highlighted
from PySide6.QtGui import QFont, QFontDatabase

from explorer.ui.font_packages import RARE_HAN, package_for, script_of
from explorer.ui.missing_glyphs import (
    GlyphCoverage,
    distinct_non_ascii,
    hex_rows,
    needs_glyph,
    status_text,
)

ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = "Aé Жλ ע ب न ক ภ 한 東 あ ❤ 👍 𠀀 \U000F0000"
HINDI = "नमस्ते"


def fontconfig_has(cp: int) -> bool:
    tool = shutil.which("fc-list")
    if tool is None:
        msg = "fc-list is missing: apt-get install -y fontconfig"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    out = subprocess.run([tool, f":charset={cp:x}", "family"], capture_output=True, text=True,
                         check=True).stdout
    return bool(out.strip())


def test_coverage_agrees_with_fontconfig(qapp):
    coverage = GlyphCoverage(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    points = [ord(c) for c in CANDIDATES if c != " "]
    expected = {cp: fontconfig_has(cp) for cp in points}
    assert {cp: coverage.drawable(cp) for cp in points} == expected
    assert not all(expected.values()), "every candidate has a font here: pick another script"
    assert expected[ord("A")] and not expected[0xF0000]


def test_characters_without_glyph_are_never_reported(qapp):
    coverage = GlyphCoverage(QFont())
    # ZWJ, variation selector 16, a tab, no-break space, line separator, a tag character
    assert coverage.missing("a\u200d\ufe0f\t\u00a0\u2028\U000E0041b") == []


def test_window_boxes_each_missing_code_point_and_names_the_package(qtbot, errors):
    from explorer.ui.main_window import MainWindow

    if fontconfig_has(ord("न")):
        pytest.skip("this machine has a Devanagari font")  # the oracle test still runs
    w = MainWindow(report_error=errors, autosave=False)
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    w.restore(text=f"hello {HINDI} world\n")
    wait_highlighted(qtbot, w)
    glyphs = w.missing_glyphs
    qtbot.waitUntil(lambda: bool(glyphs.missing), timeout=5000)
    assert glyphs.missing == {ord(c) for c in HINDI}
    assert list(glyphs.by_script) == ["Devanagari"]
    label = glyphs.label.text()
    assert "No font for Devanagari" in label and "fonts-noto-core" in label
    assert "google-noto-sans-devanagari-fonts" in label
    assert "U+0928" in glyphs.label.toolTip()
    assert glyphs.label.isVisible()

    boxes = glyphs.boxes()
    assert sorted(cp for _, cp in boxes) == sorted(ord(c) for c in HINDI)
    # A repaint of part of the viewport (one edited line) looks only at the lines in it.
    line = boxes[0][0].toRect()
    assert sorted(cp for _, cp in glyphs.boxes(line)) == sorted(ord(c) for c in HINDI)
    assert glyphs.boxes(line.translated(0, 3 * line.height())) == []
    with_boxes = w.editor.viewport().grab().toImage()
    saved, glyphs.missing = glyphs.missing, set()  # the overlay paints nothing now
    plain = w.editor.viewport().grab().toImage()
    glyphs.missing = saved
    changed = {(x, y) for x in range(plain.width()) for y in range(plain.height())
               if plain.pixel(x, y) != with_boxes.pixel(x, y)}
    assert changed, "no hex box painted"
    for rect, cp in boxes:
        inside = {(x, y) for x, y in changed if rect.adjusted(-1, -1, 1, 1).contains(x, y)}
        assert len(inside) >= 10, f"U+{cp:04X}: its box was not painted"
    outside = [p for p in changed
               if not any(r.adjusted(-1, -1, 1, 1).contains(*p) for r, _ in boxes)]
    assert outside == []  # nothing painted anywhere else

    w.restore(text="only ascii here\n")
    wait_highlighted(qtbot, w)
    qtbot.waitUntil(lambda: not glyphs.missing, timeout=5000)
    assert glyphs.label.text() == ""
    w.controller.shutdown()


def test_qt_font_probe_messages_are_hidden_but_can_be_brought_back(tmp_path):
    text = tmp_path / "hindi.txt"
    text.write_text(f"{HINDI}\n", encoding="utf-8")

    def run(**env: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "explorer", "--screenshot", str(tmp_path / "x.png"),
             "--text-file", str(text)],
            env={**os.environ, "PYTHONPATH": str(ROOT), **env}, capture_output=True,
            text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stderr

    if fontconfig_has(ord("न")):
        pytest.skip("this machine has a Devanagari font: Qt has nothing to report")
    assert "OpenType support missing" not in run()
    assert "OpenType support missing" in run(QT_LOGGING_RULES="qt.text.font.db.info=true")


def test_scripts_and_packages():
    assert script_of("न") == "Devanagari"
    assert package_for("Devanagari").debian == "fonts-noto-core"
    assert package_for("Devanagari").fedora == "google-noto-sans-devanagari-fonts"
    assert script_of("ᱚ") == "OlChiki"
    assert package_for("OlChiki").fedora == "google-noto-sans-ol-chiki-fonts"
    assert package_for("Tibetan").fedora == "google-noto-serif-tibetan-fonts"
    assert script_of("東") == "Han" and package_for("Han").debian == "fonts-noto-cjk"
    assert script_of("𠀀") == RARE_HAN and package_for(RARE_HAN).debian == "fonts-hanazono"
    assert script_of("👍") == "Emoji"
    assert package_for("Emoji").debian == "fonts-noto-color-emoji"
    assert script_of("\U000F0000") == "" and package_for("") is None


def test_status_text_lists_scripts_then_packages():
    label, tooltip = status_text({"Devanagari": [0x928], "Emoji": [0x1F44D],
                                  "": [0xF0000]})
    assert label == ("⚠ No font for Devanagari, Emoji, other characters · Debian: "
                     "fonts-noto-core fonts-noto-color-emoji · Fedora: "
                     "google-noto-sans-devanagari-fonts google-noto-color-emoji-fonts")
    assert "U+F0000" in tooltip and "no font package known" in tooltip
    assert status_text({}) == ("", "")


def test_hex_rows_and_large_text_scan():
    assert hex_rows(0x928) == ("09", "28")
    assert hex_rows(0x1F44D) == ("01F", "44D")
    text = ("abc नमस्ते 👍 é\n" * 20_000)
    assert len(text) > 100_000
    assert distinct_non_ascii(text) == sorted({ord(c) for c in text if ord(c) > 0x7F})


def test_large_text_scan_across_slices(monkeypatch):
    """A long text is scanned a slice at a time: characters in any slice are found, ASCII
    slices are skipped, a surrogate pair is never cut (slices are of code points)."""
    import explorer.ui.missing_glyphs as missing_glyphs

    monkeypatch.setattr(missing_glyphs, "SCAN_CHARS", 1000)
    text = "a" * 250_000 + "é" + "b" * 2999 + "𠀋" + "ü" * 3 + "c" * 5000 + "\u0928"
    assert distinct_non_ascii(text) == [0xE9, 0xFC, 0x928, 0x2000B]


def clusters_walked(layout, text: str, missing: set[int]) -> list[tuple[float, float, int]]:
    """Reference boxes of a block: every cluster walked from column 0 with Qt's cursor
    positions (the way the boxes were found before they were found per visual line)."""
    cols = [0]
    for ch in text:
        cols.append(cols[-1] + (2 if ord(ch) > 0xFFFF else 1))
    out = []
    i = 0
    while i < len(text):
        end = max(layout.nextCursorPosition(cols[i]), cols[i] + 1)
        j = i
        while j < len(text) and cols[j] < end:
            j += 1
        cluster = [ord(c) for c in text[i:j] if needs_glyph(ord(c))]
        if any(cp in missing for cp in cluster):
            line = layout.lineForTextPosition(cols[i])
            x1, x2 = line.cursorToX(cols[i])[0], line.cursorToX(end)[0]
            step = (x2 - x1) / len(cluster)
            out += [(round(min(x1 + m * step, x1 + (m + 1) * step), 3), round(line.y(), 3), cp)
                    for m, cp in enumerate(cluster) if cp in missing]
        i = max(j, i + 1)
    return out


def window_with_paragraph(qtbot, errors, para: str):
    """A 700 px window showing ``para`` between two lines, its Hindi known to lack a font
    (skips on a machine that has one)."""
    from explorer.ui.main_window import MainWindow

    if fontconfig_has(ord("न")):
        pytest.skip("this machine has a Devanagari font")
    w = MainWindow(report_error=errors, autosave=False)
    qtbot.addWidget(w)
    w.resize(700, 700)
    w.show()
    w.restore(text=f"first line\n{para}\nlast\n")
    wait_highlighted(qtbot, w)
    qtbot.waitUntil(lambda: ord("न") in w.missing_glyphs.missing, timeout=5000)
    return w


def test_boxes_of_a_wrapped_paragraph_line_by_line(qtbot, errors):
    """A paragraph that wraps over many lines, mixing Latin, Hindi, Thai, emoji and CJK
    Extension B: the boxes found per visual line are the clusters walked over the whole
    block, and a repaint of one visual line measures only that line."""
    para = " ".join(f"word{i} {HINDI} ภาษาไทย 👍🏽 𠀀x" for i in range(30))
    w = window_with_paragraph(qtbot, errors, para)
    glyphs = w.missing_glyphs
    block = w.editor.document().findBlockByNumber(1)
    layout = block.layout()
    assert layout.lineCount() >= 5
    origin = w.editor.blockBoundingGeometry(block).translated(w.editor.contentOffset())
    found = [(round(r.left() - origin.left(), 3), round(r.top() - origin.top(), 3), cp)
             for r, cp in glyphs.boxes() if origin.contains(r.center())]
    shown = [b for b in clusters_walked(layout, para, glyphs.missing)
             if origin.top() + b[1] < w.editor.viewport().height()]
    assert found == shown
    assert {cp for *_, cp in found} >= {ord(c) for c in HINDI}
    third = layout.lineAt(2)
    area = origin.adjusted(0, third.y(), 0, 0).toRect()
    area.setHeight(int(third.height()) - 1)
    one_line = glyphs.boxes(area)
    assert one_line and {round(r.top() - origin.top(), 3) for r, _ in one_line} == {
        round(third.y(), 3)}
    w.controller.shutdown()


def test_boxes_after_an_edit_measure_only_the_changed_line(qtbot, errors, monkeypatch):
    """Typing in the last visual line of a long wrapped paragraph: the boxes are still the
    clusters walked over the whole block, and only visual lines whose text changed are
    measured again (the others keep theirs: Qt calls per box are what a keystroke in a
    paragraph of a script without a font cost)."""
    from PySide6.QtGui import QTextCursor

    from explorer.ui import missing_glyphs

    para = " ".join(f"word{i} {HINDI} ภาษาไทย 👍🏽 𠀀x" for i in range(12)) + " the end"
    w = window_with_paragraph(qtbot, errors, para)
    glyphs = w.missing_glyphs
    doc = w.editor.document()
    block = doc.findBlockByNumber(1)
    layout = block.layout()
    lines = layout.lineCount()
    assert lines >= 3
    glyphs.boxes()  # measured once
    measured: list[int] = []
    real = missing_glyphs.line_boxes

    def counting(layout, text, k, missing, *u16):
        measured.append(k)
        return real(layout, text, k, missing, *u16)

    monkeypatch.setattr(missing_glyphs, "line_boxes", counting)
    cur = QTextCursor(block)
    cur.setPosition(block.position() + block.length() - 3)  # in "end", the last line
    cur.insertText(HINDI[:2])
    doc.documentLayout().blockBoundingRect(block)  # laid out again
    block = doc.findBlockByNumber(1)
    text = block.text()
    origin = w.editor.blockBoundingGeometry(block).translated(w.editor.contentOffset())
    found = [(round(r.left() - origin.left(), 3), round(r.top() - origin.top(), 3), cp)
             for r, cp in glyphs.boxes() if origin.contains(r.center())]
    shown = [b for b in clusters_walked(block.layout(), text, glyphs.missing)
             if origin.top() + b[1] < w.editor.viewport().height()]
    assert found == shown
    assert text.count("न") == para.count("न") + 1
    assert measured and set(measured) <= {lines - 1, lines}, measured
    w.controller.shutdown()


def test_boxes_of_a_long_line_scrolled_into_its_middle(qtbot, errors, monkeypatch, qapp):
    """A paragraph of hundreds of visual lines, scrolled to its middle: the shown lines'
    boxes are the clusters walked over the whole block, the shown lines are found by halving
    (``first_line_below``), and each line's boxes read only that line's characters (a 9 MB
    one-line document made lists of the whole block's code points for every shown line)."""
    from explorer.ui import missing_glyphs
    from explorer.ui.missing_glyphs import first_line_below

    para = " ".join(f"word{i} {HINDI} 𠀀x ab" for i in range(1200))
    w = window_with_paragraph(qtbot, errors, para)
    glyphs = w.missing_glyphs
    block = w.editor.document().findBlockByNumber(1)
    layout = block.layout()
    assert layout.lineCount() > 200
    bar = w.editor.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    qapp.processEvents()
    origin = w.editor.blockBoundingGeometry(block).translated(w.editor.contentOffset())
    height = w.editor.viewport().height()
    assert origin.top() < -height  # the block starts far above the viewport
    for y in (-5.0, 0.0, 1.0, 333.3, layout.lineAt(7).y(), 1e9):
        linear = next((k for k in range(layout.lineCount())
                       if layout.lineAt(k).y() + layout.lineAt(k).height() > y),
                      layout.lineCount())
        assert first_line_below(layout, y) == linear
    lengths: list[int] = []
    real = missing_glyphs.utf16_columns
    monkeypatch.setattr(missing_glyphs, "utf16_columns",
                        lambda text: lengths.append(len(text)) or real(text))
    glyphs._line_boxes.clear()
    found = [(round(r.left() - origin.left(), 3), round(r.top() - origin.top(), 3), cp)
             for r, cp in glyphs.boxes() if origin.contains(r.center())]
    line_height = layout.lineAt(0).height()
    shown = [b for b in clusters_walked(layout, para, glyphs.missing)
             if origin.top() + b[1] + line_height > 0 and origin.top() + b[1] <= height]
    assert found and found == shown
    widest = max(layout.lineAt(k).textLength() for k in range(layout.lineCount()))
    assert lengths and max(lengths) <= widest + 1
    w.controller.shutdown()
