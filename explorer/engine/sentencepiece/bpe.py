"""SentencePiece BPE: merge the adjacent pair whose merged piece has the highest score.

This is sentencepiece's ``bpe_model.cc`` (and llama.cpp's SPM tokenizer): start from single
characters (user-defined symbols come in whole and are frozen), repeatedly merge the pair
whose concatenation is a vocabulary piece with the best score (ties: leftmost pair), skip
stale queue entries, and finally split merged UNUSED pieces back into the parts they were
made from. A symbol that is not a piece becomes ``<unk>``; byte fallback and merging of
consecutive unknowns happen in the tokenizer. There is no merges list: scores order merges.

Build from in-memory data (Llama/Mistral ``.model``, GGUF ``llama`` arrays):
``SentencePieceBPEModel(pieces, scores, types, unk_id=...)``. Works on normalized text and
returns ``(start, end, id)`` code-point spans; words (see ``word_splitter``) are cached.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence

from explorer.engine.errors import VocabFormatError
from explorer.engine.sentencepiece.pieces import (
    PieceType,
    Segment,
    f32,
    spans_from_segments,
    word_splitter,
)

_CACHE_LIMIT = 200_000
_MAX_RESEGMENT_DEPTH = 100


class SentencePieceBPEModel:
    """An immutable score-driven BPE model."""

    model_type = "bpe"

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int] | None = None,
        *,
        unk_id: int | None = None,
    ) -> None:
        if len(scores) != len(pieces) or (types is not None and len(types) != len(pieces)):
            raise VocabFormatError("bpe model: pieces, scores and types differ in length")
        self.pieces = list(pieces)
        self.scores = [f32(s) for s in scores]
        self.types = [int(t) for t in types] if types is not None else [1] * len(pieces)
        matchable = (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
        # pieces_ in sentencepiece: merge candidates; reserved: control/unknown/byte pieces.
        self.piece_ids: dict[str, int] = {}
        self.reserved_ids: dict[str, int] = {}
        for i, (piece, kind) in enumerate(zip(self.pieces, self.types, strict=True)):
            target = self.piece_ids if kind in matchable else self.reserved_ids
            target.setdefault(piece, i)
        if unk_id is None:
            unk_ids = [i for i, t in enumerate(self.types) if t == PieceType.UNKNOWN]
            if len(unk_ids) != 1:
                raise VocabFormatError(f"bpe model: expected one unknown piece, got {unk_ids}")
            unk_id = unk_ids[0]
        self.unk_id = unk_id
        self.user_symbols = {
            p for p, t in zip(self.pieces, self.types, strict=True) if t == PieceType.USER_DEFINED
        }
        self._user_max = max((len(s) for s in self.user_symbols), default=0)
        self._split = word_splitter(self.piece_ids)
        self._cache: dict[str, tuple[Segment, ...]] = {}
        self._segment_of: dict[int, Segment] = {}
        """``(length, id)`` of each piece met so far, one tuple shared by the cached words."""

    def piece_to_id(self, piece: str) -> int:
        """The id of ``piece`` (control/byte pieces included); unknown -> ``unk_id``."""
        id_ = self.reserved_ids.get(piece)
        if id_ is None:
            id_ = self.piece_ids.get(piece, self.unk_id)
        return id_

    @property
    def word_pattern(self) -> re.Pattern[str] | None:
        """The pattern cutting normalized text into words no piece crosses (None: no cut)."""
        return self._split

    def encode(self, normalized: str) -> list[tuple[int, int, int]]:
        """Segmentation of ``normalized`` as ``(start, end, id)`` code-point spans."""
        return spans_from_segments(self.segments(normalized))

    def encode_ids(self, normalized: str) -> list[int]:
        """Only the ids of :meth:`encode`."""
        return [id_ for _, id_ in self.segments(normalized)]

    def segments(self, normalized: str) -> list[Segment]:
        """The segmentation as ``(length, id)`` pairs in order."""
        if not normalized:
            return []
        words = self._split.findall(normalized) if self._split is not None else [normalized]
        cache = self._cache
        out: list[Segment] = []
        for word in words:
            segs = cache.get(word)
            if segs is None:
                segs = self._merge(word)
                if len(cache) >= _CACHE_LIMIT:
                    cache.clear()
                cache[word] = segs
            out.extend(segs)
        return out

    def _initial_symbols(self, text: str) -> tuple[list[str], list[bool]]:
        """The word's characters as symbols (a user-defined symbol whole, and frozen)."""
        if not self._user_max:  # (no user-defined symbols: a character loop in Python was
            return list(text), [False] * len(text)  # a fifth of a multilingual encode)
        symbols: list[str] = []
        frozen: list[bool] = []
        i, n = 0, len(text)
        while i < n:
            length = 1
            for k in range(min(self._user_max, n - i), 0, -1):
                if text[i : i + k] in self.user_symbols:
                    length = k
                    break
            symbols.append(text[i : i + length])
            frozen.append(length > 1 or text[i] in self.user_symbols)
            i += length
        return symbols, frozen

    def _merge_plain(self, symbols: list[str], prev: list[int], nxt: list[int],
                     agenda: list[tuple[float, int, int, int]],
                     rev_merge: dict[str, tuple[str, str]]) -> None:
        """:meth:`_merge`'s merging when no symbol is frozen (no user-defined symbol in the
        word): the same pairs pushed in the same order, written out inline (a closure
        call per pair looked at was a quarter of a Mistral encode)."""
        get, types, scores = self.piece_ids.get, self.types, self.scores
        unused = PieceType.UNUSED
        push, pop = heapq.heappush, heapq.heappop
        for i in range(1, len(symbols)):
            merged = symbols[i - 1] + symbols[i]
            id_ = get(merged)
            if id_ is not None:
                agenda.append((-scores[id_], i - 1, i, len(merged)))
                if types[id_] == unused:
                    rev_merge[merged] = (symbols[i - 1], symbols[i])
        heapq.heapify(agenda)  # (the same heap order as pushing them one by one)
        while agenda:
            _, left, right, size = pop(agenda)
            a, b = symbols[left], symbols[right]
            if not a or not b or len(a) + len(b) != size:
                continue  # stale: one side was merged elsewhere since
            joined = a + b
            symbols[left] = joined
            symbols[right] = ""
            after = nxt[left] = nxt[right]
            if after >= 0:
                prev[after] = left
            before = prev[left]
            if before != -1:  # the pair (before, left)
                merged = symbols[before] + joined
                id_ = get(merged)
                if id_ is not None:
                    push(agenda, (-scores[id_], before, left, len(merged)))
                    if types[id_] == unused:
                        rev_merge[merged] = (symbols[before], joined)
            if after != -1:  # the pair (left, after)
                merged = joined + symbols[after]
                id_ = get(merged)
                if id_ is not None:
                    push(agenda, (-scores[id_], left, after, len(merged)))
                    if types[id_] == unused:
                        rev_merge[merged] = (joined, symbols[after])

    def _merge(self, text: str) -> tuple[Segment, ...]:
        """Merge one word, as sentencepiece's ``SampleEncode(alpha=0)``."""
        symbols, frozen = self._initial_symbols(text)
        count = len(symbols)
        prev = list(range(-1, count - 1))
        nxt = [*range(1, count), -1]
        piece_ids, types, scores = self.piece_ids, self.types, self.scores
        agenda: list[tuple[float, int, int, int]] = []  # (-score, left, right, merged length)
        rev_merge: dict[str, tuple[str, str]] = {}

        def add_pair(left: int, right: int) -> None:
            if left == -1 or right == -1 or frozen[left] or frozen[right]:
                return
            merged = symbols[left] + symbols[right]
            id_ = piece_ids.get(merged)
            if id_ is None:
                return
            heapq.heappush(agenda, (-scores[id_], left, right, len(merged)))
            if types[id_] == PieceType.UNUSED:
                rev_merge[merged] = (symbols[left], symbols[right])

        if any(frozen):
            for i in range(1, count):
                add_pair(i - 1, i)
            while agenda:
                _, left, right, size = heapq.heappop(agenda)
                a, b = symbols[left], symbols[right]
                if not a or not b or len(a) + len(b) != size:
                    continue  # stale: one side was merged elsewhere since
                symbols[left] = a + b
                symbols[right] = ""
                nxt[left] = nxt[right]
                if nxt[right] >= 0:
                    prev[nxt[right]] = left
                add_pair(prev[left], left)
                add_pair(left, nxt[left])
        else:
            self._merge_plain(symbols, prev, nxt, agenda, rev_merge)

        out: list[Segment] = []
        shared = self._segment_of
        unk_id = self.unk_id
        reserved = self.reserved_ids
        index = 0
        while index != -1:
            piece = symbols[index]
            id_ = piece_ids.get(piece)
            if id_ is not None and types[id_] != PieceType.UNUSED and piece not in reserved:
                segment = shared.get(id_)  # (a piece as it is: the common case)
                if segment is None or segment[0] != len(piece):
                    segment = shared[id_] = (len(piece), id_)
                out.append(segment)
                index = nxt[index]
                continue
            # sentencepiece's ResegmentWithDepth, depth first with a stack (a recursive
            # closure is a reference cycle per word: under a document encode's paused
            # collector, ~0.5 kB of garbage kept for every new word)
            todo = [(symbols[index], 0)]
            while todo:
                piece, depth = todo.pop()
                id_ = piece_ids.get(piece)
                if depth > _MAX_RESEGMENT_DEPTH:
                    id_ = unk_id if id_ is None else id_
                elif id_ is None or piece in self.reserved_ids:
                    id_ = unk_id
                elif types[id_] != PieceType.UNUSED:
                    pass
                elif piece not in rev_merge:
                    id_ = unk_id
                else:
                    first, second = rev_merge[piece]
                    todo.append((second, depth + 1))
                    todo.append((first, depth + 1))
                    continue
                segment = shared.get(id_)  # (one tuple per piece for all cached words)
                if segment is None or segment[0] != len(piece):
                    segment = (len(piece), id_)
                    if id_ != unk_id:
                        shared[id_] = segment
                out.append(segment)
            index = nxt[index]
        return tuple(out)
