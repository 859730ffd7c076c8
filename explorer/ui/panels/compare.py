"""Comparison view: one text tokenized by several tokenizers, rows aligned, differences marked.

The boundary logic is the engine's (:func:`explorer.engine.compare.compare_boundaries`): the
text is cut at every boundary of every tokenizer into segments; this view lays the segments out
left to right (wrapping), and under each other draws one row per tokenizer, whose token boxes
span whole segments, so equal boundaries line up. A boundary that some tokenizers have and
others lack is marked with a red bar in the rows that have it. Above, a table puts the counts
side by side (tokens, characters and bytes per token, unknown tokens, differing boundaries).

Encoding runs on a worker (:class:`~explorer.workers.latest.LatestRunner`, latest wins).
Only the first :data:`MAX_DRAWN_CHARS` characters are drawn; the counts cover the first
:data:`MAX_COMPARED_CHARS` characters (an encode cannot be interrupted half-way, so a huge
document would keep a core busy after every edit).
Zero-width tokens (e.g. a BOS with an empty span) are counted but not drawn.
"""

from __future__ import annotations

from collections.abc import Collection, Generator, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QScrollArea,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.compare import BoundaryComparison, compare_boundaries
from explorer.engine.encoding import Encoding
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.panels.compare_rows import MAX_DRAWN_CHARS, AlignedRows
from explorer.ui.table_model import HeaderTableModel
from explorer.workers.latest import LatestRunner

_Index = QModelIndex | QPersistentModelIndex
MAX_COMPARED_CHARS = 200_000
"""Text beyond this is not compared (the title says so)."""


def encode_all(tokenizers: Sequence[Tokenizer], text: str) -> Generator[int, None, list[Encoding]]:
    """Worker job: encode ``text`` with each tokenizer, yielding after each (cancel point)."""
    out: list[Encoding] = []
    for i, tok in enumerate(tokenizers):
        out.append(tok.encode(text))
        yield i + 1
    return out


class CompareStatsModel(HeaderTableModel):
    """Per-tokenizer counts, one row per tokenizer."""

    HEADERS = ("tokenizer", "tokens", "chars/token", "bytes/token", "unknown",
               "differing boundaries")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._names: list[str] = []
        self._cmp: BoundaryComparison | None = None

    def set_comparison(self, names: Sequence[str], cmp: BoundaryComparison | None) -> None:
        """Show the counts of ``cmp`` (rows named by ``names``)."""
        self.beginResetModel()
        self._names = list(names) if cmp is not None else []
        self._cmp = cmp
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self._names)



    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._cmp is None or not 0 <= index.row() < len(self._names):
            return None
        r, c = index.row(), index.column()
        s = self._cmp.stats[r]
        if role == Qt.ItemDataRole.DisplayRole:
            return (self._names[r], f"{s.tokens:,}", f"{s.chars_per_token:.2f}",
                    f"{s.bytes_per_token:.2f}", f"{s.unknown:,}",
                    f"{len(self._cmp.differing[r]):,}")[c]
        if role == Qt.ItemDataRole.TextAlignmentRole and c > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class ComparePanel(QWidget):
    """Counts table above, aligned token rows below."""

    compared = Signal()
    """A comparison is on screen (tests wait for it)."""
    choices_changed = Signal(list)
    """The sources ticked in the "Compare with" menu (the window's glue loads them)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tokenizers: list[Tokenizer] = []
        self._text = ""
        self._truncated = False
        self.runner = LatestRunner(owner=self)
        """Encodes on a worker (latest request wins)."""
        self.title = QLabel("Pick two or more tokenizers to compare.", self)
        self.title.setWordWrap(True)
        self.choose = QToolButton(self)
        self.choose.setText("Compare with")
        self.choose.setToolTip("Tokenizers compared with the current one")
        self.choose.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.choose_menu = QMenu(self.choose)
        self.choose.setMenu(self.choose_menu)
        self.choose_menu.triggered.connect(lambda _a: self.choices_changed.emit(self.chosen()))
        self.stats = CompareStatsModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.stats)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.rows = AlignedRows()
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.rows)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.scroll)
        split.setSizes([110, 400])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.choose)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    # --- inputs ---------------------------------------------------------------------------
    def set_choices(self, choices: Sequence[tuple[str, str]], checked: Collection[str]) -> None:
        """Offer ``(source, label)`` pairs in the "Compare with" menu, ``checked`` ticked."""
        self.choose_menu.clear()
        for source, label in choices:
            action = self.choose_menu.addAction(label)
            action.setCheckable(True)
            action.setChecked(source in checked)
            action.setData(source)

    def chosen(self) -> list[str]:
        """The sources ticked in the menu, in menu order."""
        return [a.data() for a in self.choose_menu.actions() if a.isChecked()]

    def set_tokenizers(self, tokenizers: Sequence[Tokenizer]) -> None:
        """Compare with these tokenizers (re-encodes the current text on a worker)."""
        self._tokenizers = list(tokenizers)
        self.refresh()

    def set_text(self, text: str) -> None:
        """Compare this text, up to :data:`MAX_COMPARED_CHARS` (re-encodes on a worker)."""
        self._truncated = len(text) > MAX_COMPARED_CHARS
        self._text = text[:MAX_COMPARED_CHARS]
        self.refresh()

    def refresh(self) -> None:
        """Re-encode the current text with the current tokenizers."""
        toks = list(self._tokenizers)
        if not toks:
            self.runner.cancel()
            self.set_encodings([], [])
            return
        names = [t.info.name for t in toks]
        self.title.setText(f"Encoding with {len(toks)} tokenizers…")
        self.runner.submit(encode_all, toks, self._text,
                            on_return=lambda encs: self.set_encodings(names, encs),
                            on_error=lambda e: self.title.setText(f"Could not encode: {e}"))

    def set_encodings(self, names: Sequence[str], encodings: Sequence[Encoding]) -> None:
        """Show already computed encodings of one text (at least one to draw anything)."""
        cmp = compare_boundaries(encodings) if encodings else None
        self.stats.set_comparison(names, cmp)
        self.rows.set_data(names, encodings, cmp)
        if cmp is None:
            self.title.setText("Pick two or more tokenizers to compare.")
        else:
            n = len(cmp.all_differing)
            drawn = ("" if len(cmp.text) <= MAX_DRAWN_CHARS
                     else f" · first {MAX_DRAWN_CHARS:,} characters drawn")
            if self._truncated and cmp.text == self._text:
                drawn += f" · only the first {MAX_COMPARED_CHARS:,} characters compared"
            self.title.setText(
                f"{len(cmp.text):,} characters · {n:,} boundar{'y' if n == 1 else 'ies'} "
                f"differ (red bars){drawn}")
        self.compared.emit()
