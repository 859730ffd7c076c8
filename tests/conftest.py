"""Shared test setup: offscreen Qt, reference data fetched once per session."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
