"""Status area: a message, token/character/byte counts, progress, tokenizer name.

Each has its own place in the status bar: the message on the left (stretching), counts,
progress and tokenizer on the right. Labels elide what does not fit (``…``) and keep the
full text in their tooltip, so a long message never runs into the counts. While a new
tokenizer re-encodes the text, the counts say they are pending (with progress) instead of
showing the previous tokenizer's numbers under the new name.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QProgressBar, QSizePolicy, QStatusBar, QWidget

from explorer.workers.doctokens import DocTokens


@dataclass(frozen=True, slots=True)
class Stats:
    """Counts of one result."""

    tokens: int
    chars: int
    bytes: int
    unknown: int

    @classmethod
    def of(cls, doc: DocTokens) -> Stats:
        """Counts of ``doc``."""
        return cls(doc.token_count, len(doc.text), doc.byte_count, doc.unknown_count)

    def text(self) -> str:
        """One line for the status bar."""
        cpt = self.chars / self.tokens if self.tokens else 0.0
        bpt = self.bytes / self.tokens if self.tokens else 0.0
        return (f"{self.tokens:,} tokens · {self.chars:,} chars · {self.bytes:,} bytes · "
                f"{cpt:.2f} chars/token · {bpt:.2f} bytes/token · {self.unknown:,} unknown")


class ElidedLabel(QLabel):
    """A one-line label that elides its text at the right when narrow; the full text is
    its tooltip. ``text()`` stays the full text."""

    def __init__(self, text: str = "", parent: QWidget | None = None,
                 min_chars: int = 12) -> None:
        super().__init__(text, parent)
        self._min_chars = min_chars
        # Preferred: the whole text when there is room, down to min_chars (elided) when not.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setToolTip(text)

    def setText(self, text: str) -> None:
        """Set the full text (and tooltip)."""
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:
        """Room for a few characters; the rest elides."""
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance("x" * self._min_chars), fm.height())

    def sizeHint(self) -> QSize:
        """The whole text's width."""
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance(self.text()) + 8, fm.height())

    def paintEvent(self, _event: QPaintEvent) -> None:
        """Draw the text elided to the width."""
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight,
                                              rect.width())
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
                         shown)


class StatusArea:
    """Widgets added to the window's status bar."""

    def __init__(self, bar: QStatusBar, parent: QWidget) -> None:
        self.message_label = ElidedLabel("", parent, min_chars=8)
        self.stats = ElidedLabel("no tokens yet", parent, min_chars=14)
        self.tokenizer = ElidedLabel("", parent, min_chars=10)
        self.progress = QProgressBar(parent)
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.message_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                         QSizePolicy.Policy.Preferred)
        bar.addWidget(self.message_label, 1)  # takes what the others leave
        bar.addPermanentWidget(self.stats)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.tokenizer)
        self._bar = bar
        self._clear = QTimer(parent)
        self._clear.setSingleShot(True)
        self._clear.timeout.connect(lambda: self.message_label.setText(""))
        self.pending_name: str | None = None
        """Name of the tokenizer whose first counts are still being computed."""

    def show_stats(self, doc: DocTokens) -> Stats:
        """Show the counts of ``doc``."""
        s = Stats.of(doc)
        self.pending_name = None
        self.stats.setText(s.text())
        return s

    def counts_pending(self, name: str) -> None:
        """A new tokenizer re-encodes the text: the old counts are not its counts."""
        self.pending_name = name
        self.stats.setText(f"counting tokens with {name}…")

    def show_progress(self, done: int, total: int) -> None:
        """Progress of a long encode (hidden when done)."""
        if total <= 0 or done >= total:
            self.progress.hide()
            return
        self.progress.setRange(0, 1000)
        self.progress.setValue(int(1000 * done / total))
        self.progress.setFormat(f"encoding {100 * done // total}%")
        self.progress.show()

    def message(self, text: str, ms: int = 5000) -> None:
        """A message on the left; cleared after ``ms`` (0: kept until the next one)."""
        self.message_label.setText(text)
        if ms > 0:
            self._clear.start(ms)
        else:
            self._clear.stop()
