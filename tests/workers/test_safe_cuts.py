"""cut_segments' line cuts (docstore._safe_cuts, numpy) against the line-by-line search."""

from __future__ import annotations

import random
from array import array
from bisect import bisect_left

import pytest

from explorer.workers.docstore import _safe_cuts


def reference(text: str, starts: array, ends: array, begin: int, limit: int,
              tok_start: int) -> list[tuple[int, int]]:
    out = []
    pos = text.find("\n", begin, limit)
    while pos != -1 and pos + 1 <= limit and pos + 1 < len(text):
        cut = pos + 1
        i = bisect_left(starts, cut)
        if i > tok_start and ends[i - 1] <= cut:
            out.append((cut, i))
            tok_start = i
        pos = text.find("\n", cut, limit)
    return out


@pytest.mark.parametrize("seed", range(200))
def test_same_cuts_as_the_search_per_line(seed: int) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice("ab\n\n ") for _ in range(rng.randint(0, 80)))
    # tokens: a random cover of the text, some crossing line starts, some empty gaps
    starts, ends = array("i"), array("i")
    pos = 0
    while pos < len(text):
        size = rng.randint(1, 6)
        if rng.random() < 0.15:  # a gap: no token here (a dropped space)
            pos += size
            continue
        starts.append(pos)
        ends.append(min(len(text), pos + size))
        pos += size
    begin = rng.randint(0, len(text)) if rng.random() < 0.5 else 0
    limit = rng.randint(begin, len(text)) if rng.random() < 0.5 else len(text)
    tok_start = bisect_left(starts, begin) if begin else 0
    stop = min(limit, len(text) - 1)
    assert _safe_cuts(text, starts, ends, begin, stop, tok_start) == reference(
        text, starts, ends, begin, limit, tok_start)
