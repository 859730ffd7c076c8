"""HF tokenizers pre-tokenizers: split aligned text into the pieces the model sees.

Supported (``type``): ByteLevel (with or without its GPT-2 regex), Split (``behavior`` and
``invert``), Metaspace (``prepend_scheme`` always/first/never, ``split``), Whitespace,
WhitespaceSplit, BertPreTokenizer, Digits, Punctuation, CharDelimiterSplit, Sequence.
Anything else raises :class:`UnsupportedComponentError`.

A pre-tokenizer maps a list of :class:`Aligned` pieces to a new list; every piece keeps its
original-text alignment, so spans survive byte-level respelling and inserted ``▁``.
Splitting follows HF's ``NormalizedString::split`` exactly (match list, then behaviour, then
empty pieces dropped).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, pairwise, repeat
from typing import Any, Literal, Protocol

import regex

from explorer.engine.errors import UnsupportedComponentError, VocabFormatError
from explorer.engine.hf.jsonutil import opt, pattern_from_json, req
from explorer.engine.hf.normalized import Aligned
from explorer.engine.hf.onig import compile_onig
from explorer.engine.hf.splitting import (
    Match,
    char_matches,
    regex_matches,
    single_char_matches,
    split_pieces,
)
from explorer.engine.hf.unicode_props import is_punctuation, is_whitespace
from explorer.engine.pretokenizers.byte_level import bytes_to_unicode

Behavior = Literal["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
BEHAVIORS: tuple[str, ...] = (
    "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"
)

GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


class PreTokenizer(Protocol):
    """One pre-tokenization step."""

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        """Split every piece; empty pieces are dropped."""
        ...

    def describe(self) -> str:
        """Short summary."""
        ...


@dataclass(frozen=True)
class SequencePre:
    """Several pre-tokenizers in order."""

    steps: tuple[PreTokenizer, ...]

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        for s in self.steps:
            pieces = s.split(pieces)
        return pieces

    def describe(self) -> str:
        return "Sequence[" + ", ".join(s.describe() for s in self.steps) + "]"


@dataclass(frozen=True)
class ByteLevelPre:
    """GPT-2 byte level: optional prefix space, optional GPT-2 regex, bytes respelled."""

    add_prefix_space: bool
    use_regex: bool

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        return [byte_level_spell(p) for p in self.cut(pieces)]

    def cut(self, pieces: list[Aligned]) -> list[Aligned]:
        """``split`` without the final respelling: the pieces in their own characters."""
        if self.add_prefix_space:
            pieces = [p if p.text.startswith(" ") else p.prepend(" ") for p in pieces]
        if self.use_regex:
            pat = compile_onig(GPT2_PATTERN)
            pieces = split_pieces(pieces, lambda t: regex_matches(pat, t), "Isolated")
        return pieces

    def describe(self) -> str:
        return f"ByteLevel(add_prefix_space={self.add_prefix_space}, use_regex={self.use_regex})"


_LATIN1_TO_BYTE_LEVEL = {b: ch for b, ch in bytes_to_unicode().items()}


def byte_level_spell(p: Aligned) -> Aligned:
    """Respell ``p`` in the GPT-2 byte-level alphabet; every byte keeps its char's span."""
    text = p.text
    spelled = text.encode("utf-8").decode("latin-1").translate(_LATIN1_TO_BYTE_LEVEL)
    if len(spelled) == len(text):  # ASCII: one byte per character
        return Aligned(spelled, p.starts, p.ends)
    # Each character's span repeated once per UTF-8 byte, all at C level.
    counts = list(map(len, map(str.encode, text)))
    starts = list(chain.from_iterable(map(repeat, p.starts, counts)))
    ends = list(chain.from_iterable(map(repeat, p.ends, counts)))
    return Aligned(spelled, starts, ends)


@dataclass(frozen=True)
class SplitPre:
    """Split on a string or regex with an HF ``behavior``; ``invert`` swaps matches/gaps."""

    pattern: regex.Pattern[str]
    source: str
    behavior: str
    invert: bool
    is_regex: bool = True

    def find(self, text: str) -> list[Match]:
        """HF ``find_matches`` of the pattern in ``text`` (inverted when ``invert``)."""
        ms = regex_matches(self.pattern, text)
        return [(a, b, not m) for a, b, m in ms] if self.invert else ms

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        return split_pieces(pieces, self.find, self.behavior)

    def describe(self) -> str:
        inv = ", invert" if self.invert else ""
        return f"Split({self.source!r}, {self.behavior}{inv})"


_SPACE = regex.compile(" ")


@lru_cache(maxsize=64)
def _literal(text: str) -> regex.Pattern[str]:
    return regex.compile(regex.escape(text))


