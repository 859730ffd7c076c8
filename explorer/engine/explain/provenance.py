"""How a token was made, from the same data the other views show.

- BPE: the **merge tree** of the token down to its bytes (or initial symbols), each inner node
  with its rank (SentencePiece BPE: its piece score) and the trace step that merged it. It is
  built from :func:`explorer.engine.bpe.trace.trace_merges`, the merge-queue panel's data, so
  the tree and the queue never disagree.
- Unigram: the token's score and the best competing segmentations of its span, from the
  lattice of that span, with the score difference.
- WordPiece: the greedy longest-match steps: at each start, the candidates tried and rejected
  before the one taken.

:func:`locate` finds, for a token of an encoding, the pre-token (model input) it belongs to;
:func:`token_provenance` dispatches on the model type.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from explorer.engine.bpe.trace import MergeStep, trace_merges
from explorer.engine.encoding import Encoding, Token
from explorer.engine.hf.pipeline import PipelineTokenizer
from explorer.engine.sentencepiece.bpe import SentencePieceBPEModel
from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer
from explorer.engine.tokenizer import Tokenizer

MAX_TRACE_UNITS = 300
"""Longer pre-tokens are not traced (every traced step sorts the whole queue)."""
COMPETITORS = 5
"""Competing segmentations shown for a Unigram token."""


@dataclass(frozen=True)
class MergeNode:
    """A node of a BPE merge tree: a leaf (initial symbol) or ``left + right``."""

    symbol: bytes | str
    rank: float | None = None
    """The merge's rank (its priority in the queue; None for a leaf)."""
    step: int | None = None
    """The trace step that applied the merge (None for a leaf)."""
    children: tuple[MergeNode, ...] = ()
    score: float | None = None
    """SentencePiece BPE: the merged piece's score (merges go by highest score)."""
    whole_token: bool = False
    """The pre-token was looked up whole (tiktoken/``ignore_merges``), above its merges."""

    def leaves(self) -> list[MergeNode]:
        """The initial symbols under this node, left to right."""
        if not self.children:
            return [self]
        return [leaf for child in self.children for leaf in child.leaves()]

    def inner(self) -> list[MergeNode]:
        """Inner nodes in post-order (children before parents)."""
        out: list[MergeNode] = []
        for child in self.children:
            out += child.inner()
        if self.children:
            out.append(self)
        return out

    def depth(self) -> int:
        """Height of the tree (a leaf has depth 0)."""
        return 1 + max((c.depth() for c in self.children), default=-1)


def merge_trees(steps: Sequence[MergeStep[Any]], *,
                scores: Callable[[Any], float | None] | None = None) -> list[MergeNode]:
    """One merge tree per final symbol of a merge trace (``steps`` of ``trace_merges``)."""
    if not steps:
        return []
    first, last = steps[0], steps[-1]
    trees: dict[int, MergeNode] = {node: MergeNode(sym)
                                   for node, sym in zip(first.nodes, first.symbols, strict=True)}
    for step in steps:
        m = step.merge
        if m is None:
            continue
        score = scores(m.merged) if scores is not None else None
        trees[m.left] = MergeNode(m.merged, m.rank, step.index,
                                  (trees[m.left], trees.pop(m.right)), score)
    if last.whole_token:
        parts = tuple(trees[n] for n in sorted(trees))
        if len(parts) == 1 and parts[0].symbol == last.symbols[0]:
            return list(parts)
        return [MergeNode(last.symbols[0], None, last.index, parts, whole_token=True)]
    return [trees[n] for n in last.nodes]


# --- locating a token's pre-token ------------------------------------------------------------

@dataclass(frozen=True)
class ModelInput:
    """The model input (pre-token) a token came from."""

    text: str
    """As the model sees it (normalized; byte-level spelling for byte-level BPE)."""
    orig_start: int
    orig_end: int
    original: str
    """``text[orig_start:orig_end]`` of the original text."""
    token_indices: list[int]
    """Indices (in the encoding) of the tokens made from this input, in order."""


def locate(tokenizer: Tokenizer, text: str, enc: Encoding, index: int) -> ModelInput | None:
    """The pre-token of ``enc[index]`` (``enc`` is ``tokenizer.encode(text)``), or None for
    special tokens."""
    token = enc[index]
    if token.special:
        return None
    for pre in tokenizer.stages(text).pre_tokens:
        lo, hi = pre.start, pre.end
        if lo <= token.start < hi or (lo == hi == token.start):
            members = [k for k, t in enumerate(enc)
                       if not t.special and (lo <= t.start < hi or lo == hi == t.start)]
            if index in members:
                return ModelInput(pre.text, lo, hi, text[lo:hi], members)
    return None


