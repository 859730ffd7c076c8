"""Autosave off the GUI thread: atomic, ordered, and never losing text (even 5 MB of it)."""

from __future__ import annotations

import threading

import pytest
from conftest import wait_highlighted

from explorer.ui import autosave
from explorer.ui.autosave import Autosaver, autosave_path, load_text, save_text, write_chunks
from explorer.ui.main_window import MainWindow

pytestmark = pytest.mark.usefixtures("no_qt_warnings")


def big_text(chars: int) -> str:
    unit = "Autosave 😀 हिन्दी line, \r\n crlf kept\n"
    return (unit * (chars // len(unit) + 1))[:chars]


def test_a_cancelled_write_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    monkeypatch.setattr(autosave, "CHUNK_CHARS", 1000)
    target = tmp_path / "a.txt"
    save_text("previous", target)
    gen = write_chunks(big_text(5000), target)
    assert next(gen) == 1000
    assert target.with_suffix(".tmp").exists()  # the new text goes to the temp file first
    assert load_text(target) == "previous"
    gen.close()  # cancelled (or the process died) mid-write
    assert load_text(target) == "previous"
    assert not target.with_suffix(".tmp").exists()


def test_writes_are_exact_and_in_order(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(autosave, "CHUNK_CHARS", 4096)
    saver = Autosaver()
    target = tmp_path / "b.txt"
    texts = [big_text(20_000 + i) for i in range(8)]
    with qtbot.waitSignal(saver.saved, timeout=20000) as sig:
        for t in texts:  # each request supersedes the one before
            saver.save(t, target)
    assert sig.args == [target]
    assert saver.wait(20000)
    assert target.read_bytes() == texts[-1].encode("utf-8")  # \r\n kept, no translation
    saver.save_now("closing", target)
    assert load_text(target) == "closing"


def test_failure_is_reported_and_keeps_the_old_file(qtbot, tmp_path):
    saver = Autosaver()
    target = tmp_path / "c.txt"
    save_text("kept", target)
    with qtbot.waitSignal(saver.failed, timeout=20000) as sig:
        saver.save("lone surrogate \ud800", target)  # not encodable as UTF-8
    assert "surrogate" in sig.args[0]
    assert load_text(target) == "kept" and not target.with_suffix(".tmp").exists()


def test_five_megabytes_survive_a_crash_and_are_written_off_the_gui_thread(qtbot, errors,
                                                                           monkeypatch):
    threads: list[threading.Thread] = []
    real = autosave.write_chunks

    def spy(text, target):
        threads.append(threading.current_thread())
        return (yield from real(text, target))

    monkeypatch.setattr(autosave, "write_chunks", spy)
    w = MainWindow(report_error=errors)
    qtbot.addWidget(w)
    w.restore(text="first")
    w.set_text(big_text(5_000_000))
    text = w.text()  # as Qt keeps it (a line break for each CR LF)
    assert len(text.encode()) > 5_000_000  # 5 MB on disk
    qtbot.waitUntil(lambda: autosave_path().exists() and not w.autosaver.busy
                    and autosave_path().stat().st_size == len(text.encode()), timeout=60000)
    assert threads and all(t is not threading.main_thread() for t in threads)
    assert not autosave_path().with_suffix(".tmp").exists()
    assert load_text() == text
    w.controller.shutdown()  # "crash": no closeEvent, nothing flushed

    w2 = MainWindow(report_error=errors)
    qtbot.addWidget(w2)
    w2.restore()  # (a text this big goes in on the event loop: MainWindow.set_text_soon)
    qtbot.waitUntil(lambda: w2.text() == text, timeout=30000)
    w2.controller.shutdown()


def test_closing_right_after_an_edit_saves_the_newest_text(qtbot, errors):
    w = MainWindow(report_error=errors)
    qtbot.addWidget(w)
    w.restore(text="first")
    w.show()
    wait_highlighted(qtbot, w, timeout=30000)
    w.set_text(big_text(300_000))
    w.autosave_now()  # a background write in flight...
    w.set_text("the newest text")
    w.close()  # ...and the close writes after it
    assert load_text() == "the newest text"
