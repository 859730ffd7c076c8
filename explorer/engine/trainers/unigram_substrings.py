"""Vectorized substring statistics over all distinct words: seed pieces and lattice edges.

The words are laid end to end in one array of code points; for each length 2..max_len every
valid span (see :mod:`.unigram_seed` for the rules) gets a 64-bit rolling hash. Counting,
right-maximality (a substring always followed by the same character is dropped, like
sentencepiece's suffix-tree nodes) and finding seed occurrences are then sorts and searches
over arrays instead of Python loops over substrings. Hash collisions between two different
strings of the same length are possible in principle (2^-64 per pair); a colliding pair would
count as one substring.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

import numpy as np
from numpy.typing import NDArray

from explorer.engine.trainers.events import Progress
from explorer.engine.trainers.unigram_lattice import EdgeLattice
from explorer.engine.trainers.unigram_seed import RARE, SPACE, script_of

_BASE = np.uint64(0x9E3779B97F4A7C15)
U64 = NDArray[np.uint64]
I64 = NDArray[np.int64]


class WordArray:
    """All distinct words concatenated, with per-position word, bounds, counts and classes."""

    def __init__(self, words: dict[str, int], by_script: bool,
                 line_final: dict[str, int] | None = None, split_digits: bool = False
                 ) -> None:
        self.words = list(words)
        text = "".join(self.words)
        self.text = text
        self.lengths = np.fromiter((len(w) for w in self.words), np.int64, len(self.words))
        self.counts = np.fromiter(words.values(), np.float64, len(self.words))
        self.codes = np.frombuffer(text.encode("utf-32-le"), np.uint32).astype(np.uint64) + 1
        n = len(text)
        self.n = n
        self.word_of = np.repeat(np.arange(len(self.words)), self.lengths)
        starts = np.concatenate(([0], np.cumsum(self.lengths)[:-1]))
        self.word_start = starts[self.word_of]
        self.word_end = (starts + self.lengths)[self.word_of]
        self.count_at = self.counts[self.word_of]
        # What follows a span ending at its word's end, as sentencepiece sees whole lines:
        # code 0 (end of line) and/or ▁ (the next word). Unknown: both.
        if line_final is None:
            final = nonfinal = np.ones(len(self.words), bool)
        else:
            ends = np.fromiter((line_final.get(w, 0) for w in self.words), np.float64,
                               len(self.words))
            final, nonfinal = ends > 0, ends < self.counts
        space_code = ord(SPACE) + 1
        self.end_lo = np.where(final, 0, space_code)[self.word_of]
        self.end_hi = np.where(nonfinal, space_code, 0)[self.word_of]
        space = self.codes == ord(SPACE) + 1
        rare = self.codes == ord(RARE) + 1
        if split_digits:  # digits behave like rare characters: single-character pieces only
            rare = rare | ((self.codes >= ord("0") + 1) & (self.codes <= ord("9") + 1))
        self.cannot_extend = space | rare
        """Characters no span may continue with (``▁`` only starts a piece)."""
        self.rare = rare
        self.cls = self._classes(rare) if by_script and n else np.zeros(n, np.int64)
        # A leading ▁ does not count for the script rule: compare with the next character.
        self.first = np.minimum(np.arange(n) + space, n - 1)

    def _classes(self, rare: NDArray[np.bool_]) -> I64:
        uniq, inv = np.unique(self.codes, return_inverse=True)
        names: dict[str, int] = {}
        table = np.empty(len(uniq), np.int64)
        inherited = -1
        for k, code in enumerate(uniq.tolist()):
            name = script_of(chr(code - 1))
            table[k] = inherited if name == "Inherited" else names.setdefault(name, len(names))
        cls = table[inv.reshape(-1)]
        # A combining mark takes the class of the last other character of its word.
        pos = np.where(cls == inherited, -1, np.arange(self.n))
        last = np.maximum.accumulate(pos)
        ok = last >= self.word_start
        cls = np.where(ok, cls[np.maximum(last, 0)], -2)
        return np.where(rare, -3 - np.arange(self.n), cls)  # rare: never equal to a neighbour

    def spans(self, max_len: int) -> Iterator[tuple[int, I64]]:
        """``(length, starts)`` of the valid spans, length 2..max_len (each extends one of
        the previous length by a character that may continue it)."""
        k = np.flatnonzero(~self.rare)
        for length in range(2, max_len + 1):
            m = k + (length - 1)
            ok = m < self.word_end[k]
            k, m = k[ok], m[ok]
            ok = ~self.cannot_extend[m] & (self.cls[m] == self.cls[self.first[k]])
            k = k[ok]
            yield length, k


def _hashes(codes: U64, length: int, prev: U64) -> U64:
    """Rolling hashes of every window of ``length`` codes (from those of ``length - 1``)."""
    return prev[:-1] * _BASE + codes[length - 1:]


def seeds_and_lattice(
    words: dict[str, int],
    required: dict[str, int],
    *,
    line_final: dict[str, int] | None = None,
    max_len: int,
    by_script: bool,
    seed_size: int,
    split_digits: bool = False,
) -> Generator[Progress, None, tuple[list[tuple[str, float]], EdgeLattice]]:
    """Seed pieces (characters by frequency, then substrings by frequency x length) and the
    lattice of their occurrences in every word (``split_digits``: no digit in a longer
    piece)."""
    wa = WordArray(words, by_script, line_final, split_digits)
    chars = [(ch, float(c)) for ch, c in sorted(required.items(), key=lambda kv: (-kv[1], kv[0]))
             if ch != RARE]
    cand_score: list[NDArray[np.float64]] = []
    cand_hash: list[U64] = []
    cand_text: list[list[str]] = []
    h = wa.codes
    for length, k in wa.spans(max_len):
        h = _hashes(wa.codes, length, h)
        yield Progress("seeding", length, 2 * max_len)
        if not len(k):
            continue
        hv = h[k]
        inner = k + length < wa.word_end[k]
        nxt = wa.codes[np.minimum(k + length, wa.n - 1)].astype(np.int64)
        order = np.argsort(hv, kind="stable")
        hs = hv[order]
        first = np.flatnonzero(np.concatenate(([True], hs[1:] != hs[:-1])))
        freq = np.add.reduceat(wa.count_at[k][order], first)
        lo = np.where(inner, nxt, wa.end_lo[k])[order]
        hi = np.where(inner, nxt, wa.end_hi[k])[order]
        maximal = np.minimum.reduceat(lo, first) != np.maximum.reduceat(hi, first)
        keep = (freq >= 2) & maximal
        starts = k[order][first][keep]
        cand_score.append(freq[keep] * length)
        cand_hash.append(hs[first][keep])
        cand_text.append([wa.text[s:s + length] for s in starts.tolist()])
    scores = np.concatenate(cand_score) if cand_score else np.empty(0)
    hashes = np.concatenate(cand_hash) if cand_hash else np.empty(0, np.uint64)
    texts = [t for group in cand_text for t in group]
    ranked = _rank(scores, texts)
    chosen = ranked[: max(0, seed_size - len(chars))]
    seeds = chars + [(texts[i], float(scores[i])) for i in chosen]
    lattice = yield from _lattice(wa, seeds, hashes[chosen], max_len)
    return seeds, lattice


def _rank(scores: NDArray[np.float64], texts: list[str]) -> list[int]:
    """Candidate indices by higher score, then text (code points), then index.

    numpy's stable sorts release the GIL: ``sorted`` with a key held it ~50 ms on a 1 MB
    corpus, a stall of the window training on another thread. (numpy strings cannot end in
    NUL: texts holding one are sorted by Python.)
    """
    if any("\0" in t for t in texts):
        return sorted(range(len(texts)), key=lambda i: (-scores[i], texts[i]))
    return np.lexsort((np.array(texts, dtype=str), -scores)).tolist()


def _lattice(wa: WordArray, seeds: list[tuple[str, float]], substring_hashes: U64,
             max_len: int) -> Generator[Progress, None, EdgeLattice]:
    """Edges: a single-character edge at every position (``<unk>`` when not a seed), and
    every occurrence of a longer seed (``substring_hashes``: the seeds after the chars)."""
    unk = len(seeds)
    n_chars = unk - len(substring_hashes)
    code_pid = {ord(p) + 1: pid for pid, (p, _) in enumerate(seeds[:n_chars])}
    lengths = np.array([len(p) for p, _ in seeds[n_chars:]], np.int64)
    uniq, inv = np.unique(wa.codes, return_inverse=True)
    single = np.array([code_pid.get(int(c), unk) for c in uniq], np.int64)[inv.reshape(-1)]
    pos = np.arange(wa.n)
    parts_start, parts_len, parts_pid = [pos], [np.ones(wa.n, np.int64)], [single]
    h = wa.codes
    for length, k in wa.spans(max_len):
        h = _hashes(wa.codes, length, h)
        yield Progress("seeding", max_len + length, 2 * max_len)
        mine = np.flatnonzero(lengths == length)
        if not len(mine) or not len(k):
            continue
        seed_hash = substring_hashes[mine]
        seed_pid = mine + n_chars
        order = np.argsort(seed_hash)
        seed_hash, seed_pid = seed_hash[order], seed_pid[order]
        hv = h[k]
        at = np.minimum(np.searchsorted(seed_hash, hv), len(seed_hash) - 1)
        hit = seed_hash[at] == hv
        parts_start.append(k[hit])
        parts_len.append(np.full(int(hit.sum()), length, np.int64))
        parts_pid.append(seed_pid[at[hit]])
    start = np.concatenate(parts_start)
    word = wa.word_of[start]
    local = start - wa.word_start[start]
    return EdgeLattice(wa.lengths, wa.counts, word, local, local + np.concatenate(parts_len),
                       np.concatenate(parts_pid), len(seeds))

