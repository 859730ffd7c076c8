"""llama.cpp's Unigram pass (``llm_tokenizer_ugm_session::tokenize``), word by word.

llama.cpp runs one best-path pass over the whole normalized text: path scores are double
sums of the pieces' float scores, added in path order, and at each end position the first
candidate with the greatest score wins (candidates come by start position, left to right).
No piece crosses a word start (``word_splitter``), so that pass is the words' passes one
after the other, each starting from the path score ``B`` the words before it left.

:class:`LlamaWords` solves each distinct word once from score 0 (:meth:`LlamaWords.pass_over`) and
reuses the segmentation from any ``B`` where rounding cannot change a decision on its best
path. Each decision's margin ``m`` (the best candidate's score minus the runner-up's, 0 on
a tie) was computed from 0; from ``B``, a word of ``n`` code points adds at most ``n``
pieces (each score at most ``M`` in magnitude) to values at most ``|B| + n M`` in magnitude,
so each value is off by at most ``n u (|B| + n M)`` (``u``: half a double's unit), in each
pass. The decision stays when ``m > 2 n u (|B| + 2 n M)``, i.e. ``|B|`` below the word's
*limit* (computed with twice that ``u``). A word past its limit, a tie included, is re-run
from its exact ``B``. That ``B`` is exact because it is the sum of the path's scores before
the word, added one by one in path order, which is how llama.cpp's pass computes it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate, chain
from operator import itemgetter
from typing import TypeVar

import numpy as np

from explorer.engine.sentencepiece.pieces import Segment
from explorer.engine.unigram.batch import MAX_WORD, BatchViterbi
from explorer.engine.unigram.solve import BATCH_MIN_CHARS
from explorer.engine.unigram.trie import Entry

_NEG_INF = float("-inf")
_INF = float("inf")
_Num = TypeVar("_Num", float, np.ndarray)
_ROUND = 2.0**-52  # twice the unit roundoff of a double: the limits' safety factor
_NEVER = -1.0  # the limit of a word reused from 0 only (a tie on its path)
_LIMITS: dict[int, float] = {}  # exponent -> the shared power of two
_SHARED: dict[float, float] = {_NEVER: _NEVER, _INF: _INF}  # each shared limit -> itself
_BATCH_MIN_WORDS = 200  # fewer words (a keystroke's text): no batch to look for
_SPECULATE_WORDS = 4096  # words whose path scores are summed at once (pass_arrays)
_SPECULATE_MIN = 64  # ... after a word that came out different (doubling again from there)
CACHE_WORD_MAX = 128
"""Longer words are not cached (they rarely recur; a line of text with no spaces is one)."""
CACHE_LIMIT = 400_000
"""Cached words per model; the cache is cleared when it reaches this."""

WordEntry = tuple[float, ...]
"""A cached word: its limit (the largest ``|B|`` it may be reused from; negative: only
from 0), then its pieces' ids (ints)."""


def shared_limit(limit: float) -> float:
    """``limit`` rounded down to a power of two, one float object per power: the cache's
    170k words of a 10 MB document held a float each (4 MB). Smaller is safe (a word is
    re-run a little sooner); inf stays, and a limit not above 0 is :data:`_NEVER`."""
    if limit <= 0 or limit != limit:
        return _NEVER
    if limit == _INF:
        return _INF
    exponent = math.frexp(limit)[1]
    held = _LIMITS.get(exponent)
    if held is None:
        held = _LIMITS.setdefault(exponent, math.ldexp(0.5, exponent))
        _SHARED.setdefault(held, held)
    return held


