"""Positions between the editor (blocks, UTF-16 columns) and the result (code points, tokens).

Every conversion goes through :class:`~explorer.engine.offsets.Utf16Map`. Lookups are local to
one segment (a few lines), so they cost the same in a 10 MB document as in a short one.
"""

from __future__ import annotations

from explorer.engine.offsets import Utf16Map
from explorer.workers.doctokens import DocTokens


def _line_start_in_segment(text: str, skip: int) -> int | None:
    a = 0
    for _ in range(skip):
        a = text.find("\n", a) + 1
        if a == 0:
            return None
    return a


def offset_of(doc: DocTokens, block: int, block_text: str, col16: int) -> int | None:
    """Document code-point offset of UTF-16 column ``col16`` of block ``block``.

    None when the result does not match the block's text (the user typed since).
    """
    k = doc.segment_of_line(block)
    seg = doc.segments[k]
    a = _line_start_in_segment(seg.text, block - doc.line_starts[k])
    if a is None or not seg.text.startswith(block_text, a):
        return None
    end = a + len(block_text)
    if end < len(seg.text) and seg.text[end] != "\n":
        return None
    return doc.cp_starts[k] + a + Utf16Map(block_text).to_codepoint(col16)


def block_col_of(doc: DocTokens, offset: int) -> tuple[int, int]:
    """``(block number, UTF-16 column)`` of document code-point ``offset``."""
    k = doc.segment_of_offset(offset)
    seg = doc.segments[k]
    local = max(0, min(len(seg.text), offset - doc.cp_starts[k]))
    line = seg.text.count("\n", 0, local)
    start = seg.text.rfind("\n", 0, local) + 1
    return doc.line_starts[k] + line, Utf16Map(seg.text[start:local]).length_utf16
