"""Status area: token/character/byte counts, ratios, unknown tokens, progress, tokenizer name."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

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


class StatusArea:
    """Widgets added to the window's status bar."""

    def __init__(self, bar: QStatusBar, parent: QWidget) -> None:
        self.stats = QLabel("no tokens yet", parent)
        self.tokenizer = QLabel("", parent)
        self.progress = QProgressBar(parent)
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(True)
        self.progress.hide()
        bar.addPermanentWidget(self.stats)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.tokenizer)
        self._bar = bar

    def show_stats(self, doc: DocTokens) -> Stats:
        """Show the counts of ``doc``."""
        s = Stats.of(doc)
        self.stats.setText(s.text())
        return s

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
        """A transient message."""
        self._bar.showMessage(text, ms)
