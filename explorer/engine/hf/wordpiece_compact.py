"""A document's tokens as arrays, fast, for BERT-style WordPiece pipelines.

The general path (:meth:`PipelineTokenizer._run <explorer.engine.hf.pipeline.
PipelineTokenizer._run>`) walks every character through the normalizer and the pre-tokenizer
as aligned pieces and makes a tuple per token: a GGUF ``bert`` vocabulary took 3.8 s for
10 MB of English where llama.cpp takes 0.8 s. For the two BERT pipelines (a
``tokenizer.json``'s ``BertNormalizer`` + ``BertPreTokenizer``, llama.cpp's WPM
preprocessing, :class:`~explorer.engine.formats.gguf_wpm.LlamaWpmPre`) every *clean ASCII*
character (printable, or tab, newline, carriage return) is handled alike: whitespace ends a
word, the 32 ASCII punctuation and symbol characters are words of their own, letters and
digits make words, lowercased when the pipeline lowercases, each character keeping its own
span. So a stretch of clean ASCII is cut into words by one regular-expression split, each
distinct word laid out once (:meth:`WordPieceModel.tokenize`) and copied into the arrays as
:class:`~explorer.engine.hf.compact_fast.ByteLevelCompact` copies a byte-level pre-token's
(its regularity and first/last checks shared: the WordPiece decoder reads each token alone).
Everything else (from the end of one run of clean ASCII of :data:`CLEAN_GAP` or more
characters to the start of the next, the runs cut back to whitespace where a word crosses
their ends) takes the general path by itself: both pipelines cut words at whitespace and map
characters one by one, so its tokens are the ones it has in the whole text.
"""

from __future__ import annotations

import re
from array import array
from itertools import accumulate, compress, repeat
from operator import is_not
from typing import TYPE_CHECKING

import numpy as np

from explorer.engine.formats.gguf_wpm import LlamaWpmPre
from explorer.engine.hf.compact_fast import ByteLevelCompact, Word
from explorer.engine.hf.models import WordPieceModel
from explorer.engine.hf.normalizers import BertNormalizer
from explorer.engine.hf.pre_tokenizers import CharSplitPre

if TYPE_CHECKING:
    from explorer.engine.hf.pipeline import PipelineTokenizer

_OTHER = re.compile(r"[^\t\n\r\x20-\x7e]")
"""A character that is not clean ASCII."""
_SPLIT = re.compile(r"([A-Za-z0-9]+|[!-/:-@\[-`{-~])")
"""Clean ASCII cut into words (captured) and the whitespace between them."""
_SPACE = " \t\n\r"
_WHITESPACE = re.compile(r"[ \t\n\r]")
CLEAN_GAP = 256
"""Runs of clean ASCII shorter than this go with the general path's stretches around them."""
_CLEAN_RUN = re.compile(r"[\t\n\r\x20-\x7e]{" + str(CLEAN_GAP) + ",}")


def _other_stretches(part: str) -> list[tuple[int, int]]:
    """The stretches of ``part`` the general path takes: all but its runs of clean ASCII
    at least :data:`CLEAN_GAP` long, those cut back to ASCII whitespace where a word
    crosses their ends (a text in another script is a few big stretches, not a
    general-path call per word, nor a Python step per character)."""
    out: list[tuple[int, int]] = []
    pos = 0
    for m in _CLEAN_RUN.finditer(part):
        lo, hi = m.span()
        if lo and part[lo - 1] not in _SPACE and part[lo] not in _SPACE:  # (a word goes on
            found = _WHITESPACE.search(part, lo, hi)  # into the run: from its first space)
            lo = hi if found is None else found.start()
        if hi < len(part) and part[hi] not in _SPACE and part[hi - 1] not in _SPACE:
            hi = max(lo, max(part.rfind(c, lo, hi) for c in _SPACE) + 1)
        if hi - lo < CLEAN_GAP:
            continue
        if lo > pos:
            out.append((pos, lo))
        pos = hi
    if pos < len(part) and _OTHER.search(part, pos):
        out.append((pos, len(part)))
    return out


