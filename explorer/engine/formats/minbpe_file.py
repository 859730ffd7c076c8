"""minbpe's ``.model`` files (``tokenizer.save(prefix)`` writes ``prefix.model`` and
``prefix.vocab``).

``.model`` is text: ``minbpe v1``, the split pattern (empty for ``BasicTokenizer``), the
number of special tokens, one ``<special> <id>`` line each, then one ``<id1> <id2>`` line per
merge, the k-th merge creating id ``256 + k``. The ``.vocab`` beside it is a human-readable
dump "just for vis" (minbpe's words): choosing it opens its ``.model``.
"""

from __future__ import annotations

import re
from pathlib import Path

from explorer.engine.bpe.minbpe import MinBPETokenizer
from explorer.engine.errors import VocabFormatError
from explorer.engine.pretokenizers.regex_split import compile_pattern

MAGIC = "minbpe v1"
_ID = re.compile(r"[0-9]{1,18}")
"""An id as minbpe writes it (ASCII digits; longer numbers are corrupt, not ids)."""
MAX_SPECIAL_ID_SLACK = 2**21
"""How far beyond the merged vocabulary a special token's id may be (ids index tables)."""


def parse(text: str, source: str) -> tuple[str, dict[str, int], dict[tuple[int, int], int]]:
    """``(pattern, specials, merges)`` of a ``.model`` file's text."""
    lines = text.split("\n")
    if lines[0].strip() != MAGIC:
        raise VocabFormatError(f"{source}: not a minbpe model (first line is not {MAGIC!r})")
    if len(lines) < 3:
        raise VocabFormatError(f"{source}: truncated minbpe model (no pattern or special count)")
    pattern = lines[1].strip()
    if not _ID.fullmatch(lines[2].strip()):
        raise VocabFormatError(f"{source}:3: the number of special tokens is not an integer")
    n_special = int(lines[2].strip())
    if n_special < 0 or n_special > len(lines) - 3:
        raise VocabFormatError(f"{source}:3: {n_special} special tokens announced, "
                               f"the file has {max(0, len(lines) - 3)} more lines")
    specials: dict[str, int] = {}
    for k in range(n_special):
        parts = lines[3 + k].strip().split()
        if len(parts) != 2 or not _ID.fullmatch(parts[1]):
            raise VocabFormatError(f"{source}:{4 + k}: expected '<special token> <id>'")
        specials[parts[0]] = int(parts[1])
    merges: dict[tuple[int, int], int] = {}
    idx = 256
    for lineno, line in enumerate(lines[3 + n_special:], 4 + n_special):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not all(_ID.fullmatch(p) for p in parts):
            raise VocabFormatError(f"{source}:{lineno}: expected '<id1> <id2>'")
        a, b = int(parts[0]), int(parts[1])
        if a >= idx or b >= idx:
            raise VocabFormatError(f"{source}:{lineno}: merge ({a}, {b}) uses an id not "
                                   f"defined yet (next id is {idx})")
        if (a, b) in merges:
            raise VocabFormatError(f"{source}:{lineno}: merge ({a}, {b}) is listed twice")
        merges[(a, b)] = idx
        idx += 1
    for s, i in specials.items():
        if i < idx and i >= 0:
            raise VocabFormatError(f"{source}: special token {s!r} id {i} collides with a "
                                   "merged token")
        if i >= idx + MAX_SPECIAL_ID_SLACK:
            raise VocabFormatError(f"{source}: special token {s!r} has an absurd id {i}")
    if len(set(specials.values())) != len(specials):
        raise VocabFormatError(f"{source}: two special tokens share one id")
    return pattern, specials, merges


def model_path(path: Path) -> Path:
    """The ``.model`` file for ``path`` (itself, or the ``.model`` beside a ``.vocab``)."""
    if path.suffix == ".vocab":
        model = path.with_suffix(".model")
        if not model.is_file():
            raise VocabFormatError(f"{path}: a minbpe .vocab is for display only and its "
                                   f"model {model.name} is not beside it")
        return model
    return path


def load(path: Path, *, preset: str | None = None) -> MinBPETokenizer:
    """Load a minbpe ``.model`` (or the ``.model`` of a chosen ``.vocab``)."""
    model = model_path(Path(path))
    try:
        text = model.read_bytes().decode("utf-8")
    except OSError as e:
        raise VocabFormatError(f"{model}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise VocabFormatError(f"{model}: not UTF-8 (byte {e.start})") from None
    pattern, specials, merges = parse(text, str(model))
    if pattern:
        try:
            compile_pattern(pattern)
        except Exception as e:  # VocabFormatError, regex limits: report, never crash
            raise VocabFormatError(f"{model}: the split pattern does not compile "
                                   f"({str(e).removeprefix('invalid pre-tokenizer pattern: ')})"
                                   ) from None
    kind = "RegexTokenizer" if pattern else "BasicTokenizer"
    vocab_file = model.with_suffix(".vocab")
    return MinBPETokenizer(merges, pattern, specials, name=model.name,
                           extra={"minbpe": kind,
                                  ".vocab": vocab_file.name if vocab_file.is_file() else "none"})