# --- provenance ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Segmentation:
    """A segmentation of a Unigram span: pieces and their summed score."""

    pieces: tuple[str, ...]
    score: float


@dataclass(frozen=True)
class WordPieceStep:
    """One greedy step: at ``start`` of the word, ``rejected`` were tried (longest first),
    then ``chosen`` was taken (None: nothing matched, the word is unknown)."""

    start: int
    rejected: tuple[str, ...]
    chosen: str | None


@dataclass
class Provenance:
    """How one token was made."""

    kind: Literal["bpe", "unigram", "wordpiece", "special", "other"]
    token: Token
    summary: str
    tree: MergeNode | None = None
    steps: list[MergeStep[Any]] = field(default_factory=list)
    """BPE: the merge trace of the token's pre-token."""
    model_input: ModelInput | None = None
    competitors: list[Segmentation] = field(default_factory=list)
    """Unigram: the best segmentations of the token's span, best first (the token first)."""
    wordpiece: list[WordPieceStep] = field(default_factory=list)


def token_provenance(tokenizer: Tokenizer, text: str, index: int,
                     enc: Encoding | None = None) -> Provenance:
    """How token ``index`` of ``tokenizer.encode(text)`` was made."""
    enc = tokenizer.encode(text) if enc is None else enc
    token = enc[index]
    if token.special:
        return Provenance("special", token, f"{token.piece!r} is a special token (id "
                          f"{token.id}): matched whole in the text, before everything else.")
    where = locate(tokenizer, text, enc, index)
    kind = tokenizer.info.model_type
    if kind == "bpe" and where is not None:
        return _bpe(tokenizer, token, index, where, enc)
    if kind == "unigram":
        return _unigram(tokenizer, token)
    if kind == "wordpiece" and where is not None and isinstance(tokenizer, PipelineTokenizer):
        return _wordpiece(tokenizer, token, index, where)
    return Provenance("other", token, f"{token.piece!r} (id {token.id}) is a "
                      f"{kind} vocabulary entry.", model_input=where)


def bpe_trace(tokenizer: Tokenizer, where: ModelInput) -> tuple[list[MergeStep[Any]],
                                                                 Callable[[Any], float | None]
                                                                 | None]:
    """The merge trace of a pre-token and, for SentencePiece BPE, the score of a piece."""
    if isinstance(tokenizer, SentencePieceTokenizer) and isinstance(tokenizer.model,
                                                                    SentencePieceBPEModel):
        model = tokenizer.model
        symbols, _frozen = model._initial_symbols(where.text)
        users = model.user_symbols

        def rank_of(a: str, b: str) -> float | None:
            if a in users or b in users:
                return None
            i = model.piece_ids.get(a + b)
            return None if i is None else -model.scores[i]

        def score(piece: str) -> float | None:
            i = model.piece_ids.get(piece)
            return None if i is None else model.scores[i]

        return list(trace_merges(symbols, rank_of)), score
    if not tokenizer.supports_merge_trace():
        return [], None
    return list(tokenizer.trace_merges(where.original)), None  # type: ignore[attr-defined]


def _bpe(tokenizer: Tokenizer, token: Token, index: int, where: ModelInput,
         enc: Encoding) -> Provenance:
    units = len(where.text.encode("utf-8")) if isinstance(where.text, str) else len(where.text)
    if units > MAX_TRACE_UNITS:
        return Provenance("bpe", token, f"The pre-token is longer than {MAX_TRACE_UNITS} "
                          "bytes: too long to trace.", model_input=where)
    steps, score = bpe_trace(tokenizer, where)
    if not steps:
        return Provenance("other", token, f"{token.piece!r}: this BPE tokenizer cannot show "
                          "its merges.", model_input=where)
    trees = merge_trees(steps, scores=score)
    tokens = where.token_indices
    owner = symbol_of_tokens(steps[-1].symbols, [enc[i].piece for i in tokens])
    if owner is None:
        return Provenance("bpe", token, f"{token.piece!r} did not come straight from the "
                          "merges (unknown pieces).", steps=steps, model_input=where)
    k = tokens.index(index)
    tree = trees[owner[k]]
    if is_byte_piece(token.piece):
        return Provenance("bpe", token, f"{token.piece!r} (id {token.id}) is byte fallback: "
                          f"the merges made {_shown(tree.symbol)!r}, which is not in the "
                          "vocabulary, so it is spelled as its UTF-8 bytes, one token each.",
                          tree, steps, where)
    merges = len(tree.inner())
    how = ("looked up whole (the pre-token is itself a token)" if tree.whole_token else
           f"built by {merges} merge{'s' if merges != 1 else ''}" if merges else
           "a single initial symbol (no merge)")
    return Provenance("bpe", token, f"{token.piece!r} (id {token.id}) was {how}.", tree,
                      steps, where)


