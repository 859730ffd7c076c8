"""The Unigram lattice, with sentencepiece's names and semantics (``unigram_model.cc``).

A :class:`Lattice` over a normalized sentence holds one :class:`Node` per (position, piece)
candidate. ``begin_nodes(pos)`` / ``end_nodes(pos)`` list the nodes starting / ending at a
code-point position; BOS ends at 0 and EOS begins at ``size``.

- :meth:`Lattice.viterbi` and :meth:`Lattice.nbest` sum scores in **float32** exactly like
  sentencepiece (``backtrace_score`` and the A* ``fx``/``gx`` are rounded to float32 at every
  step), so the best path and n-best scores are bit-identical.
- :meth:`Lattice.forward`, :meth:`Lattice.backward`, :meth:`Lattice.marginals`,
  :meth:`Lattice.entropy` and :meth:`Lattice.sample` run in float64 (probabilities, not ids:
  more precision only helps); ``inv_theta`` (sentencepiece's sampling ``alpha``) scales every
  score in all of them.

Positions are code points of the normalized text; ``norm_to_orig`` (when given) maps them to
the original text with :meth:`Lattice.orig_span`. The n-best agenda replicates libstdc++'s
``std::priority_queue`` so paths with equal scores come out in sentencepiece's order.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from explorer.engine.sentencepiece.pieces import f32
from explorer.engine.unigram.std_heap import StdMaxHeap

# sentencepiece 0.2.3's n-best limits: shrink the A* agenda at _MAX_AGENDA (or after
# _MAX_HYPOTHESES new hypotheses) down to min(_MIN_AGENDA, 10 * nbest), at most _MAX_SHRINKS
# times, and fall back to the Viterbi path past _MAX_ALLOCATED hypotheses. The hypothesis
# count after a shrink approximates its allocator size (kept items, not their ancestors).
_MAX_AGENDA = 10000
_MIN_AGENDA = 512
_MAX_HYPOTHESES = 100000
_MAX_ALLOCATED = 500000
_MAX_SHRINKS = 10


@dataclass(slots=True, eq=False)
class Node:
    """One lattice node: ``piece`` of ``length`` code points at ``pos`` with ``id``/``score``."""

    piece: str
    pos: int
    length: int
    id: int
    score: float
    node_id: int
    backtrace_score: float = 0.0
    prev: Node | None = None

    @property
    def start(self) -> int:
        """Alias of ``pos`` (normalized code-point offset)."""
        return self.pos

    @property
    def end(self) -> int:
        """``pos + length``."""
        return self.pos + self.length


Path = list[Node]


@dataclass(slots=True)
class Lattice:
    """A lattice over ``sentence``. Build with :meth:`UnigramModel.lattice`, or by hand."""

    sentence: str
    norm_to_orig: list[int] | None = None
    nodes: list[Node] = field(default_factory=list)
    _begin: list[list[Node]] = field(default_factory=list)
    _end: list[list[Node]] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.sentence)
        self._begin = [[] for _ in range(n + 1)]
        self._end = [[] for _ in range(n + 1)]
        bos = self._new("", 0, 0, -1, 0.0)
        eos = self._new("", n, 0, -1, 0.0)
        self._end[0].append(bos)
        self._begin[n].append(eos)

    def _new(self, piece: str, pos: int, length: int, id_: int, score: float) -> Node:
        node = Node(piece, pos, length, id_, score, len(self.nodes))
        self.nodes.append(node)
        return node

    @property
    def size(self) -> int:
        """Length of the sentence in code points."""
        return len(self.sentence)

    @property
    def bos_node(self) -> Node:
        """The begin-of-sentence node (ends at 0)."""
        return self.nodes[0]

    @property
    def eos_node(self) -> Node:
        """The end-of-sentence node (begins at ``size``)."""
        return self.nodes[1]

    def begin_nodes(self, pos: int) -> list[Node]:
        """Nodes starting at ``pos``."""
        return self._begin[pos]

    def end_nodes(self, pos: int) -> list[Node]:
        """Nodes ending at ``pos``."""
        return self._end[pos]

    def insert(self, pos: int, length: int, id_: int, score: float) -> Node:
        """Add a node for ``sentence[pos:pos+length]`` with vocabulary ``id_`` and ``score``."""
        node = self._new(self.sentence[pos : pos + length], pos, length, id_, score)
        self._begin[pos].append(node)
        self._end[pos + length].append(node)
        return node

    def orig_span(self, node: Node) -> tuple[int, int]:
        """The node's span in the original text (normalized span if no alignment was given)."""
        if self.norm_to_orig is None:
            return node.pos, node.end
        return self.norm_to_orig[node.pos], self.norm_to_orig[node.end]

    # -- best paths ---------------------------------------------------------------------------

    def viterbi(self) -> tuple[Path, float]:
        """The best path (without BOS/EOS) and its float32 score; fills ``backtrace_score``."""
        if self.size == 0:
            return [], 0.0
        for pos in range(self.size + 1):
            lefts = self._end[pos]
            for rnode in self._begin[pos]:
                best: Node | None = None
                best_score = 0.0
                for lnode in lefts:
                    score = f32(lnode.backtrace_score + rnode.score)
                    if best is None or score > best_score:
                        best, best_score = lnode, score
                rnode.prev = best
                rnode.backtrace_score = best_score
        path: Path = []
        node = self.eos_node.prev
        while node is not None and node.prev is not None:
            path.append(node)
            node = node.prev
        path.reverse()
        return path, self.eos_node.backtrace_score

    def nbest(self, k: int) -> list[tuple[Path, float]]:
        """Up to ``k`` best paths, best first, with float32 scores (A* from EOS, as spm).

        The agenda is a replica of libstdc++'s ``std::priority_queue`` so that paths with
        equal scores come out in sentencepiece's order too.
        """
        if k < 1:
            return []
        if k == 1:
            return [self.viterbi()]
        self.viterbi()  # backtrace_score is the exact A* heuristic h(x)
        results: list[tuple[Path, float]] = []
        # A hypothesis is [fx, node, next hypothesis, gx].
        agenda = StdMaxHeap()
        agenda.push((self.eos_node.backtrace_score, self.eos_node, None, 0.0))
        bos = self.bos_node
        min_agenda = min(_MIN_AGENDA, k * 10)
        total = 1  # hypotheses created, EOS included
        since_shrink = 1  # stands in for sentencepiece's allocator size
        max_since_shrink = _MAX_HYPOTHESES
        shrinks = 0
        while agenda:
            top = agenda.pop()
            fx, node, _next, gx = top
            if node is bos:
                path: Path = []
                hyp = top[2]
                while hyp is not None and hyp[2] is not None:
                    path.append(hyp[1])
                    hyp = hyp[2]
                results.append((path, fx))
                if len(results) == k:
                    break
                continue
            lefts = self._end[node.pos]
            for lnode in lefts:
                agenda.push((f32(lnode.backtrace_score + gx), lnode, top, f32(lnode.score + gx)))
            total += len(lefts)
            since_shrink += len(lefts)
            if total >= _MAX_ALLOCATED:  # sentencepiece gives up and returns the best path
                return [self.viterbi()]
            if len(agenda) >= _MAX_AGENDA or (
                len(agenda) > min_agenda and since_shrink >= max_since_shrink
            ):
                if shrinks >= _MAX_SHRINKS:
                    return [self.viterbi()]
                shrinks += 1
                kept = StdMaxHeap()
                for _ in range(min(len(agenda), min_agenda)):
                    kept.push(agenda.pop())
                agenda = kept
                since_shrink = len(kept)
                max_since_shrink = since_shrink + _MAX_HYPOTHESES
        return results

    # -- probabilities ------------------------------------------------------------------------

    def forward(self, inv_theta: float = 1.0) -> list[float]:
        """``alpha[node_id]``: log-sum of path scores from BOS up to (excluding) the node."""
        alpha = [0.0] * len(self.nodes)
        for pos in range(self.size + 1):
            lefts = self._end[pos]
            if not lefts:
                continue
            terms = [inv_theta * lnode.score + alpha[lnode.node_id] for lnode in lefts]
            total = _logsumexp(terms)
            for rnode in self._begin[pos]:
                alpha[rnode.node_id] = total
        return alpha

    def backward(self, inv_theta: float = 1.0) -> list[float]:
        """``beta[node_id]``: log-sum of path scores from after the node to EOS."""
        beta = [0.0] * len(self.nodes)
        for pos in range(self.size, -1, -1):
            rights = self._begin[pos]
            if not rights:
                continue
            terms = [inv_theta * rnode.score + beta[rnode.node_id] for rnode in rights]
            total = _logsumexp(terms)
            for lnode in self._end[pos]:
                beta[lnode.node_id] = total
        return beta

    def log_partition(self, inv_theta: float = 1.0) -> float:
        """``log Z``: the log-sum of the (scaled) scores of every path."""
        return self.forward(inv_theta)[self.eos_node.node_id]

    def marginals(self, inv_theta: float = 1.0) -> list[float]:
        """Marginal probability of every node (by ``node_id``; BOS and EOS are 1)."""
        alpha, beta = self.forward(inv_theta), self.backward(inv_theta)
        z = alpha[self.eos_node.node_id]
        return [
            math.exp(alpha[n.node_id] + inv_theta * n.score + beta[n.node_id] - z)
            for n in self.nodes
        ]

    def path_probability(self, path: Path, inv_theta: float = 1.0) -> float:
        """Probability of ``path`` under the lattice distribution."""
        return math.exp(inv_theta * sum(n.score for n in path) - self.log_partition(inv_theta))

    def entropy(self, inv_theta: float = 1.0) -> float:
        """Entropy (nats) of the path distribution, sentencepiece's ``CalculateEntropy``."""
        alpha = self.forward(inv_theta)
        h = [0.0] * len(self.nodes)
        for pos in range(self.size + 1):
            for rnode in self._begin[pos]:
                acc = 0.0
                for lnode in self._end[pos]:
                    log_p = inv_theta * lnode.score + alpha[lnode.node_id] - alpha[rnode.node_id]
                    acc += math.exp(log_p) * (h[lnode.node_id] + log_p)
                h[rnode.node_id] = acc
        return -h[self.eos_node.node_id]

    def sample(self, inv_theta: float = 1.0, rng: random.Random | None = None) -> Path:
        """One path drawn from ``P(path) ∝ exp(inv_theta * score)`` (forward-filter, back-sample).

        ``rng`` makes it reproducible (``random.Random(seed)``); default: a fresh generator.
        """
        if self.size == 0:
            return []
        rng = rng or random.Random()
        alpha = self.forward(inv_theta)
        path: Path = []
        node = self.eos_node
        z = alpha[node.node_id]
        while True:
            lefts = self._end[node.pos]
            weights = [math.exp(alpha[n.node_id] + inv_theta * n.score - z) for n in lefts]
            node = rng.choices(lefts, weights=weights)[0]
            if node is self.bos_node:
                break
            z = alpha[node.node_id]
            path.append(node)
        path.reverse()
        return path


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))
