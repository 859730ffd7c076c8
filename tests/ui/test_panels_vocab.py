"""Vocabulary browser: model contract, lazy exposure, search and sort of the real o200k vocab."""

from __future__ import annotations

import re

import pytest
from panels_support import RankVocab
from PySide6.QtCore import QModelIndex, Qt

from explorer.engine.generators import run_to_end
from explorer.ui.panels.vocab_browser import FIRST_ROWS, VocabBrowser
from explorer.ui.panels.vocab_model import (
    COL_HEX,
    COL_LENGTH,
    COL_PIECE,
    COL_SCORE,
    COL_TYPE,
    FETCH_BATCH,
    VocabTableModel,
    load_vocab_rows,
    query_order,
)


def _rows(vocab):
    return run_to_end(load_vocab_rows(vocab))


@pytest.fixture(scope="module")
def o200k():
    return RankVocab("o200k_base")


@pytest.fixture(scope="module")
def o200k_rows(o200k):
    return _rows(o200k)


def test_rows_columns_are_real_entries(o200k_rows):
    rows = o200k_rows
    assert len(rows) == 199998  # o200k_base ranks (specials excluded)
    i = rows.pieces.index("hello")
    assert rows.hexes[i] == "68 65 6C 6C 6F" and rows.lengths[i] == 5
    assert rows.types[i] == "normal" and rows.scores[i] == float(rows.ids[i])
    # a lone continuation byte is a partial-UTF-8 entry, shown as an escape, never U+FFFD
    j = rows.hexes.index("80")
    assert rows.types[j] == "partial" and rows.texts[j] == "\\x80"


def test_model_passes_qtmodeltester(qtmodeltester):
    model = VocabTableModel()
    model.set_rows(_rows(RankVocab("o200k_base", limit=600)))
    qtmodeltester.check(model, force_py=True)


def test_model_exposes_rows_in_batches(qtbot, o200k_rows):
    model = VocabTableModel()
    model.set_rows(o200k_rows)
    assert model.rowCount() == FETCH_BATCH and model.matching == len(o200k_rows)
    assert model.canFetchMore(QModelIndex())
    with qtbot.waitSignal(model.rowsInserted):
        model.fetchMore(QModelIndex())
    assert model.rowCount() == 2 * FETCH_BATCH
    assert model.data(model.index(FETCH_BATCH, 0)) == str(FETCH_BATCH)
    assert model.data(model.index(0, COL_HEX)) == o200k_rows.hexes[0]


def test_query_order_filters_and_sorts(o200k_rows):
    rows = o200k_rows
    hits = query_order(rows, "hello")
    assert hits and all("hello" in rows.texts[i].lower() for i in hits)
    assert hits == sorted(hits)
    # every match is found: brute force over the whole vocab
    assert len(hits) == sum("hello" in t.lower() for t in rows.texts)
    rx = query_order(rows, r"^[0-9]{3}$", regex=True, sort_column=COL_PIECE, descending=True)
    assert [rows.pieces[i] for i in rx[:2]] == ["999", "998"]
    assert len(rx) == 1000  # o200k has every three-digit number
    longest = query_order(rows, "", sort_column=COL_LENGTH, descending=True)
    assert rows.lengths[longest[0]] == max(rows.lengths)
    by_type = query_order(rows, "", sort_column=COL_TYPE)
    assert rows.types[by_type[0]] == "normal" and rows.types[by_type[-1]] == "partial"
    assert query_order(rows, "", sort_column=COL_SCORE)[:3] == [0, 1, 2]


def test_browser_loads_searches_and_sorts_without_blocking(qtbot, o200k):
    browser = VocabBrowser()
    qtbot.addWidget(browser)
    with qtbot.waitSignals([browser.loaded, browser.query_done], timeout=20000,
                           order="strict"):
        browser.set_tokenizer(o200k)
        # set_tokenizer returned with only the first screenful read: the rest is on a worker
        assert browser.model.matching == FIRST_ROWS < o200k.vocab_size
    assert browser.model.matching == o200k.vocab_size
    assert browser.table.model().rowCount() == FETCH_BATCH  # lazily exposed

    with qtbot.waitSignal(browser.query_done, timeout=5000):
        browser.search.setText("ing")  # debounced, then run on a worker
    model = browser.model
    rows = model.rows
    assert 0 < model.matching < len(rows)
    shown = [model.source_row(r) for r in range(model.rowCount())]
    assert all("ing" in rows.texts[i].lower() or "ing" in rows.pieces[i].lower() for i in shown)
    assert f"{model.matching:,} of {len(rows):,}" in browser.status.text()

    with qtbot.waitSignal(browser.query_done, timeout=5000):
        browser.table.sortByColumn(COL_LENGTH, Qt.SortOrder.DescendingOrder)
    lengths = [int(model.data(model.index(r, COL_LENGTH))) for r in range(model.rowCount())]
    assert lengths == sorted(lengths, reverse=True)

    with qtbot.waitSignal(browser.query_done, timeout=5000):
        browser.regex.setChecked(True)
        browser.search.setText(r"^ing$")
        browser.run_query()
    found = sorted(rows.pieces[model.source_row(r)] for r in range(model.rowCount()))
    assert found == ["ING", "Ing", "ing"]  # search is case-insensitive

    browser.search.setText("(")  # invalid regex: a message, no crash, old result kept
    browser.run_query()
    assert "Invalid regular expression" in browser.status.text()
    assert re.search(r"ing", rows.pieces[model.source_row(0)])
