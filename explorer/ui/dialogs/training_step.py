"""The step view of the Train panel: what the last training step did, on text you can read.

BPE: the pair-count table of the last merge (the top pairs by live count, the winner
highlighted, HF's tie-break named when counts were equal), a sample segmented by the merges so
far with the spans the last merge changed marked, and the merge list (click a merge: the
sample marks where it applied). Unigram: the seeds, then per pruning round the removed pieces
with their loss, the histogram of piece scores, and the sample segmented by the round's model
(Viterbi, on a worker) with the spans that changed marked.

It only records events in :meth:`StepView.add_events`; :meth:`StepView.flush` (driven by the
dialog's redraw timer, a few times per second) draws. The segmentation itself comes from the
engine (:class:`~explorer.engine.trainers.sample.BpeSample`, the snapshot's tokenizer); spans
are painted through :mod:`explorer.engine.offsets`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

import numpy as np
from PySide6.QtCore import QRect, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QMouseEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.offsets import Utf16Map
from explorer.engine.pretokenizers.byte_level import unicode_to_bytes
from explorer.engine.trainers.api import to_tokenizer
from explorer.engine.trainers.bpe_trainer import BpeConfig
from explorer.engine.trainers.events import (
    EmStep,
    Merge,
    PruneStep,
    SeedsReady,
    TrainEvent,
)
from explorer.engine.trainers.models import TrainedUnigram
from explorer.engine.trainers.sample import BpeSample, Span, changed_spans
from explorer.ui.plot_slot import PlotSlot
from explorer.workers.latest import LatestRunner

if TYPE_CHECKING:
    from pyqtgraph import BarGraphItem

Kind = Literal["bpe", "unigram"]
_KEEP_ANCHOR = QTextCursor.MoveMode.KeepAnchor  # looked up once: PySide enums are slow
LIGHT_REDRAW_S = 0.3
"""At full speed the step view redraws about three times a second (stepping: every time)."""
LIST_CHUNK = 300
"""Merge lines appended per event-loop turn (~5 ms; thousands at once stalled the window)."""
ROWS_SHOWN = 200
"""Rows of removed pieces / seeds listed per round."""
HISTOGRAM_BINS = 40
TOKEN_COLORS = ("#dbe9f9", "#fbe3c9", "#dcf2dc", "#efdcf5")
MARK_COLOR = "#ffd400"
WINNER_COLOR = "#9fe29f"


@lru_cache(maxsize=1 << 16)
def readable(token: str, byte_level: bool) -> str:
    """A token as a reader sees it: byte-level spellings decoded (bytes that are not whole
    characters as ``\\xNN``), spaces as ``␣``, line ends as ``↵``, other invisible
    characters escaped: a token is always one line of text."""
    if byte_level:
        to_byte = _byte_of()
        raw = bytes(to_byte.get(c, 63) for c in token)
        token = raw.decode("utf-8", errors="backslashreplace")
    return "".join(_VISIBLE.get(ch) or (ch if ch.isprintable() else f"\\x{ord(ch):02x}"
                                        if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
                   for ch in token)


_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


@lru_cache(maxsize=1)
def _byte_of() -> dict[str, int]:
    return unicode_to_bytes()


def _segment_job(model: TrainedUnigram, text: str) -> Generator[None, None, list[Span]]:
    """Worker job: the sample's spans under a Unigram snapshot (its Viterbi)."""
    yield None
    tok = to_tokenizer(model, name="snapshot")
    return [(t.start, t.end) for t in tok.encode(text).tokens if t.end > t.start]


def _score_histogram(parent: QWidget) -> QWidget:
    """The Unigram step view's histogram of piece scores (imports pyqtgraph)."""
    from explorer.ui.themed_plot import ThemedPlot

    plot = ThemedPlot(parent)
    plot.set_title("Piece scores (log probability)")
    plot.setLabel("bottom", "score")
    plot.setLabel("left", "pieces")
    return plot


def winner_row(merge: Merge) -> int | None:
    """The row of ``merge``'s own pair in its pair table (None: not listed)."""
    for r, p in enumerate(merge.top_pairs):
        if (p.left, p.right) == (merge.left, merge.right):
            return r
    return None


