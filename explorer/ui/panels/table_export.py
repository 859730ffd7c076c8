"""Result tables and their export to a file, shared by the panels that produce tables
(Parity, Corpus Statistics)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QHeaderView, QLabel, QTableView, QWidget

from explorer.ui.table_model import HeaderTableModel


def result_table(model: HeaderTableModel, parent: QWidget, *,
                 max_section: int | None = None) -> QTableView:
    """A read-only view of ``model``: no row numbers, columns fitted to their contents (at
    most ``max_section`` pixels), the last one stretched; the splitter holding it, not the
    table, decides its height."""
    view = QTableView(parent)
    view.setModel(model)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(22)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if max_section is not None:
        header.setMaximumSectionSize(max_section)
    header.setStretchLastSection(True)
    view.setMinimumHeight(50)
    return view


def ask_export_path(parent: QWidget, title: str, default_name: str, kind: str) -> Path | None:
    """The file the user picks to export a ``kind`` (``csv``, ``json``) file; None if
    cancelled."""
    path, _ = QFileDialog.getSaveFileName(parent, title, default_name,
                                          f"{kind.upper()} (*.{kind})")
    return Path(path) if path else None


def write_export(path: Path, data: str, status: QLabel) -> bool:
    """Write ``data`` (UTF-8) to ``path``; on failure say why in ``status``, keep the
    panel as it is, and return False."""
    try:
        path.write_text(data, encoding="utf-8")
    except OSError as e:
        status.setText(f"Could not write {path}: {e.strerror}")
        return False
    return True
