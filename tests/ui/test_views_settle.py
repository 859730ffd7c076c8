"""The token table, inspector and counts follow typing once it settles; the rows they show
after several quick edits are exactly the document's tokens (no reset of the table)."""

from __future__ import annotations

import pytest
from conftest import wait_highlighted
from doubles import TiktokenDouble
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine.generators import run_to_end as _full
from explorer.ui.token_table import COL_ID, COL_SPAN, combined_rows
from explorer.workers.doctokens import encode_document, update_document

TIK = TiktokenDouble()
BASE = "".join(f"line {i}: some words, numbers {i * 37} and é😀 here\n" for i in range(40))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_combined_rows_take_the_first_result_to_the_last(data):
    """Applying the combined replacement to the first result's tokens gives the last's."""
    text = BASE
    before = doc = _full(encode_document(TIK, text, chunk=64))
    steps = []
    for _ in range(data.draw(st.integers(1, 5))):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, min(len(text), a + 8)))
        ins = data.draw(st.text(alphabet="ab \n,7é😀", max_size=4))
        text = text[:a] + ins + text[b:]
        doc, change = update_document(doc, text)  # type: ignore[misc]
        steps.append((doc.token_count, change))
    first, old, new = combined_rows(before, steps)
    ids0, ids1 = before.ids().tolist(), doc.ids().tolist()
    assert ids0[:first] + ids1[first:first + new] + ids0[first + old:] == ids1
    assert first + old <= len(ids0)


def test_combined_rows_need_a_chain():
    doc = _full(encode_document(TIK, BASE))
    other = _full(encode_document(TIK, BASE + "x"))
    assert combined_rows(None, [(doc.token_count, None)]) is None
    assert combined_rows(doc, []) is None
    # a full result: the table resets
    assert combined_rows(doc, [(other.token_count, None)]) is None


@pytest.mark.usefixtures("no_qt_warnings")
def test_table_and_inspector_follow_quick_typing(qtbot, window):
    window.set_text(BASE)
    wait_highlighted(qtbot, window)
    cur = window.editor.textCursor()
    at = BASE.index("line 20:") + 4
    cur.setPosition(len(BASE[:at].encode("utf-16-le")) // 2)
    window.editor.setTextCursor(cur)
    wait_highlighted(qtbot, window)
    resets = []
    window.table_model.modelReset.connect(lambda: resets.append(1))
    qtbot.keyClicks(window.editor, "xy 12")  # several results before typing settles
    wait_highlighted(qtbot, window)
    doc, model = window.doc, window.table_model
    assert model.doc is doc and model.rowCount() == doc.token_count
    assert resets == []  # rows replaced in place: the table keeps its scroll and selection
    for row in range(doc.token_count):
        start, end = doc.span(row)
        assert model.index(row, COL_ID).data() == str(doc.token_id(row))
        assert model.index(row, COL_SPAN).data() == f"{start}–{end}"
    here = doc.token_at(window.text().index("linexy 12 20:") + 9)  # the cursor is there
    assert window.linker.current == here
    assert window.table.currentIndex().row() == here
    assert str(doc.token_id(here)) in window.inspector.text
    assert f"{doc.token_count:,} tokens" in window.status.stats.text()
