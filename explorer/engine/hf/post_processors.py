"""HF tokenizer.json post-processors: what ``encode(text, add_special_tokens=True)`` adds.

Handles ``TemplateProcessing``, ``BertProcessing``, ``RobertaProcessing``, ``ByteLevel`` and
``Sequence`` of these, on a *single* sequence (no pairs: a template's ``pair`` is parsed and
written back on export but never applied). Template special tokens are emitted with an empty
``(0, 0)`` span, as HF reports them; type ids, attention masks, truncation and padding are not
modelled.

``RobertaProcessing`` and ``ByteLevel`` with ``trim_offsets`` move each token's span past the
spaces its piece starts or ends with (``Ġ`` or whitespace), keeping one leading space on the
first token when ``add_prefix_space`` is set - HF's ``process_offsets``, on code-point offsets.
HF does that trimming even for ``add_special_tokens=False``, and so does
:class:`PipelineTokenizer`'s default encode (:meth:`PostProcessor.process_offsets`).

Loading never fails because of the post-processor: an unknown type or a malformed one becomes
an :class:`UnavailablePost` that keeps its JSON (export writes it back) and raises
:class:`UnsupportedComponentError` naming it only when post-processing is requested.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from explorer.engine.errors import TokenizerError, UnsupportedComponentError, VocabFormatError

Raw = tuple[int, str, int, int, bool]
"""One token during encoding: ``(id, piece, start, end, special)``, code-point offsets."""

_BYTE_SPACE = "Ġ"  # byte-level spelling of b" "


class PostProcessor(ABC):
    """A post-processor step: turns the model's tokens into what HF's ``encode`` returns."""

    @abstractmethod
    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """The tokens after this step (HF ``process_encodings`` for one sequence)."""

    def process_offsets(self, raw: list[Raw]) -> list[Raw]:
        """What HF ``encode(text, add_special_tokens=False)`` does with the model's tokens:
        no template tokens, but trimming post-processors still shrink the spans."""
        return self.process(raw, False)

    def keeps_offsets(self) -> bool:
        """True when :meth:`process_offsets` returns the tokens unchanged (no trimming):
        a document's encode may then skip it."""
        return False

    @abstractmethod
    def describe(self) -> str:
        """A short summary for ``info``."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The tokenizer.json object HF reads back to the same behaviour."""


def _special(token_id: int, piece: str) -> Raw:
    return (token_id, piece, 0, 0, True)


def trim_offsets(raw: list[Raw], add_prefix_space: bool) -> list[Raw]:
    """HF ``process_offsets``: spans shrunk past leading/trailing spaces of each piece."""
    out: list[Raw] = []
    for i, (tid, piece, start, end, special) in enumerate(raw):
        lead = 0
        for ch in piece:
            if ch != _BYTE_SPACE and not ch.isspace():
                break
            lead += 1
        trail = 0
        for ch in reversed(piece):
            if ch != _BYTE_SPACE and not ch.isspace():
                break
            trail += 1
        if lead:
            # The space HF itself prepended belongs to the first word: keep it in the span.
            if (i == 0 or start == 0) and add_prefix_space and lead == 1:
                lead = 0
            start = min(start + lead, end)
        if trail and end >= trail:
            end = max(end - trail, start)
        out.append((tid, piece, start, end, special))
    return out


