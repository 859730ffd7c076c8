"""Deterministic English training corpora for benchmarks: botchan, then stdlib sources.

``build(size_bytes, folder)`` writes ``train_<N>mb.txt``: the bundled botchan novel followed by
this Python's standard-library ``.py`` files (sorted by path: English comments, docstrings
and code), cut at a line boundary once ``size_bytes`` is reached.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

from explorer.bundled import resource_path


def _sources() -> list[Path]:
    lib = Path(sysconfig.get_paths()["stdlib"])
    skip = ("site-packages", "test", "tests", "idlelib", "lib2to3", "encodings")
    return sorted(p for p in lib.rglob("*.py")
                  if not any(part in skip for part in p.relative_to(lib).parts))


def build(size_bytes: int, folder: Path) -> Path:
    """Write (once) and return a corpus file of about ``size_bytes`` bytes."""
    out = folder / f"train_{size_bytes // 1_000_000}mb.txt"
    if out.exists() and out.stat().st_size >= size_bytes * 0.95:
        return out
    folder.mkdir(parents=True, exist_ok=True)
    chunks = [resource_path("corpus", "botchan.txt").read_bytes()]
    total = len(chunks[0])
    for path in _sources():
        if total >= size_bytes:
            break
        try:
            data = path.read_bytes()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        chunks.append(data if data.endswith(b"\n") else data + b"\n")
        total += len(chunks[-1])
    blob = b"".join(chunks)[:size_bytes]
    blob = blob[: blob.rfind(b"\n") + 1]
    out.write_bytes(blob)
    return out