def _lowercases(tokenizer: PipelineTokenizer) -> bool | None:
    """Whether the pipeline lowercases, when it is one of the two BERT pipelines (else
    None)."""
    norm, pre = tokenizer.c.normalizer, tokenizer.c.pre_tokenizer
    if norm is None and isinstance(pre, LlamaWpmPre):
        return pre.lowercase
    if (isinstance(norm, BertNormalizer) and isinstance(pre, CharSplitPre)
            and pre.name == "BertPreTokenizer"):
        return norm.lowercase
    return None


class WordPieceCompact(ByteLevelCompact):
    """:meth:`encode` is ``tokenizer.encode_compact`` for a pipeline that :func:`fits`."""

    def __init__(self, tokenizer: PipelineTokenizer) -> None:
        super().__init__(tokenizer)
        self._lower = bool(_lowercases(tokenizer))

    @staticmethod
    def fits(tokenizer: PipelineTokenizer) -> bool:
        """True when the tokenizer's document encode can take this path."""
        post = tokenizer.c.post_processor
        return (isinstance(tokenizer.model, WordPieceModel)
                and _lowercases(tokenizer) is not None
                and tokenizer._norm_matcher.pattern is None  # (no normalized added token)
                and (post is None or post.keeps_offsets())
                and tokenizer._token_bytes.context_free())

    def _word(self, text: str) -> Word | None:
        """Lay out one clean ASCII word."""
        return self._laid_out(self._tok.model.tokenize(text.lower() if self._lower else text))

    def _part(self, part: str, base: int, ids: array, starts: array, ends: array,
              odd: list[tuple[int, int, str, bool]],
              edges: list[tuple[int, str, bool]]) -> None:
        """The tokens of a stretch between added tokens: long runs of clean ASCII by
        words, the rest by the general path (:func:`_other_stretches`)."""
        pos = 0
        for lo, hi in _other_stretches(part):
            self._clean(part[pos:lo], base + pos, ids, starts, ends, odd, edges)
            self._general(part[lo:hi], base + lo, ids, starts, ends, odd, edges)
            pos = hi
        self._clean(part[pos:], base + pos, ids, starts, ends, odd, edges)

    def _general(self, stretch: str, base: int, ids: array, starts: array, ends: array,
                 odd: list[tuple[int, int, str, bool]],
                 edges: list[tuple[int, str, bool]]) -> None:
        """A stretch the general path takes: its tokens appended together (each one's
        regularity from the memo the laid-out words share)."""
        raw = self._tok._run(stretch, "all", None)
        if not raw:
            return
        first_index = len(ids)
        if not ids:
            edges.append((raw[0][0], raw[0][1], raw[0][4]))
        ids.extend([r[0] for r in raw])
        starts.extend([r[2] + base for r in raw])
        ends.extend([r[3] + base for r in raw])
        keys = [(r[0], r[1], r[4]) for r in raw]
        regular = list(map(self._regular.get, keys))
        for k in compress(range(len(keys)), map(is_not, regular, repeat(True))):
            tid, piece, special = keys[k]
            if regular[k] is None and self._is_regular(tid, piece, special):
                continue
            odd.append((first_index + k, tid, piece, special))
        self._mark_last(edges, keys[-1])

    def _clean(self, stretch: str, base: int, ids: array, starts: array, ends: array,
               odd: list[tuple[int, int, str, bool]],
               edges: list[tuple[int, str, bool]]) -> None:
        """A stretch of clean ASCII: its words by one split, laid out from the memo."""
        if not stretch:
            return
        cut = _SPLIT.split(stretch)  # whitespace, word, whitespace, ..., whitespace
        words = cut[1::2]
        at = np.fromiter(accumulate(map(len, cut), initial=base), np.int64, len(cut) + 1)
        self._lay(words, at[1:-1:2], ids, starts, ends, odd, edges)
