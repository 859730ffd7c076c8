"""cut_segments' line cuts (docstore._safe_cuts, numpy) against the line-by-line search,
and its segments (a search per segment) against a step per line."""

from __future__ import annotations

import random
from array import array
from bisect import bisect_left

import pytest

from explorer.engine.compact import CompactTokens
from explorer.workers.docstore import _safe_cuts, cut_segments


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
    cuts, firsts = _safe_cuts(text, starts, ends, begin, stop, tok_start)
    assert list(zip(cuts, firsts, strict=True)) == reference(
        text, starts, ends, begin, limit, tok_start)


def segments_stepping(text: str, starts: array, ends: array, limit: int, begin: int,
                      least: int) -> list[tuple[int, int, int]]:
    """(start, end, first token) of each segment, a step per safe line start (as
    cut_segments did before it searched per segment)."""
    seg_start, tok_start = begin, bisect_left(starts, begin) if begin else 0
    out = []
    for cut, i in reference(text, starts, ends, begin, min(limit, len(text) - 1), tok_start):
        if cut - seg_start < least and cut != limit:
            continue
        out.append((seg_start, cut, tok_start))
        seg_start, tok_start = cut, i
    if limit >= len(text) and (seg_start < len(text) or len(starts) > tok_start):
        out.append((seg_start, len(text), tok_start))
    return out


@pytest.mark.parametrize("seed", range(300))
def test_segments_as_a_step_per_line_cuts_them(seed: int) -> None:
    rng = random.Random(seed)
    lines = ["".join(rng.choice("ab ") for _ in range(rng.randint(0, 9)))
             for _ in range(rng.randint(0, 30))]
    text = "\n".join(lines)
    starts, ends = array("i"), array("i")
    pos = 0
    while pos < len(text):  # (tokens that sometimes cross a line start)
        size = rng.randint(1, 5)
        starts.append(pos)
        ends.append(min(len(text), pos + size))
        pos += size
    ids = array("i", range(len(starts)))
    begin = 0
    if rng.random() < 0.4 and "\n" in text:  # a safe cut, as callers pass
        options = [c for c, _ in reference(text, starts, ends, 0, len(text), 0)]
        begin = rng.choice(options) if options else 0
    limit = rng.randint(begin, len(text)) if rng.random() < 0.5 else len(text)
    if rng.random() < 0.5:  # (a caller's limit is often a safe cut)
        later = [c for c, _ in reference(text, starts, ends, begin, len(text), 0) if c > begin]
        limit = rng.choice(later) if later else limit
    least = rng.choice([1, 3, 8, 20])
    toks = CompactTokens(ids, starts, ends)
    got = [(s.origin, s.origin + len(s.text), s.ids[0] if s.ids else None)
           for s in cut_segments(text, toks, limit, begin, least)]
    want = [(a, b, ids[i] if i < len(ids) and starts[i] < b else None)
            for a, b, i in segments_stepping(text, starts, ends, limit, begin, least)]
    assert got == want


@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 20])
def test_line_starts_are_every_newline_end_whatever_the_slice(chunk, monkeypatch) -> None:
    """The line starts are found in code points a slice at a time: the same at every slice
    size, with characters past the BMP, lone surrogates and lines that end a slice."""
    from explorer.workers import docstore

    monkeypatch.setattr(docstore, "LINE_SCAN_CHARS", chunk)
    rng = random.Random(chunk)
    alphabet = ["\n", "a", "é", "😀", "\ud800", "𠀋", " ", "\n\n"]
    for _ in range(100):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        begin = rng.randrange(0, len(text) + 1)
        stop = rng.randrange(begin, len(text) + 1)
        expected = [i + 1 for i in range(begin, stop) if text[i] == "\n"]
        assert docstore._line_starts(text, begin, stop).tolist() == expected


@pytest.mark.parametrize("begin", [0, 12])
@pytest.mark.parametrize("least", [1, 16, 4096])
def test_consumed_tokens_give_the_same_segments_and_are_let_go(begin, least):
    from explorer.bundled import resource_path
    from explorer.engine.formats import load_tokenizer

    tok = load_tokenizer(resource_path("vocab", "cl100k_base.tiktoken"))
    text = "first\nsecond line\n  indented, héllo 😀\n\nlast line without an end" * 20
    kept = cut_segments(text, tok.encode_compact(text), len(text), begin, least)
    toks = tok.encode_compact(text)
    first = bisect_left(toks.starts, begin)
    consumed = cut_segments(text, toks, len(text), begin, least, consume=True)
    assert [(s.text, s.origin, list(s.ids), list(s.starts), list(s.ends)) for s in consumed] \
        == [(s.text, s.origin, list(s.ids), list(s.starts), list(s.ends)) for s in kept]
    assert len(kept) >= (1 if least == 4096 else 20)
    assert len(toks.ids) == len(toks.starts) == len(toks.ends) == first  # (all handed over)
