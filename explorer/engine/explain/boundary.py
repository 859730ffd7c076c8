"""Why a token boundary sits where it sits, in plain words built from the engine's data.

:func:`explain_boundary` looks at the boundary between tokens ``index - 1`` and ``index`` of
``tokenizer.encode(text)`` and names the cause:

- ``special``: one side is a special token, split out of the text before anything else;
- ``pre-tokenizer``: the two tokens come from different pre-tokens; for a regex split it
  names the pattern alternative that matched each side;
- ``merge`` (BPE): no merge joins the two sides; when a merge across the boundary was queued,
  which lower-ranked (SentencePiece: higher-scored) merge took one of its symbols first;
- ``byte-fallback``: both sides are bytes of one character missing from the vocabulary;
- ``viterbi`` (Unigram): the best path through the boundary against the best path that
  crosses it, with both scores;
- ``wordpiece``: the longer entries tried from the left token's start and rejected.

A ``normalization`` note is added when normalization changed the text at the boundary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from explorer.engine.bpe.trace import MergeStep, QueueEntry
from explorer.engine.encoding import Encoding
from explorer.engine.explain.pipeline import PipelineTrace, pipeline_trace
from explorer.engine.explain.provenance import (
    ModelInput,
    bpe_trace,
    locate,
    model_input_text,
    symbol_of_tokens,
    unigram_lattice,
    wordpiece_steps,
)
from explorer.engine.hf.pipeline import PipelineTokenizer
from explorer.engine.pretokenizers.byte_level import bytes_to_piece
from explorer.engine.tokenizer import Tokenizer


@dataclass
class BoundaryExplanation:
    """Why tokens ``index - 1`` and ``index`` are separate."""

    index: int
    position: int
    """Code-point offset of the boundary in the original text."""
    cause: str
    """``special``, ``pre-tokenizer``, ``merge``, ``byte-fallback``, ``viterbi``,
    ``wordpiece`` or ``model``."""
    text: str
    """The explanation in plain words."""
    data: dict[str, Any] = field(default_factory=dict)
    """The numbers behind it (ranks, scores, rules), for tests and tooltips."""
    normalization: str = ""
    """A note when normalization changed the text at the boundary (else empty)."""

    def full_text(self) -> str:
        """The explanation with the normalization note."""
        return f"{self.text} {self.normalization}".strip()


def _show(symbol: bytes | str) -> str:
    if isinstance(symbol, bytes):
        try:
            return symbol.decode("utf-8")
        except UnicodeDecodeError:
            return bytes_to_piece(symbol)
    return symbol


def explain_boundary(tokenizer: Tokenizer, text: str, index: int,
                     enc: Encoding | None = None,
                     trace: PipelineTrace | None = None) -> BoundaryExplanation:
    """Why ``enc[index - 1]`` and ``enc[index]`` are separate tokens (``0 < index <
    len(enc)``; ``enc`` defaults to ``tokenizer.encode(text)``)."""
    enc = tokenizer.encode(text) if enc is None else enc
    if not 0 < index < len(enc):
        raise IndexError(f"no boundary before token {index}")
    left, right = enc[index - 1], enc[index]
    position = right.start
    trace = pipeline_trace(tokenizer, text) if trace is None else trace
    result = _cause(tokenizer, text, enc, index, trace)
    result.normalization = _normalization_note(trace, left.start, position, right.end)
    return result


def boundary_index(enc: Encoding, position: int) -> int | None:
    """The index of the token right of a boundary at code-point ``position`` (the previous
    token ends at or before it, this one starts at or after it, and they are the first such
    pair), or None when ``position`` is inside a token or outside the tokens."""
    for i in range(1, len(enc)):
        left, right = enc[i - 1], enc[i]
        if right.start >= position:
            if left.end <= position and right.start < right.end and left.start < left.end:
                return i
            return None
    return None


def explain_boundary_at(tokenizer: Tokenizer, text: str,
                        position: int) -> BoundaryExplanation | None:
    """:func:`explain_boundary` for the boundary at code-point ``position`` of ``text`` (for
    hovering a gap in the editor); None when no boundary sits there."""
    enc = tokenizer.encode(text)
    index = boundary_index(enc, position)
    return None if index is None else explain_boundary(tokenizer, text, index, enc)


def _cause(tokenizer: Tokenizer, text: str, enc: Encoding, index: int,
           trace: PipelineTrace) -> BoundaryExplanation:
    left, right = enc[index - 1], enc[index]
    position = right.start
    for tok in (left, right):
        if tok.special:
            return BoundaryExplanation(index, position, "special",
                                       f"{tok.piece!r} is a special token (id {tok.id}): it "
                                       "is matched whole in the text and split out before "
                                       "normalization, so nothing merges across it.",
                                       {"special": tok.piece})
    where_l = locate(tokenizer, text, enc, index - 1)
    where_r = locate(tokenizer, text, enc, index)
    if where_l is None or where_r is None or where_l.orig_start != where_r.orig_start:
        return _pre_tokenizer(index, position, trace, where_l, where_r)
    kind = tokenizer.info.model_type
    if kind == "bpe":
        return _bpe(tokenizer, enc, index, position, where_r)
    if kind == "unigram":
        return _viterbi(tokenizer, enc, index, position, where_r)
    if kind == "wordpiece" and isinstance(tokenizer, PipelineTokenizer):
        return _wordpiece(tokenizer, enc, index, position, where_r)
    return BoundaryExplanation(index, position, "model",
                               f"The {kind} model split {where_r.text!r} here.")


_PLAIN_RULES = {
    "BertPreTokenizer": "splits at whitespace and around every punctuation character",
    "WhitespaceSplit": "splits at whitespace",
    "Whitespace": "runs of word characters and runs of other non-space characters",
    "Punctuation": "punctuation becomes its own piece",
    "Digits": "digits are split from other characters",
    "CharDelimiterSplit": "splits at its delimiter character",
    "UnicodeScripts": "splits where the Unicode script changes",
}
"""Plain words for the character-class pre-tokenizers (by HF type name)."""


def _rule_at(trace: PipelineTrace, orig: int) -> tuple[str | None, bool, str]:
    for p in trace.pre_tokens:
        if p.orig_start <= orig < p.orig_end:
            return p.rule, p.regex, trace.text[p.orig_start:p.orig_end]
    return None, False, ""


def _pre_tokenizer(index: int, position: int, trace: PipelineTrace,
                   where_l: ModelInput | None, where_r: ModelInput | None
                   ) -> BoundaryExplanation:
    orig_l = where_l.orig_start if where_l else max(0, position - 1)
    orig_r = where_r.orig_start if where_r else position
    rule_l, regex_l, piece_l = _rule_at(trace, orig_l)
    rule_r, regex_r, piece_r = _rule_at(trace, orig_r)
    if regex_r or regex_l:
        words = (f"The pre-tokenizer cut here: {piece_l!r} was matched by the pattern "
                 f"alternative `{rule_l}` and {piece_r!r} by `{rule_r}`; BPE never merges "
                 "across pre-tokens.")
    elif rule_r and "\u2581" in rule_r:
        words = (f"SentencePiece starts a new piece at every \u2581 (a space in the text): "
                 f"{piece_l!r} and {piece_r!r} are separate words.")
    else:
        rule = rule_r or rule_l
        plain = _PLAIN_RULES.get((rule or "").split("(")[0])
        how = f" ({rule}: {plain})" if plain else f" ({rule})" if rule else ""
        gap = trace.text[orig_l:orig_r] if orig_l < orig_r else ""
        where = ""
        if gap and len(piece_l) < len(gap) and gap[len(piece_l):].strip() == "":
            where = " at whitespace"
        elif any(len(x) == 1 and not x.isalnum() and not x.isspace()
                 for x in (piece_l, piece_r)):
            where = " around punctuation"
        words = (f"The pre-tokenizer cut here{where}{how}: {piece_l!r} and {piece_r!r} are "
                 "separate pre-tokens, and the model never joins pre-tokens.")
    return BoundaryExplanation(index, position, "pre-tokenizer", words,
                               {"left_rule": rule_l, "right_rule": rule_r,
                                "left": piece_l, "right": piece_r})


# --- BPE -------------------------------------------------------------------------------------

def _bpe(tokenizer: Tokenizer, enc: Encoding, index: int, position: int,
         where: ModelInput) -> BoundaryExplanation:
    steps, score = bpe_trace(tokenizer, where)
    if not steps:
        return BoundaryExplanation(index, position, "model",
                                   "This BPE tokenizer cannot show its merges.")
    last = steps[-1]
    first = steps[0]
    owner = symbol_of_tokens(last.symbols, [enc[i].piece for i in where.token_indices])
    if owner is None:
        return BoundaryExplanation(index, position, "model",
                                   "The tokens here did not come straight from the merges "
                                   "(unknown pieces).")
    t = where.token_indices.index(index)
    if owner[t] == owner[t - 1]:  # two bytes of one symbol
        sym = _show(last.symbols[owner[t]])
        return BoundaryExplanation(
            index, position, "byte-fallback",
            f"{sym!r} is not in the vocabulary: byte fallback spells it as its "
            f"{len(sym.encode('utf-8'))} UTF-8 bytes, one token each, so there is a boundary "
            "between its bytes.", {"symbol": sym})
    k = owner[t]
    offsets: dict[int, int] = {}
    pos = 0
    for node, sym in zip(first.nodes, first.symbols, strict=True):
        offsets[node] = pos
        pos += len(sym)
    cut = offsets[last.nodes[k]]
    sp = score is not None
    unit = "score" if sp else "rank"

    def prio(rank: float) -> str:
        return f"score {-rank:g}" if sp else f"rank {rank:g}"

    left_sym, right_sym = _show(last.symbols[k - 1]), _show(last.symbols[k])
    crossing = _crossing_entries(steps, offsets, cut)
    data: dict[str, Any] = {"left": left_sym, "right": right_sym, "unit": unit}
    if not crossing:
        words = (f"No merge joins {left_sym!r} and {right_sym!r}: the pair has no {unit} in "
                 "the vocabulary, and no queued merge spans this point.")
        return BoundaryExplanation(index, position, "merge", words, data)
    entry, blocker, blocker_step = crossing
    a_sym = _left_symbol_of(steps, entry)
    a, b = _show(a_sym), _show(entry.merged[len(a_sym):])
    data.update({"blocked": _show(entry.merged), "blocked_rank": entry.rank})
    if blocker is None:
        words = (f"The merge {a!r}+{b!r} ({prio(entry.rank)}) was queued across this point "
                 "but never applied.")
    else:
        data.update({"winner": _show(blocker.merged), "winner_rank": blocker.rank,
                     "winner_step": blocker_step})
        words = (f"The merge {a!r}+{b!r} ({prio(entry.rank)}) never happened because "
                 f"{_show(blocker.left_symbol)!r}+{_show(blocker.right_symbol)!r} "
                 f"({prio(blocker.rank)}) merged first (step {blocker_step}), and no merge "
                 f"joins {left_sym!r} and {right_sym!r}.")
    return BoundaryExplanation(index, position, "merge", words, data)


def _crossing_entries(steps: list[MergeStep[Any]], offsets: dict[int, int], cut: int
                      ) -> tuple[QueueEntry[Any], Any, int] | None:
    """The best-ranked queued merge spanning ``cut`` and the applied merge that made it
    stale (with its step), or None when no queued merge spans ``cut``."""
    seen: dict[tuple[int, int, Any], QueueEntry[Any]] = {}
    for step in steps:
        for e in step.queue:
            seen.setdefault((e.left, e.right, e.merged), e)
        if step.popped is not None:
            seen.setdefault((step.popped.left, step.popped.right, step.popped.merged),
                            step.popped)
    crossing = [e for e in seen.values()
                if offsets[e.left] < cut < offsets[e.left] + len(e.merged)]
    if not crossing:
        return None
    entry = min(crossing, key=lambda e: (e.rank, e.left))
    pushed = next(i for i, s in enumerate(steps)
                  if any((q.left, q.right, q.merged) == (entry.left, entry.right, entry.merged)
                         for q in s.queue) or s.popped == entry)
    for step in steps[pushed:]:
        m = step.merge
        if m is None:
            continue
        if m.right == entry.left or m.left == entry.right:  # a side merged elsewhere
            return entry, m, step.index
    return entry, None, -1


def _left_symbol_of(steps: list[MergeStep[Any]], entry: QueueEntry[Any]) -> Any:
    """The left symbol of a queued merge when it was queued (its right part is the rest)."""
    key = (entry.left, entry.right, entry.merged)
    for step in steps:
        queued = any((q.left, q.right, q.merged) == key for q in step.queue)
        if queued and entry.left in step.nodes:
            sym = step.symbols[step.nodes.index(entry.left)]
            if entry.merged[:len(sym)] == sym:
                return sym
    return entry.merged[:1]


# --- Unigram ---------------------------------------------------------------------------------

def _viterbi(tokenizer: Tokenizer, enc: Encoding, index: int, position: int,
             where: ModelInput) -> BoundaryExplanation:
    members = where.token_indices
    pieces = [enc[i].piece for i in members]
    word = "".join(pieces)
    lattice = unigram_lattice(tokenizer, word)
    if lattice is None or any(enc[i].unknown for i in members):
        return BoundaryExplanation(index, position, "viterbi",
                                   "The Unigram model's best segmentation puts a boundary "
                                   "here (the word has unknown pieces).")
    k = members.index(index)
    cut = sum(len(p) for p in pieces[:k])
    best, _path = _best_path(lattice, None)
    cross, cross_path = _best_path(lattice, cut)
    here = "|".join(pieces)
    data: dict[str, Any] = {"path": pieces, "score": best, "cut": cut}
    if cross_path is None:
        words = (f"The Viterbi path {here} scores {best:.2f}; no vocabulary piece spans this "
                 "point, so every segmentation has a boundary here.")
        return BoundaryExplanation(index, position, "viterbi", words, data)
    other = "|".join(n.piece for n in cross_path)
    data.update({"rival": [n.piece for n in cross_path], "rival_score": cross})
    words = (f"The Viterbi path through {here} scores {best:.2f}, better than {other} at "
             f"{cross:.2f} (the best segmentation without this boundary, "
             f"{best - cross:.2f} worse).")
    return BoundaryExplanation(index, position, "viterbi", words, data)


def _best_path(lattice: Any, crossing: int | None) -> tuple[float, list[Any] | None]:
    """Best path score over the lattice; with ``crossing``, the best path with a piece that
    spans that position (no boundary there)."""
    n = lattice.size
    pre = [-math.inf] * (n + 1)
    back: list[Any] = [None] * (n + 1)
    pre[0] = 0.0
    for pos in range(n):
        if pre[pos] == -math.inf:
            continue
        for node in lattice.begin_nodes(pos):
            if node.id < 0:
                continue
            end = node.pos + node.length
            if crossing is not None and end == crossing:
                continue  # a boundary exactly at the position
            s = pre[pos] + node.score
            if s > pre[end]:
                pre[end], back[end] = s, node
    if pre[n] == -math.inf:
        return -math.inf, None
    path: list[Any] = []
    pos = n
    while pos > 0:
        node = back[pos]
        path.append(node)
        pos = node.pos
    path.reverse()
    return pre[n], path


# --- WordPiece -------------------------------------------------------------------------------

def _wordpiece(tokenizer: PipelineTokenizer, enc: Encoding, index: int, position: int,
               where: ModelInput) -> BoundaryExplanation:
    model = tokenizer.model
    word = model_input_text(tokenizer, where.original)
    steps = wordpiece_steps(model.vocab, model.prefix, model.max_len, word)  # type: ignore[attr-defined]
    k = where.token_indices.index(index)
    step = steps[k - 1] if 0 < k <= len(steps) else None
    if step is None or step.chosen is None:
        return BoundaryExplanation(index, position, "wordpiece",
                                   "WordPiece's greedy longest match ends a piece here.")
    tried = ", ".join(repr(r) for r in step.rejected[:5])
    more = f" and {len(step.rejected) - 5} shorter ones" if len(step.rejected) > 5 else ""
    if step.rejected:
        words = (f"WordPiece takes the longest vocabulary entry from the left: from position "
                 f"{step.start} it tried {tried}{more} (not in the vocabulary) before "
                 f"{step.chosen!r}, so the next piece starts here.")
    else:
        words = (f"WordPiece takes the longest vocabulary entry from the left: {step.chosen!r} "
                 "reaches the end of what the vocabulary holds, so the next piece starts here.")
    return BoundaryExplanation(index, position, "wordpiece", words,
                               {"rejected": list(step.rejected), "chosen": step.chosen})


# --- normalization ---------------------------------------------------------------------------

def _normalization_note(trace: PipelineTrace, lo: int, position: int, hi: int) -> str:
    near = [c for c in trace.changes if c.orig_start <= position <= c.orig_end
            and lo <= c.orig_end and c.orig_start <= hi]
    if not near:
        return ""
    parts = []
    for c in near[:3]:
        if not c.after:
            parts.append(f"removed {c.before!r}")
        else:
            parts.append(f"turned {c.before!r} into {c.after!r}")
    return "Normalization " + ", ".join(parts) + " here before the model saw the text."
