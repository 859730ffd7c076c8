"""SentencePiece's CHAR and WORD models: a lookup per character or per ``▁``-word.

- CHAR (``char_model.cc``): every character (or user-defined symbol, longest first) is one
  piece; characters not in the vocabulary are ``<unk>``.
- WORD (``word_model.cc``): the normalized text is cut before every ``▁``
  (``SplitIntoWords``) and each word is looked up whole.

UNUSED pieces count as unknown; CONTROL, UNKNOWN and BYTE pieces never match. Build from
in-memory data: ``SimpleLookupModel("char" | "word", pieces, scores, types, unk_id=...)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from explorer.engine.errors import VocabFormatError
from explorer.engine.sentencepiece.pieces import (
    SPACE_SYMBOL,
    PieceType,
    Segment,
    f32,
    spans_from_segments,
)

_WORDS = re.compile(f"{SPACE_SYMBOL}?[^{SPACE_SYMBOL}]*|[^{SPACE_SYMBOL}]+")


class SimpleLookupModel:
    """A CHAR or WORD model: no search, one dictionary lookup per unit."""

    def __init__(
        self,
        model_type: Literal["char", "word"],
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int] | None = None,
        *,
        unk_id: int | None = None,
    ) -> None:
        if model_type not in ("char", "word"):
            raise ValueError(f"model_type must be 'char' or 'word', not {model_type!r}")
        if len(scores) != len(pieces) or (types is not None and len(types) != len(pieces)):
            raise VocabFormatError(f"{model_type} model: pieces, scores and types differ")
        self.model_type = model_type
        self.pieces = list(pieces)
        self.scores = [f32(s) for s in scores]
        self.types = [int(t) for t in types] if types is not None else [1] * len(pieces)
        if unk_id is None:
            unk_ids = [i for i, t in enumerate(self.types) if t == PieceType.UNKNOWN]
            if len(unk_ids) != 1:
                raise VocabFormatError(f"{model_type} model: expected one unknown piece")
            unk_id = unk_ids[0]
        self.unk_id = unk_id
        self.piece_ids: dict[str, int] = {}
        for i, (piece, kind) in enumerate(zip(self.pieces, self.types, strict=True)):
            if kind in (PieceType.NORMAL, PieceType.USER_DEFINED):
                self.piece_ids.setdefault(piece, i)
            elif kind == PieceType.UNUSED:
                self.piece_ids.setdefault(piece, unk_id)
        self.user_symbols = {
            p for p, t in zip(self.pieces, self.types, strict=True) if t == PieceType.USER_DEFINED
        }
        self._user_max = max((len(s) for s in self.user_symbols), default=0)

    def _units(self, text: str) -> list[str]:
        if self.model_type == "word":
            return [w for w in _WORDS.findall(text) if w]
        units: list[str] = []
        i, n = 0, len(text)
        while i < n:
            length = 1
            for k in range(min(self._user_max, n - i), 1, -1):
                if text[i : i + k] in self.user_symbols:
                    length = k
                    break
            units.append(text[i : i + length])
            i += length
        return units

    def segments(self, normalized: str) -> list[Segment]:
        """``(length, id)`` per unit."""
        get, unk = self.piece_ids.get, self.unk_id
        return [(len(u), get(u, unk)) for u in self._units(normalized)]

    def encode(self, normalized: str) -> list[tuple[int, int, int]]:
        """``(start, end, id)`` per unit."""
        return spans_from_segments(self.segments(normalized))

    def encode_ids(self, normalized: str) -> list[int]:
        """Ids per unit."""
        return [id_ for _, id_ in self.segments(normalized)]
