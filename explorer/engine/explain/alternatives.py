"""Which top-level alternative of a split pattern produced a pre-token.

A split pattern is an alternation (``'s|'t| ?\\p{L}+| ?\\p{N}+|\\s+(?!\\S)|\\s+``). The regex
engine tries the alternatives in order at each position and keeps the first that matches,
so the alternative behind a match starting at ``pos`` is the first alternative that matches
at ``pos`` of the same text (lookaheads see the same following text). :func:`alternatives`
cuts a pattern at its top-level ``|`` (outside groups and character classes);
:class:`AlternativeFinder` answers "which one" for a match.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import regex

_FLAGS = regex.compile(r"^\(\?[a-zA-Z]+\)")


def alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` in order (one when it has no top-level
    ``|``). A leading global flag group (``(?i)``) is kept on every alternative."""
    flags = ""
    m = _FLAGS.match(pattern)
    if m:
        flags, pattern = m.group(), pattern[m.end():]
    out: list[str] = []
    depth = 0
    in_class = 0  # nesting of [...] (the regex module allows nested sets)
    start = 0
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "[":
                in_class += 1
            elif c == "]":
                in_class -= 1
        elif c == "[":
            in_class = 1
            # a ']' right after '[' or '[^' is a literal
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                i = j
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return [flags + a for a in out]


@dataclass(frozen=True)
class AlternativeFinder:
    """The alternatives of one pattern, compiled."""

    pattern: str
    sources: tuple[str, ...]
    compiled: tuple[regex.Pattern[str] | None, ...]
    compiled_whole: regex.Pattern[str]

    def which(self, text: str, start: int, end: int) -> int | None:
        """Index of the alternative that matched ``text[start:end]`` (a match of the whole
        pattern in ``text``), or None when no alternative reproduces it."""
        for k, alt in enumerate(self.compiled):
            if alt is None:
                continue
            m = alt.match(text, start)
            if m is not None:
                return k if m.end() == end else None
        return None

    def describe(self, index: int | None) -> str | None:
        """The source of alternative ``index`` (None stays None)."""
        return None if index is None else self.sources[index]


@cache
def finder(pattern: str) -> AlternativeFinder:
    """The (memoised) :class:`AlternativeFinder` of ``pattern``."""
    sources = alternatives(pattern)
    compiled: list[regex.Pattern[str] | None] = []
    for s in sources:
        try:
            compiled.append(regex.compile(s))
        except regex.error:
            compiled.append(None)
    return AlternativeFinder(pattern, tuple(sources), tuple(compiled), regex.compile(pattern))
