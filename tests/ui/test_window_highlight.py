"""Typing in the editor: token colours land on the right UTF-16 ranges, incrementally
(whole grapheme clusters: see painting_oracle)."""

from __future__ import annotations

import random

import pytest
from conftest import wait_highlighted
from painting_oracle import expected_ranges, painted_ranges, u16
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from explorer.ui.palettes import color_index

pytestmark = pytest.mark.usefixtures("no_qt_warnings")


CASES = {
    "emoji": "Hi 😀 there 👍🏽 ok\nline two 🇫🇷 end\n",
    "cjk-ext-b": "𠀋𠀌 and 𠀍x 日本語\nmore 𠀋 text\n",
    "combining": "e\u0301te\u0301 n\u0303o a\u0308\u0327 z\n\nafter blank\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_typing_updates_highlights_at_utf16_ranges(qtbot, window, text):
    window.set_text(text)
    wait_highlighted(qtbot, window)
    assert painted_ranges(window) == expected_ranges(window)
    # Type in the middle of the first line, after an astral/combining character.
    cur = window.editor.textCursor()
    cur.setPosition(u16(text[:8]))
    window.editor.setTextCursor(cur)
    qtbot.keyClicks(window.editor, "ab")
    window.editor.insertPlainText("😀")  # QTest cannot synthesize astral key events
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    qtbot.keyClicks(window.editor, "x")
    wait_highlighted(qtbot, window)
    assert painted_ranges(window) == expected_ranges(window)
    # Delete back over the emoji (a surrogate pair is one character for the user).
    for _ in range(3):
        qtbot.keyClick(window.editor, Qt.Key.Key_Backspace)
    wait_highlighted(qtbot, window)
    assert painted_ranges(window) == expected_ranges(window)
    assert window.doc.text == window.text()


def test_edit_repaints_only_the_changed_blocks(qtbot, window):
    text = "".join(f"line {i} with words\n" for i in range(300))
    window.set_text(text)
    wait_highlighted(qtbot, window)
    changes = []
    window.controller.encoding_ready.connect(lambda doc, ch: changes.append((doc, ch)))
    cur = window.editor.textCursor()
    cur.setPosition(text.index("line 150"))
    window.editor.setTextCursor(cur)
    qtbot.keyClicks(window.editor, "Z")
    wait_highlighted(qtbot, window)
    doc, change = changes[-1]
    assert change is not None and not change.full
    assert change.old_segments <= 3  # the edited segment and its neighbours, re-encoded
    assert len(doc.repaint_lines(change)) <= 2  # the lines whose tokens changed: repainted
    assert painted_ranges(window) == expected_ranges(window)


def test_colour_is_stable_per_token_id(window):
    f = window.painter.formats
    size = len(f._colors)
    assert f.color(1234).name() == f.color(1234).name()
    assert color_index(1234, size) == color_index(1234, size)
    assert len({color_index(i, size) for i in range(200)}) == size


def test_partial_utf8_tokens_are_grouped_and_shown_as_hex(qtbot, window):
    text = "𠀋"  # three byte-level tokens in cl100k share this one character
    window.set_text(text)
    wait_highlighted(qtbot, window)
    ranges = painted_ranges(window)[0]
    assert [(s, n) for s, n, _ in ranges] == [(0, 2)]  # one group over the surrogate pair
    tip = window.linker.tooltip_at(0, text, 0)
    assert "F0" in tip and "\ufffd" not in tip
    assert tip.count("<table") == window.doc.token_count > 1


def test_whitespace_toggle(window):
    from PySide6.QtGui import QTextOption

    window.set_show_whitespace(True)
    flags = window.editor.document().defaultTextOption().flags()
    assert flags & QTextOption.Flag.ShowTabsAndSpaces
    window.set_show_whitespace(False)
    flags = window.editor.document().defaultTextOption().flags()
    assert not flags & QTextOption.Flag.ShowTabsAndSpaces


def test_palette_and_theme_switch_repaint(qtbot, window):
    before = painted_ranges(window)
    window.set_dark(True)
    wait_highlighted(qtbot, window)
    after = painted_ranges(window)
    assert before.keys() == after.keys() and before != after
    assert after == expected_ranges(window)
    window.set_palette("Vivid")
    wait_highlighted(qtbot, window)
    assert painted_ranges(window) == expected_ranges(window)


def test_cursor_moves_do_not_disturb_painting(qtbot, window):
    window.set_text("abc def\n")
    wait_highlighted(qtbot, window)
    window.editor.moveCursor(QTextCursor.MoveOperation.End)
    assert painted_ranges(window) == expected_ranges(window)


def test_patched_text_copy_equals_qt_text(qtbot, window):
    import random

    rng = random.Random(3)
    window.set_text("start\u00a0text\nsecond line\n")
    pieces = ["a", "\n", " ", "\u00a0", "é", "日", "\u2028", "xyz\nuvw", "😀", ""]
    ed = window.editor
    for _ in range(120):
        cur = ed.textCursor()
        n = ed.document().characterCount() - 1
        a = rng.randrange(n + 1)
        cur.setPosition(a)
        cur.setPosition(min(n, a + rng.choice([0, 0, 1, 3])), QTextCursor.MoveMode.KeepAnchor)
        cur.insertText(rng.choice(pieces))
        assert window.controller.text == ed.toPlainText()
    cur = ed.textCursor()
    cur.select(QTextCursor.SelectionType.Document)
    cur.removeSelectedText()
    assert window.controller.text == ed.toPlainText() == ""
    wait_highlighted(qtbot, window)
    assert window.doc.token_count == 0


def test_colours_move_with_typed_text_before_the_result_lands(qtbot, window, worker_results):
    window.set_text("hello world\n")
    wait_highlighted(qtbot, window)
    first = window.editor.document().begin()
    before = [(r.start, r.length) for r in first.layout().formats()]
    assert before == [(0, 5), (5, 6)]
    cur = window.editor.textCursor()
    cur.setPosition(5)
    cur.insertText("XY")  # synchronous: no result can have landed yet
    window.paint_hold.expired.emit()  # the paint waited long enough: colours move now
    assert [(r.start, r.length) for r in first.layout().formats()] == [(0, 7), (7, 6)]
    cur.setPosition(9)
    cur.deletePreviousChar()  # inside " world"
    window.paint_hold.expired.emit()
    assert [(r.start, r.length) for r in first.layout().formats()] == [(0, 7), (7, 5)]
    wait_highlighted(qtbot, window)
    assert painted_ranges(window) == expected_ranges(window)


def test_new_colours_repaint_only_their_lines(qtbot, window):
    """A keystroke and its result repaint the edited line, not the whole viewport (Qt's
    plain-text layout repaints everything for a block whose formats change)."""
    from PySide6.QtCore import QEvent, QObject

    text = "".join(f"line {i} with some words\n" for i in range(80))
    window.set_text(text)
    wait_highlighted(qtbot, window)
    viewport = window.editor.viewport()

    class Rects(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.heights: list[int] = []

        def eventFilter(self, _obj, event):
            if event.type() == QEvent.Type.Paint:
                self.heights.append(event.rect().height())
            return False

    rects = Rects()
    cur = window.editor.textCursor()
    cur.setPosition(text.index("line 12 with") + 7)
    window.editor.setTextCursor(cur)
    qtbot.wait(50)
    viewport.installEventFilter(rects)
    qtbot.keyClicks(window.editor, "Z")
    wait_highlighted(qtbot, window)
    qtbot.wait(50)
    viewport.removeEventFilter(rects)
    assert painted_ranges(window) == expected_ranges(window)
    assert rects.heights, "nothing repainted"
    line = window.editor.fontMetrics().height()
    assert max(rects.heights) <= 5 * line < viewport.height() // 2


def test_reencode_is_told_where_the_text_changed(qtbot, window, monkeypatch):
    """The controller passes the unchanged start and end it knows from Qt's change
    notifications (quick typing: several changes since the result it starts from); they
    are really unchanged, and the result equals a whole-text encode."""
    from explorer.workers import jobs

    calls = []
    real = jobs.update_document

    def spy(base, text, max_window=None, same=None):
        calls.append((base.text, text, same))
        return real(base, text, max_window, same)

    monkeypatch.setattr(jobs, "update_document", spy)
    text = "".join(f"line {i} with words\n" for i in range(60))
    window.set_text(text)
    wait_highlighted(qtbot, window)
    cur = window.editor.textCursor()
    cur.setPosition(text.index("line 30") + 4)
    window.editor.setTextCursor(cur)
    qtbot.keyClicks(window.editor, "ab c")
    qtbot.keyClick(window.editor, Qt.Key.Key_Backspace)
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    wait_highlighted(qtbot, window)
    hinted = [c for c in calls if c[2] is not None]
    assert hinted, "no re-encode was told where the text changed"
    for old, new, (head, tail) in hinted:
        assert old[:head] == new[:head]
        assert old[len(old) - tail:] == new[len(new) - tail:]
        assert head + tail <= min(len(old), len(new))
    assert painted_ranges(window) == expected_ranges(window)
    assert window.doc.ids().tolist() == window.tokenizer.encode(window.text()).ids


def test_a_new_tokenizer_starts_one_encode_for_a_text_change_that_waits(qtbot, window):
    """A text set while no result of the current tokenizer is shown waits (debounced) to be
    encoded; a tokenizer arriving meanwhile (the start-up: the text first, then the
    vocabulary) starts one encode, not one for the wait that it then cancels (a worker may
    already run it, cancellable only after its first window: two first windows at once)."""
    from explorer.bundled import resource_path
    from explorer.engine.formats import load_tokenizer

    ctl = window.controller
    other = load_tokenizer(resource_path("vocab", "o200k_base.tiktoken"))
    ctl.set_tokenizer(other)
    window.set_text("a new text\n" * 50)  # (the shown result is cl100k's: it waits)
    assert ctl._debounce.pending()
    submitted = []
    real = ctl._runner.submit
    ctl._runner.submit = lambda *a, **k: (submitted.append(a), real(*a, **k))[1]
    ctl.set_tokenizer(load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken")))
    assert len(submitted) == 1 and not ctl._debounce.pending()
    wait_highlighted(qtbot, window)
    assert window.doc.text == window.text()


def test_a_big_insertion_without_a_result_is_encoded_at_once(qtbot, window):
    """A text with no result of the current tokenizer waits to be encoded (keys typed while
    a first encode runs restart it once), but an insertion of ``AT_ONCE_CHARS`` or more (a
    file opened, a big paste) is encoded at once: there is no typing to wait for."""
    from explorer.bundled import resource_path
    from explorer.engine.formats import load_tokenizer
    from explorer.ui.encoding_controller import AT_ONCE_CHARS

    ctl = window.controller
    ctl.set_tokenizer(load_tokenizer(resource_path("vocab", "o200k_base.tiktoken")))
    submitted = []
    real = ctl._runner.submit
    ctl._runner.submit = lambda *a, **k: (submitted.append(a), real(*a, **k))[1]
    window.set_text("a new text\n" * 50)  # (small: it waits)
    assert ctl._debounce.pending() and not submitted
    big = "a big text\n" * (AT_ONCE_CHARS // 11 + 1)
    window.set_text(big)
    assert len(submitted) == 1 and not ctl._debounce.pending()
    assert submitted[0][3] == window.text()
    wait_highlighted(qtbot, window)
    assert window.doc.text == window.text() and window.doc.tokenizer is ctl._tokenizer


def test_a_big_text_is_announced_once_its_encode_is_done(qtbot, window, monkeypatch):
    """``text_changed`` (the missing-glyph scan, the panels that follow the text) waits
    while a big text's encode runs: it would take the GIL from it. A short text does not
    wait, and a big one waits at most ``TEXT_WAITS_S``."""
    import explorer.ui.main_window as main_window

    monkeypatch.setattr(main_window, "TEXT_WAITS_CHARS", 5000)
    monkeypatch.setattr(main_window, "TEXT_WAITS_S", 120.0)  # (a slow machine's encode)
    seen: list[tuple[int, bool]] = []
    window.text_changed.connect(lambda t: seen.append((len(t), window.controller.busy)))
    window.set_text("a short text\n")
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    wait_highlighted(qtbot, window)
    seen.clear()
    rng = random.Random(4)
    big = "\n".join(" ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                                     for _ in range(rng.randint(3, 9))) for _ in range(12))
                    for _ in range(12_000))  # (new words: its encode runs ~1 s)
    window.set_text(big)
    qtbot.waitUntil(lambda: bool(seen), timeout=20_000)
    assert seen == [(len(big), False)]
    assert window.doc is not None and window.doc.text == big
    seen.clear()
    monkeypatch.setattr(main_window, "TEXT_WAITS_S", 0.0)
    window.set_text(big + "x")
    qtbot.waitUntil(lambda: bool(seen), timeout=20_000)
    assert seen[0][0] == len(big) + 1
