"""The ids view's "Add special tokens (post-processor)": the ids HF returns for the whole text
with ``add_special_tokens=True``, computed on the worker; compared with HF tokenizers itself."""

from __future__ import annotations

import pytest
from conftest import wait_highlighted
from PySide6.QtGui import QGuiApplication
from references import require
from tokenizers import Tokenizer as HFTokenizer

from explorer.ui.ids_view import NO_POST_TIP, PENDING, SPECIAL_LABEL

pytestmark = pytest.mark.usefixtures("no_qt_warnings")

TEXT = "Hello, world! The café's naïve coöperation.\nSecond line: 12345 tokens 🦜\n"


def hf_ids(path, text: str, add_special_tokens: bool) -> list[int]:
    ref = HFTokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref.encode(text, add_special_tokens=add_special_tokens).ids


@pytest.fixture
def minilm(qtbot, window):
    path = require("minilm", "tokenizer.json")
    with qtbot.waitSignal(window.tokenizer_changed, timeout=30000):
        window.open_source(str(path))
    window.set_text(TEXT)
    wait_highlighted(qtbot, window)
    window.show_view("ids")
    return window, path


def test_unsupported_tokenizer_leaves_the_checkbox_disabled(qtbot, window):
    view = window.ids_view
    window.show_view("ids")
    assert view.add_special.text() == SPECIAL_LABEL
    assert not view.add_special.isEnabled()  # cl100k: tiktoken has no post-processor
    assert view.add_special.toolTip() == NO_POST_TIP
    view.add_special.setChecked(True)  # even if checked programmatically: plain ids
    assert not view.post_processed()
    assert view.ids_text() == " ".join(map(str, window.tokenizer.encode(window.text()).ids))


def test_minilm_special_ids_match_hf(qtbot, minilm):
    window, path = minilm
    view = window.ids_view
    plain = hf_ids(path, TEXT, False)
    special = hf_ids(path, TEXT, True)
    assert special != plain  # [CLS] ... [SEP]
    assert view.ids_text() == " ".join(map(str, plain))
    assert view.add_special.isEnabled()
    assert "TemplateProcessing: [CLS] $A [SEP]" in view.add_special.toolTip()
    with qtbot.waitSignal(view.special_ids_ready, timeout=30000):
        view.add_special.setChecked(True)
        assert view.pending and view.text_view.toPlainText() == PENDING
        assert not view.copy_button.isEnabled()
    assert view.text_view.toPlainText() == " ".join(map(str, special))
    view.separator.setCurrentText("commas")
    view.copy()
    assert QGuiApplication.clipboard().text() == ", ".join(map(str, special))
    # unchecked: the plain ids again, without another computation
    view.add_special.setChecked(False)
    assert view.text_view.toPlainText() == ", ".join(map(str, plain))


def test_an_edit_recomputes_the_special_ids(qtbot, minilm):
    window, path = minilm
    view = window.ids_view
    with qtbot.waitSignal(view.special_ids_ready, timeout=30000):
        view.add_special.setChecked(True)
    edited = TEXT + "Third line, unaffiliated.\n"
    with qtbot.waitSignal(view.special_ids_ready, timeout=30000):
        window.set_text(edited)
    wait_highlighted(qtbot, window)
    qtbot.waitUntil(lambda: not view.pending, timeout=30000)
    assert view.ids_text() == " ".join(map(str, hf_ids(path, edited, True)))


def test_copy_while_pending_copies_when_ready(qtbot, minilm):
    window, path = minilm
    view = window.ids_view
    view.add_special.setChecked(True)
    QGuiApplication.clipboard().setText("stale")
    with qtbot.waitSignal(view.special_ids_ready, timeout=30000):
        view.copy()
        assert QGuiApplication.clipboard().text() == "stale"
    assert QGuiApplication.clipboard().text() == " ".join(map(str, hf_ids(path, TEXT, True)))


def test_special_ids_are_computed_off_the_gui_thread(qtbot, minilm, monkeypatch):
    import threading

    from explorer.workers import jobs

    window, _path = minilm
    view = window.ids_view
    threads = []
    real = jobs.special_ids_job

    def spy(tokenizer, text):
        threads.append(threading.current_thread())
        return (yield from real(tokenizer, text))

    monkeypatch.setattr("explorer.ui.ids_view.special_ids_job", spy)
    with qtbot.waitSignal(view.special_ids_ready, timeout=30000):
        view.add_special.setChecked(True)
    assert threads and threads[0] is not threading.main_thread()


def test_results_arriving_during_a_computation_are_coalesced(qtbot, minilm, monkeypatch):
    """One encode at a time: edits while it runs start only one more, for the newest text."""
    import threading

    from explorer.workers import jobs

    window, path = minilm
    view = window.ids_view
    release = threading.Event()
    texts: list[str] = []
    real = jobs.special_ids_job

    def slow(tokenizer, text):
        texts.append(text)
        if len(texts) == 1:
            release.wait(20)  # the first computation is still running while the user types
        return (yield from real(tokenizer, text))

    monkeypatch.setattr("explorer.ui.ids_view.special_ids_job", slow)
    view.add_special.setChecked(True)
    for i in range(5):
        window.set_text(f"{TEXT}edit {i}\n")
        wait_highlighted(qtbot, window)
    assert len(texts) == 1 and view.pending
    with qtbot.waitSignal(view.special_ids_ready, timeout=30000):
        release.set()
    assert texts[1:] == [f"{TEXT}edit 4\n"]  # the newest text only
    assert view.ids_text() == " ".join(map(str, hf_ids(path, texts[-1], True)))
