"""The pre-token under the text cursor, from the engine's own pipeline.

``tokenizer.stages(...)`` runs on the cursor's line, at most :data:`WINDOW_CHARS` either side,
so a huge line costs a bounded amount of work per cursor move.
"""

from __future__ import annotations

from explorer.engine.errors import TokenizerError
from explorer.engine.tokenizer import Tokenizer

WINDOW_CHARS = 400
"""Characters of the cursor's line, either side, run through ``stages`` to find its pre-token."""
CURSOR_DELAY_MS = 60
"""Panels following the cursor wait this long after the last move before refreshing."""


def pre_token_span(tokenizer: Tokenizer, text: str, offset: int) -> tuple[int, int] | None:
    """Code-point span of the pre-token containing ``offset``, or None (e.g. on a newline)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    lo, hi = max(line_start, offset - WINDOW_CHARS), min(line_end, offset + WINDOW_CHARS)
    if lo >= hi:
        return None
    for pre in tokenizer.stages(text[lo:hi]).pre_tokens:
        if pre.start <= offset - lo < pre.end:
            return lo + pre.start, lo + pre.end
    return None


def cursor_pre_token(tokenizer: Tokenizer, text: str,
                     offset: int | None) -> tuple[str, tuple[int, int]] | None:
    """``(piece, (start, end))`` of the pre-token at ``offset``, or None."""
    if offset is None:
        return None
    try:
        span = pre_token_span(tokenizer, text, offset)
    except TokenizerError:
        return None
    return None if span is None else (text[span[0]:span[1]], span)


def line_window(text: str, offset: int | None, limit: int = WINDOW_CHARS) -> tuple[int, int]:
    """Code-point span of the cursor's line, at most ``limit`` characters either side of
    ``offset`` (the first line when there is no cursor yet)."""
    offset = 0 if offset is None else max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    return max(line_start, offset - limit), min(line_end, max(offset, line_start) + limit)
