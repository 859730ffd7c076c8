"""Autosave of the user's text: never lost, even after a crash.

The text is written (debounced) to ``autosave.txt`` in the app data directory (or the
settings override used by tests) by writing a temporary file and renaming it over the old
one, so a crash mid-write leaves the previous copy intact. On start the window restores it.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QStandardPaths

from explorer.ui.settings import settings_dir

FILE_NAME = "autosave.txt"


def autosave_path() -> Path:
    """Where the text is autosaved."""
    base = settings_dir()
    if base is None:
        loc = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        base = Path(loc) if loc else Path.home() / ".tokenizer-explorer"
    return base / FILE_NAME


def save_text(text: str, path: Path | None = None) -> None:
    """Write ``text`` atomically (temp file + rename)."""
    target = path or autosave_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)


def load_text(path: Path | None = None) -> str | None:
    """The autosaved text, or None when there is none."""
    target = path or autosave_path()
    try:
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
