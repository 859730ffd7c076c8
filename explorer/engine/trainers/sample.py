"""A sample text segmented the way a BPE training run sees it, merge after merge.

The step view of the Train panel shows a few lines segmented by the current state of a run:
:class:`BpeSample` pre-tokenizes the sample as the trainer does (byte-level regex split and
GPT-2 byte alphabet, or Metaspace ``▁`` words, with HF's prefix/suffix marks) and applies each
merge as the trainer applies it to its words (HF ``Word::merge``: left to right, non-
overlapping). Each symbol keeps the code-point span of the sample it covers, so a merge reports
the spans it changed and :meth:`BpeSample.spans` gives the current segmentation. Pure Python;
the Qt side paints the spans through :mod:`explorer.engine.offsets`.

:func:`changed_spans` compares two segmentations (a Unigram round with the one before).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import regex

from explorer.engine.pretokenizers.byte_level import bytes_to_unicode
from explorer.engine.trainers.corpus import split_lines
from explorer.engine.trainers.models import BpeMode
from explorer.engine.trainers.words import SPACE_SYMBOL

Span = tuple[int, int]


@dataclass(slots=True)
class _Word:
    """One pre-token: its symbols (vocabulary spelling) and each symbol's span."""

    symbols: list[str]
    spans: list[Span] = field(default_factory=list)


class BpeSample:
    """A sample text as BPE training words; :meth:`apply` replays one merge on it."""

    def __init__(self, text: str, *, mode: BpeMode = "byte_level", pattern: str = "",
                 add_prefix_space: bool = False, prefix: str | None = None,
                 suffix: str | None = None) -> None:
        """``text``: the sample; the other arguments are the run's :class:`BpeConfig` fields
        (``pattern`` is required for ``byte_level``)."""
        self.text = text
        self.prefix = prefix
        self.words: list[_Word] = []
        self._holding: dict[str, set[int]] = {}  # symbol -> words holding it (may be stale)
        byte_char = bytes_to_unicode()
        if mode == "byte_level":
            split = regex.compile(pattern)
            for line_start, line in _lines(text):
                shift = 0
                if add_prefix_space and not line.startswith(" "):
                    line, shift = " " + line, 1
                for m in split.finditer(line):
                    symbols: list[str] = []
                    spans: list[Span] = []
                    for k, ch in enumerate(m.group(), m.start()):
                        at = line_start + k - shift
                        span = (line_start, line_start) if k < shift else (at, at + 1)
                        for b in ch.encode("utf-8", "surrogatepass"):
                            symbols.append(byte_char[b])
                            spans.append(span)
                    self._add(symbols, spans, prefix, suffix)
        else:
            for line_start, line in _lines(text):
                body = line.removesuffix("\n").removesuffix("\r")
                if not body:
                    continue
                spelled = body.replace(" ", SPACE_SYMBOL)
                starts = list(range(line_start, line_start + len(body)))
                if not spelled.startswith(SPACE_SYMBOL):
                    spelled = SPACE_SYMBOL + spelled
                    starts.insert(0, line_start)  # the added ▁ covers nothing
                    ends = [line_start] + [s + 1 for s in starts[1:]]
                else:
                    ends = [s + 1 for s in starts]
                for m in regex.finditer(SPACE_SYMBOL + "[^" + SPACE_SYMBOL + "]*", spelled):
                    k = range(m.start(), m.end())
                    self._add(list(m.group()), [(starts[i], ends[i]) for i in k], prefix,
                              suffix)

    def _add(self, symbols: list[str], spans: list[Span], prefix: str | None,
             suffix: str | None) -> None:
        if not symbols:
            return
        if prefix is not None:
            symbols = [s if k == 0 else prefix + s for k, s in enumerate(symbols)]
        if suffix is not None:
            symbols[-1] += suffix
        for sym in symbols:
            self._holding.setdefault(sym, set()).add(len(self.words))
        self.words.append(_Word(symbols, spans))

    def apply(self, left: str, right: str, token: str) -> list[Span]:
        """Merge ``left right`` -> ``token`` in every word; the spans of the new symbols."""
        changed: list[Span] = []
        holding = self._holding.get(left)
        if not holding or right not in self._holding:
            return changed
        made = self._holding.setdefault(token, set())
        for i in sorted(holding & self._holding[right]):
            word = self.words[i]
            sym, spans = word.symbols, word.spans
            j = 0
            while j < len(sym) - 1:
                if sym[j] == left and sym[j + 1] == right:
                    sym[j] = token
                    spans[j] = (min(spans[j][0], spans[j + 1][0]),
                                max(spans[j][1], spans[j + 1][1]))
                    del sym[j + 1], spans[j + 1]
                    changed.append(spans[j])
                    made.add(i)
                j += 1
        return _unique(changed)

    def apply_all(self, merges: Iterable[tuple[str, str]]) -> None:
        """Apply merges in order (a model's merge list, HF spelling)."""
        for left, right in merges:
            self.apply(left, right, self.token_of(left, right))

    def token_of(self, left: str, right: str) -> str:
        """The token a merge makes (the right part loses its continuing-subword prefix)."""
        if self.prefix is not None and right.startswith(self.prefix):
            right = right[len(self.prefix):]
        return left + right

    def symbols(self) -> list[str]:
        """Every symbol of the sample in order (vocabulary spelling)."""
        return [s for w in self.words for s in w.symbols]

    def spans(self) -> list[Span]:
        """The current segmentation: one code-point span per distinct token position
        (bytes of one character that are still apart share that character's span)."""
        return _unique(s for w in self.words for s in w.spans if s[1] > s[0])

    def where(self, token: str) -> list[Span]:
        """Spans of the sample where ``token`` is a symbol now."""
        return _unique(sp for w in self.words for s, sp in zip(w.symbols, w.spans, strict=True)
                       if s == token and sp[1] > sp[0])


def changed_spans(before: Iterable[Span], after: Iterable[Span]) -> list[Span]:
    """Spans of ``after`` that were not tokens in ``before`` (what a step changed)."""
    old = set(before)
    return [s for s in after if s not in old]


def _unique(spans: Iterable[Span]) -> list[Span]:
    out: list[Span] = []
    for s in spans:
        if not out or out[-1] != s:
            out.append(s)
    return out


def _lines(text: str) -> Iterable[tuple[int, str]]:
    """``(offset, line)`` with its line ending kept (as the trainers read a corpus)."""
    at = 0
    for line in split_lines(text) if text else []:
        yield at, line
        at += len(line)
