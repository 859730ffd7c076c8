"""HF's ``NormalizedString::split`` machinery: match lists, split behaviours, piece splitting.

A *match list* covers a string with ``(start, end, is_match)`` ranges (HF ``find_matches``);
a *behaviour* (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous) turns it into
the kept ranges; :func:`split_pieces` applies that to aligned pieces, dropping empty ones.
"""

from __future__ import annotations

from collections.abc import Callable

import regex

from explorer.engine.errors import UnsupportedComponentError
from explorer.engine.hf.normalized import Aligned

Match = tuple[int, int, bool]


def regex_matches(pattern: regex.Pattern[str], text: str) -> list[Match]:
    """HF ``find_matches`` for a regex: matches and the gaps between them."""
    if not text:
        return [(0, 0, False)]
    out: list[Match] = []
    prev = 0
    for m in pattern.finditer(text):
        a, b = m.span()
        if prev != a:
            out.append((prev, a, False))
        out.append((a, b, True))
        prev = b
    if prev != len(text):
        out.append((prev, len(text), False))
    return out


def char_matches(pred: Callable[[str], bool], text: str) -> list[Match]:
    """HF ``find_matches`` for a character predicate: each matching char is its own match."""
    if not text:
        return [(0, 0, False)]
    out: list[Match] = []
    last = 0
    for i, c in enumerate(text):
        if pred(c):
            if last != i:
                out.append((last, i, False))
            out.append((i, i + 1, True))
            last = i + 1
    if last != len(text):
        out.append((last, len(text), False))
    return out


def single_char_matches(pattern: regex.Pattern[str], text: str,
                        confirm: Callable[[str], bool] | None = None) -> list[Match]:
    """:func:`char_matches` with candidates found by a one-character regex (C speed),
    each confirmed by ``confirm`` when given."""
    if not text:
        return [(0, 0, False)]
    out: list[Match] = []
    last = 0
    for m in pattern.finditer(text):
        i = m.start()
        if confirm is not None and not confirm(text[i]):
            continue
        if last != i:
            out.append((last, i, False))
        out.append((i, i + 1, True))
        last = i + 1
    if last != len(text):
        out.append((last, len(text), False))
    return out


def apply_behavior(matches: list[Match], behavior: str) -> list[tuple[int, int]]:
    """Turn a match list into kept ranges, as HF's ``split`` does for ``behavior``."""
    ranges: list[list[int | bool]] = []  # [start, end, remove]
    if behavior == "Isolated":
        ranges = [[a, b, False] for a, b, _ in matches]
    elif behavior == "Removed":
        ranges = [[a, b, m] for a, b, m in matches]
    elif behavior == "Contiguous":
        prev = False
        for a, b, m in matches:
            if m == prev and ranges:
                ranges[-1][1] = b
            else:
                ranges.append([a, b, False])
            prev = m
    elif behavior == "MergedWithPrevious":
        prev = False
        for a, b, m in matches:
            if m and not prev and ranges:
                ranges[-1][1] = b
            else:
                ranges.append([a, b, False])
            prev = m
    elif behavior == "MergedWithNext":
        prev = False
        for a, b, m in reversed(matches):
            if m and not prev and ranges:
                ranges[-1][0] = a
            else:
                ranges.append([a, b, False])
            prev = m
        ranges.reverse()
    else:
        raise UnsupportedComponentError(f"unsupported split behavior {behavior!r}")
    return [(int(a), int(b)) for a, b, rm in ranges if not rm and a != b]


def split_pieces(
    pieces: list[Aligned], find: Callable[[str], list[Match]], behavior: str
) -> list[Aligned]:
    """Split every piece by ``find``'s matches under ``behavior``."""
    out: list[Aligned] = []
    for p in pieces:
        for a, b in apply_behavior(find(p.text), behavior):
            out.append(p if (a == 0 and b == len(p.text)) else p.slice(a, b))
    return out