class LlamaWords:
    """A llama.cpp Unigram model's words solved one by one, cached, and the exact pass
    over a text made from them (see the module). Thread-safe as a plain dict is."""

    def __init__(self, entries: Mapping[str, Entry | None], split: re.Pattern[str] | None,
                 *, unk_id: int, unk_score: float, size: int,
                 overrides: Mapping[str, Entry] | None = None) -> None:
        self.entries = entries
        """Every matchable text and its prefixes, a piece's ``(id, score,
        is_user_defined)`` (a USER_DEFINED piece scores 0, as in llama.cpp)."""
        self.overrides = dict(overrides or {})
        """Entries replacing those of a few texts (UNUSED pieces': their prefixes are in
        ``entries``)."""
        self._firsts = frozenset(text[0] for text in self.overrides)
        self.split = split
        """Cuts normalized text into words no piece crosses (None: one pass over it all)."""
        self.unk_id, self.unk_score = unk_id, unk_score
        self.cache: dict[str, WordEntry] = {}
        score = [0.0] * size  # llama.cpp's score of each id (USER_DEFINED: 0)
        length = [1] * size  # each id's length in code points (<unk>: one)
        ints = list(range(min(size, 256)))  # ids as shared int objects (the entries')
        ints += [0] * (size - len(ints))
        for text, entry in chain(entries.items(), self.overrides.items()):
            if entry is not None:
                i = entry[0]
                score[i] = 0.0 if entry[2] else entry[1]
                length[i] = len(text)
                ints[i] = i
        ints[unk_id] = unk_id
        score[unk_id] = unk_score
        length[unk_id] = 1
        self._score_array = np.array(score, np.float64)  # llama.cpp's score of each id
        self.length_of = np.array(length, np.int64)
        self._top = max(map(abs, score), default=0.0)  # M of the module's bound
        self._ints = ints
        self._batch: BatchViterbi | None = None

    def pass_over(self, text: str, base: float) -> tuple[list[Segment], float, float]:
        """llama.cpp's pass over ``text`` from path score ``base``: its ``(length, id)``
        pieces, the path score at its end, and the smallest margin of a decision on the
        best path (best minus runner-up candidate; 0 on a tie, inf where there was no
        choice)."""
        entries, overrides, firsts = self.entries, self.overrides, self._firsts
        unk_id, unk_score = self.unk_id, self.unk_score
        n = len(text)
        if n == 0:
            return [], base, _INF
        best = [_NEG_INF] * (n + 1)
        second = [_NEG_INF] * (n + 1)
        best[0] = base
        back_start = [0] * (n + 1)
        back_id = [unk_id] * (n + 1)
        for i in range(n):
            current = best[i]
            single = False
            over = overrides if text[i] in firsts else None
            end = i + 1
            while end <= n:
                key = text[i:end]
                if key not in entries:
                    break
                entry = entries[key]
                if over is not None:
                    entry = over.get(key, entry)
                if entry is not None:
                    if end == i + 1:
                        single = True
                    score = current if entry[2] else current + entry[1]
                    top = best[end]
                    if score > top:
                        second[end] = top
                        best[end] = score
                        back_start[end] = i
                        back_id[end] = entry[0]
                    elif score > second[end]:
                        second[end] = score
                end += 1
            if not single:  # a code point no one-character piece covers: <unk>
                score = current + unk_score
                top = best[i + 1]
                if score > top:
                    second[i + 1] = top
                    best[i + 1] = score
                    back_start[i + 1] = i
                    back_id[i + 1] = unk_id
                elif score > second[i + 1]:
                    second[i + 1] = score
        out: list[Segment] = []
        margin = _INF
        pos = n
        while pos > 0:
            gap = best[pos] - second[pos]
            if gap < margin:
                margin = gap
            start = back_start[pos]
            out.append((pos - start, back_id[pos]))
            pos = start
        out.reverse()
        return out, best[n], margin

    def solve(self, word: str) -> WordEntry:
        """``word``'s cache entry, solved from 0 (and cached when short enough)."""
        segments, _, margin = self.pass_over(word, 0.0)
        n = len(word)
        limit = shared_limit(self._limit(margin, n) if margin > 0 else _NEVER)
        ints = self._ints
        entry = (limit, *[ints[i] for _, i in segments])
        if n <= CACHE_WORD_MAX:
            if len(self.cache) >= CACHE_LIMIT:
                self.cache.clear()
            self.cache[word] = entry
        return entry

    def _limit(self, margin: _Num, n: _Num) -> _Num:
        """The largest ``|B|`` a word of ``n`` code points whose decisions have margin
        ``margin`` (> 0) is reused from (the module's bound; floats or arrays)."""
        return margin / (2 * n * _ROUND) - 2 * n * self._top  # type: ignore[operator, return-value]

    def solve_many(self, words: Iterable[str]) -> list[str]:
        """Solve and cache those of ``words`` not cached yet, in one numpy batch
        (:class:`~explorer.engine.unigram.batch.BatchViterbi` adding in double, as llama.cpp
        does) when they are enough characters; returns the words solved.

        The batch's decisions from 0 are this pass's (the same sums, the same order); its
        margin (the smallest gap of any position, over the candidates' additions) is at
        most the smallest gap on the path, so the limit made from it is a safe one."""
        cache = self.cache
        new = [w for w in dict.fromkeys(words) if w not in cache and len(w) <= MAX_WORD]
        if sum(map(len, new)) < BATCH_MIN_CHARS:
            return []
        result = self.batch_viterbi().run(new)
        _, ids = result.lengths_and_ids()
        n = np.fromiter(map(len, new), np.float64, len(new))
        with np.errstate(divide="ignore", invalid="ignore"):
            limits = self._limit(result.margin, n)
        limits[~(result.margin > 0)] = _NEVER
        if len(cache) + len(new) > CACHE_LIMIT:
            cache.clear()
        limit_list = list(map(shared_limit, limits.tolist()))
        cache.update(zip(new, map(tuple.__add__, zip(limit_list), ids), strict=True))
        return new

    def batch_viterbi(self) -> BatchViterbi:
        """The numpy form of the trie, built on first use (llama.cpp's scores)."""
        if self._batch is None:
            merged = {**self.entries, **self.overrides} if self.overrides else self.entries
            self._batch = BatchViterbi(merged, unk_id=self.unk_id, unk_score=self.unk_score,
                                       user_score=_zero, cache_key=_key(merged),
                                       sums=np.float64)
        return self._batch

    def words(self, text: str) -> list[str]:
        """``text`` cut into words (the whole text as one without a pattern)."""
        if self.split is None:
            return [text] if text else []
        return self.split.findall(text)

    def ids_from(self, words: Sequence[str], base: float,
                 scores: list[float] | None = None) -> tuple[list[int], float]:
        """The ids of ``words`` (a text's, in order) as llama.cpp's one pass decides them
        from path score ``base``, and the path score after them. ``scores``: when given,
        each word's starting path score is appended to it (:meth:`pass_arrays` as lists)."""
        ids, after, starts = self.pass_arrays(words, base)
        if scores is not None:
            scores.extend(starts.tolist())
        return ids.tolist(), after

    def pass_arrays(self, words: Sequence[str], base: float
                    ) -> tuple[np.ndarray, float, np.ndarray]:
        """The ids of ``words`` (int64) as llama.cpp's one pass decides them from path
        score ``base``, the path score after them, and each word's starting path score.

        Speculate that every word keeps its cached pieces: the path scores are then one
        sequential double sum of their scores (``np.add.accumulate``, the additions
        llama.cpp makes, in its order), a block of words at a time. Words whose starting
        score is past their limit are re-run from it (:meth:`pass_over`), in order; up to
        the first whose pieces come out different, everything is exact, and the next block
        starts after it. (Per word in Python this was ~40% of nomic-bert-moe's 10 MB
        document encode.)

        New words are solved one by one here (callers with many call :meth:`solve_many`
        first): in the window a child process solves a document's words ahead
        (:meth:`share`), few are new, and the numpy trie would only add to the window's
        peak (measured on a 10 MB document with nomic-bert-moe: 4.2 s and 610 MB without,
        4.4 s and 646 MB with)."""
        cache, solve = self.cache, self.solve
        entries = list(map(cache.get, words))
        if None in entries:
            entries = [solve(word) if entry is None else entry
                       for word, entry in zip(words, entries, strict=True)]
        n = len(entries)
        limits = np.fromiter(map(itemgetter(0), entries), np.float64, n)
        counts = np.fromiter(map(len, entries), np.int64, n) - 1
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        flat = np.fromiter(chain.from_iterable(map(itemgetter(slice(1, None)), entries)),
                           np.int64, int(offsets[-1]))
        piece_scores = self._score_array[flat]
        parts: list[np.ndarray] = []
        starts = np.empty(n, np.float64)
        b, pos, span = base, 0, _SPECULATE_WORDS
        while pos < n:
            end = min(n, pos + span)
            first = int(offsets[pos])
            running = np.empty(int(offsets[end]) - first + 1, np.float64)
            running[0] = b
            running[1:] = piece_scores[first:offsets[end]]
            np.add.accumulate(running, out=running)
            here = running[offsets[pos:end] - first]
            limit = limits[pos:end]
            redo = np.flatnonzero((here != 0.0) & ~((-limit < here) & (here < limit)))
            stop = end - pos  # words of the block that keep their pieces
            new: np.ndarray | None = None
            for k in redo.tolist():
                pieces, after, _ = self.pass_over(words[pos + k], float(here[k]))
                ids = [i for _, i in pieces]
                if tuple(ids) != entries[pos + k][1:]:
                    stop, new, b = k, np.array(ids, np.int64), after
                    break
            starts[pos:pos + stop] = here[:stop]
            parts.append(flat[first:offsets[pos + stop]])
            if new is not None:  # word pos + stop came out different: go on after it
                starts[pos + stop] = here[stop]
                parts.append(new)
                pos += stop + 1
                span = _SPECULATE_MIN
                continue
            b = float(running[-1])
            pos = end
            span = min(_SPECULATE_WORDS, 2 * span)
        ids = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return ids, b, starts

    def ids(self, text: str) -> list[int]:
        """``text``'s ids as llama.cpp's one pass decides them (its new words solved in a
        batch when there are many)."""
        words = self.words(text)
        if len(words) >= _BATCH_MIN_WORDS:
            self.solve_many(words)
        return self.ids_from(words, 0.0)[0]

    def segments(self, text: str) -> list[Segment]:
        """``text``'s ``(length, id)`` pieces as llama.cpp's one pass decides them."""
        ids = self.ids(text)
        return list(zip(self.length_of[ids].tolist(), ids, strict=True))

    def share(self, texts: Sequence[str]) -> LlamaWordsShare:
        """Solve the new words of ``texts`` and return them, for another copy of this
        model (:meth:`take`): a child process solving a document's words ahead."""
        cache, solve = self.cache, self.solve
        words = list(chain.from_iterable(map(self.words, texts)))
        new = {word: cache[word] for word in self.solve_many(words)}
        for word in words:
            if len(word) <= CACHE_WORD_MAX and word not in cache:
                new[word] = solve(word)
        return LlamaWordsShare.of(new)

    def take(self, share: LlamaWordsShare) -> int:
        """Add the words of another copy's :meth:`share`; returns how many. (C-level
        passes: the window takes ~170k words of a 10 MB document this way.)"""
        ends = [0, *accumulate(share.lengths.tolist())]
        words = list(map(share.words.__getitem__, map(slice, ends, ends[1:])))
        if len(self.cache) + len(words) > CACHE_LIMIT:
            self.cache.clear()
        ids = list(map(self._ints.__getitem__, share.ids.tolist()))
        bounds = [0, *accumulate(share.counts.tolist())]
        pieces = map(tuple, map(ids.__getitem__, map(slice, bounds, bounds[1:])))
        # (the child's limits are shared powers of two already: the same objects here)
        values = share.limits.tolist()
        limits = zip(map(_SHARED.get, values, values))
        self.cache.update(zip(words, map(tuple.__add__, limits, pieces), strict=True))
        return len(words)


