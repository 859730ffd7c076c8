"""Every stage of tokenizing one text, for the pipeline view and ``tokenizer-explorer pipeline``.

:func:`pipeline_trace` gives, for any loaded tokenizer:

- its component list, named (normalizer, pre-tokenizer, model, post-processor, decoder);
- the **normalized** text and, per normalized character, the original span it came from,
  plus the **changes** (runs of original text that became something else: NFKC, lowercasing,
  accent stripping, the SentencePiece charsmap, ``▁`` for spaces, removed characters);
- the **pre-tokens** as spans of the normalized text, each with the rule that cut it (for a
  regex split, the pattern alternative that matched);
- the model **tokens** (the default encode, original-text offsets), the **post-processor**
  additions (BOS/EOS/CLS/SEP with their ids) where the format has one;
- the **decoded** text, and where it differs from the text, what was lost or changed.

For tokenizer.json, ``normalized`` is exactly HF ``normalizer.normalize_str(text)`` and
``pre_tokens`` exactly ``pre_tokenizer.pre_tokenize_str(normalized)``; for SentencePiece
``normalized`` is exactly sentencepiece's ``normalize(text)`` (``▁`` included).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from explorer.engine.bpe.specials import resolve, split_specials
from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
from explorer.engine.encoding import Encoding
from explorer.engine.errors import TokenizerError
from explorer.engine.explain.alternatives import finder
from explorer.engine.hf.normalized import Aligned
from explorer.engine.hf.onig import compile_onig
from explorer.engine.hf.pipeline import PipelineTokenizer
from explorer.engine.hf.pre_tokenizers import (
    GPT2_PATTERN,
    ByteLevelPre,
    PreTokenizer,
    SequencePre,
    SplitPre,
)
from explorer.engine.pretokenizers.byte_level import bytes_to_piece
from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer
from explorer.engine.tokenizer import Tokenizer

MAX_DIFF_CHARS = 20_000
"""Longer texts are compared with their decoding line by line (difflib is quadratic)."""


@dataclass(frozen=True, slots=True)
class Component:
    """One named component of the tokenizer's pipeline."""

    kind: str
    """``normalizer``, ``pre-tokenizer``, ``model``, ``post-processor``, ``decoder``, ..."""
    description: str


@dataclass(frozen=True, slots=True)
class Change:
    """Original characters ``text[orig_start:orig_end]`` became ``normalized[norm_start:
    norm_end]`` (either side may be empty)."""

    orig_start: int
    orig_end: int
    norm_start: int
    norm_end: int
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class PreTokenRow:
    """A pre-token: a span of the normalized text and the rule that cut it."""

    piece: str
    """As the pre-tokenizer outputs it (byte-level spelling for byte-level pre-tokenizers)."""
    start: int
    """Code-point span of the normalized text."""
    end: int
    orig_start: int
    """Code-point span of the original text."""
    orig_end: int
    rule: str | None
    """The regex alternative that matched (its source), or the step that cut it."""
    regex: bool = False
    """True when ``rule`` is a pattern alternative."""


@dataclass(frozen=True, slots=True)
class Addition:
    """A token the post-processor adds: position in the processed sequence, id, piece."""

    index: int
    id: int
    piece: str


@dataclass(frozen=True, slots=True)
class Loss:
    """``text[orig_start:orig_end]`` decodes as ``decoded`` (lost when that is empty)."""

    orig_start: int
    orig_end: int
    original: str
    decoded: str


