"""Build engine-style encodings from a reference library's raw output (ids, pieces, spans).

The engine's offset convention: a token covers the code points its bytes touch; the partial
UTF-8 tokens of one character all carry that character's span. Libraries that report byte
offsets, or only token bytes, are mapped to it here so equal tokenizations compare equal.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

from explorer.engine.encoding import Encoding, Token, byte_to_char_offsets


def spans_from_token_bytes(text: str, token_bytes: Sequence[bytes]) -> list[tuple[int, int]]:
    """Code-point spans of consecutive tokens whose bytes concatenate to ``text``'s UTF-8.

    A token that spells bytes beyond the text (it cannot, for a faithful encoding) gets an
    empty span at the end.
    """
    to_char = byte_to_char_offsets(text)
    n = len(to_char) - 1
    spans = []
    pos = 0
    for data in token_bytes:
        start_b, end_b = min(pos, n), min(pos + len(data), n)
        pos += len(data)
        if end_b <= start_b:
            spans.append((to_char[start_b], to_char[start_b]))
            continue
        spans.append((to_char[start_b], to_char[end_b - 1] + 1))
    return spans


def build_encoding(
    text: str,
    ids: Sequence[int],
    pieces: Sequence[str],
    spans: Sequence[tuple[int, int]],
    *,
    token_bytes: Callable[[int, str], bytes],
    special: Callable[[int], bool] = lambda _i: False,
    unknown: Callable[[int], bool] = lambda _i: False,
) -> Encoding:
    """An :class:`Encoding` of ``text`` from parallel lists of ids, pieces and spans."""
    tokens = [
        Token(i, p, token_bytes(i, p), s, e, special=special(i), unknown=unknown(i))
        for i, p, (s, e) in zip(ids, pieces, spans, strict=True)
    ]
    return Encoding(text, tokens)


def group_byte_pieces(pieces: Sequence[str], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Give every ``<0xNN>`` byte piece of one character that character's span.

    sentencepiece reports the character's span on its last byte piece and empty spans on the
    others; the engine gives all of them the character's span.
    """
    out = list(spans)
    i = 0
    while i < len(pieces):
        p = pieces[i]
        group = 1
        if len(p) == 6 and p.startswith("<0x") and p.endswith(">"):
            try:
                lead = int(p[3:5], 16)
            except ValueError:
                lead = 0
            group = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
            group = min(group, len(pieces) - i)
            last = out[i + group - 1]
            for k in range(i, i + group):
                out[k] = last
        i += group
    return out


def _fold(text: str) -> str:
    """Per character: NFKC, each result's first NFD code point, lowercased (what WordPiece,
    SentencePiece and charsmap normalizations leave of a character, approximately)."""
    out = []
    for ch in unicodedata.normalize("NFKC", text):
        base = unicodedata.normalize("NFD", ch)[0]
        out.append(base.lower()[0])
    return "".join(out)


def _skippable(c: str) -> bool:
    """Text a normalizer may drop: marks, control and format characters."""
    return unicodedata.category(c)[0] in "MC"


def spans_by_folding(text: str, token_texts: Sequence[str], *,
                     spaces_in_spans: bool = True) -> list[tuple[int, int]]:
    """Code-point spans of tokens whose texts are a *normalized* spelling of ``text``
    (lowercased, accents stripped, spaces for ``▁``, phantom leading spaces).

    Both sides are folded (:func:`_fold`) and matched left to right: a token's whitespace
    matches the text's whitespace where there is some (a phantom space matches nothing);
    its other characters must be the text's next ones, skipping whitespace before the
    token's first character and marks or control characters (which normalizers drop). A
    token that matches nowhere there (an unknown token) covers the text up to where the next
    token matches. With ``spaces_in_spans`` False (WordPiece) neither matched whitespace nor
    dropped characters after the token are part of its span.
    """
    stream: list[tuple[str, int]] = []
    for i, ch in enumerate(text):
        stream.extend((f, i) for f in (_fold(ch) if not ch.isspace() else " "))
    n = len(stream)
    folded = [_fold(t.replace("▁", " ")) for t in token_texts]

    def match(want: str, k: int) -> tuple[int, int, int] | None:
        """(first, last, next position) of ``want`` matched from ``k``; first -1: nothing."""
        first = last = -1
        for c in want:
            if c.isspace():
                if k < n and stream[k][0] == " ":
                    if spaces_in_spans:
                        first = k if first < 0 else first
                        last = k
                    k += 1
                continue
            while k < n and stream[k][0] != c and (
                    _skippable(stream[k][0]) or (stream[k][0] == " " and first < 0)):
                k += 1
            if k < n and stream[k][0] == c:
                first = k if first < 0 else first
                last, k = k, k + 1
            else:
                return None
        if spaces_in_spans and first >= 0:
            while k < n and _skippable(stream[k][0]):
                last, k = k, k + 1
        return first, last, k

    def at(k: int) -> int:
        return stream[k][1] if k < n else len(text)

    spans: list[tuple[int, int]] = []
    pos = 0
    for t, want in enumerate(folded):
        found = match(want, pos)
        if found is None:  # an unknown token: up to where the next token matches
            start = pos
            while start < n and stream[start][0] == " ":
                start += 1
            end = start + 1
            nxt = folded[t + 1] if t + 1 < len(folded) else None
            while end < n and (nxt is None or match(nxt, end) is None):
                end += 1
            if nxt is None:
                while end > start + 1 and stream[end - 1][0] == " ":
                    end -= 1
            if start >= n:
                spans.append((len(text), len(text)))
                pos = n
                continue
            spans.append((stream[start][1], stream[min(end, n) - 1][1] + 1))
            pos = min(end, n)
            continue
        first, last, k = found
        if first < 0:
            spans.append((at(pos), at(pos)))
        else:
            spans.append((stream[first][1], stream[last][1] + 1))
        pos = k
    return spans


def spans_by_folding_bytes(text: str, token_bytes: Sequence[bytes], *,
                           spaces_in_spans: bool = True) -> list[tuple[int, int]]:
    """:func:`spans_by_folding` for tokens given as bytes: consecutive tokens spelling one
    character between them (byte-fallback pieces) are matched as one and share its span."""
    groups: list[tuple[str, int]] = []  # (text, number of tokens)
    pending = b""
    count = 0
    for data in token_bytes:
        pending += data
        count += 1
        try:
            groups.append((pending.decode("utf-8"), count))
        except UnicodeDecodeError:
            if len(pending) < 4:
                continue
            groups.append((pending.decode("utf-8", "replace"), count))
        pending, count = b"", 0
    if count:
        groups.append((pending.decode("utf-8", "replace"), count))
    spans = spans_by_folding(text, [g for g, _ in groups], spaces_in_spans=spaces_in_spans)
    return [span for span, (_, k) in zip(spans, groups, strict=True) for _ in range(k)]
