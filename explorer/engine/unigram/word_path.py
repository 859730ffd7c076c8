"""The per-word path of a SentencePiece Unigram model: each word's Viterbi, cached.

sentencepiece's ``EncodeOptimized`` is one left-to-right best-path pass in float32 over the
whole sentence; no piece crosses a word start (``word_splitter``), so the pass is the words'
passes one after the other, each starting from the path score the words before it left.
:class:`WordPath` solves a word from score 0 (:meth:`WordPath.viterbi64` /
:meth:`WordPath.viterbi`), caches the result with the prefix-score magnitude below which
float32 rounding cannot change it (:mod:`explorer.engine.unigram.limits`), and segments a text
word by word (:meth:`WordPath.segments`), re-running a word from its exact prefix score where
rounding could decide (re-basing past 100000 included). The many-texts path
(:mod:`explorer.engine.unigram.many`) uses the same cache and Viterbi; the model
(:mod:`explorer.engine.unigram.model`) holds one :class:`WordPath`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from itertools import chain, compress

import numpy as np

from explorer.engine.int_table import IntTable
from explorer.engine.sentencepiece.pieces import F32, PieceType, Segment, f32
from explorer.engine.unigram.batch import BatchViterbi
from explorer.engine.unigram.binade import (
    GUARD_BINADE,
    LOW_LIMIT,
    BinadeKeys,
    Pieces,
    RunsAhead,
    representative_bases,
)
from explorer.engine.unigram.limits import (
    CACHE_LIMIT,
    INF,
    RESET,
    RESET_GUARD,
    CacheEntry,
    cache_entry,
)
from explorer.engine.unigram.rows import WordRows
from explorer.engine.unigram.trie import PieceTrie, cached_substrings
from explorer.engine.unigram.word_keys import codes_of

_MISSING = object()
_NUMPY_SUM_MIN = 12  # float32 running sums this long go through numpy (measured crossover)
_SHORT_WORD = 2  # measured: cutting even short words wins (misses share their parts)
_NEG_INF = float("-inf")
_NOTHING: frozenset[str] = frozenset()
_ID_SPAN = 1 << 40  # back pointers pack (start, id) as start * _ID_SPAN + id
PAIR_STRIDE = 0x110000  # inner_pairs' keys: ord(a) * PAIR_STRIDE + ord(b)


class WordPath:
    """A model's words solved one by one, and the cache of their segmentations.

    Thread-safe as the model is (the cache is a plain dict; two threads may solve a word
    twice, with the same result).
    """

    def __init__(
        self,
        trie: PieceTrie,
        split: re.Pattern[str] | None,
        matchable: list[str],
        *,
        pieces: list[str],
        scores: list[float],
        types: list[int],
        unk_id: int,
        unk_score: float,
    ) -> None:
        self.trie = trie
        self.split = split
        """Cuts normalized text into words no piece crosses (None: the text is one word)."""
        self.pieces, self.scores, self.types = pieces, scores, types
        self.unk_id, self.unk_score = unk_id, unk_score
        self._matchable = matchable
        self._successor_map: dict[str, frozenset[str]] | None = None  # built on first use
        self._pair_table: IntTable | None = None  # see inner_pairs, built on first use
        self.cache = WordCache()
        """word -> (lengths, ids, prefix-score limit for reuse, largest |score| inside + 1),
        and the words' re-runs per binade (:attr:`WordCache.at_binade`)"""
        self._binade_keys: BinadeKeys | None = None  # built on first use
        self._batch: BatchViterbi | None = None  # built on first batch use
        self._id_scores: list[float] | None = None  # see _score_table, built on first use
        self._id_score_array: np.ndarray | None = None
        self._span: float | None = None  # see score_span

    def segments(self, normalized: str, ids_only: bool) -> list[Segment] | list[int]:
        """Segment word by word, from the cache unless float32 rounding could decide.

        sentencepiece runs one Viterbi over the whole sentence, so every candidate score
        includes the float32 sum of all earlier pieces, and it re-bases scores past
        ``±100000``. A word's cached segmentation (computed from score 0) is reused only
        while the prefix score is small enough that float32 rounding cannot flip any decision
        inside the word (its ``limit``); otherwise the word is re-run from the true prefix
        score. Past the re-basing threshold the exact prefix score is carried word by word
        (cached segmentations still apply where they are safe from it). Ids are therefore
        identical to sentencepiece, ties included.
        """
        if not normalized:
            return []
        if self.split is None:
            lengths, ids = self.viterbi(normalized, 0.0)[:2]
            return list(ids) if ids_only else list(zip(lengths, ids, strict=True))
        cache = self.cache
        out: list = []
        bound = 0.0  # upper bound of |prefix score| at the current word
        chunks: list[CacheEntry] = []  # each word's pieces, for exact re-runs
        base, done = 0.0, 0  # exact prefix score over chunks[:done], lazily
        exact = False  # past the re-basing guard: carry the exact prefix score word by word
        cache_get, add_chunk, emit = cache.get, chunks.append, out.extend
        for word in self.split.findall(normalized):
            entry = cache_get(word)
            if entry is None:
                entry = self.entry(word)
                if len(cache) >= CACHE_LIMIT:
                    cache.clear()
                cache[word] = entry
            if bound < entry[2] and not exact:  # the common case: the cached result holds
                add_chunk(entry)
                bound += entry[3]
                emit(entry[1] if ids_only else zip(entry[0], entry[1], strict=True))
                continue
            lengths, ids, limit, word_max = entry
            if not exact and bound >= limit:
                base = self.accumulate(chain.from_iterable(c[1] for c in chunks[done:]), base)
                done = len(chunks)
                if bound + word_max >= RESET_GUARD:
                    exact = True
                else:  # a near tie: re-run the word from the true prefix score
                    key = self.binade_key(base, word_max, word)
                    lengths, ids = self.pieces_at(word, base, key)
            if exact:
                # No piece crosses a word boundary, so sentencepiece's state at a word start
                # is just the prefix score: a word re-run from it (re-basing included) is exact.
                magnitude = base if base > 0 else -base
                if magnitude < limit:  # the cached decisions hold from this score
                    base = self.accumulate(ids, base)
                else:
                    lengths, ids, _, _, base = self.viterbi(word, base)
            else:
                chunks.append((lengths, ids, limit, word_max))
                bound += word_max
            out.extend(ids if ids_only else zip(lengths, ids, strict=True))
        return out

    def binade_key(self, base: float, word_max: float, word: str) -> int | None:
        """:meth:`BinadeKeys.key`: where ``word``'s re-run from ``base`` is cached."""
        keys = self._binade_keys
        if keys is None:
            keys = self._binade_keys = BinadeKeys(self.score_array(), self.pieces,
                                                  self.unk_id, self.score_span())
        return keys.key(base, word_max, word)

    def pieces_at(self, word: str, base: float, key: int | None) -> Pieces:
        """``word``'s pieces where sentencepiece's pass reaches it at path score ``base``
        (callers keep ``|base| + word_max`` below the re-basing guard): a re-run from
        ``base``, cached under its :meth:`binade_key` ``key`` (None: not cached)."""
        if key is None:
            return self.viterbi(word, base)[:2]
        found = self.cache.at(word, key)
        if found is None:
            found = self.viterbi(word, base)[:2]
            self.cache.keep_at_binade(word, key, found)
        return found

    def runs_ahead(self, words: Sequence[str], limits: np.ndarray, word_max: np.ndarray
                   ) -> RunsAhead | None:
        """Re-runs of ``words`` made before a pass needs them: every word whose limit is
        below :data:`~.binade.LOW_LIMIT`, at each negative binade from its limit's up to the
        re-basing guard's (one run per key), in one batch, for
        :meth:`WordCache.take_ahead` (a helper process sends them with its words' rows).
        Keys already cached here are skipped; binades too narrow for a word have no key (a
        pass there re-runs it from its own score). None when there is nothing to run."""
        cached = self.cache.at_binade
        todo: list[str] = []
        keys: list[int] = []
        bases: list[float] = []
        rows: list[int] = []
        for k in np.flatnonzero(np.asarray(limits) < LOW_LIMIT).tolist():
            word, most = words[k], float(word_max[k])
            for e in range(math.frexp(max(float(limits[k]), 1.0))[1], GUARD_BINADE + 1):
                for base in representative_bases(e):
                    key = self.binade_key(base, most, word)
                    if key is None:
                        break
                    if (word, key) not in cached:
                        todo.append(word)
                        keys.append(key)
                        bases.append(base)
                        rows.append(k)
                    if key & 3 == 2:  # (no parity in this key: one run serves both)
                        break
        if not todo:
            return None
        result = self.batch_viterbi().run(todo, bases=np.array(bases))
        i32 = np.int32  # (sent to another process: half the bytes of int64)
        return RunsAhead(todo, np.array(keys, i32), result.start.astype(i32),
                         result.count.astype(i32), result.piece_len.astype(i32),
                         result.piece_id.astype(i32), np.array(rows, i32))

    def score_array(self) -> np.ndarray:
        """:meth:`_score_table` as a float32 array."""
        array_ = self._id_score_array
        if array_ is None:
            table = self._id_scores
            if table is None:
                table = self._id_scores = self._score_table()
            array_ = self._id_score_array = np.array(table, np.float32)
        return array_

    def batch_viterbi(self) -> BatchViterbi:
        """The numpy form of the trie, built on first use (0.03 s for 8k pieces)."""
        batch = self._batch
        if batch is None:
            batch = BatchViterbi(
                self.trie.entries,
                unk_id=self.unk_id,
                unk_score=self.unk_score,
                user_score=user_defined_score,
                cache_key=self._model_key(),
            )
            self._batch = batch
        return batch

    def _model_key(self) -> bytes:
        """Identifies the model's pieces, scores, types and matchable pieces (what its trie
        and the trie's arrays are built from)."""
        digest = hashlib.sha256("\0".join(self.pieces).encode("utf-8", "surrogatepass"))
        digest.update(np.array(self.scores, np.float64).tobytes())
        digest.update(np.array(self.types, np.int64).tobytes())
        digest.update("\1".join(self._matchable).encode("utf-8", "surrogatepass"))
        return digest.digest()

    def entry(self, word: str) -> CacheEntry:
        """``(segments, ids, limit, word_max)`` of ``word``: reusable while the prefix-score
        bound stays below ``limit``; ``word_max`` bounds ``|score|`` inside the word.

        The word is cut further where no piece can cross (the two characters around the cut
        never occur together inside a piece), and the parts are cached on their own: code
        and other text with long, rarely repeated "words" shares most of its parts.
        """
        if len(word) <= _SHORT_WORD:  # not worth cutting: one Viterbi is as cheap
            return self._part_entry(word)
        parts = self._parts(word)
        if len(parts) == 1:
            return self._part_entry(word)
        cache = self.cache
        lengths: list[int] = []
        ids: list[int] = []
        limit, word_max = INF, 0.0
        for part in parts:
            entry = cache.get(part)
            if entry is None:
                entry = cache[part] = self._part_entry(part)
            # the part starts word_max further from zero than the word
            part_limit = entry[2] - word_max
            if part_limit < limit:
                limit = part_limit
            word_max += entry[3]
            lengths += entry[0]
            ids += entry[1]
        return tuple(lengths), tuple(ids), limit, word_max

    def _successors(self) -> dict[str, frozenset[str]]:
        """For each character, the characters that follow it somewhere inside a piece: a cut
        between two characters that no piece holds together is never crossed by a piece.

        Built lazily: only words longer than ``_SHORT_WORD`` need it, and it is a fifth of
        the load time of a 250k-piece model. Two threads may both build it; same result.
        """
        successors = self._successor_map
        if successors is None:
            pieces = self._matchable
            grouped: dict[str, set[str]] = {}
            for pair in cached_substrings(pieces, 2, "piece-bigrams-1"):
                grouped.setdefault(pair[0], set()).add(pair[1])
            successors = {c: frozenset(after) for c, after in grouped.items()}
            self._successor_map = successors
        return successors

    def inner_pairs(self) -> IntTable:
        """Every two characters that follow each other inside a piece, as keys
        ``ord(a) * PAIR_STRIDE + ord(b)``: a word is cut (:meth:`_parts`) between two
        characters whose key is missing. Built on first use."""
        table = self._pair_table
        if table is None:
            pairs = cached_substrings(self._matchable, 2, "piece-bigrams-1")
            codes = codes_of("".join(pairs)).astype(np.int64)
            keys = codes[0::2] * PAIR_STRIDE + codes[1::2]
            table = self._pair_table = IntTable(keys, np.zeros(len(keys), np.int32))
        return table

    def _parts(self, word: str) -> list[str]:
        """``word`` cut between every two characters that no piece contains together."""
        successors = self._successors()
        get, nothing = successors.get, _NOTHING
        parts: list[str] = []
        start = 0
        after = get(word[0], nothing)
        for k, c in enumerate(word[1:], 1):  # no two-character strings built: set tests
            if c not in after:
                parts.append(word[start:k])
                start = k
            after = get(c, nothing)
        parts.append(word[start:])
        return parts

    def _part_entry(self, word: str) -> CacheEntry:
        """The cache entry of a part that no safe cut divides (one Viterbi from score 0)."""
        fast = self.viterbi64(word)
        if fast is not None:
            lengths, ids, margin, word_max = fast
        else:
            lengths, ids, margin, word_max, _ = self.viterbi(word, 0.0)
        return cache_entry(lengths, ids, margin, word_max, self.score_span(), len(word))

    def score_span(self) -> float:
        """A bound of ``|score|`` of every piece the encoder can pick (``<unk>`` included)."""
        span = self._span
        if span is None:
            table = self._id_scores
            if table is None:
                table = self._id_scores = self._score_table()
            span = self._span = max(map(abs, table), default=0.0) + 1.0
        return span

    def accumulate(self, ids: Iterable[int], base: float) -> float:
        """Continue sentencepiece's float32 path score from ``base`` over pieces ``ids``.

        numpy's float32 ``add.accumulate`` rounds after every addition, exactly as
        sentencepiece's ``float`` sums do (callers never cross the re-basing threshold).
        """
        table = self._id_scores
        if table is None:
            table = self._id_scores = self._score_table()
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        if len(ids) < _NUMPY_SUM_MIN:  # a word or two: numpy's set-up costs more
            pack, unpack = F32.pack, F32.unpack
            for id_ in ids:
                base = unpack(pack(base + table[id_]))[0]
            return base
        scores = np.fromiter(chain((base,), map(table.__getitem__, ids)), np.float32)
        return float(np.add.accumulate(scores)[-1])

    def _score_table(self) -> list[float]:
        """The score the encoder gives each id's piece: user-defined pieces by their UTF-8
        length, ``<unk>`` its penalty score."""
        table = list(self.scores)
        # (the user-defined ids found in C: a loop over a 250k-piece model's ids took ~50 ms)
        for i in compress(range(len(self.types)), map(PieceType.USER_DEFINED.__eq__, self.types)):
            table[i] = user_defined_score(len(self.pieces[i].encode("utf-8")))
        table[self.unk_id] = self.unk_score
        return table

    def viterbi64(
        self, text: str
    ) -> tuple[tuple[int, ...], tuple[int, ...], float, float] | None:
        """:meth:`viterbi` from score 0 in float64, when that provably decides as float32 does.

        Path scores in float32 drift from float64 by at most ``n`` half-ulps of the largest
        magnitude ``M`` seen, so every comparison whose float64 margin exceeds twice the
        tolerance ``4 (n + 2) ulp32(M)`` goes the same way (ties included: a tie has margin
        0). Returns the piece lengths, their ids, a normalized margin bound that holds for
        float32 (:mod:`~explorer.engine.unigram.limits`; the float64 one minus the tolerance,
        which bounds each comparison's ``(|difference| - tolerance) / (k + 1)`` from below)
        and the spread; None when a comparison is too
        close or scores approach sentencepiece's re-basing threshold: then the caller runs
        :meth:`viterbi`.
        Skipping the float32 round trip per candidate saves a third of the time.
        """
        n = len(text)
        get = self.trie.entries.get
        best = [0.0] + [_NEG_INF] * n
        back = [0] * (n + 1)  # start * _ID_SPAN + id of the best piece ending here
        depth = [0] * (n + 1)  # pieces on the best path to each position
        unk = self.unk_id
        unk_score = self.unk_score
        span = _ID_SPAN
        missing = _MISSING
        margin = INF  # smallest |difference| / (k + 1) of a comparison (limits.py)
        raw = INF  # smallest |difference|
        for i in range(n):
            base = best[i]
            chain = depth[i] + 2  # k + 1 = d_i + 1 + d_j + 1, less d_j
            entry = get(text[i], missing)
            if entry is missing:
                has_single = False
                j = i + 1
            else:
                has_single = entry is not None
                j = i + 1
                while True:
                    if entry is not None:
                        if entry[2]:
                            score = user_defined_score(len(text[i:j].encode("utf-8")))
                        else:
                            score = entry[1]
                        cand = base + score
                        current = best[j]
                        diff = cand - current if cand > current else current - cand
                        if diff < margin * (chain + depth[j]):
                            margin = diff / (chain + depth[j])
                        if diff < raw:
                            raw = diff
                        if cand > current:
                            best[j] = cand
                            back[j] = i * span + entry[0]
                            depth[j] = chain - 1
                    j += 1
                    if j > n:
                        break
                    entry = get(text[i:j], missing)
                    if entry is missing:
                        break
            if not has_single:
                cand = base + unk_score
                current = best[i + 1]
                diff = cand - current if cand > current else current - cand
                if diff < margin * (chain + depth[i + 1]):
                    margin = diff / (chain + depth[i + 1])
                if diff < raw:
                    raw = diff
                if cand > current:
                    best[i + 1] = cand
                    back[i + 1] = i * span + unk
                    depth[i + 1] = chain - 1
        top = max(-min(best), max(best))
        if top >= RESET_GUARD:
            return None
        tolerance = 4.0 * (n + 2) * math.ldexp(1.0, math.frexp(top + 1.0)[1] - 24)
        if raw <= 2.0 * tolerance:
            return None
        lengths: list[int] = []
        ids: list[int] = []
        end = n
        while end > 0:
            begin, id_ = divmod(back[end], span)
            lengths.append(end - begin)
            ids.append(id_)
            end = begin
        lengths.reverse()
        ids.reverse()
        return tuple(lengths), tuple(ids), margin - tolerance, top + 1.0

    def viterbi(
        self, text: str, base0: float
    ) -> tuple[tuple[int, ...], tuple[int, ...], float, float, float]:
        """sentencepiece's ``EncodeOptimized`` on ``text``, starting from score ``base0``.

        Returns the piece lengths and ids, the normalized margin (the smallest ``|difference|
        / (k + 1)`` of any comparison, :mod:`~explorer.engine.unigram.limits`: how close a
        different rounding could come to changing a decision), the largest ``|best - base0|``
        seen + 1, and the final path score (after any re-basing).
        """
        n = len(text)
        entries = self.trie.entries
        # -inf marks "not reached yet": the first candidate then wins the ordinary comparison
        # (sentencepiece tests starts_at == -1 instead; the outcome is the same).
        best = [_NEG_INF] * (n + 1)
        best[0] = base0
        start_at = [-1] * (n + 1)
        best_id = [0] * (n + 1)
        depth = [0] * (n + 1)  # pieces on the best path to each position
        unk_id, unk_score = self.unk_id, self.unk_score
        pack, unpack = F32.pack, F32.unpack
        get = entries.get
        missing = _MISSING
        margin = INF  # smallest |difference| / (k + 1) of a comparison (limits.py)
        frontier = 0
        for i in range(n):
            base = best[i]
            chain = depth[i] + 2  # k + 1 = d_i + 1 + d_j + 1, less d_j
            if base < -RESET or base > RESET:  # sentencepiece re-bases large scores
                for k in range(i, frontier + 1):
                    if k == i or start_at[k] != -1:
                        best[k] = f32(best[k] - base)
                base = 0.0
            # The one-character piece first: it decides whether an <unk> node is needed.
            j = i + 1
            entry = get(text[i], missing)
            if entry is missing:
                has_single = False
            else:
                has_single = entry is not None
                while True:
                    if entry is not None:
                        id_, score, user = entry
                        if user:
                            score = user_defined_score(len(text[i:j].encode("utf-8")))
                        current = best[j]
                        diff = base + score - current
                        k = chain + depth[j]
                        # float32 rounding moves a sum by < 1e-7 relative: losers stay so
                        if diff > -1e-6 * (current if current > 0 else -current):
                            cand = unpack(pack(base + score))[0]  # float32, as sentencepiece
                            diff = cand - current
                            if diff > 0:
                                best[j] = cand
                                start_at[j] = i
                                best_id[j] = id_
                                depth[j] = chain - 1
                        else:  # the float32 difference is >= 0.93 of this one here
                            diff *= 0.93
                        if diff < 0:
                            diff = -diff
                        if diff < margin * k:
                            margin = diff / k
                    j += 1
                    if j > n:
                        break
                    entry = get(text[i:j], missing)
                    if entry is missing:  # no piece starts with text[i:j]
                        break
            if j - 1 > frontier:  # an upper bound of the farthest node end is enough
                frontier = j - 1
            if not has_single:
                cand = f32(base + unk_score)
                diff = cand - best[i + 1]
                k = chain + depth[i + 1]
                if diff > 0:
                    best[i + 1], start_at[i + 1], best_id[i + 1] = cand, i, unk_id
                    depth[i + 1] = chain - 1
                margin = min(margin, abs(diff) / k)
        lengths: list[int] = []
        ids: list[int] = []
        end = n
        while end > 0:
            begin = start_at[end]
            lengths.append(end - begin)
            ids.append(best_id[end])
            end = begin
        lengths.reverse()
        ids.reverse()
        spread = max(abs(max(best) - base0), abs(min(best) - base0))
        return tuple(lengths), tuple(ids), margin, spread + 1.0, best[n]


