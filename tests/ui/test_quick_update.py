"""A keystroke's small re-encode runs on the GUI thread; anything bigger, or failing, on a
worker (see explorer.ui.encoding_controller)."""

from __future__ import annotations

import pytest
from conftest import wait_highlighted
from painting_oracle import expected_ranges, painted_ranges

from explorer.workers import jobs

pytestmark = pytest.mark.usefixtures("no_qt_warnings")

TEXT = "".join(f"line {i} with a few words\n" for i in range(300))


@pytest.fixture
def submits(window, monkeypatch):
    """The jobs handed to the encode worker."""
    runner = window.controller._runner
    seen: list[object] = []
    real = runner.submit

    def spy(job, *args, **kwargs):
        seen.append(job)
        return real(job, *args, **kwargs)

    monkeypatch.setattr(runner, "submit", spy)
    return seen


def _type_in_the_middle(qtbot, window, keys: str) -> None:
    cur = window.editor.textCursor()
    cur.setPosition(TEXT.index("line 150") + 5)
    window.editor.setTextCursor(cur)
    qtbot.keyClicks(window.editor, keys)


def test_a_keystroke_is_re_encoded_without_a_worker(qtbot, window, submits):
    window.set_text(TEXT)
    wait_highlighted(qtbot, window)
    submits.clear()
    _type_in_the_middle(qtbot, window, "x")
    wait_highlighted(qtbot, window)
    assert submits == []
    assert window.controller.applied_revision == window.controller.revision
    assert painted_ranges(window) == expected_ranges(window)
    assert window.doc.ids().tolist() == window.tokenizer.encode(window.text()).ids


def test_a_big_paste_goes_to_a_worker(qtbot, window, submits):
    window.set_text(TEXT)
    wait_highlighted(qtbot, window)
    submits.clear()
    cur = window.editor.textCursor()
    cur.setPosition(TEXT.index("line 150"))
    window.editor.setTextCursor(cur)
    window.editor.insertPlainText("pasted words\n" * (jobs.QUICK_MAX_WINDOW // 10))
    wait_highlighted(qtbot, window)
    assert submits  # too big for the GUI thread
    assert painted_ranges(window) == expected_ranges(window)


def test_a_failing_quick_encode_is_handed_to_the_worker(qtbot, window, submits, monkeypatch):
    window.set_text(TEXT)
    wait_highlighted(qtbot, window)
    submits.clear()

    def broken(*_args, **_kwargs):
        raise RuntimeError("engine bug")

    monkeypatch.setattr("explorer.ui.encoding_controller.quick_update", broken)
    _type_in_the_middle(qtbot, window, "y")
    wait_highlighted(qtbot, window)
    assert submits  # the worker re-encodes (and would report the error)
    assert painted_ranges(window) == expected_ranges(window)


def test_typing_fast_ends_exact_and_idle(qtbot, window, submits):
    window.set_text(TEXT)
    wait_highlighted(qtbot, window)
    _type_in_the_middle(qtbot, window, "quick typing here ")
    wait_highlighted(qtbot, window)
    ctl = window.controller
    assert not ctl.busy and ctl.up_to_date
    assert window.doc.ids().tolist() == window.tokenizer.encode(window.text()).ids


def test_a_keystroke_is_coloured_before_its_first_paint(qtbot, window):
    """The quick re-encode runs inside the edit, once Qt has laid it out: when the edit
    returns, the result and its colours are there (the edit's one paint shows them)."""
    window.set_text(TEXT)
    wait_highlighted(qtbot, window)
    ctl = window.controller
    cur = window.editor.textCursor()
    cur.setPosition(TEXT.index("line 150") + 4)
    cur.insertText("XY")  # synchronous, no event loop round after it
    assert ctl.applied_revision == ctl.revision and not ctl.busy
    assert not window.paint_hold.holding
    assert painted_ranges(window) == expected_ranges(window)