class LlamaWordsShare:
    """Solved words of a :class:`LlamaWords`, flat (cheap to pickle): the words end to
    end and their lengths, each one's limit and piece count, and the pieces' ids end to
    end."""

    __slots__ = ("counts", "ids", "lengths", "limits", "words")

    def __init__(self, words: str, lengths: np.ndarray, limits: np.ndarray,
                 counts: np.ndarray, ids: np.ndarray) -> None:
        self.words, self.lengths = words, lengths
        self.limits, self.counts, self.ids = limits, counts, ids

    @classmethod
    def of(cls, solved: Mapping[str, WordEntry]) -> LlamaWordsShare:
        """The share of ``solved`` words and their cache entries."""
        entries = list(solved.values())
        return cls(
            "".join(solved),
            np.fromiter(map(len, solved), np.int64, len(solved)),
            np.array([e[0] for e in entries], np.float64),
            np.array([len(e) - 1 for e in entries], np.int64),
            np.array([i for e in entries for i in e[1:]], np.int64),
        )


def _zero(_length: int) -> float:
    """llama.cpp's score of a USER_DEFINED piece, whatever its length."""
    return 0.0


def _key(entries: Mapping[str, Entry | None]) -> bytes:
    """Identifies ``entries`` (texts, ids and scores): the key of their numpy trie in the
    vocabulary cache."""
    digest = hashlib.sha256(b"llama.cpp unigram trie\0")
    digest.update("\0".join(entries).encode("utf-8", "surrogatepass"))
    values = [(-1, 0.0, False) if e is None else e for e in entries.values()]
    digest.update(np.array([v[0] for v in values], np.int64).tobytes())
    digest.update(np.array([0.0 if v[2] else v[1] for v in values], np.float64).tobytes())
    return digest.digest()
