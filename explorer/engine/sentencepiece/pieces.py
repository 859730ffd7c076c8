"""SentencePiece vocabulary entries: piece types, byte pieces and the word-splitting rule.

Shared by the Unigram and SentencePiece-BPE models so both can be built from in-memory data
(``.model`` files, HF ``tokenizer.json``, GGUF arrays) without a ``ModelProto``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from enum import IntEnum

SPACE_SYMBOL = "\u2581"
F32 = struct.Struct("<f")
"""A float32 packer: ``F32.unpack(F32.pack(x))[0]`` rounds ``x`` to float32."""
_pack, _unpack = F32.pack, F32.unpack


class PieceType(IntEnum):
    """``ModelProto.SentencePiece.Type`` (the GGUF ``token_type`` numbers are the same)."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


def f32(value: float) -> float:
    """``value`` rounded to the nearest float32 (sentencepiece sums scores in float)."""
    return _unpack(_pack(value))[0]


def byte_piece(byte: int) -> str:
    """The byte-fallback piece of ``byte``: ``<0x41>``."""
    return f"<0x{byte:02X}>"


_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def piece_byte(piece: str) -> int | None:
    """The byte a ``<0xNN>`` piece stands for, or None."""
    m = _BYTE_PIECE.fullmatch(piece)
    return int(m.group(1), 16) if m else None


def word_splitter(pieces: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern cutting normalized text into words no piece crosses, or None if unsafe.

    Pieces normally carry ``▁`` only in front (``▁the``, ``▁▁▁``): then no piece spans a
    boundary before a run of ``▁`` that follows another character, and words are
    ``▁*[^▁]*``. ``treat_whitespace_as_suffix`` models put it at the end instead. A vocabulary
    with both (or ``▁`` in the middle) gets None: encode the text in one piece.
    """
    pieces = list(pieces)
    joined = "\0".join(pieces)
    if joined.count("\0") == max(len(pieces) - 1, 0):  # (no piece holds a NUL)
        # one search over all of them (a 250k-piece model: ~5 ms, one per piece ~60 ms)
        prefix_ok = re.search(f"[^{SPACE_SYMBOL}\0]{SPACE_SYMBOL}", joined) is None
        suffix_ok = re.search(f"{SPACE_SYMBOL}[^{SPACE_SYMBOL}\0]", joined) is None
    else:
        inner_after = re.compile(f"[^{SPACE_SYMBOL}]{SPACE_SYMBOL}")
        inner_before = re.compile(f"{SPACE_SYMBOL}[^{SPACE_SYMBOL}]")
        prefix_ok = not any(map(inner_after.search, pieces))
        suffix_ok = not any(map(inner_before.search, pieces))
    if not (prefix_ok or suffix_ok):
        return None
    if prefix_ok:
        return re.compile(f"{SPACE_SYMBOL}+[^{SPACE_SYMBOL}]*|[^{SPACE_SYMBOL}]+")
    return re.compile(f"[^{SPACE_SYMBOL}]+{SPACE_SYMBOL}*|{SPACE_SYMBOL}+")


Segment = tuple[int, int]
"""``(length, id)``: one piece of a segmentation, its length in code points and its id."""


def spans_from_segments(segments: Iterable[Segment]) -> list[tuple[int, int, int]]:
    """``(start, end, id)`` code-point spans of consecutive ``(length, id)`` segments."""
    out: list[tuple[int, int, int]] = []
    pos = 0
    for length, id_ in segments:
        out.append((pos, pos + length, id_))
        pos += length
    return out
