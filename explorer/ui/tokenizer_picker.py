"""The toolbar: a tokenizer picker (bundled, loaded, recent files, open...) and sample buttons."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QToolBar, QWidget

from explorer.ui.samples import TITLES, sample_names
from explorer.ui.tokenizer_source import bundled_sources, source_label

OPEN_ITEM = "Open file…"


class TokenizerPicker(QComboBox):
    """Lists tokenizer sources; choosing one calls ``open_source`` (or ``open_dialog``)."""

    def __init__(self, open_source: Callable[[str], None], open_dialog: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._open_source = open_source
        self._open_dialog = open_dialog
        self._current = ""
        self.setMinimumContentsLength(22)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.activated.connect(self._on_activated)
        self.set_sources([], "")

    def sources(self) -> list[str]:
        """Sources listed, in order."""
        return [self.itemData(i) for i in range(self.count()) if self.itemData(i)]

    def set_sources(self, extra: list[str], current: str) -> None:
        """Bundled sources, then ``extra`` (loaded or recent files), then "Open file…"."""
        self.blockSignals(True)
        self.clear()
        seen = set()
        for source in [*bundled_sources(), *extra]:
            if source not in seen:
                seen.add(source)
                self.addItem(source_label(source), source)
                self.setItemData(self.count() - 1, source, Qt.ItemDataRole.ToolTipRole)
        self.insertSeparator(self.count())
        self.addItem(OPEN_ITEM, "")
        self._current = current
        index = self.findData(current)
        self.setCurrentIndex(index if index >= 0 else -1)
        self.blockSignals(False)

    def _on_activated(self, index: int) -> None:
        source = self.itemData(index)
        if source:
            if source != self._current:
                self._open_source(source)
        else:
            self.setCurrentIndex(self.findData(self._current))
            self._open_dialog()


def build_toolbar(parent: QWidget, picker: TokenizerPicker,
                  load_sample: Callable[[str], None]) -> QToolBar:
    """The main toolbar: picker, then one button per bundled sample."""
    bar = QToolBar("Main", parent)
    bar.setObjectName("toolbar-main")
    bar.setMovable(False)
    bar.addWidget(QLabel(" Tokenizer: "))
    bar.addWidget(picker)
    bar.addSeparator()
    bar.addWidget(QLabel(" Samples: "))
    for name in sample_names():
        action = bar.addAction(name.capitalize(), lambda n=name: load_sample(n))
        action.setToolTip(TITLES.get(name, name))
    return bar
