"""Regression: PySide6 6.12.0 on CPython 3.11 drops a reference to None on every void call.

See ../shared/PLATFORM.md. pyproject.toml excludes that pairing; this test proves the
installed pair does not leak (it would abort the interpreter after a few thousand calls).
"""

import sys

import pytest

pytestmark = pytest.mark.gui


def test_void_qt_calls_keep_none_refcount(qtbot):
    from PySide6.QtGui import QTextCharFormat
    from PySide6.QtWidgets import QLabel

    label = QLabel()
    qtbot.addWidget(label)
    fmt = QTextCharFormat()
    before = sys.getrefcount(None)
    for _ in range(10_000):
        label.setText("x")
        fmt.setFontWeight(400)
    after = sys.getrefcount(None)
    # Other threads may touch None a little; a leak would be -20,000.
    assert abs(after - before) < 200, f"None refcount moved by {after - before}"


def test_pyproject_excludes_broken_pyside_pair():
    from pathlib import Path

    text = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert "!=6.12.0; python_version < '3.12'" in text