@dataclass
class PipelineTrace:
    """Every stage of tokenizing ``text``."""

    text: str
    format: str
    components: list[Component]
    normalized: str
    norm_starts: list[int]
    """Per normalized character: the start of the original span it came from."""
    norm_ends: list[int]
    """Per normalized character: the end of the original span it came from."""
    changes: list[Change]
    pre_tokens: list[PreTokenRow]
    encoding: Encoding
    decoded: str
    losses: list[Loss]
    post_ids: list[int] | None = None
    """Ids with the post-processor run (None: the format has none to run)."""
    additions: list[Addition] = field(default_factory=list)
    post_note: str = ""
    """Why there are no additions (no post-processor, not implemented, ...)."""

    def orig_span(self, start: int, end: int) -> tuple[int, int]:
        """Original span of normalized characters ``[start, end)``."""
        if start >= end:
            p = self.norm_starts[start] if start < len(self.norm_starts) else len(self.text)
            return p, p
        return self.norm_starts[start], max(self.norm_ends[start:end])

    def to_json(self) -> dict[str, Any]:
        """The JSON object ``tokenizer-explorer pipeline --output json`` prints."""
        enc = self.encoding
        return {
            "text": self.text,
            "format": self.format,
            "components": [[c.kind, c.description] for c in self.components],
            "normalized": self.normalized,
            "alignment": [[s, e] for s, e in zip(self.norm_starts, self.norm_ends, strict=True)],
            "changes": [[c.orig_start, c.orig_end, c.before, c.after] for c in self.changes],
            "pre_tokens": [[p.piece, [p.start, p.end]] for p in self.pre_tokens],
            "pre_token_rules": [p.rule for p in self.pre_tokens],
            "tokens": enc.pieces,
            "ids": enc.ids,
            "offsets": [list(o) for o in enc.offsets],
            "post_processor": {"ids": self.post_ids,
                               "added": [[a.index, a.id, a.piece] for a in self.additions],
                               "note": self.post_note},
            "decoded": self.decoded,
            "lost": [[x.orig_start, x.orig_end, x.original, x.decoded] for x in self.losses],
        }


def pipeline_trace(tokenizer: Tokenizer, text: str) -> PipelineTrace:
    """Every stage of tokenizing ``text`` with ``tokenizer`` (see the module docstring)."""
    if isinstance(tokenizer, PipelineTokenizer):
        trace = _hf_trace(tokenizer, text)
    elif isinstance(tokenizer, SentencePieceTokenizer):
        trace = _sentencepiece_trace(tokenizer, text)
    elif isinstance(tokenizer, ByteLevelBPETokenizer):
        trace = _tiktoken_trace(tokenizer, text)
    else:
        trace = _generic_trace(tokenizer, text)
    trace.changes = changes(text, trace.normalized, trace.norm_starts, trace.norm_ends)
    trace.losses = losses(text, trace.decoded)
    return trace


# --- components ----------------------------------------------------------------------------

def components(tokenizer: Tokenizer) -> list[Component]:
    """The tokenizer's pipeline components, named, in the order they run."""
    info = tokenizer.info
    extra = dict(info.extra)
    out = [Component("normalizer", info.normalizer),
           Component("pre-tokenizer", info.pre_tokenizer)]
    if "gguf pre" in extra:
        out.append(Component("tokenizer.ggml.pre", extra["gguf pre"]))
    model = info.model_type
    if isinstance(tokenizer, SentencePieceTokenizer):
        for key in ("add_dummy_prefix", "remove_extra_whitespaces"):
            if key in extra:
                out.append(Component("whitespace", f"{key}={extra[key]}"))
        out.append(Component("model", f"{extra.get('model', model)} ({info.vocab_size} pieces)"))
        out.append(Component("byte fallback", extra.get("byte_fallback", "False")))
    else:
        out.append(Component("model", f"{model} ({info.vocab_size} ids)"))
    out.append(Component("post-processor", extra.get("post-processor", "none")))
    out.append(Component("decoder", info.decoder))
    return out


# --- per format ----------------------------------------------------------------------------

def _hf_trace(tok: PipelineTokenizer, text: str) -> PipelineTrace:
    norm = tok.c.normalizer
    original = Aligned.from_original(text)
    normed = norm.normalize(original) if norm is not None else original
    normalized = normed.text
    pre = tok.c.pre_tokenizer
    if pre is not None:
        rows = hf_pre_tokens(pre, normalized, normed)
    else:
        rows = [PreTokenRow(normalized, 0, len(normalized), *normed.span(0, len(normalized)),
                            None)] if normalized else []
    enc = tok.encode(text)
    trace = PipelineTrace(text, tok.info.format, components(tok), normalized,
                          list(normed.starts), list(normed.ends), [], rows, enc,
                          tok.decode(enc.ids), [])
    _post_process(tok, enc, trace)
    return trace