@dataclass(frozen=True)
class TemplatePost(PostProcessor):
    """``TemplateProcessing``: the ``single`` template; ``pair`` is kept for export only."""

    single: list[tuple[str, str, int]]
    """``("special", name, type_id)`` or ``("sequence", "A", type_id)`` pieces in order."""
    special_tokens: dict[str, tuple[list[int], list[str]]]
    """Template name -> (ids, tokens) it expands to."""
    pair: list[Any] = field(default_factory=list)

    def keeps_offsets(self) -> bool:
        """Without special tokens the template adds nothing."""
        return True

    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """Apply the single template (sequence pieces other than ``$A`` are rejected at load)."""
        if not add_special_tokens:
            return raw
        out: list[Raw] = []
        for kind, name, _ in self.single:
            if kind == "sequence":
                out.extend(raw)
            else:
                ids, tokens = self.special_tokens[name]
                out.extend(_special(i, t) for i, t in zip(ids, tokens, strict=True))
        return out

    def describe(self) -> str:
        """E.g. ``TemplateProcessing: [CLS] $A [SEP]``."""
        parts = ["$" + n if k == "sequence" else n for k, n, _ in self.single]
        return "TemplateProcessing: " + " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """HF's JSON form."""
        single = [{"Sequence" if k == "sequence" else "SpecialToken": {"id": n, "type_id": t}}
                  for k, n, t in self.single]
        specials = {n: {"id": n, "ids": list(ids), "tokens": list(toks)}
                    for n, (ids, toks) in self.special_tokens.items()}
        return {"type": "TemplateProcessing", "single": single, "pair": self.pair,
                "special_tokens": specials}


@dataclass(frozen=True)
class BertPost(PostProcessor):
    """``BertProcessing``: ``cls $A sep``."""

    sep: tuple[str, int]
    cls: tuple[str, int]

    def keeps_offsets(self) -> bool:
        """Without special tokens nothing is wrapped."""
        return True

    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """Wrap the tokens in cls/sep."""
        if not add_special_tokens:
            return raw
        return [_special(self.cls[1], self.cls[0]), *raw, _special(self.sep[1], self.sep[0])]

    def describe(self) -> str:
        """E.g. ``BertProcessing: [CLS] $A [SEP]``."""
        return f"BertProcessing: {self.cls[0]} $A {self.sep[0]}"

    def to_json(self) -> dict[str, Any]:
        """HF's JSON form."""
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}


@dataclass(frozen=True)
class RobertaPost(PostProcessor):
    """``RobertaProcessing``: optional offset trimming, then ``cls $A sep``."""

    sep: tuple[str, int]
    cls: tuple[str, int]
    trim_offsets: bool = True
    add_prefix_space: bool = True

    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """Trim spans (when set), then wrap in cls/sep."""
        if self.trim_offsets:
            raw = trim_offsets(raw, self.add_prefix_space)
        if not add_special_tokens:
            return raw
        return [_special(self.cls[1], self.cls[0]), *raw, _special(self.sep[1], self.sep[0])]

    def describe(self) -> str:
        """E.g. ``RobertaProcessing: <s> $A </s> (trim offsets)``."""
        trim = " (trim offsets)" if self.trim_offsets else ""
        return f"RobertaProcessing: {self.cls[0]} $A {self.sep[0]}{trim}"

    def to_json(self) -> dict[str, Any]:
        """HF's JSON form."""
        return {"type": "RobertaProcessing", "sep": list(self.sep), "cls": list(self.cls),
                "trim_offsets": self.trim_offsets, "add_prefix_space": self.add_prefix_space}


@dataclass(frozen=True)
class ByteLevelPost(PostProcessor):
    """``ByteLevel`` as a post-processor: only offset trimming (no tokens added)."""

    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True

    def keeps_offsets(self) -> bool:
        """Unless it trims."""
        return not self.trim_offsets

    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """Trim spans when ``trim_offsets`` is set."""
        return trim_offsets(raw, self.add_prefix_space) if self.trim_offsets else raw

    def describe(self) -> str:
        """E.g. ``ByteLevel (trim offsets)``."""
        return "ByteLevel (trim offsets)" if self.trim_offsets else "ByteLevel"

    def to_json(self) -> dict[str, Any]:
        """HF's JSON form."""
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space,
                "trim_offsets": self.trim_offsets, "use_regex": self.use_regex}


