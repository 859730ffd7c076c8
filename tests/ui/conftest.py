"""Fixtures for the window tests: isolated settings, a window on the bundled cl100k, and a
check that no unexpected Qt warning was logged."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QStandardPaths

from explorer.ui.settings import use_settings_dir

# Qt's own state (a non-native file dialog's history in QtProject.conf, any standard
# location) goes to Qt's test directories, never the user's ~/.config or ~/.local/share.
QStandardPaths.setTestModeEnabled(True)

# Messages of the offscreen platform and of fonts missing on CI machines: not our bugs.
EXPECTED_QT_MESSAGES = (
    "propagateSizeHints",
    "OpenType support missing",
    "QFont::setPointSize",
    "This plugin does not support",
)


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path):
    """Every UI test writes settings and autosave under its own temporary directory."""
    use_settings_dir(tmp_path)
    yield tmp_path
    use_settings_dir(None)


@pytest.fixture
def no_qt_warnings(qtlog):
    """Fail the test when Qt logged a warning (or worse) that is not expected."""
    yield
    from PySide6.QtCore import QtMsgType

    bad = [r.message for r in qtlog.records
           if r.type in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
           and not any(m in r.message for m in EXPECTED_QT_MESSAGES)]
    assert not bad, f"unexpected Qt warnings: {bad}"


class ErrorRecorder:
    """Stands in for the error dialog: records ``(title, message)``."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, str]] = []

    def __call__(self, title: str, message: str) -> None:
        self.errors.append((title, message))


@pytest.fixture
def errors():
    return ErrorRecorder()


@pytest.fixture
def window(qtbot, errors):
    """A shown main window with cl100k loaded and the welcome text highlighted."""
    from explorer.ui.main_window import MainWindow

    w = MainWindow(report_error=errors, autosave=False)
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    w.restore(text="hello world\n")
    wait_highlighted(qtbot, w)
    yield w
    w.controller.shutdown()


@pytest.fixture
def worker_results(monkeypatch):
    """Every re-encode runs on the worker: an edit's result lands after the edit, never
    inside it (tests of what the window shows while a result is on its way)."""
    from explorer.workers import jobs

    monkeypatch.setattr(jobs, "QUICK_MAX_WINDOW", 0)


def wait_highlighted(qtbot, w, timeout=20000):
    """Wait until text, result and painting agree."""
    qtbot.waitUntil(lambda: w.is_highlighted and w.doc is not None
                    and w.doc.text == w.text(), timeout=timeout)


def click_table_row(qtbot, w, row):
    """Pick token ``row`` in the token table the way a user does: a real mouse click."""
    from PySide6.QtCore import Qt

    w.table.show()
    index = w.table_model.index(row, 1)
    w.table.scrollTo(index)
    qtbot.mouseClick(w.table.viewport(), Qt.MouseButton.LeftButton,
                     pos=w.table.visualRect(index).center())
