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
from itertools import accumulate, chain, compress

import numpy as np

from explorer.engine.sentencepiece.pieces import PieceType, Segment
from explorer.engine.unigram.llama_words import LlamaWords, LlamaWordsShare, WordEntry
from explorer.engine.unigram.many import ManyEncoded, Resumed, anchor_word
from explorer.engine.unigram.model import UnigramModel
from explorer.engine.unigram.trie import Entry
from explorer.engine.unigram.word_keys import end_to_end


class LlamaUgmModel(UnigramModel):
    """:class:`UnigramModel` whose best segmentation is llama.cpp's (see the module)."""

    def __init__(self, pieces: Sequence[str], scores: Sequence[float],
                 types: Sequence[int] | None = None, *, unk_id: int | None = None) -> None:
        super().__init__(pieces, scores, types, unk_id=unk_id)
        self._llama = LlamaWords(self.trie.entries, self._words.split,
                                 unk_id=self.unk_id, unk_score=float(self.unk_score),
                                 size=len(self.pieces), overrides=_llama_overrides(self))
        """llama.cpp's pass, word by word (:mod:`explorer.engine.unigram.llama_words`)."""

    @property
    def _cache(self) -> dict[str, WordEntry]:  # type: ignore[override]
        """The word cache of llama.cpp's pass (tests and benchmarks clear it)."""
        return self._llama.cache

    def _segments(self, normalized: str, ids_only: bool) -> list[Segment] | list[int]:
        return self._llama.ids(normalized) if ids_only else self._llama.segments(normalized)

    def encode_many(self, texts: Sequence[str]) -> ManyEncoded:
        """:meth:`UnigramModel.encode_many` with llama.cpp's segmentation, text by text."""
        llama = self._llama
        words = list(map(llama.words, texts))
        llama.solve_many(chain.from_iterable(words))
        ids = [llama.ids_from(w, 0.0)[0] for w in words]
        bounds = [0, *accumulate(map(len, ids))]
        flat = np.fromiter(chain.from_iterable(ids), np.int64, bounds[-1])
        return ManyEncoded(ids, llama.length_of[flat], bounds)

    def encode_from(self, normalized: str, anchor: int | None, score: float) -> Resumed | None:
        """:meth:`UnigramModel.encode_from` with llama.cpp's pass: the path scores reported
        are its double sums. None without a word pattern or when ``anchor`` is not a word
        start."""
        llama = self._llama
        if llama.split is None or not normalized:
            return None
        words = llama.words(normalized)
        positions = end_to_end(words)
        first = anchor_word(positions, anchor)
        if first is None:
            return None
        if anchor is None:
            score = 0.0
        before, _, _ = llama.pass_arrays(words[:first], 0.0)
        after, _, scores = llama.pass_arrays(words[first:], score)
        ids = np.concatenate([before, after])
        return Resumed(llama.length_of[ids], ids, positions[first:-1], scores)

    def share_rows(self, texts: Sequence[str],  # type: ignore[override]
                   scale: float | None = None) -> LlamaWordsShare:
        """The new words of normalized ``texts`` solved by llama.cpp's rules, for
        another copy of this model (:meth:`take_rows`; ``scale`` is not used: its words
        are a dict)."""
        return self._llama.share(texts)

    def take_rows(self, share: object) -> int:
        """Add the words of another copy's :meth:`share_rows`; returns how many."""
        return self._llama.take(share) if isinstance(share, LlamaWordsShare) else 0


def _llama_overrides(model: UnigramModel) -> dict[str, Entry]:
    """Where llama.cpp's trie differs from the Unigram trie (sentencepiece's rules) for
    ``model``'s pieces: at the texts of UNUSED pieces, which llama.cpp matches (keeping the
    last id of a text whatever its type). Most models have none; the rest share the big
    dict with these few texts on the side (a 250k-piece model's own dict was ~35 MB)."""
    unused = set(compress(model.pieces, map(PieceType.UNUSED.__eq__, model.types)))
    unused.discard("")
    if not unused:
        return {}
    matchable = (PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED)
    last: dict[str, Entry] = {}
    for i in compress(range(len(model.pieces)), map(unused.__contains__, model.pieces)):
        kind = model.types[i]
        if kind in matchable:
            last[model.pieces[i]] = (i, model.scores[i], kind == PieceType.USER_DEFINED)
    entries = model.trie.entries
    return {text: entry for text, entry in last.items() if entries.get(text) != entry}
