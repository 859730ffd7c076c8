"""About dialog: versions of the app and its libraries, and the bundled data's licenses."""

from __future__ import annotations

import html
import platform

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from explorer import __version__
from explorer.bundled import resource_path


def versions() -> list[tuple[str, str]]:
    """``(component, version)`` rows shown in the dialog."""
    from importlib import metadata  # ~50 ms to import: only when the dialog opens

    rows = [("Tokenizer Explorer", __version__), ("Python", platform.python_version()),
            ("PySide6", PySide6.__version__), ("Qt", qVersion())]
    for dist in ("regex", "pyqtgraph", "numpy", "protobuf", "gguf"):
        try:
            rows.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            rows.append((dist, "not installed"))
    return rows


def about_html() -> str:
    """The dialog's content."""
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
                   for k, v in versions())
    try:
        licenses = resource_path("LICENSES.md").read_text(encoding="utf-8")
    except OSError:
        licenses = "resources/LICENSES.md is missing."
    return (
        "<h2>Tokenizer Explorer</h2><p>See what a tokenizer does: live token highlighting, "
        "BPE merge queues, Unigram lattices, training and comparison. MIT licensed.</p>"
        f"<h3>Versions</h3><table>{rows}</table>"
        f"<h3>Bundled data</h3><pre style='white-space: pre-wrap'>{html.escape(licenses)}</pre>"
    )


class AboutDialog(QDialog):
    """Modeless About dialog."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Tokenizer Explorer")
        self.resize(560, 520)
        self.browser = QTextBrowser(self)
        self.browser.setHtml(about_html())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser)
        lay.addWidget(buttons)