@dataclass(frozen=True)
class SequencePost(PostProcessor):
    """``Sequence``: each step in order."""

    steps: list[PostProcessor]

    def keeps_offsets(self) -> bool:
        """When every step does."""
        return all(s.keeps_offsets() for s in self.steps)

    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """Run every step on the previous step's output."""
        for step in self.steps:
            raw = step.process(raw, add_special_tokens)
        return raw

    def describe(self) -> str:
        """The steps joined with ``+``."""
        return "Sequence[" + " + ".join(s.describe() for s in self.steps) + "]"

    def to_json(self) -> dict[str, Any]:
        """HF's JSON form."""
        return {"type": "Sequence", "processors": [s.to_json() for s in self.steps]}


@dataclass(frozen=True)
class AddSpecialPost(PostProcessor):
    """Fixed tokens before and after the text, and the rule that chose them: llama.cpp's
    ``add_special`` (BOS/EOS, or CLS/SEP for BERT) for a GGUF vocabulary."""

    prefix: tuple[tuple[int, str], ...]
    """``(id, piece)`` added before the text."""
    suffix: tuple[tuple[int, str], ...]
    """``(id, piece)`` added after the text."""
    rule: str
    """Why these tokens, in words (the metadata keys and defaults that decided)."""
    error: str | None = None
    """Set when the runtime refuses the vocabulary (a flag asks for a token that has no id)."""

    def keeps_offsets(self) -> bool:
        """Without special tokens nothing is added."""
        return True

    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """Prefix and suffix around the tokens (raises the :attr:`error` when set)."""
        if not add_special_tokens:
            return raw
        if self.error is not None:
            raise UnsupportedComponentError(self.error)
        return [*(_special(i, p) for i, p in self.prefix), *raw,
                *(_special(i, p) for i, p in self.suffix)]

    def describe(self) -> str:
        """E.g. ``<s> $A (llama.cpp: tokenizer.ggml.add_bos_token = true)``."""
        parts = [p for _, p in self.prefix] + ["$A"] + [p for _, p in self.suffix]
        return f"{' '.join(parts)} ({self.rule})"

    def to_json(self) -> dict[str, Any]:
        """The equivalent HF ``TemplateProcessing``."""
        pieces = [*self.prefix, None, *self.suffix]
        single = [{"Sequence": {"id": "A", "type_id": 0}} if p is None else
                  {"SpecialToken": {"id": p[1], "type_id": 0}} for p in pieces]
        specials = {p: {"id": p, "ids": [i], "tokens": [p]} for i, p in (*self.prefix,
                                                                          *self.suffix)}
        return {"type": "TemplateProcessing", "single": single, "pair": single,
                "special_tokens": specials}


@dataclass(frozen=True)
class UnavailablePost(PostProcessor):
    """A post-processor we cannot run (unknown type or malformed): kept, raises when used."""

    spec: dict[str, Any]
    reason: str

    def process(self, raw: list[Raw], add_special_tokens: bool) -> list[Raw]:
        """Always raises :class:`UnsupportedComponentError` with :attr:`reason`."""
        raise UnsupportedComponentError(self.reason)

    def process_offsets(self, raw: list[Raw]) -> list[Raw]:
        """The spans as the model made them: the default encode never fails because of a
        post-processor it cannot run."""
        return raw

    def keeps_offsets(self) -> bool:
        """:meth:`process_offsets` returns the tokens as they are."""
        return True

    def describe(self) -> str:
        """The type and why it cannot be applied."""
        return f"{self.spec.get('type', '?')} (cannot be applied: {self.reason})"

    def to_json(self) -> dict[str, Any]:
        """The JSON as it was read."""
        return self.spec


# -- parsing ------------------------------------------------------------------------------

def _pair(obj: dict[str, Any], key: str, where: str) -> tuple[str, int]:
    v = obj.get(key)
    if (not isinstance(v, list) or len(v) != 2 or not isinstance(v[0], str)
            or not isinstance(v[1], int) or isinstance(v[1], bool)):
        raise VocabFormatError(f"tokenizer.json: {where}.{key} must be [token, id]")
    return v[0], v[1]


def _flag(obj: dict[str, Any], key: str, where: str) -> bool:
    v = obj.get(key, True)
    if not isinstance(v, bool):
        raise VocabFormatError(f"tokenizer.json: {where}.{key} must be true or false")
    return v