def cut_before(pieces: list[Aligned], one: regex.Pattern[str]) -> list[Aligned]:
    """Each piece cut before every match of the one-character pattern ``one``: HF's split
    with ``MergedWithNext`` (each match starts a piece, consecutive matches stand alone),
    without a match list to build and walk back (Metaspace: ~0.3 s per MB)."""
    out: list[Aligned] = []
    for p in pieces:
        text = p.text
        bounds = [m.start() for m in one.finditer(text)]
        if not bounds or bounds[0]:
            bounds.insert(0, 0)
        bounds.append(len(text))
        if len(bounds) == 2:
            if text:
                out.append(p)
            continue
        out.extend(p.slice(a, b) for a, b in pairwise(bounds) if a < b)
    return out


@dataclass(frozen=True)
class MetaspacePre:
    """Spaces become ``replacement``; a prefix is added per ``prepend_scheme``; optional split."""

    replacement: str
    prepend_scheme: str
    split_on_replacement: bool

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        rep = self.replacement
        space = _SPACE
        out: list[Aligned] = []
        for p in pieces:
            q = p.replace(space, rep) if " " in p.text else p
            if not q.text.startswith(rep) and (
                self.prepend_scheme == "always"
                or (self.prepend_scheme == "first" and q.starts and q.starts[0] == 0)
            ):
                q = q.prepend(rep)
            out.append(q)
        if self.split_on_replacement:
            out = cut_before(out, _literal(rep))
        return out

    def describe(self) -> str:
        return f"Metaspace({self.replacement!r}, prepend_scheme={self.prepend_scheme})"


@dataclass(frozen=True)
class CharSplitPre:
    """A character-predicate split (Whitespace, BERT, Digits, Punctuation, char delimiter)."""

    name: str
    steps: tuple[tuple[Callable[[str], bool], str], ...]
    spec: tuple[tuple[str, Any], ...] = ()
    """The tokenizer.json object it came from (as items), for export."""

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        steps = self.steps
        if len(steps) < 2:
            return _char_split(pieces, steps)
        # Every step only cuts pieces, so the later steps' cuts of a first-step piece depend
        # on its text alone: remember them per piece text (a word, after a whitespace split).
        memo = self._memo  # type: ignore[attr-defined]
        out: list[Aligned] = []
        append = out.append
        runs = _KEPT_RUNS.get(steps[0])
        if runs is None:
            first = [(p, 0, len(p.text), p.text) for p in _char_split(pieces, steps[:1])]
        else:  # (the first step's words as spans of each piece: no piece made per word)
            first = [(p, m.start(), m.end(), m.group())
                     for p in pieces for m in runs.finditer(p.text)]
        for p, base, end, text in first:
            ranges = memo.get(text)
            if ranges is None:
                ranges = [(q.starts[0], q.starts[0] + len(q)) for q in
                          _char_split([Aligned.from_original(text)], steps[1:])]
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()
                memo[text] = ranges
            if base == 0 and end == len(p.text):
                n = len(text)
                for a, b in ranges:
                    append(p if a == 0 and b == n else p.slice(a, b))
            else:
                for a, b in ranges:
                    append(p.slice(base + a, base + b))
        return out

    def __post_init__(self) -> None:
        # Per-piece-text cuts of the steps after the first (not a field: no effect on
        # equality, hashing or export).
        object.__setattr__(self, "_memo", {})

    def clear_memo(self) -> None:
        """Forget remembered cuts (benchmarks measuring a cold start)."""
        self._memo.clear()  # type: ignore[attr-defined]

    def describe(self) -> str:
        return self.name


_MEMO_LIMIT = 100_000


def _char_split(pieces: list[Aligned],
                steps: tuple[tuple[Callable[[str], bool], str], ...]) -> list[Aligned]:
    for pred, behavior in steps:
        fast = _CHAR_CLASSES.get(pred)
        if fast is not None:
            pat, check = fast
            conf = pred if check else None
            pieces = split_pieces(
                pieces, lambda t, f=pat, c=conf: single_char_matches(f, t, c), behavior)
        else:
            pieces = split_pieces(pieces, lambda t, p=pred: char_matches(p, t), behavior)
    return pieces


@dataclass(frozen=True)
class WhitespacePre:
    """HF ``Whitespace``: keep runs matching ``\\w+|[^\\w\\s]+``, drop the rest."""

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        pat = compile_onig(r"\w+|[^\w\s]+")
        return split_pieces(
            pieces, lambda t: [(a, b, not m) for a, b, m in regex_matches(pat, t)], "Removed"
        )

    def describe(self) -> str:
        return "Whitespace"


def _is_numeric(c: str) -> bool:
    return unicodedata.category(c)[0] == "N"


