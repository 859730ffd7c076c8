"""Byte-level pre-tokenizers without respelling every piece: model output memoised per word.

A pre-tokenizer that ends in ``ByteLevel`` cuts the text (its own regex or a ``Split`` before
it) and then respells every piece in the GPT-2 byte alphabet, giving each byte the span of
its character. The model's tokens are byte ranges of that spelling, so their spans are the
spans of the *characters* the bytes touch: a function of the piece's own text (which bytes
belong to which character) and of the piece's alignment. :class:`ByteLevelMemo` remembers,
per piece text, the model's tokens with character ranges ``(first char, last char + 1)``;
the pipeline reads the spans off the unspelled piece, exactly what ``Aligned.span`` over the
respelled piece gives (its first byte's start, the largest end of its bytes).

Handles: ``ByteLevel`` alone or as the last step of a ``Sequence``. Does not handle tokens
with an empty byte range (never produced by the models here); such a piece is reported as
not memoisable and the pipeline takes the general path for it.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, repeat

from explorer.engine.hf.models import Model
from explorer.engine.hf.normalized import Aligned
from explorer.engine.hf.onig import compile_onig
from explorer.engine.hf.pre_tokenizers import (
    GPT2_PATTERN,
    ByteLevelPre,
    PreTokenizer,
    SequencePre,
    SplitPre,
    byte_level_spell,
)
from explorer.engine.hf.splitting import Match, apply_behavior, regex_matches

CharLayout = tuple[tuple[int, str, int, int], ...]
"""``(id, piece, first char, last char + 1)`` per token, relative to the piece."""

_MEMO_LIMIT = 100_000


class ByteLevelMemo:
    """Cuts like the pre-tokenizer minus the respelling; model tokens per piece text."""

    def __init__(self, head: tuple[PreTokenizer, ...], byte_level: ByteLevelPre,
                 model: Model) -> None:
        self._head = head
        self._byte_level = byte_level
        self._tokenize = model.tokenize
        self.tokenize = model.tokenize
        self._memo: dict[str, CharLayout | None] = {}
        self.pure_cut = not byte_level.add_prefix_space and all(
            isinstance(s, SplitPre) for s in head)
        self._cutters: list[tuple[Callable[[str], list[Match]], str]] = [
            (s.find, s.behavior) for s in head if isinstance(s, SplitPre)]
        patterns = [(s.pattern, s.behavior, s.invert) for s in head if isinstance(s, SplitPre)]
        if byte_level.use_regex:
            gpt2 = compile_onig(GPT2_PATTERN)
            self._cutters.append((lambda t: regex_matches(gpt2, t), "Isolated"))
            patterns.append((gpt2, "Isolated", False))
        self._findall: Callable[[str], list[str]] | None = None
        if self.pure_cut and len(patterns) == 1:
            pattern, behavior, invert = patterns[0]
            if behavior == "Isolated" and not invert and pattern.groups == 0:
                self._findall = pattern.findall

    def __reduce__(self) -> tuple[type[ByteLevelMemo], tuple[object, ...]]:
        """Pickle the components (process pools); the memo starts empty."""
        return (ByteLevelMemo, (self._head, self._byte_level, self._tokenize.__self__))

    @classmethod
    def for_pipeline(cls, pre: PreTokenizer | None, model: Model) -> ByteLevelMemo | None:
        """The memo for ``pre`` when it ends in ``ByteLevel``, else None."""
        if isinstance(pre, ByteLevelPre):
            return cls((), pre, model)
        if isinstance(pre, SequencePre) and pre.steps and isinstance(pre.steps[-1],
                                                                     ByteLevelPre):
            return cls(pre.steps[:-1], pre.steps[-1], model)
        return None

    def cut_ranges(self, text: str) -> list[tuple[int, int]] | None:
        """The pieces of ``cut`` as ``(start, end)`` ranges of ``text``, when every step
        only cuts (``Split`` steps, ``ByteLevel`` without a prefix space); else None."""
        if not self.pure_cut:
            return None
        ranges = [(0, len(text))]
        for find, behavior in self._cutters:
            cut: list[tuple[int, int]] = []
            for a, b in ranges:
                t = text[a:b] if a or b != len(text) else text
                cut.extend((a + x, a + y) for x, y in apply_behavior(find(t), behavior))
            ranges = cut
        return ranges

    def words(self, text: str) -> list[str] | None:
        """The pieces of :meth:`cut_ranges` as strings, from one C-level ``findall``: when a
        single regex step cuts, isolating its matches, and the matches cover the text (so
        no gap is a piece of its own; the GPT-2 and Llama 3 patterns match every character);
        else None."""
        if self._findall is None:
            return None
        found = self._findall(text)
        if sum(map(len, found)) != len(text) or "" in found:
            return None
        return found

    def cut(self, part: Aligned) -> list[Aligned]:
        """The pieces the pre-tokenizer would respell, in their own characters."""
        pieces = [part]
        for step in self._head:
            pieces = step.split(pieces)
        return self._byte_level.cut(pieces)

    def clear(self) -> None:
        """Forget every remembered piece."""
        self._memo.clear()

    def layout(self, text: str) -> CharLayout | None:
        """Model tokens of the piece ``text`` with character ranges; None: take the general
        path (a token with no bytes)."""
        try:
            return self._memo[text]
        except KeyError:
            pass
        spelled = byte_level_spell(Aligned.from_original(text)).text
        tokens = self._tokenize(spelled)
        if len(spelled) == len(text):  # ASCII: byte i is character i
            char_of: list[int] | range = range(len(text))
        else:
            counts = map(len, map(str.encode, text))
            char_of = list(chain.from_iterable(map(repeat, range(len(text)), counts)))
        out: CharLayout | None = tuple(
            (tid, piece, char_of[ts], char_of[te - 1] + 1) for tid, piece, ts, te in tokens
        ) if all(ts < te for _, _, ts, te in tokens) else None
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        self._memo[text] = out
        return out
