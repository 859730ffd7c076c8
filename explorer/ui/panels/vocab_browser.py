"""Vocabulary browser: the whole vocabulary of a tokenizer, searchable and sortable.

Loading (one ``id_to_token`` per entry, 262k for Gemma) and every search/sort run on a worker
through :class:`~explorer.workers.latest.LatestRunner` (latest request wins, so typing in the
search box never queues stale work); the table shows the result through
:class:`~explorer.ui.panels.vocab_model.VocabTableModel`'s ``fetchMore``. The GUI thread only
swaps row orders. Search matches the piece or the decoded text, as a case-insensitive
substring or a regular expression.

Does not handle: editing entries.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.tokenizer import Tokenizer
from explorer.ui.panels.vocab_model import (
    COL_ID,
    COL_PIECE,
    COL_TEXT,
    VocabRows,
    VocabTableModel,
    load_vocab_rows,
    query_job,
    read_rows,
)
from explorer.workers.doctokens import DocTokens
from explorer.workers.latest import LatestRunner

SEARCH_DELAY_MS = 150
FIRST_ROWS = 200
"""Entries read on the GUI thread when a vocabulary is set (about a millisecond)."""
"""Typing pauses this long before a search starts."""


def first_token_index(doc: DocTokens, token_id: int) -> int | None:
    """Index of the first token of ``doc`` whose id is ``token_id``, or None."""
    return doc.first_index_of(token_id)


class VocabBrowser(QWidget):
    """Search box, regex toggle, status line and the vocabulary table."""

    token_activated = Signal(int)
    """A token id the user double-clicked (the panel hub selects its first occurrence in the
    text: :meth:`locate`)."""
    query_done = Signal()
    """A search/sort result is on screen (tests wait for it)."""
    loaded = Signal()
    """A vocabulary finished loading and is on screen."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = VocabTableModel(self)
        self.loader = LatestRunner(owner=self)
        self.query_runner = LatestRunner(owner=self)
        self._name = ""

        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search pieces or text…")
        self.search.setClearButtonEnabled(True)
        self.regex = QCheckBox("Regex", self)
        self.status = QLabel("No vocabulary", self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL_ID, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for col, width in ((COL_ID, 70), (COL_PIECE, 160), (COL_TEXT, 160)):
            self.table.setColumnWidth(col, width)

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.regex)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)

        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(SEARCH_DELAY_MS)
        self._delay.timeout.connect(self.run_query)
        self.search.textChanged.connect(self._delay.start)
        self.regex.toggled.connect(self.run_query)
        self.model.sort_requested.connect(lambda *_: self.run_query())
        self.table.doubleClicked.connect(
            lambda index: self.token_activated.emit(
                self.model.rows.ids[self.model.source_row(index.row())]))

    # --- inputs ----------------------------------------------------------------------------
    def set_tokenizer(self, tokenizer: Tokenizer) -> None:
        """Load the vocabulary of ``tokenizer`` on a worker; the table fills when done."""
        self.query_runner.cancel()
        self._name = tokenizer.info.name
        total = tokenizer.vocab_size
        # The first entries at once, so the table is never empty while the rest loads.
        self.model.set_rows(read_rows(tokenizer, FIRST_ROWS))
        self.status.setText(f"Loading {self._name}: 0 / {total:,} entries…")
        self.loader.submit(
            load_vocab_rows, tokenizer,
            on_yield=lambda n: self.status.setText(
                f"Loading {self._name}: {n:,} / {total:,} entries…"),
            on_return=self._on_loaded,
            on_error=lambda e: self.status.setText(f"Could not load the vocabulary: {e}"),
        )

    def locate(self, doc: DocTokens | None, token_id: int) -> int | None:
        """Index of the first token with id ``token_id`` in ``doc`` (the window's text), or
        None; the status line says which occurrence was found, or that there is none."""
        index = first_token_index(doc, token_id) if doc is not None else None
        if doc is None or index is None:
            self.status.setText(f"Token id {token_id} does not occur in the text.")
            return None
        count = doc.count_id(token_id)
        self.status.setText(f"Token id {token_id}: first of {count:,} in the text "
                            f"(token #{index}) selected.")
        return index

    def set_rows(self, rows: VocabRows, name: str = "") -> None:
        """Show already loaded rows (then re-apply the current search and sort)."""
        self.loader.cancel()
        self._name = name
        self.model.set_rows(rows)
        self.run_query()

    # --- internals -------------------------------------------------------------------------
    def _on_loaded(self, rows: VocabRows) -> None:
        self.model.set_rows(rows)
        self.loaded.emit()
        self.run_query()

    def run_query(self) -> None:
        """Start the search/sort for the current box, toggle and sort column (latest wins)."""
        self._delay.stop()
        pattern = self.search.text()
        regex = self.regex.isChecked()
        if regex:
            try:
                re.compile(pattern)
            except re.error as e:
                self.status.setText(f"Invalid regular expression: {e}")
                return
        column, descending = self.model.sort_request
        self.query_runner.submit(query_job, self.model.rows, pattern, regex, column, descending,
                           on_return=self._on_query, on_error=self._on_query_error)

    def _on_query(self, order: Any) -> None:
        self.model.set_order(order)
        total = len(self.model.rows)
        shown = self.model.matching
        what = f"{self._name}: " if self._name else ""
        self.status.setText(f"{what}{shown:,} of {total:,} entries" if shown != total
                            else f"{what}{total:,} entries")
        self.query_done.emit()

    def _on_query_error(self, error: Any) -> None:
        self.status.setText(f"Search failed: {error}")
        self.query_done.emit()