# Candidate characters of each predicate as a one-character regex (C-speed scan). Unicode
# versions of ``regex`` and ``unicodedata`` differ, so candidates other than whitespace are
# confirmed with the predicate itself: exact, and ASCII-heavy text skips Python per char.
_WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""Unicode White_Space (Rust ``char::is_whitespace``) as a character class's body."""
_CHAR_CLASSES: dict[Callable[[str], bool], tuple[regex.Pattern[str], bool]] = {
    is_whitespace: (regex.compile(f"[{_WHITE_SPACE}]"), False),
    is_punctuation: (regex.compile(r"[!-/:-@\[-`{-~]|[^\x00-\x7f]"), True),
    _is_numeric: (regex.compile(r"[0-9]|[^\x00-\x7f]"), True),
}


_KEPT_RUNS: dict[tuple[Callable[[str], bool], str], regex.Pattern[str]] = {
    (is_whitespace, "Removed"): regex.compile(f"[^{_WHITE_SPACE}]+"),
}
"""Steps whose kept pieces are the runs of a pattern (the characters the step removes are
exactly those :data:`_CHAR_CLASSES` finds for it, with no check after)."""


def bert_pre_tokenizer() -> CharSplitPre:
    """HF ``BertPreTokenizer``: drop whitespace, isolate punctuation."""
    return CharSplitPre("BertPreTokenizer",
                        ((is_whitespace, "Removed"), (is_punctuation, "Isolated")),
                        (("type", "BertPreTokenizer"),))


def pre_tokenizer_from_json(obj: Any) -> PreTokenizer | None:
    """Build the pre-tokenizer of a tokenizer.json ``pre_tokenizer`` value."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise VocabFormatError("tokenizer.json: 'pre_tokenizer' must be an object or null")
    kind = req(obj, "type", str, "pre_tokenizer")
    if kind == "Sequence":
        steps = [pre_tokenizer_from_json(o) for o in req(obj, "pretokenizers", list, "Sequence")]
        return SequencePre(tuple(s for s in steps if s is not None))
    if kind == "ByteLevel":
        return ByteLevelPre(opt(obj, "add_prefix_space", bool, True, "ByteLevel"),
                            opt(obj, "use_regex", bool, True, "ByteLevel"))
    if kind == "Split":
        spec = req(obj, "pattern", dict, "Split")
        pattern, source = pattern_from_json(spec, "Split")
        behavior = req(obj, "behavior", str, "Split")
        if behavior not in BEHAVIORS:
            raise UnsupportedComponentError(f"unsupported Split behavior {behavior!r}")
        return SplitPre(pattern, source, behavior, opt(obj, "invert", bool, False, "Split"),
                        "Regex" in spec)
    if kind == "Metaspace":
        rep = opt(obj, "replacement", str, "▁", "Metaspace")
        if len(rep) != 1:
            raise VocabFormatError("tokenizer.json: Metaspace.replacement must be one character")
        scheme = opt(obj, "prepend_scheme", str, None, "Metaspace")
        if scheme is None:
            add = opt(obj, "add_prefix_space", bool, True, "Metaspace")
            scheme = "always" if add else "never"
        if scheme not in ("always", "first", "never"):
            raise UnsupportedComponentError(f"unsupported Metaspace prepend_scheme {scheme!r}")
        return MetaspacePre(rep, scheme, opt(obj, "split", bool, True, "Metaspace"))
    if kind == "Whitespace":
        return WhitespacePre()
    if kind == "WhitespaceSplit":
        return CharSplitPre("WhitespaceSplit", ((is_whitespace, "Removed"),),
                            (("type", "WhitespaceSplit"),))
    if kind == "BertPreTokenizer":
        return bert_pre_tokenizer()
    if kind == "Digits":
        individual = opt(obj, "individual_digits", bool, False, "Digits")
        behavior = "Isolated" if individual else "Contiguous"
        return CharSplitPre(f"Digits({behavior})", ((_is_numeric, behavior),),
                            (("type", "Digits"),
                             ("individual_digits", behavior == "Isolated")))
    if kind == "Punctuation":
        behavior = opt(obj, "behavior", str, "Isolated", "Punctuation")
        if behavior not in BEHAVIORS:
            raise UnsupportedComponentError(f"unsupported Punctuation behavior {behavior!r}")
        return CharSplitPre(f"Punctuation({behavior})", ((is_punctuation, behavior),),
                            (("type", "Punctuation"), ("behavior", behavior)))
    if kind == "CharDelimiterSplit":
        delim = req(obj, "delimiter", str, "CharDelimiterSplit")
        if len(delim) != 1:
            raise VocabFormatError("tokenizer.json: CharDelimiterSplit.delimiter must be one "
                                   "character")
        return CharSplitPre(f"CharDelimiterSplit({delim!r})",
                            ((lambda c, d=delim: c == d, "Removed"),),
                            (("type", "CharDelimiterSplit"), ("delimiter", delim)))
    raise UnsupportedComponentError(f"unsupported pre-tokenizer {kind!r}")
