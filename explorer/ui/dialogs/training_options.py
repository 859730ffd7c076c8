"""The training dialog's advanced options: one compact row that follows the algorithm.

BPE: HF ``BpeTrainer``'s ``continuing_subword_prefix``, ``end_of_word_suffix`` and
``max_token_length``. Unigram: sentencepiece's ``user_defined_symbols`` (space-separated) and
``split_digits``. Empty fields mean "off"; values are checked by the engine's config classes
(their ``ValueError`` becomes the dialog's "Invalid settings" message).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStackedWidget,
    QWidget,
)


def _row(parent: QWidget, *items: QWidget) -> QWidget:
    page = QWidget(parent)
    layout = QHBoxLayout(page)
    layout.setContentsMargins(0, 0, 0, 0)
    for item in items:
        layout.addWidget(item)
    layout.addStretch(1)
    return page


class TrainingOptions(QStackedWidget):
    """Advanced fields for BPE (page 0) or Unigram (page 1); :meth:`show_for` switches."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prefix = QLineEdit(self)
        self.prefix.setPlaceholderText("none")
        self.prefix.setToolTip("Continuing-subword prefix (HF), e.g. ## : spells every symbol "
                               "but a word's first with it. Saved as tokenizer.json only.")
        self.suffix = QLineEdit(self)
        self.suffix.setPlaceholderText("none")
        self.suffix.setToolTip("End-of-word suffix (HF), e.g. </w> : spells a word's last "
                               "symbol with it. Saved as tokenizer.json only.")
        for field in (self.prefix, self.suffix):
            field.setMaximumWidth(80)
        self.max_length = QSpinBox(self)
        self.max_length.setRange(0, 1024)
        self.max_length.setSpecialValueText("none")
        self.max_length.setToolTip("Max token length (HF): no merge makes a token of this many "
                                   "characters or more.")
        self.symbols = QLineEdit(self)
        self.symbols.setPlaceholderText("e.g. <mask> [SEP]")
        self.symbols.setMinimumWidth(220)
        self.symbols.setToolTip("User-defined symbols (sentencepiece), separated by spaces: "
                                "always one piece, never split.")
        self.split_digits = QCheckBox("Split digits", self)
        self.split_digits.setToolTip("Every digit is a piece of its own (sentencepiece "
                                     "split_digits).")
        self.addWidget(_row(self, QLabel("Prefix", self), self.prefix, QLabel("Suffix", self),
                            self.suffix, QLabel("Max token length", self), self.max_length))
        self.addWidget(_row(self, QLabel("User symbols", self), self.symbols,
                            self.split_digits))

    def show_for(self, kind: str) -> None:
        """Show the fields of ``bpe`` or ``unigram``."""
        self.setCurrentIndex(1 if kind == "unigram" else 0)

    def bpe_options(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~explorer.engine.trainers.BpeConfig`."""
        return {"continuing_subword_prefix": self.prefix.text() or None,
                "end_of_word_suffix": self.suffix.text() or None,
                "max_token_length": self.max_length.value() or None}

    def unigram_options(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~explorer.engine.trainers.UnigramConfig`."""
        return {"user_defined_symbols": tuple(dict.fromkeys(self.symbols.text().split())),
                "split_digits": self.split_digits.isChecked()}
