"""Parity view: the loaded vocabulary through our engine and every reference implementation.

Rows aligned under the text, one per implementation (the Compare view's aligned rows), the
spans where a reference differs from our engine outlined in red; below, one table row per
differing span with the stage that explains it (normalization, pre-tokenization, merges/scores,
unknown/byte fallback, added tokens) and that stage's output on each side. Reference libraries
that are not installed are listed with the pip command that adds them.

*Check a file…* runs every line of a file through every implementation on a worker (progress,
cancel) and lists the differing lines, exportable as CSV or JSON. All the logic is the
engine's (:mod:`explorer.engine.parity`); the work runs through
:class:`~explorer.workers.latest.LatestRunner`.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.compare import compare_boundaries
from explorer.engine.errors import TokenizerError
from explorer.engine.formats import detect_format
from explorer.engine.parity.adapters import implementations_for
from explorer.engine.parity.check import SpanReport, TextParity, check_text
from explorer.engine.parity.implementations import ImplementationSet
from explorer.engine.parity.lines import FileParity, FileProgress, check_file, to_csv, to_json
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.panels.compare_rows import AlignedRows
from explorer.ui.panels.docking import ShownPanel
from explorer.ui.panels.registry import PanelHost, register_panel
from explorer.ui.panels.table_export import ask_export_path, result_table, write_export
from explorer.ui.table_model import HeaderTableModel
from explorer.workers.latest import LatestRunner

_Index = QModelIndex | QPersistentModelIndex
MAX_PARITY_CHARS = 20_000
"""The editor text beyond this is not checked here (use *Check a file…*)."""
SPAN_OUTLINE = QColor(220, 40, 40)


def parity_job(path: Path, tokenizer: Tokenizer, impls: ImplementationSet | None,
               text: str) -> Generator[str, None, tuple[ImplementationSet, TextParity]]:
    """Worker job: build the implementations (once per vocabulary), then check ``text``."""
    if impls is None:
        yield "loading the reference implementations"
        impls = implementations_for(path, tokenizer, fmt=detect_format(path))
    yield "encoding with every implementation"
    return impls, check_text(impls, text)


class ParityRows(AlignedRows):
    """Aligned rows with the differing spans of each reference row outlined."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spans: list[list[tuple[int, int]]] = []

    def set_spans(self, spans: Sequence[Sequence[tuple[int, int]]]) -> None:
        """Per row: the ``(start, end)`` spans to outline."""
        self.spans = [list(s) for s in spans]
        self.update()

    def outlined(self, row: int) -> list[tuple[int, int]]:
        """Token spans outlined in ``row`` (what tests read)."""
        return [(b.tokens[0].start, b.tokens[0].end) for b in self._boxes
                if b.row == row and self._in_span(row, b.tokens[0].start, b.tokens[0].end)]

    def _in_span(self, row: int, start: int, end: int) -> bool:
        spans = self.spans[row] if row < len(self.spans) else []
        return any((start < e and end > s) or (start == end == s) for s, e in spans)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self.spans:
            return
        painter = QPainter(self)
        painter.setPen(QPen(SPAN_OUTLINE, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for box in self._boxes:
            t = box.tokens[0]
            if self._in_span(box.row, t.start, t.end):
                painter.drawRoundedRect(QRectF(box.rect).adjusted(-1, -1, 1, 1), 3, 3)
        painter.end()


class SpanTable(HeaderTableModel):
    """One row per differing span of a reference against our engine."""

    HEADERS = ("implementation", "span", "text", "our tokens", "their tokens", "stage",
               "our stage output", "their stage output", "why")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[str, str, SpanReport]] = []

    def set_result(self, result: TextParity | None) -> None:
        """Show every differing span of ``result``."""
        self.beginResetModel()
        self.rows = [] if result is None else [
            (row.name, result.text, sr) for row in result.rows for sr in row.spans]
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        name, text, sr = self.rows[index.row()]
        s, c = sr.span, sr.cause
        shown = lambda v: "(not exposed)" if v is None else v  # noqa: E731
        return (name, f"{s.start}–{s.end}", text[s.start:s.end],
                " | ".join(t.piece for t in s.ours), " | ".join(t.piece for t in s.theirs),
                c.stage, shown(c.ours), shown(c.theirs), c.explanation)[index.column()]


class LineTable(HeaderTableModel):
    """The differing lines of a whole-file check."""

    HEADERS = ("line", "implementation", "spans", "first token", "stage", "text")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.result: FileParity | None = None

    def set_result(self, result: FileParity | None) -> None:
        """Show ``result``'s differing lines."""
        self.beginResetModel()
        self.result = result
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() or self.result is None else len(self.result.differing)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (role != Qt.ItemDataRole.DisplayRole or self.result is None
                or not 0 <= index.row() < len(self.result.differing)):
            return None
        d = self.result.differing[index.row()]
        return (str(d.line), d.implementation, str(d.spans),
                "" if d.first_token is None else str(d.first_token), d.stage,
                d.text)[index.column()]


class ParityPanel(QWidget):
    """Title and missing libraries, aligned rows, differing spans, whole-file check."""

    checked = Signal()
    """A text result is on screen (tests wait for it)."""
    file_checked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = LatestRunner(owner=self)
        self.file_runner = LatestRunner(owner=self)
        self._impls: ImplementationSet | None = None
        self._impls_key: tuple[str, int] | None = None
        self.result: TextParity | None = None
        self.file_result: FileParity | None = None
        self.title = QLabel("Open a vocabulary file to compare implementations.", self)
        self.title.setWordWrap(True)
        self.missing = QLabel("", self)
        self.missing.setWordWrap(True)
        self.missing.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.rows = ParityRows()
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.rows)
        scroll.setMinimumHeight(60)
        self.spans = SpanTable(self)
        self.span_view = result_table(self.spans, self, max_section=420)
        self.lines = LineTable(self)
        self.line_view = result_table(self.lines, self, max_section=420)
        self.check_file_button = QPushButton("Check a file…", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setEnabled(False)
        self.export_csv = QPushButton("Export CSV…", self)
        self.export_json = QPushButton("Export JSON…", self)
        for b in (self.export_csv, self.export_json):
            b.setEnabled(False)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.file_status = QLabel("", self)
        self.check_file_button.clicked.connect(self._choose_file)
        self.cancel_button.clicked.connect(self.cancel_file)
        self.export_csv.clicked.connect(lambda: self._export("csv"))
        self.export_json.clicked.connect(lambda: self._export("json"))

        file_bar = QHBoxLayout()
        for w in (self.check_file_button, self.cancel_button, self.progress):
            file_bar.addWidget(w)
        file_bar.addWidget(self.file_status, 1)
        file_bar.addWidget(self.export_csv)
        file_bar.addWidget(self.export_json)
        file_box = QWidget(self)
        file_layout = QVBoxLayout(file_box)
        file_layout.setContentsMargins(0, 0, 0, 0)
        file_layout.addLayout(file_bar)
        file_layout.addWidget(self.line_view, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(scroll)
        split.addWidget(self.span_view)
        split.addWidget(file_box)
        split.setSizes([260, 150, 120])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.missing)
        layout.addWidget(split, 1)

    # --- the editor text ------------------------------------------------------------------
    def check(self, path: Path | None, tokenizer: Tokenizer | None, text: str) -> None:
        """Check ``text`` for the vocabulary file ``path`` (loaded as ``tokenizer``)."""
        if path is None or tokenizer is None:
            self.runner.cancel()
            self._impls = None
            self.show_result(None, "This tokenizer has no vocabulary file: parity compares "
                                   "the implementations that read a file.")
            return
        key = (str(path), id(tokenizer))
        if key != self._impls_key:
            self._impls, self._impls_key = None, key
        truncated = len(text) > MAX_PARITY_CHARS
        text = text[:MAX_PARITY_CHARS]
        self.title.setText(f"Checking {path.name} with every implementation…")
        self.runner.submit(
            parity_job, path, tokenizer, self._impls, text,
            on_return=lambda r, k=key: self._on_result(k, r, truncated),
            on_error=lambda e: self.show_result(None, f"Could not check parity: {e}"))

    def _on_result(self, key: tuple[str, int], result: tuple[ImplementationSet, TextParity],
                   truncated: bool) -> None:
        impls, parity = result
        if key == self._impls_key:
            self._impls = impls
        note = f" · only the first {MAX_PARITY_CHARS:,} characters checked" if truncated else ""
        self.show_result(parity, note=note)

    @property
    def implementations(self) -> ImplementationSet | None:
        """The implementations of the current vocabulary (after the first check)."""
        return self._impls

    def show_result(self, result: TextParity | None, message: str = "",
                    note: str = "") -> None:
        """Draw ``result`` (None: show ``message``)."""
        self.result = result
        self.spans.set_result(result)
        impls = self._impls
        self.missing.setText("" if impls is None or not impls.unavailable else
                             "Not available here: " + "; ".join(u.describe()
                                                                for u in impls.unavailable))
        if result is None:
            self.rows.set_data([], [], None)
            self.rows.set_spans([])
            self.title.setText(message)
            self.checked.emit()
            return
        drawn = [r for r in result.rows if r.encoding is not None]
        encodings = [r.encoding for r in drawn]
        self.rows.set_data([r.name for r in drawn], encodings,  # type: ignore[misc]
                           compare_boundaries(encodings) if encodings else None)  # type: ignore[arg-type]
        spans = [[(sr.span.start, sr.span.end) for sr in r.spans] for r in drawn]
        if spans:  # our row: every span any reference differs on
            spans[0] = sorted({s for row in spans[1:] for s in row})
        self.rows.set_spans(spans)
        names = ", ".join(r.name for r in result.rows)
        failed = [f"{r.name} failed: {r.error}" for r in result.rows if r.error]
        if len(result.rows) == 1:
            verdict = "no reference implementation can read this file here"
        elif result.agree:
            verdict = "all implementations agree"
        else:
            n = sum(len(r.spans) for r in result.rows)
            where = result.first_divergence
            first = f"; first differing token: #{where[1]} ({where[0]})" if where else ""
            verdict = f"{n} differing span{'s' if n != 1 else ''} (red){first}"
        self.title.setText(f"{names} · {verdict}{note}"
                           + ("" if not failed else " · " + "; ".join(failed)))
        self.checked.emit()

    # --- a whole file ---------------------------------------------------------------------
    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Check every line of a file", "",
                                              "Text files (*.txt);;All files (*)")
        if path:
            self.check_file(Path(path))

    def check_file(self, path: Path) -> None:
        """Check every line of ``path`` on a worker (progress, cancel)."""
        impls = self._impls
        if impls is None:
            self.file_status.setText("Wait for the implementations to load.")
            return
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.check_file_button.setEnabled(False)
        self.file_status.setText(f"Checking {path.name}…")
        self.file_runner.submit(check_file, impls, path, every=32,
                                on_yield=self._on_file_progress,
                                on_return=self._on_file_done,
                                on_error=lambda e: self._file_finished(f"Could not check: {e}"))

    def _on_file_progress(self, p: FileProgress) -> None:
        self.progress.setValue(int(1000 * p.done / p.total) if p.total else 0)
        self.file_status.setText(f"{p.lines:,} lines checked")

    def _on_file_done(self, result: FileParity) -> None:
        self.file_result = result
        self.lines.set_result(result)
        counts = ", ".join(f"{name}: {n:,}" for name, n in result.counts().items())
        self._file_finished(f"{result.lines:,} lines · differing lines: {counts or 'none'}")
        for b in (self.export_csv, self.export_json):
            b.setEnabled(True)
        self.file_checked.emit()

    def cancel_file(self) -> None:
        """Stop the whole-file check (the worker stops at its next line batch)."""
        if self.file_runner.current is not None:
            self.file_runner.cancel()
            self._file_finished("Cancelled.")

    def _file_finished(self, message: str) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setEnabled(False)
        self.check_file_button.setEnabled(True)
        self.file_status.setText(message)

    def _export(self, kind: str) -> None:
        path = ask_export_path(self, f"Export differing lines as {kind.upper()}",
                               f"parity.{kind}", kind)
        if path is not None:
            self.export(path, kind)

    def export(self, path: Path, kind: str) -> None:
        """Write the whole-file result as ``csv`` or ``json``."""
        if self.file_result is None:
            return
        data = to_csv(self.file_result) if kind == "csv" else to_json(self.file_result) + "\n"
        write_export(path, data, self.file_status)


class ParityDock(ShownPanel):
    """Follows the window: re-checks the text when it or the tokenizer changes, while shown."""

    def __init__(self, host: PanelHost) -> None:
        self.panel = ParityPanel()
        super().__init__(host, "parity", "Parity", self.panel)
        host.tokenizer_changed.connect(lambda _t: self.refresh())
        host.text_changed.connect(lambda _t: self.refresh())

    def jobs_busy(self) -> bool:
        return self.panel.runner.current is not None

    def update_panel(self) -> None:
        from explorer.ui.tokenizer_source import source_path

        source = self.host.source
        path: Path | None = None
        if source and not source.startswith("trained:"):
            try:
                path = source_path(source)
                detect_format(path)
            except TokenizerError:
                path = None
        self.panel.check(path, self.host.tokenizer, self.host.text())


@register_panel("parity", order=60)
def install_parity_panel(host: PanelHost) -> ParityDock:
    """Dock the parity view (``--view parity``)."""
    return ParityDock(host)