def _post_process(tok: PipelineTokenizer | SentencePieceTokenizer | ByteLevelBPETokenizer,
                  enc: Encoding, trace: PipelineTrace, *,
                  none_note: str = "no post-processor") -> None:
    """The post-processor row: what ``encode(text, add_special_tokens=True)`` adds (for
    GGUF vocabularies llama.cpp's BOS/EOS rule, for tekken mistral-common's BOS), or why
    nothing is added."""
    processor = (tok.c.post_processor if isinstance(tok, PipelineTokenizer)
                 else tok.post_processor)
    if processor is None:
        trace.post_note = none_note
        return
    try:
        post = tok.encode(trace.text, add_special_tokens=True)
    except TokenizerError as e:
        trace.post_note = str(e)
        return
    trace.post_ids = post.ids
    plain = enc.ids
    p = 0
    for k, t in enumerate(post):
        if p < len(plain) and t.id == plain[p] and not (t.special and t.start == t.end
                                                         and plain[p] != t.id):
            p += 1
            continue
        trace.additions.append(Addition(k, t.id, t.piece))
    if not trace.additions:
        trace.post_note = "the post-processor adds nothing to a single text"


def _steps(pre: PreTokenizer) -> list[PreTokenizer]:
    if isinstance(pre, SequencePre):
        return [s for step in pre.steps for s in _steps(step)]
    return [pre]


def hf_pre_tokens(pre: PreTokenizer, normalized: str, normed: Aligned) -> list[PreTokenRow]:
    """HF ``pre_tokenize_str(normalized)`` with, per piece, the rule that cut it.

    The steps run one by one on the normalized text (identity alignment, so spans are
    normalized offsets); a regex step records, per match, the alternative that matched.
    """
    pieces = [Aligned.from_original(normalized)]
    rules: list[tuple[int, int, str, bool]] = []  # (start, end, rule, is_regex), by step
    for step in _steps(pre):
        if isinstance(step, SplitPre) and step.is_regex and not step.invert:
            _record_regex(step.pattern.pattern, pieces, rules)
            pieces = step.split(pieces)
            continue
        if isinstance(step, ByteLevelPre) and step.use_regex:
            cut = [p if p.text.startswith(" ") or not step.add_prefix_space else p.prepend(" ")
                   for p in pieces]
            _record_regex(compile_onig(GPT2_PATTERN).pattern, cut, rules)
            pieces = step.split(pieces)
            continue
        before = {(p.starts[0], max(p.ends)) for p in pieces if p.text}
        pieces = step.split(pieces)
        name = step.describe()
        for p in pieces:
            if p.text and (p.starts[0], max(p.ends)) not in before:
                rules.append((p.starts[0], max(p.ends), name, False))
    rows: list[PreTokenRow] = []
    for p in pieces:
        if not p.text:
            continue
        s, e = p.span(0, len(p))
        rule, is_regex = _rule_for(rules, s, e)
        rows.append(PreTokenRow(p.text, s, e, *normed.span(s, e), rule, is_regex))
    return rows


def _record_regex(pattern: str, pieces: list[Aligned],
                  rules: list[tuple[int, int, str, bool]]) -> None:
    alts = finder(pattern)
    for p in pieces:
        for m in alts.compiled_whole.finditer(p.text):
            a, b = m.span()
            if a == b:
                continue
            k = alts.which(p.text, a, b)
            if k is not None:
                rules.append((p.starts[a], max(p.ends[a:b]), alts.sources[k], True))


def _rule_for(rules: list[tuple[int, int, str, bool]], s: int, e: int) -> tuple[str | None,
                                                                              bool]:
    """The latest recorded rule whose span contains the piece ``[s, e)``, preferring the
    regex alternative when the last cut was a regex step's."""
    best: tuple[str | None, bool] = (None, False)
    for a, b, rule, is_regex in rules:
        if a <= s and e <= max(b, a + 1):
            best = (rule, is_regex)
    return best


def _tiktoken_trace(tok: ByteLevelBPETokenizer, text: str) -> PipelineTrace:
    allowed, _ = resolve(tok.vocab.special_tokens, "all", ())
    alts = finder(tok.splitter.pattern)
    rows: list[PreTokenRow] = []
    for segment, seg_start, is_special in split_specials(text, allowed):
        if is_special:
            end = seg_start + len(segment)
            rows.append(PreTokenRow(segment, seg_start, end, seg_start, end, "special token"))
            continue
        for chunk, start, end in tok.splitter.split_with_spans(segment):
            k = alts.which(segment, start, end)
            s, e = seg_start + start, seg_start + end
            rows.append(PreTokenRow(bytes_to_piece(chunk.encode("utf-8")), s, e, s, e,
                                    alts.describe(k), k is not None))
    enc = tok.encode(text)
    n = len(text)
    trace = PipelineTrace(text, tok.info.format, components(tok), text, list(range(n)),
                          list(range(1, n + 1)), [], rows, enc, tok.decode(enc.ids), [])
    _post_process(tok, enc, trace, none_note="tiktoken has no post-processor")
    return trace


