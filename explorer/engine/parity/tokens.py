"""Build engine-style encodings from a reference library's raw output (ids, pieces, spans).

The engine's offset convention: a token covers the code points its bytes touch; the partial
UTF-8 tokens of one character all carry that character's span. Libraries that report byte
offsets, or only token bytes, are mapped to it here so equal tokenizations compare equal.
"""

from __future__ import annotations

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
