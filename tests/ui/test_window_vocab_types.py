"""Vocabulary browser: entry types as the model records them, and double-click to find a token.

SentencePiece byte pieces (``<0x00>``...) are ``byte``, not ``normal``; control, user-defined,
unused and unknown pieces are labelled by the model's own type, checked against the real
sentencepiece library and its ``ModelProto`` on a real Mistral model.
"""

from __future__ import annotations

from collections import Counter

from conftest import wait_highlighted
from PySide6.QtCore import Qt
from references import require

from explorer.bundled import resource_path
from explorer.engine.encoding import Token
from explorer.engine.formats import load_tokenizer
from explorer.engine.generators import run_to_end
from explorer.ui.panels.vocab_browser import first_token_index
from explorer.ui.panels.vocab_model import COL_ID, entry_type, load_vocab_rows


def _rows(tokenizer):
    return run_to_end(load_vocab_rows(tokenizer))


def test_sentencepiece_byte_pieces_are_labelled_byte():
    tok = load_tokenizer(resource_path("vocab/corpus_unigram_4k.model"))
    rows = _rows(tok)
    by_piece = dict(zip(rows.pieces, rows.types, strict=True))
    assert by_piece["<0x00>"] == by_piece["<0x41>"] == by_piece["<0xFF>"] == "byte"
    assert by_piece["<unk>"] == "unknown"
    assert by_piece["<s>"] == by_piece["</s>"] == "control"
    assert Counter(rows.types)["byte"] == 256
    assert by_piece["\u2581the"] == "normal"


def test_types_match_the_sentencepiece_library_on_a_real_model():
    path = require("mistral-common", "mistral_instruct_tokenizer_240323.model.v3")
    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2 as pb

    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    proto = pb.ModelProto()
    proto.ParseFromString(path.read_bytes())
    rows = _rows(load_tokenizer(path))
    assert len(rows) == sp.get_piece_size()
    for i, kind in enumerate(rows.types):
        expected = ("byte" if sp.IsByte(i) else "control" if sp.IsControl(i)
                    else "unknown" if sp.IsUnknown(i) else "unused" if sp.IsUnused(i)
                    else "user-defined" if proto.pieces[i].type == proto.pieces[i].USER_DEFINED
                    else "normal")
        assert kind == expected, (i, rows.pieces[i])
    assert {"byte", "control", "user-defined", "unknown", "normal"} <= set(rows.types)


def test_derived_types_without_model_types():
    assert entry_type(Token(3, "<0x41>", b"A", 0, 0)) == "byte"  # byte fallback (HF json)
    assert entry_type(Token(3, "<0x41>", b"<0x41>", 0, 0)) == "normal"  # literal text
    assert entry_type(Token(3, "\u0120\u00e2", b"\xe2", 0, 0)) == "partial"
    assert entry_type(Token(3, "<s>", b"", 0, 0, special=True)) == "special"
    assert entry_type(Token(3, "x", b"x", 0, 0), lambda _i: "user-defined") == "user-defined"


def test_double_click_selects_the_first_occurrence_in_the_text(qtbot, window):
    text = "one two three two two\n"
    window.set_text(text)
    wait_highlighted(qtbot, window)
    enc = window.tokenizer.encode(text)
    two = next(t for t in enc.tokens if t.token_bytes == b" two")
    assert first_token_index(window.doc, two.id) == enc.tokens.index(two)
    browser = window.panel_objects["vocab"].vocab
    window.show_view("vocab")
    qtbot.waitUntil(lambda: len(browser.model.rows) > 100_000, timeout=60000)  # all loaded
    with qtbot.waitSignal(browser.query_done, timeout=30000):
        browser.search.setText(" two")
        browser.run_query()
    qtbot.waitUntil(lambda: browser.model.rowCount() > 0, timeout=10000)
    row = next(r for r in range(browser.model.rowCount())
               if browser.model.index(r, COL_ID).data() == str(two.id))
    index = browser.model.index(row, COL_ID)
    browser.table.scrollTo(index)
    rect = browser.table.visualRect(index)
    qtbot.mouseClick(browser.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(browser.token_activated, timeout=2000) as sig:
        qtbot.mouseDClick(browser.table.viewport(), Qt.MouseButton.LeftButton,
                          pos=rect.center())
    assert sig.args == [two.id]
    first = enc.tokens.index(two)
    assert window.linker.current == first
    assert window.table.currentIndex().row() == first
    assert window.editor.textCursor().position() == two.start
    assert "first of 3" in browser.status.text()
    # an id that is not in the text says so and changes nothing
    browser.token_activated.emit(enc.tokens[0].id + 50_000)
    assert window.linker.current == first
    assert "does not occur" in browser.status.text()
