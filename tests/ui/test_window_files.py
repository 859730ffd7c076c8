"""Opening vocabularies (dialog, drop, paste, recent), errors that keep the text, settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import wait_highlighted
from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtWidgets import QFileDialog
from references import require

from explorer.ui.autosave import autosave_path, load_text
from explorer.ui.main_window import MainWindow
from explorer.ui.settings import Settings

pytestmark = pytest.mark.usefixtures("no_qt_warnings")

FORMATS = [
    ("tiktoken", "gpt-tokenizer", "r50k_base.tiktoken"),
    ("tokenizer.json", "minilm", "tokenizer.json"),
    ("sentencepiece", "sentencepiece", "botchan_en_unigram_1000.model"),
    ("gguf", "llama-cpp", "ggml-vocab-gpt-2.gguf"),
]


def open_via_dialog(monkeypatch, window, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: (str(path), "")))
    window.open_vocabulary_dialog()


@pytest.mark.parametrize(("fmt", "pkg", "name"), FORMATS, ids=[f[0] for f in FORMATS])
def test_open_each_format_through_the_dialog(qtbot, monkeypatch, window, errors, fmt, pkg,
                                             name):
    path = require(pkg, name)
    window.set_text("Hello world, this stays.\n")
    with qtbot.waitSignal(window.tokenizer_changed, timeout=30000) as sig:
        open_via_dialog(monkeypatch, window, path)
    assert sig.args[0].info.format == fmt
    wait_highlighted(qtbot, window, timeout=30000)
    assert window.text() == "Hello world, this stays.\n"
    assert window.doc.tokenizer is sig.args[0]
    assert [t.id for t, _, _ in window.doc.tokens()] == sig.args[0].encode(window.text()).ids
    assert errors.errors == []
    assert Settings().recent_files[0] == str(path)
    assert window.menus.recent.actions()[0].text() == path.name


@pytest.mark.parametrize("content", [b"", b"\x00garbage\xff" * 20, b'{"model": 1'],
                         ids=["empty", "binary", "broken-json"])
def test_bad_file_shows_error_and_keeps_text(qtbot, monkeypatch, window, errors, tmp_path,
                                             content):
    bad = tmp_path / "broken.tiktoken"
    bad.write_bytes(content)
    before_tok = window.tokenizer
    window.set_text("my precious text")
    wait_highlighted(qtbot, window)
    with qtbot.waitSignal(window.loader.failed, timeout=10000):
        open_via_dialog(monkeypatch, window, bad)
    assert len(errors.errors) == 1
    title, message = errors.errors[0]
    assert title == "Cannot open vocabulary"
    assert "broken.tiktoken" in message and "Traceback" not in message
    assert "text is kept" in message
    assert window.text() == "my precious text"
    assert window.tokenizer is before_tok
    assert str(bad) not in Settings().recent_files


def test_dropped_or_pasted_file_opens_it(qtbot, window):
    path = require("gpt-tokenizer", "r50k_base.tiktoken")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    window.set_text("kept")
    with qtbot.waitSignal(window.tokenizer_changed, timeout=30000):
        window.editor.insertFromMimeData(mime)  # the same path a drop takes
    assert window.text() == "kept"
    assert window.source == str(path)


def test_dropped_text_file_becomes_the_text(qtbot, window, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("from a file ✓", encoding="utf-8")
    window.open_dropped(f)
    wait_highlighted(qtbot, window)
    assert window.text() == "from a file ✓"


def test_choice_text_and_geometry_are_restored(qtbot, errors):
    path = require("gpt-tokenizer", "r50k_base.tiktoken")
    w1 = MainWindow(report_error=errors)
    qtbot.addWidget(w1)
    w1.show()
    w1.restore(source=str(path))
    wait_highlighted(qtbot, w1, timeout=30000)
    w1.set_text("unsaved work 😀")
    w1.resize(700, 500)  # fits the 800x600 offscreen screen
    w1.set_palette("Vivid")
    w1.close()  # flushes autosave and settings
    assert load_text() == "unsaved work 😀"

    w2 = MainWindow(report_error=errors)
    qtbot.addWidget(w2)
    w2.restore()
    w2.show()
    wait_highlighted(qtbot, w2, timeout=30000)
    assert w2.text() == "unsaved work 😀"
    assert w2.source == str(path)
    assert w2.painter.formats.palette == "Vivid"
    assert (w2.width(), w2.height()) == (700, 500)
    w2.controller.shutdown()


def test_autosave_survives_a_crash(qtbot, errors):
    w = MainWindow(report_error=errors)
    qtbot.addWidget(w)
    w.restore(text="first")
    w.set_text("typed before the crash")
    qtbot.waitUntil(lambda: load_text() == "typed before the crash", timeout=5000)
    assert not autosave_path().with_suffix(".tmp").exists()
    w.controller.shutdown()  # no closeEvent: the file was written while typing


def test_toolbar_picker_switches_tokenizer_and_keeps_text(qtbot, window):
    picker = window.picker
    assert {"bundled:cl100k_base", "bundled:o200k_base"} <= set(picker.sources())
    assert picker.currentData() == "bundled:cl100k_base"
    window.set_text("same text")
    with qtbot.waitSignal(window.tokenizer_changed, timeout=30000) as sig:
        picker.activated.emit(picker.findData("bundled:o200k_base"))
    assert sig.args[0].vocab_size > 200_000
    wait_highlighted(qtbot, window)
    assert window.text() == "same text" and picker.currentData() == "bundled:o200k_base"
    assert Settings().vocabulary == "bundled:o200k_base"


def test_drop_event_on_the_window_opens_the_vocabulary(qtbot, window):
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QDropEvent

    path = require("gpt-tokenizer", "p50k_base.tiktoken")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.tokenizer_changed, timeout=30000):
        window.dropEvent(event)
    assert window.source == str(path)


def test_open_text_replaces_the_text_without_a_bom_and_keeps_it_on_errors(qtbot, window,
                                                                           errors, tmp_path):
    good = tmp_path / "good.txt"
    good.write_bytes("\ufeffhéllo wörld\n".encode())
    window.open_text(good)
    assert window.text() == "héllo wörld\n"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe not utf-8 \xc3")
    window.open_text(bad)
    assert window.text() == "héllo wörld\n" and "bad.txt" in errors.errors[-1][1]


def record_adoptions(monkeypatch) -> list[bool]:
    """Children from 20k characters on; for each first encode that starts one, whether it
    adopted the child started before the editor took the text."""
    from explorer.workers import tail_encode

    monkeypatch.setattr(tail_encode, "PARALLEL_MIN", 20_000)
    monkeypatch.setattr(tail_encode, "HEAD_START", 0)
    adopted: list[bool] = []
    real = tail_encode.start_tail

    def recording(tokenizer, text, exact):
        early = list(tail_encode._prefetched)
        helper = real(tokenizer, text, exact)
        adopted.append(bool(early) and helper is early[0])
        return helper

    monkeypatch.setattr("explorer.workers.jobs.start_tail", recording)
    return adopted


def test_open_text_of_a_big_file_starts_its_encode_helper_first(qtbot, window, tmp_path,
                                                                 monkeypatch):
    """File > Open Text of a big file starts the first encode's helper before the text goes
    into the editor (Qt's insertText holds the GIL); that encode adopts it."""
    from explorer.workers import tail_encode

    adopted = record_adoptions(monkeypatch)
    big = tmp_path / "big.txt"
    text = "".join(f"line {i}: the quick brown fox, Всеобщая декларация {i * 7}\n"
                   for i in range(3000))
    big.write_text(text, encoding="utf-8")
    window.open_text(big)
    assert tail_encode._prefetched  # started before the editor took the text
    wait_highlighted(qtbot, window)
    qtbot.waitUntil(lambda: window.doc is not None and window.doc.text == text, timeout=60_000)
    assert adopted == [True]
    assert list(window.doc.ids()) == window.tokenizer.encode(text).ids


def test_a_big_paste_starts_its_encode_helper_with_the_text_it_makes(qtbot, window,
                                                                   monkeypatch):
    """A big paste over a selection starts the helper of the encode that follows before Qt
    inserts the text (~1 s for 10 MB, holding the GIL), with the text as it will be: line
    ends made ``\\n`` (CR LF, CR, paragraph separator) and no-break spaces made spaces, as
    ``toPlainText`` reads them. That encode adopts it."""
    from PySide6.QtCore import QMimeData
    from PySide6.QtGui import QTextCursor

    from explorer.workers import tail_encode

    adopted = record_adoptions(monkeypatch)
    window.set_text("head 😀 line\nREPLACE ME\ntail\n")
    wait_highlighted(qtbot, window)
    cur = window.editor.textCursor()
    start = window.text().index("REPLACE")
    cur.setPosition(start + 1)  # (+1: the emoji is two UTF-16 units)
    cur.setPosition(start + 1 + len("REPLACE ME"), QTextCursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cur)
    ends = ["\r\n", "\n", "\r", "\u2029"]
    pasted = "".join(f"line {i}:\u00a0the quick brown fox, Всеобщая {i * 7}{ends[i % 4]}"
                     for i in range(3500))
    mime = QMimeData()
    mime.setText(pasted)
    adopted.clear()
    window.editor.insertFromMimeData(mime)
    assert tail_encode._prefetched  # started before the editor took the text
    expected = ("head 😀 line\n" + pasted.replace("\r\n", "\n").replace("\r", "\n")
                .replace("\u2029", "\n").replace("\u00a0", " ") + "\ntail\n")
    assert window.text() == expected
    qtbot.waitUntil(lambda: window.doc is not None and window.doc.text == expected
                    and window.is_highlighted, timeout=60_000)
    assert adopted == [True]
    assert list(window.doc.ids()) == window.tokenizer.encode(expected).ids


def test_the_vocabulary_starts_loading_before_the_editor_takes_the_text(qtbot, errors,
                                                                       monkeypatch) -> None:
    """At start-up the vocabulary loads on its worker while the editor takes the text (a
    10 MB text is ~0.6 s of Qt's layout): the load is asked for first, and the text is then
    highlighted with it."""
    w = MainWindow(report_error=errors, autosave=False)
    qtbot.addWidget(w)
    seen: list[str] = []
    load = w.loader.load

    def recording(source: str) -> None:
        seen.append(w.text())
        load(source)

    monkeypatch.setattr(w.loader, "load", recording)
    w.show()
    w.restore(text="the text the window opens with\n")
    assert seen == [""]  # (asked for before the editor held the text)
    wait_highlighted(qtbot, w)
    assert w.doc.text == "the text the window opens with\n"
    w.controller.shutdown()


def test_a_big_start_up_text_goes_in_from_the_event_loop_beside_the_load(
        qtbot, errors, monkeypatch) -> None:
    """A start-up text of at least ``SOON_TEXT_CHARS`` is put in by the editor's own slots
    from the event loop (Qt's layout then does not hold the GIL, and the load's worker runs
    beside it), queued before the vocabulary's load is asked for; the cursor ends at the
    start, the text is highlighted, and the replacement is one undoable edit."""
    from explorer.ui import main_window

    monkeypatch.setattr(main_window, "SOON_TEXT_CHARS", 1000)
    text = "".join(f"line {i} of the big text, café 😀\n" for i in range(60_000))
    w = MainWindow(report_error=errors, autosave=False)
    qtbot.addWidget(w)
    w.show()
    w.restore(text="before\n")
    wait_highlighted(qtbot, w)
    calls: list[str] = []
    monkeypatch.setattr(w, "set_text", lambda t: calls.append("set_text"))
    load = w.loader.load
    monkeypatch.setattr(w.loader, "load", lambda s: (calls.append(w.text()), load(s)))
    w.restore(text=text)
    assert calls == ["before\n"]  # (the load asked for; the text queued, not set from here)
    qtbot.waitUntil(lambda: w.text() == text, timeout=30000)
    assert w.editor.textCursor().position() == 0
    wait_highlighted(qtbot, w)
    assert w.doc.text == text
    w.editor.undo()
    assert w.text() == "before\n"
    w.controller.shutdown()