def _template_piece(p: Any, specials: dict[str, Any]) -> tuple[str, str, int]:
    where = "TemplateProcessing.single"
    if not isinstance(p, dict) or len(p) != 1:
        raise VocabFormatError(f"tokenizer.json: {where} entry {p!r} is not a template piece")
    (key, body), = p.items()
    if key not in ("SpecialToken", "Sequence") or not isinstance(body, dict):
        raise VocabFormatError(f"tokenizer.json: {where} entry {p!r} is not a template piece")
    name, type_id = body.get("id"), body.get("type_id", 0)
    if not isinstance(name, str) or not isinstance(type_id, int):
        raise VocabFormatError(f"tokenizer.json: {where} entry {p!r} needs an id and type_id")
    if key == "Sequence":
        if name != "A":
            raise UnsupportedComponentError(
                f"TemplateProcessing: the single template uses sequence ${name} (only $A)")
        return ("sequence", name, type_id)
    if name not in specials:
        raise VocabFormatError(f"tokenizer.json: TemplateProcessing uses the special token "
                               f"{name!r} missing from its special_tokens")
    return ("special", name, type_id)


def _template(obj: dict[str, Any]) -> TemplatePost:
    where = "TemplateProcessing"
    raw_specials = obj.get("special_tokens", {})
    if not isinstance(raw_specials, dict):
        raise VocabFormatError(f"tokenizer.json: {where}.special_tokens must be an object")
    specials: dict[str, tuple[list[int], list[str]]] = {}
    for name, st in raw_specials.items():
        ids = st.get("ids") if isinstance(st, dict) else None
        toks = st.get("tokens") if isinstance(st, dict) else None
        if (not isinstance(ids, list) or not isinstance(toks, list) or len(ids) != len(toks)
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids)
                or not all(isinstance(t, str) for t in toks)):
            raise VocabFormatError(f"tokenizer.json: {where} special token {name!r} needs "
                                   "'ids' and 'tokens' lists of the same length")
        specials[name] = (ids, toks)
    single = obj.get("single")
    if not isinstance(single, list):
        raise VocabFormatError(f"tokenizer.json: {where}.single must be a list")
    pair = obj.get("pair", [])
    return TemplatePost([_template_piece(p, specials) for p in single], specials,
                        pair if isinstance(pair, list) else [])


def _build(obj: dict[str, Any]) -> PostProcessor:
    kind = obj.get("type")
    if kind == "TemplateProcessing":
        return _template(obj)
    if kind == "BertProcessing":
        return BertPost(_pair(obj, "sep", kind), _pair(obj, "cls", kind))
    if kind == "RobertaProcessing":
        return RobertaPost(_pair(obj, "sep", kind), _pair(obj, "cls", kind),
                           _flag(obj, "trim_offsets", kind), _flag(obj, "add_prefix_space", kind))
    if kind == "ByteLevel":
        return ByteLevelPost(_flag(obj, "add_prefix_space", kind),
                             _flag(obj, "trim_offsets", kind), _flag(obj, "use_regex", kind))
    if kind == "Sequence":
        steps = obj.get("processors")
        if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
            raise VocabFormatError("tokenizer.json: Sequence.processors must be a list of "
                                   "objects")
        return SequencePost([_build(s) for s in steps])
    raise UnsupportedComponentError(f"unsupported post-processor {kind!r}")


def post_processor_from_json(obj: Any) -> PostProcessor | None:
    """The post-processor of a tokenizer.json ``post_processor`` value (None for null).

    Never raises: what cannot be run becomes an :class:`UnavailablePost`.
    """
    if obj is None:
        return None
    if not isinstance(obj, dict):
        return UnavailablePost({"type": "?"}, "tokenizer.json: 'post_processor' must be an "
                               "object or null")
    try:
        return _build(obj)
    except TokenizerError as e:
        return UnavailablePost(obj, str(e))
