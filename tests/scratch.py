"""Scratch folders for test-support caches that outlive one test (trained models, written
rules): removed when the test process exits, so repeated runs leave nothing in ``/tmp``."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch_dir(prefix: str) -> Path:
    """A new temporary folder, deleted with everything in it at interpreter exit."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
