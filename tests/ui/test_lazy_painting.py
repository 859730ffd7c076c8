"""Big documents are painted as they are shown: only visible blocks at first, each block
when it scrolls into view, exactly as the full painting would colour it."""

from __future__ import annotations

from conftest import wait_highlighted
from painting_oracle import expected_ranges, painted_ranges

from explorer.ui import token_painter


def test_big_document_paints_what_is_shown(qtbot, window, monkeypatch):
    monkeypatch.setattr(token_painter, "BACKGROUND_MAX_BLOCKS", 50)
    text = "".join(f"line {i} with wörds 😀 and more\n" for i in range(400))
    check_painted_as_shown(qtbot, window, text, lambda bar: bar.maximum() // 2)


def check_painted_as_shown(qtbot, window, text: str, scroll_to) -> None:
    """``text`` set: only the shown blocks are painted, as the full painting would; scrolled
    to ``scroll_to(scroll bar)``, the blocks shown then are painted at once."""
    window.set_text(text)
    wait_highlighted(qtbot, window)
    painted = painted_ranges(window)
    expected = expected_ranges(window)
    first, last = window.editor.visible_blocks()
    assert set(painted) <= set(range(first, last + 1)) and painted, (sorted(painted), first, last)
    assert all(painted[b] == expected[b] for b in painted)
    bar = window.editor.verticalScrollBar()
    bar.setValue(scroll_to(bar))  # scrolled into view: painted at once
    qtbot.wait(10)
    first, last = window.editor.visible_blocks()
    painted = painted_ranges(window)
    assert all(b in painted for b in range(first, last) if b in expected)
    assert all(painted[b] == expected[b] for b in painted)


def test_big_document_resize_paints_newly_shown_blocks(qtbot, window, monkeypatch):
    monkeypatch.setattr(token_painter, "BACKGROUND_MAX_BLOCKS", 50)
    window.resize(800, 300)
    window.set_text("".join(f"row {i} text\n" for i in range(300)))
    wait_highlighted(qtbot, window)
    window.resize(800, 900)
    qtbot.waitUntil(lambda: all(
        b in painted_ranges(window) for b in range(*window.editor.visible_blocks())
        if b < 300), timeout=5000)
    assert all(r == expected_ranges(window)[b] for b, r in painted_ranges(window).items())


def test_a_pass_over_a_small_text_stops_when_a_big_text_replaces_it(qtbot, window, monkeypatch):
    """A background pass started for a small text (a new window's) must not go on over the
    blocks of a big text set meanwhile (a big file opened at start-up): it painted every
    block with no tokens, holding the GIL against the encode (1 s of a 10 MB document's)."""
    monkeypatch.setattr(token_painter, "BACKGROUND_MAX_BLOCKS", 50)
    painter = window.painter
    window.set_text("".join(f"small {i}\n" for i in range(30)))
    wait_highlighted(qtbot, window)
    painted = []
    real = painter._paint
    monkeypatch.setattr(painter, "_paint", lambda block: painted.append(block) or real(block))
    painter.repaint_all()  # the background pass starts...
    assert not painter.is_complete
    window.set_text("".join(f"big {i}\n" for i in range(3000)))  # ...and the text grows big
    qtbot.waitUntil(lambda: painter.is_complete, timeout=5000)
    first, last = window.editor.visible_blocks()
    assert len(painted) < 30 + 2 * (last - first + 1) + token_painter.BATCH_BLOCKS // 2


def test_few_long_lines_are_painted_as_they_are_shown(qtbot, window, monkeypatch):
    """A document of few blocks but many characters (a 9 MB text in 200 lines took ~9 s of
    the GUI thread for a background pass laying every line out again) is painted as it is
    shown, exactly as the full painting would colour it."""
    monkeypatch.setattr(token_painter, "BACKGROUND_MAX_CHARS", 20_000)
    text = "".join(" ".join(f"w{i}x{j} wörds 😀" for j in range(200)) + "\n" for i in range(30))
    assert len(text) > 20_000 and text.count("\n") < token_painter.BACKGROUND_MAX_BLOCKS
    window.resize(800, 300)
    check_painted_as_shown(qtbot, window, text, lambda bar: bar.maximum())


def test_a_background_batch_ends_after_so_many_characters(qtbot, window, monkeypatch):
    """Each tick of the background pass paints up to BATCH_CHARS characters of blocks (a
    block of a long line is laid out whole), then gives the event loop back."""
    monkeypatch.setattr(token_painter, "BATCH_CHARS", 3_000)
    painter = window.painter
    text = "".join(" ".join(f"w{i}x{j}" for j in range(150)) + "\n" for i in range(60))
    window.resize(800, 200)
    window.set_text(text)
    wait_highlighted(qtbot, window)
    batches: list[int] = []
    real_batch, real_paint = painter._paint_batch, painter._paint
    count = [0]
    monkeypatch.setattr(painter, "_paint", lambda block: count.__setitem__(0, count[0] + 1)
                        or real_paint(block))

    def batch() -> None:
        count[0] = 0
        real_batch()
        batches.append(count[0])

    monkeypatch.setattr(painter, "_paint_batch", batch)
    painter._timer.timeout.disconnect()
    painter._timer.timeout.connect(batch)
    painter.repaint_all()
    qtbot.waitUntil(lambda: painter.is_complete, timeout=5000)
    line = len(text) // 60
    assert len(batches) > 3 and max(batches) <= 3_000 // line + 2, batches  # (+ shown ones)
    assert painted_ranges(window) == expected_ranges(window)
