"""The vocabulary as a lazily exposed table model, with filtering and sorting done in bulk.

A vocabulary can have 262k entries. Qt's ``QSortFilterProxyModel`` calls back into Python for
every comparison when its source is a Python model: measured here, sorting 200k rows through it
took 31 s and clearing a filter 0.4 s, all on the GUI thread. So the rows are held as plain
column lists (:class:`VocabRows`, built off the GUI thread by :func:`load_vocab_rows`), a
filter/sort request becomes a row order computed in bulk by :func:`query_order` (about 0.1 s
for 262k rows in pure Python, run on a worker), and :class:`VocabTableModel` shows that order
through ``canFetchMore``/``fetchMore`` in batches, so a view never asks for more than it shows.

Does not handle: editing, or vocabularies that change while shown (load a new one instead).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal

from explorer.engine.encoding import Token
from explorer.engine.tokenizer import Tokenizer
from explorer.ui.inspector import hex_bytes
from explorer.ui.table_model import HeaderTableModel

COL_ID, COL_PIECE, COL_TEXT, COL_HEX, COL_LENGTH, COL_SCORE, COL_TYPE = range(7)
HEADERS = ("id", "piece", "text", "bytes (hex)", "length", "score / rank", "type")
FETCH_BATCH = 2048
"""Rows exposed per ``fetchMore``: a screenful many times over, cheap to insert."""

_Index = QModelIndex | QPersistentModelIndex


@dataclass(slots=True)
class VocabRows:
    """Every vocabulary entry, column by column (index = row = position in the vocabulary)."""

    ids: list[int] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    """Decoded bytes, partial UTF-8 as ``\\xNN`` escapes (never U+FFFD)."""
    hexes: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    """Length in bytes."""
    scores: list[float | None] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    """The vocabulary's own entry type where it records one (:func:`entry_type`), else
    ``normal``, ``special``, ``unknown``, ``byte`` or ``partial`` (bytes not UTF-8 alone)."""

    def __len__(self) -> int:
        return len(self.ids)


def load_vocab_rows(tokenizer: Tokenizer, *, chunk: int = 8192,
                    limit: int | None = None) -> Generator[int, None, VocabRows]:
    """Read every entry of ``tokenizer`` (the first ``limit`` ids only, when given); yield the
    count read so far every ``chunk`` entries (a progress report and a cancellation point) and
    return the :class:`VocabRows`.

    A worker job (see ``explorer.workers``)."""
    rows = VocabRows()
    size = tokenizer.vocab_size if limit is None else min(limit, tokenizer.vocab_size)
    piece_type = getattr(tokenizer, "piece_type", None)  # duck-typed vocabularies may lack it
    for token_id in range(size):
        try:
            tok = tokenizer.id_to_token(token_id)
        except (KeyError, IndexError):  # holes in sparse vocabularies (e.g. tiktoken specials)
            continue
        rows.ids.append(tok.id)
        rows.pieces.append(tok.piece)
        rows.texts.append(tok.text)
        rows.hexes.append(hex_bytes(tok.token_bytes))
        rows.lengths.append(len(tok.token_bytes))
        rows.scores.append(tok.score if tok.score is not None else
                           (float(tok.rank) if tok.rank is not None else None))
        rows.types.append(entry_type(tok, piece_type))
        if (token_id + 1) % chunk == 0:
            yield token_id + 1
    return rows


_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def entry_type(tok: Token, piece_type: Callable[[int], str | None] | None = None) -> str:
    """Type of vocabulary entry ``tok``: the model's own (``piece_type``, e.g. SentencePiece
    ``byte``/``control``/``user-defined``/``unused``) when it records one; otherwise derived:
    ``special``, ``unknown``, ``byte`` (a ``<0xNN>`` byte-fallback piece standing for that
    byte), ``partial`` (bytes not valid UTF-8 alone) or ``normal``."""
    kind = piece_type(tok.id) if piece_type is not None else None
    if kind is not None:
        return kind
    if tok.special:
        return "special"
    if tok.unknown:
        return "unknown"
    m = _BYTE_PIECE.fullmatch(tok.piece)
    if m is not None and tok.token_bytes == bytes((int(m.group(1), 16),)):
        return "byte"
    return "partial" if tok.is_partial_utf8 else "normal"


def query_job(rows: VocabRows, pattern: str, regex: bool, sort_column: int,
              descending: bool) -> Generator[None, None, list[int]]:
    """:func:`query_order` as a worker job (one cancellation point before the work)."""
    yield None
    return query_order(rows, pattern, regex=regex, sort_column=sort_column,
                       descending=descending)


def query_order(rows: VocabRows, pattern: str = "", *, regex: bool = False,
                sort_column: int = COL_ID, descending: bool = False) -> list[int]:
    """Row numbers of the entries whose piece or text matches ``pattern``, sorted by a column.

    Substring search is case-insensitive; with ``regex`` the pattern is a Python regular
    expression (``re.error`` propagates for the caller to show). Ties keep vocabulary order;
    missing scores sort last either way.
    """
    n = len(rows)
    if pattern:
        rx = re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE)
        pieces, texts = rows.pieces, rows.texts
        order = [i for i in range(n) if rx.search(pieces[i]) or rx.search(texts[i])]
    else:
        order = list(range(n))
    if sort_column == COL_SCORE:
        present = [i for i in order if rows.scores[i] is not None]
        missing = [i for i in order if rows.scores[i] is None]
        scores = rows.scores
        present.sort(key=scores.__getitem__, reverse=descending)  # type: ignore[arg-type]
        return present + missing
    keys: Sequence[Any] = {
        COL_ID: rows.ids, COL_PIECE: rows.pieces, COL_TEXT: rows.texts, COL_HEX: rows.hexes,
        COL_LENGTH: rows.lengths, COL_TYPE: rows.types,
    }[sort_column]
    if sort_column == COL_ID and not descending:
        return order  # already in id order
    order.sort(key=keys.__getitem__, reverse=descending)
    return order


class VocabTableModel(HeaderTableModel):
    """Shows ``rows`` in a given order, exposing ``FETCH_BATCH`` more rows per ``fetchMore``.

    ``sort()`` (called by a view's header) does not sort here: it stores the request in
    :attr:`sort_request` and emits :attr:`sort_requested`; the browser computes the order off
    the GUI thread and calls :meth:`set_order`.
    """

    HEADERS = HEADERS

    sort_requested = Signal(int, bool)
    """(column, descending) asked for by a view."""

    ALIGN_RIGHT: ClassVar[frozenset[int]] = frozenset({COL_ID, COL_LENGTH, COL_SCORE})

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows = VocabRows()
        self._order: list[int] = []
        self._exposed = 0
        self.sort_request: tuple[int, bool] = (COL_ID, False)

    # --- data in -------------------------------------------------------------------------
    def set_rows(self, rows: VocabRows, order: list[int] | None = None) -> None:
        """Show a new vocabulary (in ``order``, default id order)."""
        self.beginResetModel()
        self._rows = rows
        self._order = list(range(len(rows))) if order is None else order
        self._exposed = min(FETCH_BATCH, len(self._order))
        self.endResetModel()

    def set_order(self, order: list[int]) -> None:
        """Show the current rows in a new order (a filter and/or sort result)."""
        self.set_rows(self._rows, order)

    @property
    def rows(self) -> VocabRows:
        """The whole vocabulary, whatever is exposed."""
        return self._rows

    @property
    def matching(self) -> int:
        """Number of rows in the current order (exposed or not yet)."""
        return len(self._order)

    def source_row(self, row: int) -> int:
        """The vocabulary row shown at model row ``row``."""
        return self._order[row]

    # --- Qt model interface --------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else self._exposed


    def canFetchMore(self, parent: _Index) -> bool:
        return not parent.isValid() and self._exposed < len(self._order)

    def fetchMore(self, parent: _Index) -> None:
        if parent.isValid():
            return
        more = min(FETCH_BATCH, len(self._order) - self._exposed)
        if more <= 0:
            return
        self.beginInsertRows(QModelIndex(), self._exposed, self._exposed + more - 1)
        self._exposed += more
        self.endInsertRows()


    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= self._exposed:
            return None
        r = self._order[index.row()]
        col = index.column()
        rows = self._rows
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_ID:
                return str(rows.ids[r])
            if col == COL_PIECE:
                return rows.pieces[r]
            if col == COL_TEXT:
                return _visible(rows.texts[r])
            if col == COL_HEX:
                return rows.hexes[r]
            if col == COL_LENGTH:
                return str(rows.lengths[r])
            if col == COL_SCORE:
                s = rows.scores[r]
                return "" if s is None else (f"{s:.4g}" if s != int(s) else str(int(s)))
            if col == COL_TYPE:
                return rows.types[r]
        if role == Qt.ItemDataRole.TextAlignmentRole and col in self.ALIGN_RIGHT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col in (COL_PIECE, COL_TEXT):
            return f"id {rows.ids[r]}  bytes {rows.hexes[r]}"
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sort_request = (column, order == Qt.SortOrder.DescendingOrder)
        self.sort_requested.emit(*self.sort_request)


_CONTROL_GLYPHS = {i: 0x2400 + i for i in range(0x20)} | {0x20: 0x2423, 0x7F: 0x2421}


def _visible(text: str) -> str:
    """Whitespace and control characters as visible Unicode control pictures."""
    return text.translate(_CONTROL_GLYPHS)


def read_rows(tokenizer: Tokenizer, limit: int) -> VocabRows:
    """The first ``limit`` entries, read at once (a screenful to show while the rest loads)."""
    gen = load_vocab_rows(tokenizer, chunk=limit + 1, limit=limit)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
