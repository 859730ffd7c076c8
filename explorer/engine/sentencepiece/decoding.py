"""Decoding and special-token splitting helpers of the SentencePiece tokenizer.

``decode_pieces`` follows ``SentencePieceProcessor::Decode``: control pieces vanish, the
unknown piece becomes ``unk_surface`` (already in ``piece_bytes``), byte pieces contribute
their byte, and while nothing has been output the leading ``▁`` of the first text piece is
dropped (of every such piece when ``remove_extra_whitespaces``).
``decode_utf8_like_sentencepiece`` turns each byte of an invalid UTF-8 sequence into one
U+FFFD, as sentencepiece does (Python's ``errors="replace"`` merges some of them).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from explorer.engine.sentencepiece.pieces import SPACE_SYMBOL, PieceType


def decode_pieces(
    ids: Sequence[int],
    pieces: Sequence[str],
    types: Sequence[int],
    piece_bytes: Sequence[bytes],
    *,
    strip_prefix: bool,
    remove_extra_whitespaces: bool,
) -> bytes:
    """The decoded bytes of ``ids`` (``piece_bytes``: each id's output, ``▁`` as space)."""
    out = bytearray()
    is_bos_ws, bos_ws_seen = True, False
    for id_ in ids:
        kind = types[id_]
        if kind == PieceType.BYTE:
            out += piece_bytes[id_]
            continue
        if bos_ws_seen or out:
            is_bos_ws = False
        chunk = piece_bytes[id_]
        bos_ws_seen = False
        if (
            is_bos_ws
            and strip_prefix
            and kind not in (PieceType.CONTROL, PieceType.UNKNOWN)
            and pieces[id_].startswith(SPACE_SYMBOL)
        ):
            chunk = chunk[1:]
            bos_ws_seen = not remove_extra_whitespaces
        out += chunk
    return bytes(out)


def decode_utf8_like_sentencepiece(data: bytes) -> str:
    """UTF-8 decode where every byte of an invalid sequence becomes one U+FFFD."""
    out: list[str] = []
    pos, n = 0, len(data)
    while pos < n:
        try:
            out.append(data[pos:].decode("utf-8"))
            break
        except UnicodeDecodeError as e:
            out.append(data[pos : pos + e.start].decode("utf-8"))
            out.append("\ufffd" * (e.end - e.start))
            pos += e.end
    return "".join(out)


def specials_pattern(names: Collection[str]) -> re.Pattern[str] | None:
    """One alternation of ``names``, longest first (so ``<s>`` never hides ``<sep>``)."""
    if not names:
        return None
    return re.compile("|".join(re.escape(s) for s in sorted(names, key=len, reverse=True)))


def split_specials(
    text: str, pattern: re.Pattern[str] | None, ids: Mapping[str, int]
) -> list[tuple[int, int, int | None]]:
    """``(start, end, special id or None)`` pieces of ``text`` around ``pattern``'s matches."""
    if pattern is None or not text:
        return [(0, len(text), None)]
    out: list[tuple[int, int, int | None]] = []
    last = 0
    for m in pattern.finditer(text):
        if m.start() > last:
            out.append((last, m.start(), None))
        out.append((m.start(), m.end(), ids[m.group()]))
        last = m.end()
    if last < len(text) or not out:
        out.append((last, len(text), None))
    return out
