"""Splitting mostly-ASCII text: Python's ``re`` on its ASCII stretches, ``regex`` around the
rest.

The known split patterns run 2-2.5x faster with ``re`` on ASCII-only text
(:mod:`~explorer.engine.pretokenizers.ascii_pattern`), but one ``é`` or ``’`` in a window of
text sends all of it to ``regex``: minified JSON with a few hundred accented letters in 9 MB,
or prose with curly quotes, never took the fast path. :func:`mixed_findall` scans each ASCII
stretch with ``re`` and only the text around each non-ASCII run with ``regex``, and stitches
the chunks where the two scans are the one scan of the whole text.

Why the stitches hold. A scan is a sequence of matches, each decided from where the last one
ended by looking at the text from there: a scan started at a true match boundary finds the
true matches, as long as what each match attempt *looks at* is the true text (a scan of a
slice sees the slice's end as the text's end, and ``re`` is only valid on ASCII). What an
attempt looks at is bounded for the known patterns (:data:`SPLICED`): every alternative is an
optional character, one or two runs of one class (letters, digits, punctuation, whitespace),
an optional contraction of at most three characters, and a look one character ahead (``\\s+
(?!\\S)``, ``$``). Such a stretch holds at most a handful of changes between whitespace and
non-whitespace, so a match that starts before :data:`BREAKS` of them cannot look past them.
So:

- from a true boundary ``pos``, ``re`` scans up to the next non-ASCII character ``c``, and
  its chunks are kept up to the last boundary with :data:`BREAKS` changes between it and ``c``
  (those matches never looked at ``c`` or past it);
- from there ``regex`` scans past the non-ASCII run to a point ``z`` with twice that many
  changes after the run, and its chunks are kept up to the last boundary past the run with
  :data:`BREAKS` changes before ``z``; the next ASCII stretch starts there.

Text where non-ASCII runs are dense (more than one per :data:`SPARSE` characters) is scanned
by ``regex`` whole. Property tests compare the result with ``regex`` on the whole text for
every known pattern.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate, islice

import regex

from explorer.engine.pretokenizers.patterns import PATTERNS

SPLICED = frozenset(PATTERNS.values())
"""The patterns whose scans are stitched (their alternatives have the bounded shape the
module notes rely on); any other pattern is scanned whole."""
BREAKS = 12
"""Changes between whitespace and non-whitespace a kept chunk must end before a slice's end
(an attempt of a known pattern looks across at most ~5)."""
SPARSE = 512
"""Text with a non-ASCII run more often than once per this many characters on average is
scanned by ``regex`` whole (the stitches would cover most of it)."""

_SPACES = re.compile(r"\s+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
BLOCK = 4096  # characters tested by str.isascii at a time


def mixed_findall(fast: re.Pattern[str], slow: regex.Pattern[str], text: str) -> list[str]:
    """``slow.findall(text)``, with ``fast`` (the same pattern for ``re``, valid on ASCII
    text) on the ASCII stretches of ``text`` (see the module notes; ``slow`` must be one of
    :data:`SPLICED` and match every character)."""
    n = len(text)
    runs = _non_ascii_runs(text)
    if runs is None:
        return slow.findall(text)
    if not runs:
        return fast.findall(text)
    out: list[str] = []
    pos = 0
    for c, d in runs:
        if d <= pos:  # (inside the last slow stretch)
            continue
        c = max(c, pos)  # (the last stretch may end inside this run)
        chunks = fast.findall(text, pos, c)
        keep_to = _before_breaks(text, pos, c)
        a = pos
        if keep_to > pos:  # the chunks up to there (they tile the stretch: from its end)
            k, a = len(chunks), c
            while a > keep_to:
                k -= 1
                a -= len(chunks[k])
            out.extend(chunks[:k] if k < len(chunks) else chunks)
        pos = _slow_stretch(slow, text, a, d, out)
        if pos >= n:
            return out
    out.extend(fast.findall(text, pos, n))
    return out


def _slow_stretch(slow: regex.Pattern[str], text: str, a: int, d: int,
                  out: list[str]) -> int:
    """Scan from true boundary ``a`` with ``slow`` past ``d`` (a non-ASCII run's end); add
    the chunks up to a true boundary at or past ``d`` to ``out`` and return it."""
    n = len(text)
    z = _after_breaks(text, d, 2 * BREAKS + 1)
    while True:
        chunks = slow.findall(text, a, z)
        if z >= n:
            out.extend(chunks)
            return n
        keep_to = _before_breaks(text, d, z)
        if keep_to >= d:
            ends = list(accumulate(map(len, chunks), initial=a))
            k = bisect_right(ends, keep_to) - 1
            if ends[k] >= d:
                out.extend(chunks[:k])
                return ends[k]
        z = _after_breaks(text, z, 2 * BREAKS + 1)  # (no boundary there yet: look further)


def _non_ascii_runs(text: str) -> list[tuple[int, int]] | None:
    """``(start, end)`` of each run of non-ASCII characters in ``text``; None as soon as
    they are denser than one per :data:`SPARSE` characters so far (and a few). Blocks that
    ``str.isascii`` clears are skipped (``re`` alone took 12 ns a character, much of a
    dense text's time here)."""
    runs: list[tuple[int, int]] = []
    n = len(text)
    for block in range(0, n, BLOCK):
        if text[block:block + BLOCK].isascii():
            continue
        for m in _NON_ASCII.finditer(text, block, min(n, block + BLOCK)):
            a, b = m.span()
            if runs and runs[-1][1] == a:  # (a run across the blocks' edge)
                a = runs.pop()[0]
            runs.append((a, b))
        if len(runs) * SPARSE > block + BLOCK + 16 * SPARSE:
            return None
    return runs


def _after_breaks(text: str, start: int, count: int) -> int:
    """A place with at least ``count`` whitespace changes after ``start`` (the end of the
    ``count // 2 + 1``-th whitespace run after it: each run but the first starts and ends
    with one), or the text's end."""
    for m in islice(_SPACES.finditer(text, start + 1), count // 2, None):
        return m.end()
    return len(text)


def _before_breaks(text: str, low: int, end: int) -> int:
    """A place ``q`` in ``[low, end]``, as large as cheaply found, with at least
    :data:`BREAKS` whitespace changes in ``text[q:end]``, or -1 when there is none: the
    start of the ``BREAKS // 2 + 1``-th whitespace run before ``end`` (each run between it
    and the last ends and starts with one, and those two add one each)."""
    runs = BREAKS // 2 + 1
    width = 8 * runs
    while True:
        start = max(low, end - width)
        found = [m.start() for m in _SPACES.finditer(text, start, end)]
        if len(found) >= runs:  # (a run cut by the window's start still ends with one)
            return found[-runs]
        if start == low:
            return -1
        width *= 4
