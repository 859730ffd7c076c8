"""The SentencePiece Unigram model: pieces with log-probability scores, best segmentation.

:class:`UnigramModel` is built from in-memory data (``pieces``, ``scores``, ``types``,
``unk_id``), so ``.model`` files, HF ``tokenizer.json`` Unigram models and GGUF ``t5``
vocabularies all share it. It works on *normalized* text (see ``explorer.engine.normalizers``)
and returns ``(start, end, id)`` code-point spans; unknown-merging, byte fallback and offsets
into the original text are the tokenizer's job (``explorer.engine.sentencepiece.tokenizer``).

Encoding follows sentencepiece's ``EncodeOptimized`` exactly: a left-to-right best-path pass
in float32 where a later candidate wins only with a strictly greater score, an ``<unk>`` node
(score ``min_score - 10``) wherever no one-character piece exists, UNUSED pieces skipped and
USER_DEFINED pieces scored ``0.1 * (length - 1)`` (sentencepiece 0.2.3, the version the tests
pin; older releases used ``length * max_score - 0.1``). The normalized text is cut into words
no piece can cross (``word_splitter``) and each word's segmentation is cached.

:meth:`UnigramModel.lattice` builds the full :class:`Lattice` (``PopulateNodes``) for n-best,
sampling, marginals and the UI panel. CONTROL, UNKNOWN and BYTE pieces never match text.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Sequence
from dataclasses import replace
from itertools import compress

import numpy as np

from explorer.engine.errors import VocabFormatError
from explorer.engine.sentencepiece.pieces import (
    PieceType,
    Segment,
    f32,
    spans_from_segments,
    word_splitter,
)
from explorer.engine.unigram.batch import BatchViterbi
from explorer.engine.unigram.binade import same_binades
from explorer.engine.unigram.lattice import Lattice
from explorer.engine.unigram.limits import ROWS_LIMIT, CacheEntry
from explorer.engine.unigram.many import (
    ManyEncoded,
    Resumed,
    encode_from,
    encode_many,
)
from explorer.engine.unigram.parts import several_parts
from explorer.engine.unigram.rows import RowsShare
from explorer.engine.unigram.solve import solve_words
from explorer.engine.unigram.trie import Entry, PieceTrie
from explorer.engine.unigram.word_path import WordPath, user_defined_score

__all__ = ["BATCH_TEXT_CHARS", "UnigramModel", "user_defined_score"]

UNK_PENALTY = 10.0
FLT_MAX = 3.4028234663852886e38
BATCH_TEXT_CHARS = 8192
"""A normalized text this long goes through the batch path (:meth:`UnigramModel.encode_many`)
on its own."""


class UnigramModel:
    """An immutable Unigram model. Thread-safe (the word cache is a plain dict)."""

    model_type = "unigram"

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        types: Sequence[int] | None = None,
        *,
        unk_id: int | None = None,
    ) -> None:
        if len(scores) != len(pieces) or (types is not None and len(types) != len(pieces)):
            raise VocabFormatError("unigram model: pieces, scores and types differ in length")
        self.pieces = list(pieces)
        self.scores = _f32_list(scores)
        self.types = list(map(int, types)) if types is not None else [1] * len(pieces)
        if unk_id is None:
            unk_ids = list(compress(range(len(self.types)),
                                    map(PieceType.UNKNOWN.__eq__, self.types)))
            if len(unk_ids) != 1:
                raise VocabFormatError(f"unigram model: expected one unknown piece, got {unk_ids}")
            unk_id = unk_ids[0]
        if not 0 <= unk_id < len(self.pieces):
            raise VocabFormatError(f"unigram model: unk id {unk_id} out of range")
        self.unk_id = unk_id
        scores, types = self.scores, self.types
        # C-level passes (map/compress): a 250k-piece model is built in a fraction of a second
        normal = list(compress(scores, map(PieceType.NORMAL.__eq__, types)))
        self.min_score = min(normal, default=FLT_MAX)
        self.max_score = max(normal, default=0.0)
        self.unk_score = f32(self.min_score - UNK_PENALTY)
        matchable = frozenset((PieceType.NORMAL, PieceType.USER_DEFINED, PieceType.UNUSED))
        keep = list(
            compress(
                range(len(types)),
                map(all, zip(map(matchable.__contains__, types), self.pieces, strict=True)),
            )
        )
        kept = list(map(self.pieces.__getitem__, keep))
        entries: list[Entry | None] = list(
            zip(keep, map(scores.__getitem__, keep),
                map(PieceType.USER_DEFINED.__eq__, map(types.__getitem__, keep)), strict=True)
        )
        unused = PieceType.UNUSED
        if unused in types:
            for k, i in enumerate(keep):
                if types[i] == unused:
                    entries[k] = None
        self.trie = PieceTrie.build(kept, entries)
        self._words = WordPath(self.trie, word_splitter(kept), kept, pieces=self.pieces,
                               scores=self.scores, types=self.types, unk_id=unk_id,
                               unk_score=self.unk_score)
        """The per-word path and word cache (:mod:`explorer.engine.unigram.word_path`)."""

    @property
    def _cache(self) -> dict[str, CacheEntry]:
        """The word cache (tests and benchmarks clear it for cold runs)."""
        return self._words.cache

    @property
    def _split(self) -> re.Pattern[str] | None:
        return self._words.split

    def _viterbi(
        self, text: str, base0: float
    ) -> tuple[tuple[int, ...], tuple[int, ...], float, float, float]:
        """:meth:`WordPath.viterbi` (sentencepiece's pass over one word from ``base0``)."""
        return self._words.viterbi(text, base0)

    def _batch_viterbi(self) -> BatchViterbi:
        """:meth:`WordPath.batch_viterbi` (the numpy lock-step Viterbi)."""
        return self._words.batch_viterbi()

    # -- encoding -----------------------------------------------------------------------------

    @property
    def word_pattern(self) -> re.Pattern[str] | None:
        """The pattern cutting normalized text into words no piece crosses (None: no cut)."""
        return self._words.split

    def encode(self, normalized: str) -> list[tuple[int, int, int]]:
        """Best segmentation of ``normalized`` as ``(start, end, id)`` code-point spans."""
        return spans_from_segments(self._segments(normalized, False))

    def encode_ids(self, normalized: str) -> list[int]:
        """Only the ids of :meth:`encode` (the fast path benchmarks use)."""
        return self._segments(normalized, True)  # type: ignore[return-value]

    def segments(self, normalized: str) -> list[Segment]:
        """The segmentation as ``(length, id)`` pairs in order."""
        return self._segments(normalized, False)  # type: ignore[return-value]

    def _segments(self, normalized: str, ids_only: bool) -> list[Segment] | list[int]:
        """Segment ``normalized``: long texts through :meth:`encode_many` (their new words
        solved at once), others word by word (:meth:`WordPath.segments`)."""
        if len(normalized) >= BATCH_TEXT_CHARS and self._words.split is not None:
            many = self.encode_many([normalized])
            return many.ids[0] if ids_only else many.segments(0)
        return self._words.segments(normalized, ids_only)

    def encode_ids_many(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`encode_ids` of each normalized text (see :meth:`encode_many`)."""
        return self.encode_many(texts).ids

    def segments_many(self, texts: Sequence[str]) -> list[list[Segment]]:
        """:meth:`segments` of each normalized text (see :meth:`encode_many`)."""
        many = self.encode_many(texts)
        return [many.segments(k) for k in range(len(texts))]

    def encode_many(self, texts: Sequence[str]) -> ManyEncoded:
        """Encode many normalized texts, the batch's new words solved at once (see
        :mod:`explorer.engine.unigram.many`)."""
        return encode_many(self._words, texts)

    def share_rows(self, texts: Sequence[str], scale: float | None = None) -> RowsShare:
        """Solve the words of normalized ``texts`` and return the word rows that added, for
        another copy of this model (:meth:`take_rows`): a child process solving a
        document's words ahead of the window's encode. ``scale``: how many times what was
        solved so far the sender expects to solve in all (the share then says how much,
        :attr:`RowsShare.expected`)."""
        store = self._words.cache.rows
        since = store.size
        solve_words(self._words, texts)
        share = store.share(since if store.size >= since else 0)
        # (the words as strings only where asked: those re-run ahead). A word of several
        # parts is not: the exact pass re-runs its parts (:func:`~.parts.by_parts`), which
        # are rows of their own here (minified JSON: re-runs ahead of whole long words were
        # 80% of the child's time)
        keyed = share.keyed()
        limits = np.where(several_parts(self._words, keyed), np.inf, share.limit)
        ahead = self._words.runs_ahead(keyed, limits, share.word_max)
        expected = None if scale is None else store.expected(scale)
        same_at = same_binades(ahead, len(share), share.first, share.count, share.piece_len,
                               share.piece_id)
        return replace(share, ahead=ahead, expected=expected, same_at=same_at)

    def forget_words(self) -> None:
        """Forget every word solved so far (a cache), keeping what was built to solve them
        (the batch solver, the pair tables)."""
        self._words.cache.clear()

    def take_rows(self, share: object) -> int:
        """Add the rows of a :meth:`share_rows` of another copy of this model that this
        one does not have (none when the word rows would be full), and the re-runs made
        ahead with them; returns how many rows (0 for anything but a :class:`RowsShare`)."""
        if not isinstance(share, RowsShare):
            return 0
        if share.ahead is not None:
            self._words.cache.take_ahead(share.ahead)
        return self._words.cache.rows.take(share, ROWS_LIMIT)

    def encode_from(self, normalized: str, anchor: int | None, score: float) -> Resumed | None:
        """Encode ``normalized`` as part of a longer text, sentencepiece's path score being
        ``score`` at the word starting at ``anchor`` (see
        :func:`explorer.engine.unigram.many.encode_from`)."""
        return encode_from(self._words, normalized, anchor, score)

    # -- lattice ------------------------------------------------------------------------------

    def lattice(self, normalized: str, norm_to_orig: list[int] | None = None) -> Lattice:
        """The full lattice of ``normalized`` (sentencepiece's ``PopulateNodes``)."""
        lattice = Lattice(normalized, norm_to_orig)
        trie = self.trie
        for pos in range(len(normalized)):
            has_single = False
            for end, (id_, score, user) in trie.common_prefix_search(normalized, pos):
                length = end - pos
                if user:
                    score = user_defined_score(length)
                lattice.insert(pos, length, id_, score)
                has_single = has_single or length == 1
            if not has_single:
                lattice.insert(pos, 1, self.unk_id, self.unk_score)
        return lattice

    def nbest(self, normalized: str, k: int) -> list[tuple[list[tuple[int, int, int]], float]]:
        """``k`` best segmentations as ``(start, end, id)`` spans with float32 scores."""
        if not normalized:
            return [([], 0.0)]
        k = max(1, min(k, 1024))
        if k == 1:
            return [(self.encode(normalized), 0.0)]
        paths = self.lattice(normalized).nbest(k)
        return [([(n.pos, n.end, n.id) for n in path], score) for path, score in paths]


def _f32_list(values: Sequence[float]) -> list[float]:
    """``values`` rounded to float32, in C (``array('f')``) when all are finite and in range."""
    try:
        rounded = array("f", values).tolist()
    except (TypeError, OverflowError):
        return [f32(v) for v in values]
    if all(map(math.isfinite, rounded)):
        return rounded
    return [f32(v) for v in values]  # out-of-range values: struct's checks and errors
