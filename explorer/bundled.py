"""Where the bundled data (``resources/``: vocabularies, corpus, samples, icons, licenses) is.

The same code runs four ways, and each puts ``resources/`` somewhere else:

- an installed wheel: the package ``explorer.resources`` (setup.py maps the folder there);
- the source tree (``python -m explorer`` in a clone, where the clone's ``explorer/``
  shadows any installed copy) and an editable install: ``resources/`` beside ``explorer/``;
- the PyInstaller build: ``resources/`` inside the bundle (``sys._MEIPASS``).

:func:`resources_root` takes the first that holds ``LICENSES.md``, a source tree's own folder
first (so a checkout never reads another checkout's data through an editable install).
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

MARKER = "LICENSES.md"


class ResourcesMissingError(RuntimeError):
    """No folder of bundled data was found (a broken install)."""


def _candidates() -> list[Path]:
    found: list[Path] = []
    tree = Path(__file__).resolve().parent.parent
    if (tree / "pyproject.toml").is_file():  # running from a source tree: its own data first
        found.append(tree / "resources")
    try:
        spec = importlib.util.find_spec("explorer.resources")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        found.extend(Path(p) for p in spec.submodule_search_locations)
    found.append(tree / "resources")
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        found.extend([Path(frozen) / "explorer" / "resources", Path(frozen) / "resources"])
    return found


@cache
def resources_root() -> Path:
    """The folder of bundled data; :class:`ResourcesMissingError` names the places tried."""
    tried = _candidates()
    for path in tried:
        if (path / MARKER).is_file():
            return path
    raise ResourcesMissingError("bundled data not found; looked in "
                           + ", ".join(str(p) for p in tried))


def resource_path(*parts: str) -> Path:
    """Filesystem path of a bundled resource, e.g. ``resource_path("vocab", "x.tiktoken")``."""
    return resources_root().joinpath(*parts)


BUNDLED_PREFIX = "bundled:"


def bundled_vocabularies() -> dict[str, Path]:
    """Bundled vocabulary files by name (the file name up to its first dot)."""
    found = {}
    for p in sorted(resource_path("vocab").iterdir()):
        if p.is_file() and not p.name.startswith((".", "_")) and p.suffix not in (".md", ".py"):
            found[p.name.split(".")[0]] = p
    return found


def bundled_vocabulary(name: str) -> Path:
    """Path of bundled vocabulary ``name`` (``bundled:`` prefix allowed); KeyError names them."""
    name = name.removeprefix(BUNDLED_PREFIX)
    found = bundled_vocabularies()
    if name not in found:
        raise KeyError(f"no bundled vocabulary {name!r}; bundled: {', '.join(found)}")
    return found[name]
