"""The same split pattern for text without astral characters, for Python's own ``re``.

On text in many scripts the split is a third of a byte-level BPE encode, and ``regex`` runs
the known patterns at ~100 ns a character. Python's ``re`` has no ``\\p{..}`` classes, but
every class escape can be written out as the code points it holds, and ``re`` then runs
o200k's pattern 2.3x faster on the all-language UDHR text (3M characters: 0.13 against
0.30 s; cl100k 0.10 against 0.27 s; identical chunks), *as long as the classes hold no code
point past the BMP*. ``re`` keeps a big class's BMP part as a two-level bitmap (one look-up)
but its astral part as a list of ranges, tried one by one for every character that is not
in the bitmap: with the astral ranges spelled out too, ``re`` was 3-5x *slower* than
``regex`` (docs/benchmarks.md, sessions 8 and 31).

So :func:`bmp_equivalent` rewrites each class escape into the BMP code points ``regex``
itself puts in it (found by matching every one of them: ``regex``'s own Unicode version, no
table of properties assumed), and is only used on text with no astral character
(:func:`has_astral`). The rewrite is checked against ``regex`` on every BMP code point in
several neighbourhoods; any difference and it is None (the caller keeps ``regex``).
Compiling it costs ~0.1 s (o200k: a pattern of ~60k characters), so a splitter compiles it
only once it has a long text to split (:mod:`~explorer.engine.pretokenizers.regex_split`).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import regex

from explorer.engine.pretokenizers.ascii_pattern import rewrite_classes

__all__ = ["CACHE_KIND", "RUN_STEP", "bmp_equivalent", "has_astral", "rewrite", "samples"]

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_NEVER = "[^\x00-\uffff]"  # matches no BMP character
_EVERYTHING = "[\x00-\uffff]"


def has_astral(text: str) -> bool:
    """True when ``text`` holds a code point past U+FFFF (emoji, CJK Extension B, ...)."""
    return _ASTRAL.search(text) is not None


CACHE_KIND = "bmp-split-pattern-v1"
"""The vocabulary cache's kind for a pattern's checked rewrite (keyed by the pattern and
``regex``'s version: its Unicode data decides the classes)."""


@cache
def bmp_equivalent(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` (a ``regex`` pattern) rewritten for ``re``, valid on text without astral
    characters; None when it cannot be rewritten or the rewrite does not split
    :func:`samples` as ``regex`` does. The checked rewrite is kept in the vocabulary cache
    (making it takes ~0.07 s for o200k's pattern, compiling it ~0.02 s: each process)."""
    from explorer.engine.formats.vocab_cache import cached_by_key

    key = f"{regex.__version__}\n{pattern}".encode("utf-8", "surrogatepass")
    try:
        rewritten = cached_by_key(key, CACHE_KIND, lambda: rewrite(pattern) or "")
        return re.compile(rewritten) if isinstance(rewritten, str) and rewritten else None
    except (re.error, ValueError, RecursionError, OverflowError):
        return None


def rewrite(pattern: str) -> str | None:
    """The ``re`` source of :func:`bmp_equivalent`, checked against ``regex`` on
    :func:`samples`; None when it cannot be made or splits them differently."""
    try:
        original = regex.compile(pattern)
        rewritten = rewrite_classes(pattern, _members, _NEVER, _EVERYTHING)
        if rewritten is None:
            return None
        compiled = re.compile(rewritten)
    except (regex.error, re.error, ValueError, RecursionError, OverflowError):
        return None
    if any(_spans(compiled, text) != _spans(original, text) for text in samples(RUN_STEP)):
        return None
    return rewritten


RUN_STEP = 61
"""Every this-many-th BMP code point is tried in each neighbourhood of :func:`samples` when
a rewrite is made (all of them in order too); the tests try every one (~0.7 s a pattern)."""


def samples(step: int) -> list[str]:
    """Texts a rewrite must split as ``regex`` does: every BMP code point in order, and
    every ``step``-th one (and every ASCII one) after a letter, a space, an apostrophe and a
    digit, each followed by a space."""
    every = _every_bmp()
    some = "".join(map(chr, range(128))) + every[128::step]
    return [every] + ["".join(f"{before}{c} " for c in some) for before in ("a", " ", "'", "7")]


def _spans(pattern: re.Pattern[str] | regex.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


@cache
def _every_bmp() -> str:
    """Every BMP code point in order (lone surrogates too: a text decoded with
    ``surrogateescape`` holds some)."""
    return "".join(map(chr, range(0x10000)))


@cache
def _members(escape: str) -> str:
    """The BMP code points ``regex`` puts in the class ``escape`` (e.g. ``\\p{Lu}``), as
    the inside of an ``re`` character class (runs of code points as ranges)."""
    found = "".join(regex.compile(escape).findall(_every_bmp()))
    points = np.frombuffer(found.encode("utf-32-le", "surrogatepass"), np.uint32)
    if not points.size:
        return ""
    breaks = np.flatnonzero(np.diff(points) != 1)
    firsts = np.concatenate(([points[0]], points[breaks + 1])).tolist()
    lasts = np.concatenate((points[breaks], [points[-1]])).tolist()
    return "".join(_literal(a) if a == b else f"{_literal(a)}-{_literal(b)}"
                   for a, b in zip(firsts, lasts, strict=True))


_SPECIAL_IN_CLASS = frozenset("\\]^-[")


def _literal(point: int) -> str:
    """Code point ``point`` as written in an ``re`` class: itself (``re`` parses ``\\uXXXX``
    escapes ~3x slower), escaped where the class syntax needs it, controls as ``\\xXX``."""
    c = chr(point)
    if c in _SPECIAL_IN_CLASS:
        return "\\" + c
    return f"\\x{point:02x}" if point < 0x20 or point == 0x7F else c
