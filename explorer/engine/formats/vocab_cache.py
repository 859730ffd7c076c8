"""On-disk cache of parsed vocabularies, so large files load fast the second time.

Parsed data (plain dicts/lists/bytes/str/ints) is stored with ``marshal`` -- the fastest
Python serializer for those types (a 200k-entry dict loads in ~30 ms) -- under the user
cache directory: ``$EXPLORER_CACHE_DIR``, else ``$XDG_CACHE_HOME/tokenizer-explorer``, else
``~/.cache/tokenizer-explorer``. The key is the file's absolute path, size and mtime plus a
``kind`` naming the parser and its version, so an edited file or a new parser misses. Every
cache failure (unwritable dir, corrupt entry) silently falls back to parsing: the cache is
an optimisation, never a source of errors. Set ``EXPLORER_NO_VOCAB_CACHE=1`` to bypass it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_MAGIC = b"TXVC1\n"


def cache_dir() -> Path:
    """The directory holding cached vocabularies (may not exist yet)."""
    explicit = os.environ.get("EXPLORER_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tokenizer-explorer"


def _entry(path: Path, kind: str) -> Path | None:
    try:
        st = path.stat()
    except OSError:
        return None
    key = f"{kind}\0{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode()
    return cache_dir() / f"{hashlib.sha256(key).hexdigest()[:32]}.marshal"


def cached(path: Path, kind: str, parse: Callable[[], T]) -> T:
    """``parse()``'s result for ``path``, from the cache when the file is unchanged."""
    if os.environ.get("EXPLORER_NO_VOCAB_CACHE"):
        return parse()
    entry = _entry(path, kind)
    if entry is not None:
        try:
            data = entry.read_bytes()
            if data.startswith(_MAGIC):
                return marshal.loads(memoryview(data)[len(_MAGIC):])  # type: ignore[no-any-return]
        except (OSError, EOFError, ValueError, TypeError):
            pass
    value = parse()
    if entry is not None:
        _store(entry, value)
    return value


def cached_by_key(key: bytes, kind: str, parse: Callable[[], T]) -> T:
    """``parse()``'s result for content identified by ``key`` (e.g. a digest of the bytes
    it is parsed from), from the cache when present: for data embedded in other files."""
    if os.environ.get("EXPLORER_NO_VOCAB_CACHE"):
        return parse()
    entry = _key_entry(key, kind)
    try:
        data = entry.read_bytes()
        if data.startswith(_MAGIC):
            return marshal.loads(memoryview(data)[len(_MAGIC):])  # type: ignore[no-any-return]
    except (OSError, EOFError, ValueError, TypeError):
        pass
    value = parse()
    _store(entry, value)
    return value


def cached_and_built(key: bytes, kind: str, parse: Callable[[], T], build: Callable[[T], R]) -> R:
    """``build`` of :func:`cached_by_key`'s value. An entry that ``build`` refuses (raises
    ``ValueError``, ``TypeError``, ``IndexError`` or ``KeyError``: an entry of another shape)
    is parsed again and stored over: a structure read back as it was stored (slot arrays,
    tables) is checked by building it, not by a check beside each reader."""
    value = cached_by_key(key, kind, parse)
    try:
        return build(value)
    except (ValueError, TypeError, IndexError, KeyError):
        value = parse()
        if not os.environ.get("EXPLORER_NO_VOCAB_CACHE"):
            _store(_key_entry(key, kind), value)
        return build(value)


def _key_entry(key: bytes, kind: str) -> Path:
    digest = hashlib.sha256(kind.encode() + b"\0" + key).hexdigest()[:32]
    return cache_dir() / f"{digest}.marshal"


def _store(entry: Path, value: object) -> None:
    try:
        payload = marshal.dumps(value)
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + payload)
        os.replace(tmp, entry)  # atomic: concurrent loaders never see half a file
    except (OSError, ValueError):
        pass
