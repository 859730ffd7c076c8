"""llama.cpp's Unigram (``llm_tokenizer_ugm_session::tokenize``) for GGUF ``t5`` vocabularies.

It differs from sentencepiece's ``EncodeOptimized`` (what :class:`UnigramModel` follows, in
float32) in ways that change real segmentations:

- path scores are **double** sums of the (float) piece scores, so paths that tie exactly in
  double are broken by order, not by float32 rounding: at each end position the first
  candidate with the greatest score wins, candidates coming by start position, left to
  right (the longest piece ending there first). ``Repeated: aaaa...`` in nomic-bert-moe ties
  ``▁a a a aaaaa...`` with ``▁a aaaaa... a a``: llama.cpp gives the first, sentencepiece's
  float32 sums pick the second;
- USER_DEFINED pieces score 0 (sentencepiece 0.2.3: ``0.1 * (length - 1)``);
- UNUSED pieces match like NORMAL ones, with their own score (sentencepiece skips them);
- a code point no one-character piece covers is ``<unk>`` with score ``min_score - 10``
  (consecutive ``<unk>`` are merged by the tokenizer, as llama.cpp does).

The lattice, n-best and sampling views stay sentencepiece's (:class:`UnigramModel`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.engine.sentencepiece.pieces import PieceType, Segment
from explorer.engine.unigram.many import ManyEncoded, Resumed
from explorer.engine.unigram.model import UnigramModel


class LlamaUgmModel(UnigramModel):
    """:class:`UnigramModel` whose best segmentation is llama.cpp's (see the module)."""

    def __init__(self, pieces: Sequence[str], scores: Sequence[float],
                 types: Sequence[int] | None = None, *, unk_id: int | None = None) -> None:
        super().__init__(pieces, scores, types, unk_id=unk_id)
        # The same texts as the Unigram trie's (every matchable piece and its prefixes), its
        # strings shared (a 250k-piece model's prefixes sliced again were ~20 MB).
        entries: dict[str, tuple[int, float] | None] = dict.fromkeys(self.trie.entries)
        matchable = (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
        for i, (piece, kind) in enumerate(zip(self.pieces, self.types, strict=True)):
            if kind not in matchable or not piece:
                continue
            # llama.cpp's trie keeps the last id of a text
            entries[piece] = (i, 0.0 if kind == PieceType.USER_DEFINED else self.scores[i])
        self._llama_entries = entries

    def _segments(self, normalized: str, ids_only: bool) -> list[Segment] | list[int]:
        segments = self._llama_viterbi(normalized)
        return [i for _, i in segments] if ids_only else segments

    def _llama_viterbi(self, text: str) -> list[Segment]:
        n = len(text)
        if n == 0:
            return []
        entries, unk_id, unk_score = self._llama_entries, self.unk_id, float(self.unk_score)
        best = [-float("inf")] * (n + 1)
        best[0] = 0.0
        back: list[tuple[int, int]] = [(0, unk_id)] * (n + 1)
        for i in range(n):
            current = best[i]
            single = False
            end = i + 1
            while end <= n:
                key = text[i:end]
                if key not in entries:
                    break
                entry = entries[key]
                if entry is not None:
                    if end == i + 1:
                        single = True
                    score = current + entry[1]
                    if score > best[end]:
                        best[end] = score
                        back[end] = (i, entry[0])
                end += 1
            if not single and current + unk_score > best[i + 1]:
                best[i + 1] = current + unk_score
                back[i + 1] = (i, unk_id)
        out: list[Segment] = []
        pos = n
        while pos > 0:
            start, token = back[pos]
            out.append((pos - start, token))
            pos = start
        out.reverse()
        return out

    def encode_many(self, texts: Sequence[str]) -> ManyEncoded:
        """:meth:`UnigramModel.encode_many` with llama.cpp's segmentation, text by text."""
        segments = [self._llama_viterbi(t) for t in texts]
        bounds = [0]
        for s in segments:
            bounds.append(bounds[-1] + len(s))
        lengths = np.array([length for s in segments for length, _ in s], dtype=np.int64)
        return ManyEncoded([[i for _, i in s] for s in segments], lengths, bounds)

    def encode_from(self, normalized: str, anchor: int | None, score: float) -> Resumed | None:
        """No resumption (sentencepiece's path scores do not apply): always None."""
        return None
