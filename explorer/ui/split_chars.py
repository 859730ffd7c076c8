"""Characters a token holds only part of: which tokens share each, and the bytes of each part.

A *character* here is an extended grapheme cluster (:func:`explorer.ui.graphemes.cluster_at`,
``regex``'s ``\\X``: the same definition the painter and the editor use, so a flag right
after an emoji, "🦜🇫🇷", is one character everywhere). A character is *split* when
more than one token overlaps it: byte-level BPE cutting an emoji's four UTF-8 bytes into
several tokens, or a Devanagari cluster whose vowel sign starts the next token.

Only the clusters at a token's two edges are examined: tokens overlap (share a code point)
only where one ends with some bytes of a character and the next starts with the rest, and a
cluster strictly inside a token belongs to that token alone.

The bytes of each part are exact when the sharing tokens' bytes, concatenated, are the UTF-8
of the text they cover (byte-level BPE, tiktoken, byte-fallback pieces of one character);
otherwise (a normalizer rewrote the text, e.g. SentencePiece's ``▁``) each part is the whole
token's bytes and :attr:`SplitChar.exact` is False.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.ui.graphemes import cluster_at
from explorer.workers.doctokens import DocTokens


@dataclass(frozen=True, slots=True)
class SplitPart:
    """One token's share of a split character."""

    index: int
    """Token index in the document."""
    token_id: int
    data: bytes
    """The bytes of the character this token holds (its whole bytes when not exact)."""


@dataclass(frozen=True, slots=True)
class SplitChar:
    """A character (grapheme cluster) spread over several tokens."""

    start: int
    end: int
    """Document code-point span of the character."""
    text: str
    parts: tuple[SplitPart, ...]
    exact: bool
    """True when each part's bytes are exactly its share of the character's UTF-8."""


def tokens_over(doc: DocTokens, index: int, start: int, end: int) -> list[int]:
    """Indices of the tokens (non-empty spans) overlapping ``[start, end)``, near ``index``."""
    i = index
    while i > 0 and doc.span(i - 1)[1] > start:
        i -= 1
    out: list[int] = []
    while i < doc.token_count:
        a, b = doc.span(i)
        if a >= end:
            break
        if b > start and b > a:
            out.append(i)
        i += 1
    return out


def _parts(doc: DocTokens, sharing: list[int], start: int, end: int) -> tuple[
        tuple[SplitPart, ...], bool]:
    # Widen to whole code points: the first or last sharing token may hold only some bytes
    # of a code point outside the character (the rest in a neighbour that does not share it).
    i0, i1 = sharing[0], sharing[-1]
    while i0 > 0 and doc.span(i0 - 1)[1] > doc.span(i0)[0]:
        i0 -= 1
    while i1 + 1 < doc.token_count and doc.span(i1 + 1)[0] < doc.span(i1)[1]:
        i1 += 1
    indices = list(range(i0, i1 + 1))
    toks = [doc.token(i)[0] for i in indices]
    first, last = doc.span(i0)[0], doc.span(i1)[1]
    joined = b"".join(t.token_bytes for t in toks)
    covered = doc.text[first:last].encode("utf-8", "surrogatepass")
    if joined != covered:
        return tuple(SplitPart(i, doc.token(i)[0].id, doc.token(i)[0].token_bytes)
                     for i in sharing), False
    lo = len(doc.text[first:start].encode("utf-8", "surrogatepass"))
    hi = lo + len(doc.text[start:end].encode("utf-8", "surrogatepass"))
    parts: list[SplitPart] = []
    pos = 0
    for i, t in zip(indices, toks, strict=True):
        a, b = pos, pos + len(t.token_bytes)
        pos = b
        share = t.token_bytes[max(a, lo) - a:max(a, min(b, hi)) - a]
        if share:
            parts.append(SplitPart(i, t.id, share))
    return tuple(parts), True


def split_characters(doc: DocTokens, index: int) -> list[SplitChar]:
    """The split characters token ``index`` holds part of (at most two: one per edge)."""
    s, e = doc.span(index)
    if e <= s:
        return []
    out: list[SplitChar] = []
    for edge in dict.fromkeys((s, e - 1)):
        cs, ce = cluster_at(doc.text, edge)
        if out and out[-1].start == cs:
            continue
        sharing = tokens_over(doc, index, cs, ce)
        if len(sharing) > 1:
            parts, exact = _parts(doc, sharing, cs, ce)
            out.append(SplitChar(cs, ce, doc.text[cs:ce], parts, exact))
    return out
