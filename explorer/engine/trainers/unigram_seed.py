"""Unigram training input: required characters, seed pieces, and which substrings are pieces.

Follows sentencepiece's ``trainer_interface.cc`` / ``unigram_model_trainer.cc``:

- required characters cover ``character_coverage`` of all character occurrences (most frequent
  first); rarer characters are replaced by :data:`RARE` and can only become ``<unk>``;
- a piece is valid when it has at most ``max_piece_length`` characters, ``▁`` only at its
  start, no rare character and, with ``split_by_unicode_script``, one Unicode script
  (Hiragana and Katakana count as Han; combining marks take the script before them);
- with ``split_digits``, an ASCII digit is only ever a piece on its own;
- seeds are every required character (score = frequency) plus the most valuable substrings
  (score = frequency x length, frequency >= 2), at most ``seed_size`` of them.

sentencepiece finds the substrings with a suffix array over whole sentences; we count bounded
substrings of each distinct word, weighted by the word's frequency (pieces never span ``▁``,
so the counts are the same), and keep only right-maximal ones (a substring always followed by
the same character is not a suffix-tree node, so sentencepiece never proposes it: e.g. the
16-character prefix of a longer word, which sentencepiece skips but a bounded count finds).
The counting itself is vectorized in :mod:`.unigram_substrings`; :func:`valid_spans` here is
the plain statement of the rules it implements (and is tested against).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from functools import cache

import regex

SPACE = "▁"
RARE = "\x00"
"""Stands for characters outside the required set (sentencepiece uses U+2585)."""

_SCRIPTS = (
    "Latin", "Common", "Inherited", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic",
    "Syriac", "Thaana", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil",
    "Telugu", "Kannada", "Malayalam", "Sinhala", "Thai", "Lao", "Tibetan", "Myanmar",
    "Georgian", "Hangul", "Ethiopic", "Cherokee", "Khmer", "Mongolian", "Han", "Hiragana",
    "Katakana", "Bopomofo", "Yi", "Javanese", "Balinese", "Canadian_Aboriginal", "Ogham",
    "Runic", "Tifinagh", "Nko", "Vai", "Coptic", "Glagolitic", "Braille",
)
_SCRIPT_RE = regex.compile("|".join(f"(?P<{s}>\\p{{Script={s}}})" for s in _SCRIPTS))


@cache
def script_of(ch: str) -> str:
    """sentencepiece's script class of a character (Hiragana/Katakana/ー folded into Han)."""
    m = _SCRIPT_RE.match(ch)
    name = m.lastgroup if m else None
    if name is None:  # a rare script: its Unicode name's first word is a fine stand-in
        name = unicodedata.name(ch, "UNKNOWN").split(" ")[0]
    if name in ("Hiragana", "Katakana") or ch == "\u30fc":
        return "Han"
    return name


def required_chars(words: dict[str, int], coverage: float) -> dict[str, int]:
    """Most frequent characters covering ``coverage`` of all occurrences, with counts."""
    counts: dict[str, int] = {}
    for w, c in words.items():
        for ch in w:
            counts[ch] = counts.get(ch, 0) + c
    total = sum(counts.values())
    kept: dict[str, int] = {}
    done = 0
    for ch, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if total and done / total >= coverage:
            break
        done += c
        kept[ch] = c
    return kept


def mask_rare(words: dict[str, int], required: dict[str, int]) -> dict[str, int]:
    """Replace non-required characters by :data:`RARE` (merging words that become equal)."""
    out: dict[str, int] = {}
    for w, c in words.items():
        if any(ch not in required for ch in w):
            w = "".join(ch if ch in required else RARE for ch in w)
        out[w] = out.get(w, 0) + c
    return out


def _classes(word: str, by_script: bool) -> list[str | None]:
    """Per character: its script class, or None where no piece may extend across it."""
    out: list[str | None] = []
    prev = ""
    for ch in word:
        if ch == RARE:
            cls = None
        elif not by_script:
            cls = ""
        else:
            cls = script_of(ch)
            if cls == "Inherited":
                cls = prev
        out.append(cls)
        prev = cls or ""
    return out


DIGITS = frozenset("0123456789")
"""What sentencepiece's ``split_digits`` keeps apart (ASCII digits only)."""


def valid_spans(word: str, max_len: int, by_script: bool, split_digits: bool = False
                ) -> Iterator[tuple[int, int]]:
    """``(i, j)`` of every substring of ``word`` (length >= 2) that may be a piece."""
    classes = _classes(word, by_script)
    if split_digits:  # a digit neither starts nor continues a longer piece
        classes = [None if ch in DIGITS else c for ch, c in zip(word, classes, strict=True)]
    n = len(word)
    for i in range(n):
        first = classes[i]
        if first is None:
            continue
        script = None if word[i] == SPACE else first
        for j in range(i + 1, min(n, i + max_len)):
            ch = word[j]
            cls = classes[j]
            if ch == SPACE or cls is None:
                break
            if script is None:
                script = cls
            elif cls != script:
                break
            yield i, j + 1

