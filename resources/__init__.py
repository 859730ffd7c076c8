"""Bundled, permissively licensed data (vocabularies, corpus, sample texts); see LICENSES.md."""

from importlib.resources import files
from pathlib import Path


def resource_path(*parts: str) -> Path:
    """Filesystem path of a bundled resource, e.g. ``resource_path("vocab", "x.tiktoken")``."""
    return Path(str(files(__name__).joinpath(*parts)))
