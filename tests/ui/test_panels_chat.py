"""The chat panel in the window: the rendered prompt equals transformers', counts per message,
editing re-renders, and a hostile template gives a message while the window stays live."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise

import pytest
from chat_samples import DOCUMENTS
from PySide6.QtCore import QTimer
from PySide6.QtGui import QTextCursor
from references import require

from explorer.engine.chat.sandbox import render
from explorer.engine.chat.templates import chat_setup
from explorer.engine.formats import load_tokenizer
from explorer.engine.offsets import Utf16Map


def _chat(window):
    return window.panel_objects["chat"]


def _open(qtbot, w, path) -> None:
    with qtbot.waitSignal(w.tokenizer_changed, timeout=30000):
        w.open_source(str(path))


def test_chat_view_renders_the_models_template(qtbot, window):
    w = window
    gguf = require("llama-cpp", "ggml-vocab-qwen2.gguf")
    _open(qtbot, w, gguf)
    chat = _chat(w)
    assert w.show_view("chat")
    qtbot.waitUntil(lambda: not chat.busy() and bool(chat.panel.prompt.toPlainText()),
                    timeout=30000)
    panel = chat.panel
    assert panel.template.currentData() == "default"
    setup = chat_setup(gguf)
    messages = panel.messages.messages()
    expected = render(setup.templates["default"], messages, add_generation_prompt=True,
                      variables=setup.variables)
    assert panel.prompt.toPlainText() == expected
    total = len(load_tokenizer(gguf).encode(expected).ids)
    # neighbouring tokens never share a background (a repeat takes the second shade)
    shown = [t for t in load_tokenizer(gguf).encode(expected).tokens if t.end > t.start]
    u16 = Utf16Map(expected)
    cursor = QTextCursor(panel.prompt.document())

    def background(tok) -> str:
        cursor.setPosition(u16.to_utf16(tok.end))  # the format of the character before
        return cursor.charFormat().background().color().name()

    pairs = [(a, b) for a, b in pairwise(shown)  # (a line end has no background)
             if a.end == b.start and "\n" not in expected[a.start:b.end]]
    assert len(pairs) > 50
    assert [(a, b) for a, b in pairs if background(a) == background(b)] == []
    assert f"{total} tokens" in panel.total.text() and "32,768" in panel.total.text()
    counts = [row.count.text() for row in panel.messages.rows]
    assert all(c.endswith(" tokens") for c in counts) and len(counts) == 4
    # hovering: the token, its id and which message it belongs to (positions in UTF-16)
    tip = panel.token_tooltip(0)
    assert tip.startswith("special token #0  id 151644  '<|im_start|>'")
    assert tip.endswith("message 1 (system)")
    emoji = panel.prompt.toPlainText().index("😀")
    assert "message 2 (user)" in panel.token_tooltip(emoji + 1)  # UTF-16: after the 😀 start
    assert panel.token_tooltip(len(expected.encode("utf-16-le")) // 2 - 1).endswith(
        "generation prompt")

    # editing: remove a message, move one, toggle the generation prompt -> re-rendered
    rows = panel.messages.rows
    rows[1].remove.emit(rows[1])
    panel.messages.rows[1].move.emit(panel.messages.rows[1], -1)
    panel.generation.setChecked(False)
    edited = panel.messages.messages()
    assert [m["role"] for m in edited] == ["assistant", "system", "user"]
    want = render(setup.templates["default"], edited, add_generation_prompt=False,
                  variables=setup.variables)
    qtbot.waitUntil(lambda: panel.prompt.toPlainText() == want, timeout=30000)
    # a built-in template can be chosen too
    panel.template.setCurrentIndex(panel.template.findData("llama-3"))
    qtbot.waitUntil(lambda: "<|start_header_id|>" in panel.prompt.toPlainText(), timeout=30000)


def test_hostile_template_gives_a_message_and_the_window_stays_live(qtbot, window, tmp_path):
    w = window
    folder = tmp_path / "hostile"
    shutil.copytree(require("minilm-folder", "vocab.txt").parent, folder)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = [
        {"name": "default", "template": "{% for a in range(100000) %}{% for b in range(100000)"
                                        " %}{% endfor %}{% endfor %}"},
        {"name": "escape", "template": "{{ cycler.__init__.__globals__.os }}"},
        {"name": "recurse", "template": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"}]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    _open(qtbot, w, folder / "vocab.txt")
    chat = _chat(w)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    w.show_view("chat")
    qtbot.waitUntil(lambda: "longer than" in chat.panel.status.text(), timeout=30000)
    assert len(ticks) > 10  # the event loop kept running while the template looped
    assert len(chat.panel.messages.rows) == 4  # the conversation is kept
    for name, needle in (("escape", "sandbox"), ("recurse", "recursed")):
        chat.panel.template.setCurrentIndex(chat.panel.template.findData(name))
        qtbot.waitUntil(lambda needle=needle: needle in chat.panel.status.text(), timeout=30000)
    chat.panel.template.setCurrentIndex(chat.panel.template.findData("chatml"))
    qtbot.waitUntil(lambda: chat.panel.status.text() == "" and "<|im_start|>" in
                    chat.panel.prompt.toPlainText(), timeout=30000)
    timer.stop()




def test_tools_and_documents_field(qtbot, window, tmp_path):
    """The documents typed in the panel reach a real RAG template (command-r's, in a model
    folder), rendered exactly as transformers does; malformed JSON is a message, text kept."""
    utils = pytest.importorskip("transformers.utils.chat_template_utils")
    w = window
    rag = chat_setup(require("llama-cpp", "ggml-vocab-command-r.gguf")).templates["rag"]
    folder = tmp_path / "rag"
    shutil.copytree(require("minilm-folder", "vocab.txt").parent, folder)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = [{"name": "default", "template": rag}]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    _open(qtbot, w, folder)
    chat = _chat(w)
    panel = chat.panel
    w.show_view("chat")
    # without documents this template fails (as in transformers): a message, no prompt
    qtbot.waitUntil(lambda: "NoneType" in panel.status.text(), timeout=30000)
    panel.extras.setPlainText(json.dumps({"documents": DOCUMENTS}))
    qtbot.waitUntil(lambda: "Paris has 2.1 million" in panel.prompt.toPlainText(),
                    timeout=30000)
    setup = chat_setup(folder)
    want = utils.render_jinja_template(
        conversations=[panel.messages.messages()], chat_template=rag,
        add_generation_prompt=True, documents=DOCUMENTS, **setup.variables)[0][0]
    assert panel.prompt.toPlainText() == want and panel.status.text() == ""
    total = len(load_tokenizer(folder).encode(want).ids)
    assert f"{total:,} tokens" in panel.total.text()
    panel.extras.setPlainText('{"documents": [')
    qtbot.waitUntil(lambda: "tools/documents" in panel.status.text(), timeout=30000)
    assert panel.prompt.toPlainText() == want and panel.extras.toPlainText().endswith("[")


@pytest.mark.parametrize("name", ["chat"])
def test_chat_is_a_screenshot_view(window, name):
    assert name in window.view_names()


@pytest.mark.parametrize("chosen", [".", "vocab.txt"])
def test_dropping_a_model_folder_or_its_vocab_txt_opens_the_folder(qtbot, window, tmp_path,
                                                                   chosen):
    from pathlib import Path

    folder = tmp_path / "bert"
    shutil.copytree(require("minilm-folder", "vocab.txt").parent, folder)
    path = folder if chosen == "." else folder / chosen
    window.set_text("kept text")
    with qtbot.waitSignal(window.tokenizer_changed, timeout=30000):
        window.open_dropped(Path(path))
    assert window.text() == "kept text"
    assert window.tokenizer.info.format == "folder"
    assert window.tokenizer.info.vocab_size == 30522


def test_a_broken_folder_reports_and_keeps_the_text(qtbot, window, errors, tmp_path):
    (tmp_path / "vocab.json").write_text('{"a": 0}')
    window.set_text("kept text")
    with qtbot.waitSignal(window.loader.failed, timeout=30000):
        window.open_dropped(tmp_path / "vocab.json")
    assert window.text() == "kept text"
    assert errors.errors and "merges.txt" in errors.errors[-1][1]