class WordCache(dict[str, CacheEntry]):
    """Words' cache entries (the per-word path's), the many-texts path's words as array rows
    (:mod:`~.rows`), and their re-runs per binade (:mod:`~.binade`): cleared together
    (benchmarks and tests clear the cache for cold runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = WordRows()
        """The words the many-texts path solved (:mod:`explorer.engine.unigram.many`)"""
        self.at_binade: dict[tuple[str, int], Pieces] = {}
        """(word, binade key) -> the word's pieces at any prefix score with that key"""
        self._ahead: dict[tuple[str, int], int] = {}
        """(word, binade key) -> a re-run made ahead: ``block << 24 | row`` in ``_blocks``"""
        self._blocks: list[RunsAhead] = []

    def at(self, word: str, key: int) -> Pieces | None:
        """The cached re-run of ``word`` at binade ``key`` (one made ahead is moved into
        :attr:`at_binade` when asked for), or None."""
        found = self.at_binade.get((word, key))
        if found is None and self._ahead:
            where = self._ahead.pop((word, key), None)
            if where is not None:
                found = self._blocks[where >> 24].pieces(where & 0xFFFFFF)
                self.keep_at_binade(word, key, found)
        return found

    def keep_at_binade(self, word: str, key: int, pieces: Pieces) -> None:
        """Remember a re-run (the store is emptied when it reaches ``CACHE_LIMIT``)."""
        store = self.at_binade
        if len(store) >= CACHE_LIMIT:
            store.clear()
        store[(word, key)] = pieces

    def take_ahead(self, runs: RunsAhead) -> None:
        """Keep re-runs made ahead (another copy's :meth:`WordPath.runs_ahead`) as they
        are, until asked for (emptied when they reach ``CACHE_LIMIT``)."""
        ahead = self._ahead
        if len(runs.words) >= 1 << 24:  # (more than a row number holds: not kept)
            return
        if len(ahead) + len(runs.words) >= CACHE_LIMIT or len(self._blocks) >= 1 << 20:
            ahead.clear()
            self._blocks.clear()
        block = len(self._blocks) << 24
        self._blocks.append(runs)
        ahead.update(zip(zip(runs.words, runs.keys.tolist(), strict=True),
                         range(block, block + len(runs.words)), strict=True))

    def clear_words(self) -> None:
        """Forget the per-word path's entries only (the many-texts path's rows stay)."""
        super().clear()

    def clear(self) -> None:
        """Forget every word and every re-run."""
        super().clear()
        self.rows.clear()
        self.at_binade.clear()
        self._ahead.clear()
        self._blocks.clear()


def user_defined_score(length: int) -> float:
    """sentencepiece 0.2.3's ``GetUserDefinedScore``: ``0.1 * (length - 1)`` as a float.

    ``length`` counts UTF-8 bytes in the encoder and characters in the lattice, as upstream.
    """
    return f32(0.1 * (length - 1))
