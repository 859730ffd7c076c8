"""Code-point <-> UTF-16 offset conversion: the one helper every Qt painter goes through.

Python strings index code points; Qt (QString, QTextCursor, QTextLayout) indexes UTF-16
code units. Characters outside the BMP (emoji, CJK Extension B) are one code point but two
UTF-16 units. Combining marks are separate code points in both, so they need no special case.

>>> m = Utf16Map("a😀b")
>>> m.to_utf16(2), m.to_codepoint(3)
(3, 2)
"""

from __future__ import annotations

import re
from bisect import bisect_right

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
"""One character outside the BMP (two UTF-16 units)."""


class Utf16Map:
    """Converts offsets of one string between code points and UTF-16 code units.

    Construction finds the astral characters with one C-level scan (Python work per astral
    character only: a 10 MB text with emoji in it is a paste's prediction, on the GUI
    thread); for BMP-only text every conversion is the identity and costs nothing.
    """

    __slots__ = ("_astral", "length_codepoints", "length_utf16")

    def __init__(self, text: str) -> None:
        # Code-point indices of astral characters, ascending.
        self._astral: list[int] = (
            [m.start() for m in _ASTRAL.finditer(text)]
            if text and not text.isascii() and max(text) > "\uffff" else []
        )
        self.length_codepoints = len(text)
        self.length_utf16 = len(text) + len(self._astral)

    def to_utf16(self, cp_offset: int) -> int:
        """UTF-16 offset of code-point offset ``cp_offset`` (0..len inclusive)."""
        if not self._astral:
            return cp_offset
        return cp_offset + bisect_right(self._astral, cp_offset - 1)

    def to_codepoint(self, utf16_offset: int) -> int:
        """Code-point offset of a UTF-16 offset; an offset inside a surrogate pair rounds down."""
        if not self._astral:
            return utf16_offset
        lo, hi = 0, len(self._astral)
        # Find how many astral chars lie strictly before the resulting code point.
        while lo < hi:
            mid = (lo + hi) // 2
            # UTF-16 position just after astral char number `mid`.
            end_of_mid = self._astral[mid] + mid + 2
            if end_of_mid <= utf16_offset:
                lo = mid + 1
            else:
                hi = mid
        cp = utf16_offset - lo
        # Inside a surrogate pair: the high surrogate's position maps to the astral char.
        if lo < len(self._astral) and cp > self._astral[lo]:
            cp = self._astral[lo]
        return cp

    def span_to_utf16(self, start: int, end: int) -> tuple[int, int]:
        """UTF-16 ``(start, length)`` of the code-point span ``[start, end)``."""
        s = self.to_utf16(start)
        return s, self.to_utf16(end) - s


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2
