"""All word lattices of a Unigram training run as flat numpy edge arrays.

Every distinct word gets the nodes ``base[k] .. base[k] + len(word)``; an edge is a piece
occurrence ``(word, start, end, piece)``. Forward-backward, Viterbi and backtracking run over
all words at once, one end (or start) position at a time, so the Python-level loop is as long
as the longest word, not as long as the corpus. Scores are natural-log probabilities.

Pieces are identified by their index in the seed list; dead pieces are dropped from the arrays
(:meth:`EdgeLattice.keep`), except single characters, which fall back to the ``<unk>`` slot
(index ``num_pieces``) like sentencepiece's ``PopulateNodes`` does for uncovered characters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(slots=True)
class _Groups:
    """Edges sorted by one position (end or start), grouped by the node they reach."""

    order: IntArray
    """Edge indices in processing order."""
    bounds: list[tuple[int, int]]
    """Per position: slice of ``order``."""
    starts: list[IntArray]
    """Per position: group starts inside the slice (for ``reduceat``)."""
    targets: list[IntArray]
    """Per position: node updated by each group."""
    sizes: list[IntArray]
    """Per position: number of edges in each group."""


class EdgeLattice:
    """The lattices of all words, with vectorized inference."""

    def __init__(
        self,
        lengths: IntArray,
        counts: FloatArray,
        word: IntArray,
        start: IntArray,
        end: IntArray,
        piece: IntArray,
        num_pieces: int,
    ) -> None:
        self.lengths = lengths
        self.counts = counts
        self.base = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
        self.num_nodes = int((lengths + 1).sum())
        self.num_pieces = num_pieces
        self.unk = num_pieces
        self.word, self.start, self.end, self.piece = word, start, end, piece
        self._index()

    def _index(self, fwd_order: IntArray | None = None,
               bwd_order: IntArray | None = None) -> None:
        self.src = self.base[self.word] + self.start
        self.dst = self.base[self.word] + self.end
        top = int(self.lengths.max()) if len(self.lengths) else 0
        if fwd_order is None:
            fwd_order = np.lexsort((self.dst, self.end))
        if bwd_order is None:
            bwd_order = np.lexsort((self.src, self.start))
        self.fwd = self._group(fwd_order, self.end, self.dst, range(1, top + 1))
        self.bwd = self._group(bwd_order, self.start, self.src, range(top - 1, -1, -1))

    @staticmethod
    def _group(order: IntArray, pos: IntArray, node: IntArray, positions: range) -> _Groups:
        """Per position, the edges at it (``order`` sorts them by position then node)."""
        spos = pos[order]
        snode = node[order]
        new = np.ones(len(order), bool)
        new[1:] = (spos[1:] != spos[:-1]) | (snode[1:] != snode[:-1])
        gfirst = np.flatnonzero(new)
        top = max(positions.start, positions.stop, 0) + 2
        edge_at = np.searchsorted(spos, np.arange(top)).tolist()
        group_at = np.searchsorted(spos[gfirst], np.arange(top)).tolist()
        gsize = np.diff(np.append(gfirst, len(order)))
        bounds: list[tuple[int, int]] = []
        starts: list[IntArray] = []
        targets: list[IntArray] = []
        sizes: list[IntArray] = []
        for p in positions:
            lo, hi = edge_at[p], edge_at[p + 1]
            g0, g1 = group_at[p], group_at[p + 1]
            g = gfirst[g0:g1]
            bounds.append((lo, hi))
            starts.append(g - lo)
            targets.append(snode[g])
            sizes.append(gsize[g0:g1])
        return _Groups(order, bounds, starts, targets, sizes)

    def keep(self, alive: NDArray[np.bool_]) -> None:
        """Drop edges of dead pieces; dead single characters become ``<unk>`` edges."""
        live = np.append(alive, True)  # the unk slot stays
        single = (self.end - self.start) == 1
        keep = live[self.piece] | single
        self.piece = np.where(live[self.piece], self.piece, self.unk)
        self.word, self.start, self.end, self.piece = (
            self.word[keep], self.start[keep], self.end[keep], self.piece[keep])
        # Dropping edges keeps the sort orders: filter them instead of sorting again.
        renumber = np.cumsum(keep) - 1
        fwd = self.fwd.order[keep[self.fwd.order]]
        bwd = self.bwd.order[keep[self.bwd.order]]
        self._index(renumber[fwd], renumber[bwd])

    def _sweep(self, groups: _Groups, val: FloatArray, score: FloatArray, frm: IntArray,
               *, viterbi: bool = False) -> IntArray | None:
        """One pass over positions updating ``val`` in place: log-sum-exp over the incoming
        edges, or (``viterbi``) their max, then returning the best edge into each node (the
        first in group order, on ties)."""
        order = groups.order
        frm_s = frm[order]  # edges in processing order: slices below, no gathers
        score_s = score[order]
        back = np.full(self.num_nodes, -1, np.int64) if viterbi else None
        with np.errstate(invalid="ignore", divide="ignore"):
            for (lo, hi), first, tgt, sizes in zip(groups.bounds, groups.starts,
                                                   groups.targets, groups.sizes, strict=True):
                if lo == hi:
                    continue
                v = val[frm_s[lo:hi]] + score_s[lo:hi]
                m = np.maximum.reduceat(v, first)
                if back is None:
                    total = np.add.reduceat(np.exp(v - np.repeat(m, sizes)), first)
                    val[tgt] = m + np.log(total)
                else:
                    val[tgt] = m
                    hit = v == np.repeat(m, sizes)
                    cand = np.where(hit, np.arange(hi - lo), hi - lo)
                    back[tgt] = order[lo + np.minimum.reduceat(cand, first)]
        return back

    def forward_backward(self, logp: FloatArray) -> tuple[FloatArray, float]:
        """Expected piece counts (weighted by word counts) and the mean log-likelihood."""
        score = logp[self.piece]
        alpha = np.full(self.num_nodes, -np.inf)
        alpha[self.base] = 0.0
        self._sweep(self.fwd, alpha, score, self.src)
        beta = np.full(self.num_nodes, -np.inf)
        beta[self.base + self.lengths] = 0.0
        self._sweep(self.bwd, beta, score, self.dst)
        log_z = alpha[self.base + self.lengths]
        post = np.exp(alpha[self.src] + score + beta[self.dst] - log_z[self.word])
        post *= self.counts[self.word]
        expected = np.bincount(self.piece, weights=post, minlength=self.num_pieces + 1)
        loglik = float((log_z * self.counts).sum() / self.counts.sum())
        return expected[: self.num_pieces], loglik

    def viterbi_counts(self, logp: FloatArray) -> tuple[FloatArray, int]:
        """Per piece: occurrences in the Viterbi segmentation of the corpus; total tokens."""
        score = logp[self.piece]
        best = np.full(self.num_nodes, -np.inf)
        best[self.base] = 0.0
        back = self._sweep(self.fwd, best, score, self.src, viterbi=True)
        assert back is not None
        freq = np.zeros(self.num_pieces + 1)
        cur = self.base + self.lengths
        words = np.arange(len(self.lengths))
        active = self.lengths > 0
        cur, words = cur[active], words[active]
        tokens = 0
        while len(cur):
            e = back[cur]
            freq += np.bincount(self.piece[e], weights=self.counts[words],
                                minlength=self.num_pieces + 1)
            tokens += int(self.counts[words].sum())
            cur = self.src[e]
            more = cur != self.base[words]
            cur, words = cur[more], words[more]
        return freq[: self.num_pieces], tokens


def digamma(x: FloatArray) -> FloatArray:
    """sentencepiece's digamma approximation (recurrence to x >= 7, then the series)."""
    x = x.astype(np.float64).copy()
    result = np.zeros_like(x)
    small = x < 7
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 7
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (np.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4
               + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4)
    return result
