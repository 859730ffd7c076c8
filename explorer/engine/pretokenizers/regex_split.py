"""Regex pre-tokenizer: split text into the chunks a byte-level BPE encodes independently.

Uses the third-party ``regex`` module (``\\p{..}`` classes, possessive quantifiers). Spans
are code-point offsets into the text. The known patterns match every character, so the fast
path is one ``findall`` (the fastest way to run the pattern); a pattern that skips
characters falls back to ``finditer`` so the spans stay right. Skipped characters are
dropped, as tiktoken does.

Python's ``re`` runs equivalent rewrites faster: on ASCII-only text
(:mod:`~explorer.engine.pretokenizers.ascii_pattern`, 2-2.5x) and, once a splitter has split
:data:`BMP_AFTER` characters of other text, on any text
(:mod:`~explorer.engine.pretokenizers.bmp_pattern`: 2.3x on text in many scripts; astral
characters through BMP stand-ins; its compile is not spent on short texts). Before that, or
for a pattern it cannot rewrite, ``regex`` (for the known patterns only around the non-ASCII
runs of mostly-ASCII text: :mod:`.mixed_ascii`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache, partial
from itertools import accumulate

import regex

from explorer.engine.errors import VocabFormatError
from explorer.engine.pretokenizers.ascii_pattern import ascii_equivalent
from explorer.engine.pretokenizers.bmp_pattern import AstralProxies, bmp_equivalent, has_astral
from explorer.engine.pretokenizers.mixed_ascii import SPLICED, mixed_findall


@cache
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """Compile (and memoise) a split pattern; a bad pattern raises VocabFormatError."""
    try:
        return regex.compile(pattern)
    except regex.error as e:
        raise VocabFormatError(f"invalid pre-tokenizer pattern: {e}") from None


BMP_AFTER = 150_000
"""Characters of non-ASCII text a splitter splits with ``regex`` before it compiles the
pattern's BMP rewrite (a big document's second window; never a few keystrokes)."""


class RegexSplitter:
    """Splits text with one pattern. Thread-safe (what it learns on the way, the BMP
    rewrite, is the same whoever compiles it)."""

    __slots__ = ("_ascii", "_bmp", "_findall", "_finditer", "_mixed", "_proxies",
                 "_unicode_seen", "pattern")

    def __init__(self, pattern: str) -> None:
        compiled = compile_pattern(pattern)
        self.pattern = pattern
        self._findall = compiled.findall
        self._finditer = compiled.finditer
        self._ascii = ascii_equivalent(pattern)
        """The same pattern for ``re`` on ASCII-only text (faster), None when not safe."""
        self._mixed = (partial(mixed_findall, self._ascii, compiled)
                       if self._ascii is not None and pattern in SPLICED else None)
        """``findall`` for text with some non-ASCII (:mod:`.mixed_ascii`), or None."""
        self._bmp: re.Pattern[str] | None = None
        """The pattern for ``re`` on text without astral characters, once compiled."""
        self._unicode_seen = 0
        """Characters of non-ASCII text split with ``regex`` (until :data:`BMP_AFTER`)."""
        self._proxies: AstralProxies | None = None
        """Stand-ins for astral characters in the BMP twin, once it met some."""

    def __reduce__(self) -> tuple[type[RegexSplitter], tuple[str]]:
        return RegexSplitter, (self.pattern,)  # (compiled again where it is unpickled)

    def _for(self, text: str) -> tuple[Callable, Callable]:
        """``(findall, finditer)`` for ``text``: ``re``'s on ASCII-only text when possible,
        on any text once the BMP twin is compiled (astral characters through stand-ins),
        else on the ASCII stretches of a known pattern's text."""
        fast = self._ascii
        if fast is not None and text.isascii():
            return fast.findall, fast.finditer
        bmp = self._bmp
        if bmp is None and self._unicode_seen <= BMP_AFTER:
            self._unicode_seen += len(text)
            if self._unicode_seen >= BMP_AFTER:
                bmp = self._bmp = bmp_equivalent(self.pattern)
        fallback = self._findall if self._mixed is None else self._mixed
        if bmp is not None:
            if not has_astral(text):
                return bmp.findall, bmp.finditer
            if self._proxies is None:
                self._proxies = AstralProxies(self.pattern, bmp)
            return partial(_with_stand_ins, self._proxies, bmp, fallback), self._finditer
        return fallback, self._finditer

    def split(self, text: str) -> list[str]:
        """The chunks of ``text`` in order (no spans)."""
        return self._for(text)[0](text)

    def split_with_starts(self, text: str) -> Iterable[tuple[str, int]]:
        """``(chunk, start)`` pairs, cheaper than :meth:`split_with_spans` (C-level zip)."""
        findall, finditer = self._for(text)
        chunks = findall(text)
        if sum(map(len, chunks)) == len(text):
            return zip(chunks, accumulate(map(len, chunks), initial=0), strict=False)
        return [(m.group(), m.start()) for m in finditer(text)]

    def split_with_spans(self, text: str) -> list[tuple[str, int, int]]:
        """``(chunk, start, end)`` for every chunk, code-point offsets into ``text``."""
        findall, finditer = self._for(text)
        chunks = findall(text)
        out: list[tuple[str, int, int]] = []
        pos = 0
        for chunk in chunks:
            end = pos + len(chunk)
            out.append((chunk, pos, end))
            pos = end
        if pos == len(text):
            return out
        # Some characters matched no alternative: recover true positions.
        return [(m.group(), m.start(), m.end()) for m in finditer(text)]


def _with_stand_ins(proxies: AstralProxies, twin: re.Pattern[str],
                    fallback: Callable[[str], list[str]], text: str) -> list[str]:
    """The chunks of ``text`` (which holds astral characters) by ``twin`` with their
    stand-ins, else by ``fallback`` (``regex``)."""
    chunks = proxies.findall(twin, text)
    return fallback(text) if chunks is None else chunks
