"""Where two encodings of one text differ: the first differing token and every differing span.

The two token lists are aligned by character offsets: the text is cut at every offset where
*both* encodings have a clean boundary (no token of either crosses it); the tokens between two
consecutive cuts form a group. A group whose ids differ is a :class:`DiffSpan`. Offsets are the
engine's (code points, partial UTF-8 tokens sharing their character's span), so two equal
tokenizations give no span even when a library reports byte-fallback offsets differently.

>>> from explorer.engine.encoding import Encoding, Token
>>> a = Encoding("abcd", [Token(1, "ab", b"ab", 0, 2), Token(2, "cd", b"cd", 2, 4)])
>>> b = Encoding("abcd", [Token(1, "ab", b"ab", 0, 2), Token(3, "c", b"c", 2, 3),
...                       Token(4, "d", b"d", 3, 4)])
>>> d = diff_encodings(a, b)
>>> d.first_index, [(s.start, s.end) for s in d.spans]
(1, [(2, 4)])
"""

from __future__ import annotations

from dataclasses import dataclass, field

from explorer.engine.encoding import Encoding, Token


@dataclass(frozen=True, slots=True)
class DiffSpan:
    """One region of the text tokenized differently by two implementations."""

    start: int
    end: int
    """Code-point span of the region in the original text."""
    ours: tuple[Token, ...]
    theirs: tuple[Token, ...]
    ours_index: int
    """Index of the region's first token in the first encoding."""
    theirs_index: int


@dataclass(slots=True)
class EncodingDiff:
    """The differences of ``theirs`` against ``ours`` (the same text)."""

    text: str
    first_index: int | None
    """Index of the first token whose id differs (or where one encoding ends first); None
    when the ids are equal."""
    spans: list[DiffSpan] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        """True when the two id sequences are equal."""
        return self.first_index is None


def _clean_cuts(enc: Encoding, n: int) -> set[int]:
    """Offsets no token of ``enc`` crosses (token starts and ends, 0 and ``n``)."""
    cuts = {0, n}
    inside = bytearray(n + 1)
    for t in enc.tokens:
        cuts.add(t.start)
        cuts.add(t.end)
        for k in range(t.start + 1, t.end):
            inside[k] = 1
    return {c for c in cuts if 0 <= c <= n and not inside[c]}


def _groups(enc: Encoding, cuts: list[int]) -> list[tuple[int, list[Token]]]:
    """Tokens of ``enc`` between consecutive ``cuts`` (by start), with the first's index."""
    groups: list[tuple[int, list[Token]]] = []
    i = 0
    tokens = enc.tokens
    for k in range(len(cuts) - 1):
        end = cuts[k + 1]
        last = k == len(cuts) - 2
        first = i
        group = []
        while i < len(tokens) and (tokens[i].start < end or last):
            group.append(tokens[i])
            i += 1
        groups.append((first, group))
    return groups


def first_difference(ours: Encoding, theirs: Encoding) -> int | None:
    """Index of the first differing id (or the shorter length); None when equal."""
    a, b = ours.ids, theirs.ids
    if a == b:
        return None
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return k
    return min(len(a), len(b))


def diff_encodings(ours: Encoding, theirs: Encoding) -> EncodingDiff:
    """First differing token and every differing span of two encodings of one text."""
    if ours.text != theirs.text:
        raise ValueError("encodings to diff must be of the same text")
    text = ours.text
    first = first_difference(ours, theirs)
    out = EncodingDiff(text, first)
    if first is None:
        return out
    n = len(text)
    cuts = sorted(_clean_cuts(ours, n) & _clean_cuts(theirs, n))
    if len(cuts) < 2:
        cuts = [0, n]
    ga, gb = _groups(ours, cuts), _groups(theirs, cuts)
    for k, ((ia, ta), (ib, tb)) in enumerate(zip(ga, gb, strict=True)):
        if [t.id for t in ta] != [t.id for t in tb]:
            out.spans.append(DiffSpan(cuts[k], cuts[k + 1], tuple(ta), tuple(tb), ia, ib))
    return out