def _sentencepiece_trace(tok: SentencePieceTokenizer, text: str) -> PipelineTrace:
    normed = tok.normalizer.normalize(text)
    normalized, n2o = normed.text, list(normed.norm_to_orig)
    ends = _ends_from_starts(n2o, len(text))
    rows: list[PreTokenRow] = []
    splitter = getattr(tok.model, "word_pattern", None)
    rule = "a new piece starts at each \u2581 (split_by_whitespace)"
    if splitter is not None:
        for m in splitter.finditer(normalized):
            a, b = m.span()
            if a < b:
                rows.append(PreTokenRow(m.group(), a, b, n2o[a], max(ends[a:b]), rule))
    elif normalized:
        rows.append(PreTokenRow(normalized, 0, len(normalized), n2o[0], max(ends),
                                "the whole text (no whitespace split)"))
    enc = tok.encode(text)
    trace = PipelineTrace(text, tok.info.format, components(tok), normalized, n2o[:-1], ends,
                          [], rows, enc, tok.decode(enc.ids), [])
    _post_process(tok, enc, trace,
                  none_note="sentencepiece adds no BOS/EOS unless asked at encode time")
    return trace


def _generic_trace(tok: Tokenizer, text: str) -> PipelineTrace:
    st = tok.stages(text)
    n2o = list(st.norm_to_orig)
    ends = _ends_from_starts(n2o, len(text))
    rows = [PreTokenRow(p.text, 0, 0, p.start, p.end, None) for p in st.pre_tokens]
    return PipelineTrace(text, tok.info.format, components(tok), st.normalized, n2o[:-1], ends,
                         [], rows, st.encoding, st.decoded, [])


def _ends_from_starts(n2o: list[int], n_orig: int) -> list[int]:
    """Per normalized character the end of its original span, from ``norm_to_orig`` (starts
    plus one past the end): the next larger start (characters sharing a start share a span)."""
    m = len(n2o) - 1
    ends = [0] * m
    nxt = n2o[m] if m >= 0 else n_orig
    for i in range(m - 1, -1, -1):
        if i + 1 < m and n2o[i + 1] > n2o[i]:
            nxt = n2o[i + 1]
        ends[i] = max(nxt, n2o[i])
    return ends


# --- changes and losses --------------------------------------------------------------------

def changes(text: str, normalized: str, starts: list[int], ends: list[int]) -> list[Change]:
    """Runs of original text that normalization changed, from the alignment.

    Normalized characters are grouped into clusters that start where the original position
    moves forward; a cluster covers the original text up to the next cluster's start (so
    removed characters belong to the cluster before them, leading removed ones to an empty
    cluster). Clusters whose two sides differ are the changes.
    """
    out: list[Change] = []
    n = len(normalized)
    if not n:
        return [Change(0, len(text), 0, 0, text, "")] if text else []
    bounds: list[int] = []
    high = -1
    for i in range(n):
        if starts[i] > high:
            bounds.append(i)
        high = max(high, starts[i])
    if starts[0] > 0:
        out.append(Change(0, starts[0], 0, 0, text[:starts[0]], ""))
    for k, a in enumerate(bounds):
        last = k + 1 == len(bounds)
        b = n if last else bounds[k + 1]
        o_start = starts[a]
        o_end = len(text) if last else starts[b]
        before, after = text[o_start:o_end], normalized[a:b]
        if before != after:
            out.append(Change(o_start, o_end, a, b, before, after))
    return out


def losses(text: str, decoded: str) -> list[Loss]:
    """Where ``decoded`` differs from ``text``: original spans and what they decode as."""
    if text == decoded:
        return []
    if len(text) > MAX_DIFF_CHARS:
        lines_a, lines_b = text.split("\n"), decoded.split("\n")
        if len(lines_a) == len(lines_b):
            out: list[Loss] = []
            pos = 0
            for a, b in zip(lines_a, lines_b, strict=True):
                out += [Loss(x.orig_start + pos, x.orig_end + pos, x.original, x.decoded)
                        for x in losses(a, b)]
                pos += len(a) + 1
            return out
        return [Loss(0, len(text), text, decoded)]
    matcher = difflib.SequenceMatcher(None, text, decoded, autojunk=False)
    return [Loss(i1, i2, text[i1:i2], decoded[j1:j2])
            for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]