_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def is_byte_piece(piece: str) -> bool:
    """True for a byte-fallback piece such as ``<0xE2>``."""
    return _BYTE_PIECE.fullmatch(piece) is not None


def _shown(symbol: bytes | str) -> str:
    return symbol.decode("utf-8", "replace") if isinstance(symbol, bytes) else symbol


def symbol_of_tokens(symbols: Sequence[Any], pieces: Sequence[str]) -> list[int] | None:
    """For each token piece of one pre-token, the index of the final merge symbol it came
    from: one token per symbol, or (byte fallback) one ``<0xNN>`` token per UTF-8 byte of a
    symbol that is not in the vocabulary. None when the tokens do not line up."""
    out: list[int] = []
    t = 0
    for k, sym in enumerate(symbols):
        if t < len(pieces) and is_byte_piece(pieces[t]):
            data = sym if isinstance(sym, bytes) else str(sym).encode("utf-8")
            if not is_byte_piece(str(sym)) and all(
                    t + j < len(pieces) and pieces[t + j] == f"<0x{b:02X}>"
                    for j, b in enumerate(data)):
                out += [k] * len(data)
                t += len(data)
                continue
        out.append(k)
        t += 1
    return out if t == len(pieces) else None


def unigram_lattice(tokenizer: Tokenizer, piece_text: str) -> Any:
    """The Unigram lattice over ``piece_text`` (normalized), or None."""
    model = getattr(tokenizer, "model", None)
    build = getattr(model, "lattice", None)
    if build is None:
        return None
    return build(piece_text)


def _unigram(tokenizer: Tokenizer, token: Token) -> Provenance:
    span = token.piece
    lattice = unigram_lattice(tokenizer, span) if span and not token.unknown else None
    score = token.score
    head = f"{token.piece!r} (id {token.id}) has score {score:.3f}." if score is not None \
        else f"{token.piece!r} (id {token.id})."
    if lattice is None:
        return Provenance("unigram", token, head)
    found = [Segmentation(tuple(n.piece for n in path), float(s))
             for path, s in lattice.nbest(COMPETITORS + 1)]
    others = [s for s in found if s.pieces != (token.piece,)]
    summary = head
    if others:
        best = others[0]
        own = score if score is not None else found[0].score
        summary += (f" The best other way to cover {token.piece!r} is "
                    f"{'|'.join(best.pieces)} at {best.score:.3f}, "
                    f"{own - best.score:.3f} worse.")
    else:
        summary += " No other segmentation of its span exists in the vocabulary."
    return Provenance("unigram", token, summary, competitors=found)


def wordpiece_steps(vocab: dict[str, int], prefix: str, max_len: int,
                    word: str) -> list[WordPieceStep]:
    """HF WordPiece's greedy longest-match-first on ``word``, with every rejected candidate."""
    out: list[WordPieceStep] = []
    start, n = 0, len(word)
    while start < n:
        end = min(n, start + max_len)
        rejected: list[str] = []
        chosen = None
        while start < end:
            sub = (prefix if start else "") + word[start:end]
            if sub in vocab:
                chosen = sub
                break
            rejected.append(sub)
            end -= 1
        out.append(WordPieceStep(start, tuple(rejected), chosen))
        if chosen is None:
            break
        start = end
    return out


def _wordpiece(tokenizer: PipelineTokenizer, token: Token, index: int,
               where: ModelInput) -> Provenance:
    model = tokenizer.model
    word = model_input_text(tokenizer, where.original)
    steps = wordpiece_steps(model.vocab, model.prefix, model.max_len, word)  # type: ignore[attr-defined]
    if token.unknown or any(s.chosen is None for s in steps):
        return Provenance("wordpiece", token, f"{word!r} has no WordPiece segmentation: one "
                          "start found no vocabulary entry, so the whole word is "
                          f"{token.piece!r}.", model_input=where, wordpiece=steps)
    k = where.token_indices.index(index)
    step = steps[k] if k < len(steps) else None
    tried = ", ".join(repr(r) for r in step.rejected[:6]) if step else ""
    more = f" (+{len(step.rejected) - 6} more)" if step and len(step.rejected) > 6 else ""
    why = (f"WordPiece takes the longest vocabulary entry from position {step.start}: "
           f"{tried}{more} were not in the vocabulary." if step and step.rejected else
           "WordPiece takes the longest vocabulary entry: the rest of the word is one.")
    return Provenance("wordpiece", token, f"{token.piece!r} (id {token.id}). {why}",
                      model_input=where, wordpiece=steps)


def model_input_text(tokenizer: PipelineTokenizer, original: str) -> str:
    """The first model input of ``original`` (normalized, pre-tokenized like encode)."""
    return next((p for p in tokenizer.model_inputs(original) if p), "")
