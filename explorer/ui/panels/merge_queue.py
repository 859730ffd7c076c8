"""BPE merge-queue panel: the llama.cpp ranked bigram queue of one pre-token, stepped.

Draws the :class:`~explorer.engine.bpe.trace.MergeStep` snapshots the engine yields (from
``tokenizer.trace_merges(pre_token)``): the current symbols as chips (the symbol just merged
highlighted), the queue as a table in pop order (left, right, merged, rank, live/stale; the
entry popped at this step on top, highlighted), a line saying what the step did, controls to
step back and forth, play and jump to either end, and the final tokens with their ids.

Symbols may be ``bytes`` (byte-level BPE) or ``str`` (merges-list / SentencePiece BPE).
Does not compute anything itself: a trace is data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSlider,
    QStyle,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.engine.bpe.trace import MergeStep
from explorer.ui.panels.chips import Chip, ChipRow, symbol_label, symbol_tooltip
from explorer.ui.panels.merge_queue_model import MergeQueueModel, Symbol

__all__ = ["MergeQueueModel", "MergeQueuePanel"]
PLAY_INTERVAL_MS = 600


class MergeQueuePanel(QWidget):
    """Shows a BPE merge trace step by step."""

    step_changed = Signal(int)
    """The index of the step now shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._steps: list[MergeStep[Any]] = []
        self._pos = 0
        self._token_id: Callable[[Symbol], int | None] | None = None

        self.title = QLabel("Place the cursor in a word to see its BPE merges.", self)
        self.title.setWordWrap(True)
        self.symbols = ChipRow(self)
        self.step_label = QLabel(self)
        self.step_label.setWordWrap(True)
        self.model = MergeQueueModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.final_label = QLabel("Final tokens", self)
        self.final = ChipRow(self)

        icons = QStyle.StandardPixmap

        def button(icon: QStyle.StandardPixmap, text: str, tip: str,
                   slot: Callable[[], None]) -> QToolButton:
            b = QToolButton(self)
            b.setIcon(self.style().standardIcon(icon))
            b.setText(text)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            return b

        self.first_button = button(icons.SP_MediaSkipBackward, "Start", "Back to the start",
                                   lambda: self.set_position(0))
        self.back_button = button(icons.SP_MediaSeekBackward, "Back", "Step back",
                                  self.step_back)
        self.play_button = button(icons.SP_MediaPlay, "Play", "Play the merges",
                                  self.toggle_play)
        self.play_button.setCheckable(True)
        self.forward_button = button(icons.SP_MediaSeekForward, "Step", "Step forward",
                                     self.step_forward)
        self.last_button = button(icons.SP_MediaSkipForward, "End", "Jump to the end",
                                  lambda: self.set_position(len(self._steps) - 1))
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.valueChanged.connect(self.set_position)

        controls = QHBoxLayout()
        for w in (self.first_button, self.back_button, self.play_button, self.forward_button,
                  self.last_button):
            controls.addWidget(w)
        controls.addWidget(self.slider, 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.symbols)
        layout.addLayout(controls)
        layout.addWidget(self.step_label)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.final_label)
        layout.addWidget(self.final)

        self._timer = QTimer(self)
        self._timer.setInterval(PLAY_INTERVAL_MS)
        self._timer.timeout.connect(self._tick)
        self._update_controls()

    # --- inputs --------------------------------------------------------------------------
    def set_trace(self, steps: Sequence[MergeStep[Any]], title: str = "",
                  token_id: Callable[[Symbol], int | None] | None = None) -> None:
        """Show ``steps`` (a whole trace, start to done). ``token_id`` labels final tokens."""
        self.stop()
        self._steps = list(steps)
        self._token_id = token_id
        self.title.setText(title or "BPE merge queue")
        self._show_final()
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(len(self._steps) - 1, 0))
        self.slider.blockSignals(False)
        self._pos = -1
        self.set_position(0)

    def clear(self, message: str = "Place the cursor in a word to see its BPE merges.") -> None:
        """Show nothing but ``message``."""
        self.set_trace([])
        self.title.setText(message)

    # --- stepping ------------------------------------------------------------------------
    @property
    def position(self) -> int:
        """Index of the step shown."""
        return self._pos

    @property
    def step_count(self) -> int:
        """Number of steps in the trace."""
        return len(self._steps)

    def set_position(self, pos: int) -> None:
        """Show step ``pos`` (clamped)."""
        pos = max(0, min(pos, len(self._steps) - 1)) if self._steps else 0
        if pos == self._pos and self._steps:
            return
        self._pos = pos
        step = self._steps[pos] if self._steps else None
        self.model.set_step(step)
        self._show_symbols(step)
        self.step_label.setText(self._describe(step))
        self.slider.blockSignals(True)
        self.slider.setValue(pos)
        self.slider.blockSignals(False)
        self._update_controls()
        self.step_changed.emit(pos)

    def step_forward(self) -> None:
        """Next step."""
        self.set_position(self._pos + 1)

    def step_back(self) -> None:
        """Previous step."""
        self.set_position(self._pos - 1)

    def toggle_play(self) -> None:
        """Play from here (from the start when at the end), or pause."""
        if self._timer.isActive():
            self.stop()
            return
        if self._pos >= len(self._steps) - 1:
            self.set_position(0)
        self._timer.start()
        self.play_button.setChecked(True)
        self.play_button.setText("Pause")
        self.play_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPause))

    def stop(self) -> None:
        """Pause playback."""
        self._timer.stop()
        self.play_button.setChecked(False)
        self.play_button.setText("Play")
        self.play_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))

    def _tick(self) -> None:
        if self._pos >= len(self._steps) - 1:
            self.stop()
        else:
            self.step_forward()

    # --- drawing -------------------------------------------------------------------------
    def _show_symbols(self, step: MergeStep[Any] | None) -> None:
        if step is None:
            self.symbols.set_chips([])
            return
        merged_at = step.merge.left if step.merge is not None else None
        self.symbols.set_chips([
            Chip(symbol_label(s), tooltip=f"node {n}: {symbol_tooltip(s)}",
                 highlight=n == merged_at)
            for s, n in zip(step.symbols, step.nodes, strict=True)])

    def _show_final(self) -> None:
        if not self._steps:
            self.final.set_chips([])
            return
        done = self._steps[-1]
        chips = []
        for s in done.symbols:
            tid = self._token_id(s) if self._token_id is not None else None
            chips.append(Chip(symbol_label(s), "" if tid is None else str(tid),
                              symbol_tooltip(s)))
        self.final.set_chips(chips)
        note = " (the whole pre-token is one vocabulary entry)" if done.whole_token else ""
        self.final_label.setText(f"Final tokens: {len(done.symbols)}{note}")

    def _describe(self, step: MergeStep[Any] | None) -> str:
        if step is None:
            return ""
        where = f"Step {step.index} of {self._steps[-1].index}"
        live = sum(1 for e in step.queue if e.live)
        queue = f"queue: {len(step.queue)} entries, {live} live"
        if step.kind == "start":
            return f"{where}: initial symbols; every adjacent pair with a rank is queued ({queue})"
        if step.kind == "done":
            return f"{where}: queue empty, merging done"
        if step.merge is None:
            assert step.popped is not None
            return (f"{where}: popped rank {step.popped.rank} at node {step.popped.left}: "
                    f"stale (a side changed since it was queued), skipped ({queue})")
        m = step.merge
        return (f"{where}: popped rank {m.rank}: {symbol_label(m.left_symbol)} + "
                f"{symbol_label(m.right_symbol)} → {symbol_label(m.merged)} ({queue})")

    def _update_controls(self) -> None:
        n = len(self._steps)
        self.first_button.setEnabled(self._pos > 0)
        self.back_button.setEnabled(self._pos > 0)
        self.forward_button.setEnabled(self._pos < n - 1)
        self.last_button.setEnabled(self._pos < n - 1)
        self.play_button.setEnabled(n > 1)
        self.slider.setEnabled(n > 1)
