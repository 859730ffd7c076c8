"""The one grapheme-cluster definition of the UI: ``regex``'s ``\\X``.

A *character* (user-perceived character) is an extended grapheme cluster by UAX #29, as the
``regex`` module implements it for the Unicode version it ships (the library the engine's
pre-tokenizers use). The painter's range edges, the editor's hover and outline and the
inspector's split-character note all ask this module, so they never disagree. Qt's own
boundary finders are not used: ``QTextBoundaryFinder`` reports boundaries inside surrogate
pairs after Devanagari or Thai text, and ``QTextLayout``'s cursor positions put a boundary in
the middle of a flag that follows an emoji ("🦜🇫🇷").

Cluster boundaries are found in code points and turned into Qt's UTF-16 offsets only through
:class:`~explorer.engine.offsets.Utf16Map`. Text in which every code point is its own cluster
(most text, and all ASCII without CR LF) keeps no boundary list at all.

Not handled: :func:`cluster_at` on lines longer than :data:`WHOLE_LINE` code points looks at a
window of :data:`CONTEXT` code points each side (extended back over a run of regional
indicators so flags pair up as on the whole line); a single cluster longer than that window
(thousands of stacked combining marks) is cut at the window's edge.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate

import regex

from explorer.engine.offsets import Utf16Map

CLUSTER = regex.compile(r"\X")
"""One extended grapheme cluster."""

JOINERS = regex.compile(
    r"[\r\p{GCB=Extend}\p{GCB=SpacingMark}\p{GCB=ZWJ}\p{GCB=Regional_Indicator}"
    r"\p{GCB=Prepend}\p{GCB=L}\p{GCB=V}\p{GCB=T}\p{GCB=LV}\p{GCB=LVT}]")
"""A code point that can be in a cluster with another (UAX #29's rules GB3 and GB6-GB13 all
need one of these: CR before LF, Hangul jamo and syllables, Extend (combining marks,
Indic linkers, emoji modifiers), SpacingMark, ZWJ, Regional_Indicator, Prepend). A text
without any has every code point as its own cluster, and is not searched with ``\\X``
(~3x the time of this search: 4 ms against 13 ms for a line of 47k characters)."""

WHOLE_LINE = 4096
"""Lines up to this many code points are searched whole by :func:`cluster_at`."""

CONTEXT = 64
"""Code points each side of the offset :func:`cluster_at` searches on longer lines."""


def boundaries(text: str, pos: int = 0, endpos: int | None = None) -> list[int]:
    """Code-point offsets of the cluster boundaries of ``text[pos:endpos]``, both ends included."""
    end = len(text) if endpos is None else endpos
    return list(accumulate(map(len, CLUSTER.findall(text, pos, end)), initial=pos))


class Graphemes:
    """Grapheme-cluster boundaries of one string (a block's text), queried in UTF-16 units."""

    __slots__ = ("_bounds", "_set", "_u16", "length16")

    def __init__(self, text: str, u16: Utf16Map | None = None) -> None:
        self._u16 = Utf16Map(text) if u16 is None else u16
        self.length16 = self._u16.length_utf16
        """UTF-16 length of the text."""
        # None: every code point is a cluster of its own (no list to search).
        bounds = boundaries(text) if JOINERS.search(text) else None
        self._bounds: list[int] | None = (None if bounds is None or len(bounds) == len(text) + 1
                                          else bounds)
        self._set: frozenset[int] | None = None

    @property
    def every_code_point(self) -> bool:
        """True when every code point is a cluster of its own (most text)."""
        return self._bounds is None

    def boundary_set(self) -> frozenset[int]:
        """The code-point offsets of every cluster boundary, both ends included."""
        if self._set is None:
            b = self._bounds
            self._set = frozenset(range(self._u16.length_codepoints + 1) if b is None else b)
        return self._set

    def is_boundary_cp(self, x: int) -> bool:
        """True when code-point offset ``x`` is between two clusters (or at either end)."""
        b = self._bounds
        if b is None or x <= 0 or x >= b[-1]:
            return True
        i = bisect_left(b, x)
        return b[i] == x

    def down_cp(self, x: int) -> int:
        """The cluster boundary at or before code-point offset ``x``."""
        b = self._bounds
        if b is None or x <= 0 or x >= b[-1]:
            return x
        return b[bisect_right(b, x) - 1]

    def up_cp(self, x: int) -> int:
        """The cluster boundary at or after code-point offset ``x``."""
        b = self._bounds
        if b is None or x <= 0 or x >= b[-1]:
            return x
        return b[bisect_left(b, x)]

    def is_boundary(self, x16: int) -> bool:
        """True when UTF-16 offset ``x16`` is between two clusters (or at either end)."""
        if x16 <= 0 or x16 >= self.length16:
            return True
        cp = self._u16.to_codepoint(x16)
        return self._u16.to_utf16(cp) == x16 and self.is_boundary_cp(cp)

    def down(self, x16: int) -> int:
        """The cluster boundary at or before UTF-16 offset ``x16``."""
        if x16 <= 0 or x16 >= self.length16:
            return x16
        u = self._u16
        return u.to_utf16(self.down_cp(u.to_codepoint(x16)))  # rounds a half pair down

    def up(self, x16: int) -> int:
        """The cluster boundary at or after UTF-16 offset ``x16``."""
        if x16 <= 0 or x16 >= self.length16:
            return x16
        u = self._u16
        cp = u.to_codepoint(x16)
        if u.to_utf16(cp) != x16:  # inside a surrogate pair: the pair's end at least
            cp += 1
        return u.to_utf16(self.up_cp(cp))


_RECENT: dict[str, Graphemes] = {}
RECENT_LINES = 256
"""Lines whose :class:`Graphemes` :func:`graphemes_of` keeps."""


def graphemes_of(text: str, u16: Utf16Map | None = None) -> Graphemes:
    """:class:`Graphemes` of ``text``, kept for the last lines asked (a keystroke paints its
    line twice, once shifted and once with the new tokens, and the painter asks twice per
    paint: a ``\\X`` scan of a long line in a complex script is ~0.3 ms each time).
    ``u16``: the text's offset map when the caller has it. GUI thread only."""
    found = _RECENT.get(text)
    if found is None:
        if len(_RECENT) >= RECENT_LINES:
            _RECENT.clear()
        found = _RECENT[text] = Graphemes(text, u16)
    return found


def _is_regional_indicator(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def cluster_at(text: str, offset: int) -> tuple[int, int]:
    """Code-point span of the grapheme cluster of ``text`` holding code point ``offset``.

    Clusters never cross a line break; the line is searched whole when it is short."""
    line_lo = text.rfind("\n", 0, offset) + 1
    if offset >= len(text) or text[offset] == "\n":  # a line end is a cluster of its own
        return offset, offset + 1
    line_hi = text.find("\n", offset)
    line_hi = len(text) if line_hi == -1 else line_hi
    lo, hi = line_lo, line_hi
    if hi - lo > WHOLE_LINE:
        lo, hi = max(lo, offset - CONTEXT), min(hi, offset + CONTEXT)
        while lo > line_lo and _is_regional_indicator(text[lo - 1]):  # keep flags paired
            lo -= 1
    b = boundaries(text, lo, hi)
    i = bisect_right(b, offset)
    return b[i - 1], b[i]