class MergeList(QPlainTextEdit):
    """The merges so far, one line each (rank + 1 = line number); a click picks one.

    A plain-text view: appending thousands of lines a second and keeping the end in view
    costs next to nothing, where item views lay out every row.
    """

    picked = Signal(int)
    """The merge (rank) on the clicked line."""

    def __init__(self, show: Callable[[str], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._show = show
        self.count = 0

    def extend(self, merges: Sequence[Merge]) -> None:
        """Append one line per merge and keep the end in view."""
        if not merges:
            return
        show = self._show
        self.appendPlainText("\n".join(
            f"{e.rank + 1:>6}  {show(e.left)} + {show(e.right)} → {show(e.token)}"
            f"   ({e.count:,})" for e in merges))
        self.count += len(merges)

    def clear_merges(self) -> None:
        """No lines."""
        self.clear()
        self.count = 0

    def line_rect(self, rank: int) -> QRect:
        """Where merge ``rank``'s line is drawn (viewport coordinates)."""
        cur = QTextCursor(self.document().findBlockByNumber(rank))
        return self.cursorRect(cur)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A click on a line picks its merge."""
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton:
            block = self.cursorForPosition(event.position().toPoint()).blockNumber()
            if 0 <= block < self.count:
                self.picked.emit(block)


class SampleView(QPlainTextEdit):
    """Read-only sample text, tokens tinted in turn, some spans marked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.spans: list[Span] = []
        self.marked: list[Span] = []
        self._tints = []
        for color in TOKEN_COLORS:
            tint = QTextCharFormat()
            tint.setBackground(QBrush(QColor(color)))
            tint.setForeground(QBrush(QColor("black")))  # light tints: dark text, any theme
            self._tints.append(tint)
        self._mark = QTextCharFormat()
        self._mark.setBackground(QBrush(QColor(MARK_COLOR)))
        self._mark.setForeground(QBrush(QColor("black")))
        self._mark.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        self._mark.setUnderlineColor(QColor("#c00000"))
        self._mark.setFontWeight(QFont.Weight.Bold)

    def show_spans(self, text: str, spans: Sequence[Span], marked: Iterable[Span]) -> None:
        """Show ``text`` with each token span tinted and the ``marked`` spans highlighted."""
        if self.toPlainText() != text:
            self.setPlainText(text)
        self.spans = list(spans)
        self.marked = list(marked)
        utf16 = Utf16Map(text)
        tints = self._tints
        selections = [self._selection(utf16, a, b, tints[k % len(tints)])
                      for k, (a, b) in enumerate(self.spans)]
        selections += [self._selection(utf16, a, b, self._mark) for a, b in self.marked]
        self.setExtraSelections(selections)
        if self.marked:  # bring the first mark into view
            cur = QTextCursor(self.document())
            cur.setPosition(utf16.to_utf16(self.marked[0][0]))
            self.setTextCursor(cur)
            self.ensureCursorVisible()

    def _selection(self, utf16: Utf16Map, a: int, b: int,
                   fmt: QTextCharFormat) -> QTextEdit.ExtraSelection:
        sel = QTextEdit.ExtraSelection()
        cur = QTextCursor(self.document())
        cur.setPosition(utf16.to_utf16(a))
        cur.setPosition(utf16.to_utf16(b), _KEEP_ANCHOR)
        sel.cursor = cur  # type: ignore[attr-defined]
        sel.format = fmt  # type: ignore[attr-defined]
        return sel


class StepView(QWidget):
    """Pair table / pruned pieces, marked sample, merge list / score histogram."""

    merge_chosen = Signal(int)
    """A merge (rank) was clicked in the merge list."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel("Start a training: each step is shown here.", self)
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, 3, self)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.sample = SampleView(self)
        self.merges = MergeList(self._show, self)
        self.merges.picked.connect(self._on_merge_row)
        self.histogram = PlotSlot(_score_histogram, self)
        self._bars: BarGraphItem | None = None
        self.right = QStackedWidget(self)
        self.right.addWidget(self.merges)
        self.right.addWidget(self.histogram)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.table)
        split.addWidget(self.sample)
        split.addWidget(self.right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 5)
        split.setStretchFactor(2, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(split, 1)
        self._segmenter = LatestRunner(owner=self)
        self._listing = QTimer(self)  # lists the merges left over by a flush, chunk by chunk
        self._listing.setInterval(0)
        self._listing.timeout.connect(self._list_new_merges)
        self._headers: list[str] = []
        self._winner_brush = QBrush(QColor(WINNER_COLOR))
        self._drawn_at = 0.0
        self.reset("bpe", BpeConfig(), "")

    # --- state ----------------------------------------------------------------------------
    def reset(self, kind: Kind, config: object, sample_text: str) -> None:
        """Forget the last run; segment ``sample_text`` as ``config`` (a trainer config)."""
        self.kind = kind
        self.config = config
        self.text = sample_text
        self.merge_list: list[Merge] = []
        self.applied: dict[int, list[Span]] = {}  # merge rank -> sample spans it changed
        self.last_merge: Merge | None = None
        self.last_counted: Merge | None = None
        """The last merge that came with its pair counts (at full speed not every one)."""
        self.marked: list[Span] = []
        self._since_draw: list[Span] = []  # sample spans changed by merges not drawn yet
        self._merges_since_draw = 0
        self.step_merges = 0
        """Merges in the last drawn step (their changed spans are the marked ones)."""
        self._listed = 0
        self.seeds: SeedsReady | None = None
        self.last_em: EmStep | None = None
        self.last_prune: PruneStep | None = None
        self.snapshot: TrainedUnigram | None = None
        self._segmented: TrainedUnigram | None = None
        self.unigram_spans: list[Span] = []
        self._segmenter.cancel()
        self.bpe_sample = self._new_bpe_sample(sample_text) if kind == "bpe" else None
        self.merges.clear_merges()
        self.table.setRowCount(0)
        if self._bars is not None:
            self.histogram.plot().removeItem(self._bars)  # type: ignore[attr-defined]
            self._bars = None
        self.right.setCurrentIndex(0 if kind == "bpe" else 1)
        self._dirty = True
        self.flush()

    def _new_bpe_sample(self, text: str) -> BpeSample:
        c = self.config if isinstance(self.config, BpeConfig) else BpeConfig()
        return BpeSample(text, mode=c.mode, pattern=c.pattern,
                         add_prefix_space=c.add_prefix_space,
                         prefix=c.continuing_subword_prefix, suffix=c.end_of_word_suffix)

    def set_sample(self, text: str) -> None:
        """Show another sample (the merges or the model so far applied to it)."""
        self.text = text
        if self.kind == "bpe":
            self.bpe_sample = self._new_bpe_sample(text)
            self.applied = {}
            for m in self.merge_list:
                self.applied[m.rank] = self.bpe_sample.apply(m.left, m.right, m.token)
            self.marked = self.applied.get(self.merge_list[-1].rank, []) \
                if self.merge_list else []
            self.step_merges = 1
        else:
            self._segmented = None
            self.unigram_spans = []
        self._dirty = True
        self.flush()

    def busy(self) -> bool:
        """True while the sample's segmentation is being computed or merges wait to be
        listed."""
        return self._segmenter.current is not None or self._listed < len(self.merge_list)

    def add_events(self, events: Iterable[TrainEvent]) -> None:
        """Record a batch of trainer events (drawn at the next :meth:`flush`)."""
        for e in events:
            if isinstance(e, Merge):
                self.merge_list.append(e)
                self.last_merge = e
                if e.top_pairs:
                    self.last_counted = e
                if self.bpe_sample is not None:
                    self.applied[e.rank] = self.bpe_sample.apply(e.left, e.right, e.token)
                    self._since_draw.extend(self.applied[e.rank])
                self._merges_since_draw += 1
            elif isinstance(e, SeedsReady):
                self.seeds = e
            elif isinstance(e, EmStep):
                self.last_em = e
                self.snapshot = e.snapshot or self.snapshot
            elif isinstance(e, PruneStep):
                self.last_prune = e
                self.snapshot = e.snapshot or self.snapshot
            else:
                continue
            self._dirty = True

    # --- drawing --------------------------------------------------------------------------
    def flush(self, *, light: bool = False) -> None:
        """Draw what changed since the last flush (cheap when nothing did). ``light`` (a run
        at full speed): redraw at most every :data:`LIGHT_REDRAW_S` seconds."""
        if not self._dirty:
            return
        self._list_new_merges()  # every flush (a bounded chunk)
        now = time.perf_counter()
        if light and now - self._drawn_at < LIGHT_REDRAW_S:
            return
        self._drawn_at = now
        self._dirty = False
        if self.kind == "bpe":
            self._draw_bpe()
        else:
            self._draw_unigram()

    def _list_new_merges(self) -> None:
        """Append the merges not listed yet, at most :data:`LIST_CHUNK` lines per
        event-loop turn (the rest follow in the next turns: the window stays live)."""
        new = self.merge_list[self._listed:self._listed + LIST_CHUNK]
        if new:
            self.merges.extend(new)
            self._listed += len(new)
        if self._listed < len(self.merge_list) and not self._listing.isActive():
            self._listing.start()
        elif self._listed >= len(self.merge_list):
            self._listing.stop()

    def _draw_bpe(self) -> None:
        m = self.last_merge
        sample = self.bpe_sample
        if self._merges_since_draw:
            self.marked = sorted(set(self._since_draw))
            self.step_merges = self._merges_since_draw
            self._since_draw, self._merges_since_draw = [], 0
        spans = sample.spans() if sample is not None else []
        if spans != self.sample.spans or self.marked != self.sample.marked \
                or self.sample.toPlainText() != self.text:
            self.sample.show_spans(self.text, spans, self.marked)
        if m is None:
            self.heading.setText("BPE: each merge joins the most frequent adjacent pair. "
                                 "Step to see the pair counts.")
            self.table.setRowCount(0)
            return
        what = "this merge" if self.step_merges == 1 else f"the last {self.step_merges} merges"
        text = (f"Merge {m.rank + 1:,}: {self._show(m.left)} + {self._show(m.right)} → "
                f"{self._show(m.token)} (count {m.count:,}, id {m.token_id}); "
                f"{what} changed {len(self.marked):,} spans of the sample (marked).")
        if m.tied > 1 and len(m.top_pairs) > 1:  # only a merge with its counts has ties
            runner = m.top_pairs[1]
            text += (f" Tie: {m.tied} pairs had count {m.count:,}; HF takes the smaller ids: "
                     f"({m.top_pairs[0].left_id}, {m.top_pairs[0].right_id}) < "
                     f"({runner.left_id}, {runner.right_id}).")
        counted = self.last_counted
        if counted is not None and counted is not m:
            text += f" Pair counts as of merge {counted.rank + 1:,}."
        pairs = counted.top_pairs if counted is not None else ()
        winner = winner_row(counted) if counted is not None else None
        if counted is not None and (winner != 0 or pairs[0].count != counted.count):
            text += (f" HF took merge {counted.rank + 1:,} by a stale count ({counted.count:,}"
                     ": HF keeps counting occurrences a merge already joined); the table "
                     "shows the live counts.")
        self.heading.setText(text)
        self._fill_table(["pair", "live count", "ids"],
                         [(f"{self._show(p.left)} + {self._show(p.right)}", f"{p.count:,}",
                           f"({p.left_id}, {p.right_id})") for p in pairs],
                         winner=winner)

    def _draw_unigram(self) -> None:
        if self.last_prune is not None:
            p = self.last_prune
            priced = [(s, loss) for s, loss in p.removed if loss > 0.0]
            self.heading.setText(
                f"Pruning round {p.round + 1}: removed {len(p.removed):,} pieces "
                f"({len(p.removed) - len(priced):,} for free), kept {p.kept:,}. "
                "Loss = likelihood lost by removing the piece.")
            snap = p.snapshot
            kept = ([(piece, score) for piece, score in snap.pieces[snap.num_meta:]]
                    if snap is not None else [])  # learned pieces, best score first
            removed = p.removed[:ROWS_SHOWN]
            rows = []
            for r in range(min(ROWS_SHOWN, max(len(removed), len(kept)))):
                piece, loss = removed[r] if r < len(removed) else ("", None)
                rows.append((readable(piece, False), "" if loss is None else f"{loss:.3g}",
                             f"{readable(kept[r][0], False)}  ({kept[r][1]:.2f})"
                             if r < len(kept) else ""))
            self._fill_table(["removed piece", "loss", "kept (log p)"], rows)
        elif self.seeds is not None:
            s = self.seeds
            self.heading.setText(f"Seed vocabulary: {s.size:,} pieces (characters and frequent "
                                 "substrings); the best by score:")
            self._fill_table(["seed", "log p", ""],
                             [(readable(piece, False), f"{score:.3f}", "")
                              for piece, score in s.top])
        else:
            self.heading.setText("Unigram: seed pieces, then EM rounds and pruning by loss.")
            self.table.setRowCount(0)
        if self.last_em is not None:
            e = self.last_em
            self.heading.setText(self.heading.text() + f"  EM {e.round + 1}.{e.sub_iteration + 1}"
                                 f": objective {e.objective:.4f}, {e.vocab_size:,} pieces, "
                                 f"{e.num_tokens:,} tokens.")
        snap = self.snapshot
        if snap is not None:
            scores = np.array([sc for _, sc in snap.pieces[snap.num_meta:]])
            if len(scores):
                counts, edges = np.histogram(scores, bins=HISTOGRAM_BINS)
                import pyqtgraph as pg

                plot = self.histogram.plot()
                if self._bars is not None:
                    plot.removeItem(self._bars)  # type: ignore[attr-defined]
                self._bars = pg.BarGraphItem(x0=edges[:-1], x1=edges[1:], height=counts,
                                             brush=(60, 120, 200))
                plot.addItem(self._bars)  # type: ignore[attr-defined]
            if snap is not self._segmented and self.text:
                self._segmented = snap
                self._segmenter.submit(_segment_job, snap, self.text,
                                       on_return=self._on_segmented,
                                       on_error=lambda _e: None)
        self.sample.show_spans(self.text, self.unigram_spans, self.marked)

    def _on_segmented(self, spans: list[Span]) -> None:
        self.marked = changed_spans(self.unigram_spans, spans) if self.unigram_spans else []
        self.unigram_spans = spans
        self.sample.show_spans(self.text, spans, self.marked)

    def _fill_table(self, headers: list[str], rows: Sequence[tuple[str, str, str]],
                    winner: int | None = None) -> None:
        """Show ``rows``; items are reused (setting text is much cheaper than new items)."""
        table = self.table
        table.setUpdatesEnabled(False)
        if headers != self._headers:
            table.setHorizontalHeaderLabels(headers)
            self._headers = headers
        table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                item = table.item(r, c)
                if item is None:
                    item = QTableWidgetItem()
                    table.setItem(r, c, item)
                if item.text() != value:
                    item.setText(value)
                win = r == winner
                if item.font().bold() != win:
                    font = item.font()
                    font.setBold(win)
                    item.setFont(font)
                    item.setBackground(self._winner_brush if win else QBrush())
                    item.setForeground(QBrush(QColor("black")) if win else QBrush())
        table.setUpdatesEnabled(True)

    def _show(self, token: str) -> str:
        config = self.config
        return readable(token, isinstance(config, BpeConfig) and config.mode == "byte_level")

    # --- merge list -----------------------------------------------------------------------
    def _on_merge_row(self, row: int) -> None:
        if 0 <= row < len(self.merge_list):
            self.show_merge(row)

    def show_merge(self, rank: int) -> None:
        """Mark where merge ``rank`` applied in the sample."""
        if self.bpe_sample is None or not 0 <= rank < len(self.merge_list):
            return
        m = self.merge_list[rank]
        self.marked = self.applied.get(rank, [])
        self.sample.show_spans(self.text, self.bpe_sample.spans(), self.marked)
        self.heading.setText(f"Merge {rank + 1:,}: {self._show(m.left)} + {self._show(m.right)}"
                             f" → {self._show(m.token)} (count {m.count:,}) applied at "
                             f"{len(self.marked):,} places in the sample (marked).")
        self.merge_chosen.emit(rank)
