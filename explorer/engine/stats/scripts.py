"""Unicode script of every character of a line, for the per-script statistics.

Each character's script comes from the ``regex`` module's ``\\p{Script=...}`` (memoised per
character). Scripts are grouped into the names the statistics report (:data:`SCRIPT_GROUPS`:
Han, Hiragana, Katakana and Bopomofo are ``CJK``); any other script is ``Other``. Characters of
no script of their own (``Common``: spaces, digits, punctuation, emoji; ``Inherited``:
combining marks) belong to the run they stand in: the preceding character's script, or, at the
start of a line, the next one's; a line of only such characters is ``Common``.

>>> "".join(s[0] for s in line_scripts("Привет, world!"))
'CCCCCCCCLLLLLL'
>>> script_runs("日本語 text")
[('CJK', 0, 4), ('Latin', 4, 8)]
"""

from __future__ import annotations

import regex

COMMON = "Common"
LATIN = "Latin"
OTHER = "Other"
SCRIPT_GROUPS: dict[str, str] = {
    "Latin": "Latin", "Cyrillic": "Cyrillic", "Greek": "Greek", "Armenian": "Armenian",
    "Georgian": "Georgian", "Arabic": "Arabic", "Hebrew": "Hebrew", "Syriac": "Syriac",
    "Thaana": "Thaana", "Devanagari": "Devanagari", "Bengali": "Bengali",
    "Gurmukhi": "Gurmukhi", "Gujarati": "Gujarati", "Oriya": "Oriya", "Tamil": "Tamil",
    "Telugu": "Telugu", "Kannada": "Kannada", "Malayalam": "Malayalam", "Sinhala": "Sinhala",
    "Thai": "Thai", "Lao": "Lao", "Tibetan": "Tibetan", "Myanmar": "Myanmar",
    "Khmer": "Khmer", "Ethiopic": "Ethiopic", "Cherokee": "Cherokee", "Mongolian": "Mongolian",
    "Han": "CJK", "Hiragana": "CJK", "Katakana": "CJK", "Bopomofo": "CJK", "Hangul": "Hangul",
    "Tifinagh": "Tifinagh", "Canadian_Aboriginal": "Canadian Aboriginal",
}
"""Unicode script name -> reported group."""

_PATTERNS = [(regex.compile(rf"\p{{Script={name}}}"), group)
             for name, group in SCRIPT_GROUPS.items()]
_NEUTRAL = regex.compile(r"[\p{Script=Common}\p{Script=Inherited}\p{Script=Unknown}]")
_MEMO: dict[str, str | None] = {}


def char_script(ch: str) -> str | None:
    """The reported script group of one character; None for Common/Inherited/unassigned."""
    got = _MEMO.get(ch, "")
    if got != "":
        return got
    result: str | None
    if _NEUTRAL.match(ch):
        result = None
    else:
        result = next((group for pattern, group in _PATTERNS if pattern.match(ch)), OTHER)
    if len(_MEMO) < 200_000:
        _MEMO[ch] = result
    return result


def line_scripts(line: str) -> list[str]:
    """The script group of every character of ``line`` (neutral characters resolved)."""
    if line.isascii():  # fast path: ASCII letters are Latin, the rest is neutral
        return [LATIN if any(c.isalpha() for c in line) else COMMON] * len(line)
    raw = [char_script(c) for c in line]
    out: list[str] = []
    current = next((s for s in raw if s is not None), COMMON)
    for s in raw:
        if s is not None:
            current = s
        out.append(current)
    return out


def script_runs(line: str) -> list[tuple[str, int, int]]:
    """``(script, start, end)`` runs of ``line`` (code points), neutral characters resolved."""
    runs: list[tuple[str, int, int]] = []
    scripts = line_scripts(line)
    start = 0
    for i in range(1, len(scripts) + 1):
        if i == len(scripts) or scripts[i] != scripts[start]:
            runs.append((scripts[start], start, i))
            start = i
    return runs
