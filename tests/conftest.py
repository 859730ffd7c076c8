"""Shared test setup: offscreen Qt, reference data fetched once per session."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import references

pytest_plugins = ["xwindow_fixtures"]


def pytest_sessionstart(session) -> None:
    """Fetch missing reference data once (a no-op when the cache is complete)."""
    if os.environ.get("EXPLORER_NO_FETCH"):
        return
    errors = references.fetch_all(verbose=True)
    if errors:
        print("\nreference fetch errors:\n  " + "\n  ".join(errors), file=sys.stderr)


@pytest.fixture
def automatic_gc():
    """The test starts with Python's automatic GC on, whatever ran before it in this process
    (a window turns it off: explorer.ui.gui_gc collects on the GUI thread; the tests run in
    two processes, each taking whole files in any order); restored afterwards."""
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()
