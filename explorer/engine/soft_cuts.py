"""Places to start or end an encode near a given place: a line start or end when one is
near, else inside the line at a *soft cut*.

A soft cut is a space that starts a word (``" x"`` after a non-space character): there
byte-level BPE pre-tokenizers (`` ?\\p{L}+``), SentencePiece's whitespace handling (the
space becomes the word's ``▁``) and WordPiece all start a token from scratch, so an encode
that starts or ends there agrees with the whole text's soon. Used where a text with very
long lines must still be cut (:mod:`~explorer.workers.long_lines`,
:mod:`~explorer.workers.tail_chunks`); a cut is only ever a context's edge or a place two
encodes are checked to agree on, never trusted blindly.

Pure Python (no Qt).
"""

from __future__ import annotations

__all__ = ["SOFT_REACH", "end_after", "start_before"]

SOFT_REACH = 4096
"""How far a line start or end (else a soft cut) is looked for from the place asked for."""


def start_before(text: str, at: int, reach: int = SOFT_REACH) -> int:
    """A place at or before ``at`` to start an encode of ``text`` from: the line start
    ``at`` is in when it is at most ``reach`` back, else the last soft cut (a word after a
    space) within ``reach`` back, else ``at``."""
    if at <= 0:
        return 0
    lo = max(0, at - reach - 1)  # (searched only within reach: a line can be megabytes)
    newline = text.rfind("\n", lo, at)
    if newline != -1:
        return newline + 1
    if at <= reach:  # the text's start is within reach
        return 0
    return _soft_before(text, at, reach)


def end_after(text: str, at: int, reach: int = SOFT_REACH) -> int:
    """A place at or after ``at`` to end an encode of ``text`` at: the end of the line
    ``at`` is in (after its ``\\n``, or the text's end) when it is at most ``reach`` on,
    else the first soft cut within ``reach`` on, else ``at`` (never past the text's end)."""
    if at >= len(text):
        return len(text)
    line_end = text.find("\n", at, at + reach)
    if line_end != -1:
        return line_end + 1
    if len(text) - at <= reach:  # (the last line's end: the text's)
        return len(text)
    found = at
    while True:  # (the first " x" after a non-space character at or after `at`)
        found = text.find(" ", found, at + reach)
        if found == -1:
            return at
        if _soft_at(text, found):
            return found
        found += 1


def _soft_before(text: str, at: int, reach: int) -> int:
    """The last soft cut in ``(at - reach, at]``, else ``at``."""
    lo = max(1, at - reach)
    found = at + 1
    while True:
        found = text.rfind(" ", lo, found)
        if found == -1:
            return at
        if _soft_at(text, found):
            return found


def _soft_at(text: str, p: int) -> bool:
    """``text[p]`` is a space that starts a word: after a non-space, before a non-space."""
    return (0 < p < len(text) - 1 and not text[p - 1].isspace()
            and not text[p + 1].isspace())
