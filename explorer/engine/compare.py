"""Token-boundary comparison of several encodings of the same text (the comparison view's logic).

Given two or more :class:`~explorer.engine.encoding.Encoding` objects of one text (e.g. cl100k vs
o200k, BPE vs Unigram), this module computes, per encoding, the set of code-point offsets where
a token boundary lies, which of those boundaries are *not* shared by every encoding, and the
atomic segments (the text cut at every boundary of every encoding) that let a view draw the
rows aligned column by column.

Boundaries are code-point offsets into the original text (the same offsets tokens carry), so
encodings with different normalizers still compare. Partial-UTF-8 tokens share a character span,
so a boundary *inside* a character is not representable and is not reported. Offsets ``0`` and
``len(text)`` are boundaries of every non-empty encoding; they are included and are never
differing unless one encoding does not cover the whole text.

Qt-free; used by ``explorer.ui.panels.compare``.

>>> from explorer.engine.encoding import Encoding, Token
>>> a = Encoding("abc", [Token(0, "ab", b"ab", 0, 2), Token(1, "c", b"c", 2, 3)])
>>> b = Encoding("abc", [Token(0, "a", b"a", 0, 1), Token(1, "bc", b"bc", 1, 3)])
>>> cmp = compare_boundaries([a, b])
>>> sorted(cmp.common), [sorted(d) for d in cmp.differing]
([0, 3], [[2], [1]])
>>> cmp.segments
[(0, 1), (1, 2), (2, 3)]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.engine.encoding import Encoding


def token_boundaries(encoding: Encoding) -> frozenset[int]:
    """Every code-point offset where a token of ``encoding`` starts or ends."""
    out: set[int] = set()
    for token in encoding.tokens:
        out.add(token.start)
        out.add(token.end)
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class EncodingStats:
    """Counts shown side by side for one encoding."""

    tokens: int
    characters: int
    utf8_bytes: int
    unknown: int
    special: int

    @property
    def chars_per_token(self) -> float:
        """Characters per token (0 for an empty encoding)."""
        return self.characters / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        """UTF-8 bytes of the text per token (0 for an empty encoding)."""
        return self.utf8_bytes / self.tokens if self.tokens else 0.0


def encoding_stats(encoding: Encoding) -> EncodingStats:
    """Token, character and byte counts of one encoding."""
    return EncodingStats(
        tokens=len(encoding.tokens),
        characters=len(encoding.text),
        utf8_bytes=len(encoding.text.encode("utf-8", errors="surrogatepass")),
        unknown=sum(1 for t in encoding.tokens if t.unknown),
        special=sum(1 for t in encoding.tokens if t.special),
    )


@dataclass(frozen=True, slots=True)
class BoundaryComparison:
    """The boundary sets of several encodings of one text and how they differ."""

    text: str
    boundaries: tuple[frozenset[int], ...]
    """Per encoding (in input order): all its boundary offsets."""
    common: frozenset[int]
    """Offsets that are a boundary in every encoding."""
    differing: tuple[frozenset[int], ...]
    """Per encoding: its boundaries that at least one other encoding lacks."""
    segments: list[tuple[int, int]]
    """The text cut at the union of all boundaries: half-open ``(start, end)`` spans in order.
    Every token of every encoding covers a whole run of consecutive segments (or is empty)."""
    stats: tuple[EncodingStats, ...]

    @property
    def all_differing(self) -> frozenset[int]:
        """Offsets that are a boundary in some encodings but not all."""
        out: frozenset[int] = frozenset()
        for d in self.differing:
            out |= d
        return out


def compare_boundaries(encodings: Sequence[Encoding]) -> BoundaryComparison:
    """Compare the token boundaries of ``encodings`` (at least one) of the same text.

    Raises ``ValueError`` when the encodings are of different texts or none is given.
    """
    if not encodings:
        raise ValueError("compare_boundaries needs at least one encoding")
    text = encodings[0].text
    for enc in encodings[1:]:
        if enc.text != text:
            raise ValueError("encodings to compare must be of the same text")
    boundaries = tuple(token_boundaries(enc) for enc in encodings)
    common = frozenset.intersection(*boundaries)
    union = frozenset.union(*boundaries)
    differing = tuple(b - common for b in boundaries)
    cuts = sorted(union | {0, len(text)}) if text else sorted(union)
    segments = [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    return BoundaryComparison(
        text=text,
        boundaries=boundaries,
        common=common,
        differing=differing,
        segments=segments,
        stats=tuple(encoding_stats(enc) for enc in encodings),
    )
