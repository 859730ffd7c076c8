"""Run HF tokenizers' Oniguruma patterns with the ``regex`` module, meaning what they mean.

HF compiles ``Split``/``Replace`` regexes with Oniguruma (Ruby syntax). Two differences with
``regex`` matter for real tokenizer files:

- ``X{n,m}+`` is *not* possessive in Oniguruma: it is the interval followed by a greedy
  ``+``, i.e. ``(?:X{n,m})+``. ``regex`` reads it as possessive. So ``\\p{N}{1,3}+`` keeps
  ``2000000`` as one chunk in HF and splits ``200|000|0`` in tiktoken. We rewrite the
  interval form to the explicit group. (``?+``, ``*+`` and ``++`` are possessive in both.)
- ``^``/``$`` match at line boundaries in Ruby syntax: we compile with ``MULTILINE``.

Other Oniguruma-only syntax is rare in tokenizer files and is passed through unchanged.
"""

from __future__ import annotations

from functools import cache

import regex

from explorer.engine.errors import VocabFormatError


def translate(pattern: str, *, to_onig: bool = False) -> str:
    """Rewrite Oniguruma ``X{n,m}+`` into ``(?:X{n,m})+``; leave everything else alone.

    ``to_onig=True`` goes the other way for export: a ``regex`` (possessive) ``X{n,m}+``
    becomes the atomic group ``(?>X{n,m})``, which Oniguruma reads the same way.
    """
    out: list[str] = []
    group_starts: list[int] = []  # output index of each open group's "("
    last_atom = -1  # output index where the most recent atom starts
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            j = i + 2
            if j <= n and pattern[i + 1] in "pPxu" and j < n and pattern[j] == "{":
                j = pattern.find("}", j) + 1 or n
            last_atom = len(out)
            out.append(pattern[i:j])
            i = j
        elif c == "[":
            j = _class_end(pattern, i)
            last_atom = len(out)
            out.append(pattern[i:j])
            i = j
        elif c == "(":
            group_starts.append(len(out))
            out.append(c)
            i += 1
        elif c == ")":
            last_atom = group_starts.pop() if group_starts else len(out)
            out.append(c)
            i += 1
        elif c == "{" and last_atom >= 0:
            j = pattern.find("}", i)
            body = pattern[i + 1 : j] if j > 0 else ""
            if j > 0 and body and all(ch.isdigit() or ch == "," for ch in body):
                quant = pattern[i : j + 1]
                if j + 1 < n and pattern[j + 1] == "+":
                    atom = "".join(out[last_atom:])
                    del out[last_atom:]
                    out.append(f"(?>{atom}{quant})" if to_onig else f"(?:{atom}{quant})+")
                    i = j + 2
                else:
                    out.append(quant)
                    i = j + 1
            else:
                out.append(c)
                last_atom = len(out) - 1
                i += 1
        elif c in "|":
            last_atom = -1
            out.append(c)
            i += 1
        elif c in "*+?":
            out.append(c)
            i += 1
        else:
            last_atom = len(out)
            out.append(c)
            i += 1
    return "".join(out)


def _class_end(pattern: str, i: int) -> int:
    """Index one past the ``]`` closing the character class that opens at ``i``."""
    depth = 0
    j = i
    n = len(pattern)
    while j < n:
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            depth += 1
            if j + 1 < n and pattern[j + 1] == "^":
                j += 1
            if j + 1 < n and pattern[j + 1] == "]":
                j += 1  # a literal ] right after [ or [^
        elif c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


@cache
def compile_onig(pattern: str, where: str = "pattern") -> regex.Pattern[str]:
    """Compile an Oniguruma pattern from tokenizer.json; a bad one raises VocabFormatError."""
    try:
        return regex.compile(translate(pattern), regex.MULTILINE | regex.V0)
    except regex.error as e:
        raise VocabFormatError(f"tokenizer.json: {where} has an invalid regex: {e}") from None
