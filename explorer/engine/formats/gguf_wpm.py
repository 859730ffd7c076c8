"""llama.cpp's WordPiece preprocessing (``llm_tokenizer_wpm_session::preprocess``).

For a GGUF ``bert`` vocabulary llama.cpp is the reference, and its preprocessing is not HF's
``BertNormalizer`` + ``BertPreTokenizer``. Per code point, in this order:

1. with ``strip_accents``: "NFD" keeps only the **first** code point of the character's NFD
   (``é`` → ``e``; a Hangul syllable → its leading jamo: ``한`` → ``ᄒ``);
2. whitespace (``\\t``-``\\r``, space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
   U+202F, U+205F, U+3000: form feed included) ends the word;
3. NUL, U+FFFD and control code points (categories Cc, Cf, Co, Cs) are dropped;
4. with ``strip_accents``: marks (Mn, **Mc**, Me: Devanagari vowel signs too) are dropped;
5. with ``lowercase``: the simple lowercase mapping;
6. punctuation (P*), ASCII symbols and CJK ideographs are words of their own.

``tokenizer.ggml.normalizer.lowercase`` (default true) and
``tokenizer.ggml.normalizer.strip_accents`` (default: as lowercase) select the options.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from explorer.engine.hf.normalized import Aligned

WHITESPACE = frozenset([*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                        0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_BREAK, _DROP, _ALONE, _APPEND = 0, 1, 2, 3


def _is_cjk(cp: int) -> bool:
    return any(a <= cp <= b for a, b in _CJK)


@lru_cache(maxsize=65536)
def _classify(ch: str, lowercase: bool, strip_accents: bool) -> tuple[int, str]:
    if strip_accents:
        ch = unicodedata.normalize("NFD", ch)[0]
    cp = ord(ch)
    if cp in WHITESPACE:
        return _BREAK, ""
    cat = unicodedata.category(ch)
    if cp == 0 or cp == 0xFFFD or cat in ("Cc", "Cf", "Co", "Cs"):
        return _DROP, ""
    if strip_accents and cat[0] == "M":
        return _DROP, ""
    out = ch.lower()[0] if lowercase else ch
    if cat[0] == "P" or (cp < 0x7F and cat[0] == "S") or _is_cjk(cp):
        return _ALONE, out
    return _APPEND, out


_KIND_CHARS = "bdap"  # _BREAK, _DROP, _ALONE, _APPEND as one character each
_WORD = re.compile(r"[dp]+|a")
"""In a text's kinds: a word (appended characters, dropped ones among them) or a
character that is a word of its own."""


class _Tables(dict[int, str]):
    """Code point -> its kind (``_KIND_CHARS``) or its replacement (a NUL for none), for
    ``str.translate``: filled as characters are met."""

    def __init__(self, lowercase: bool, strip_accents: bool, kinds: bool) -> None:
        super().__init__()
        self._options = (lowercase, strip_accents)
        self._kinds = kinds

    def __missing__(self, cp: int) -> str:
        kind, rep = _classify(chr(cp), *self._options)
        value = _KIND_CHARS[kind] if self._kinds else (rep or "\x00")
        self[cp] = value
        return value


@lru_cache(maxsize=4)
def _tables(lowercase: bool, strip_accents: bool) -> tuple[_Tables, _Tables]:
    """The kind and replacement tables of one set of options (shared by every tokenizer)."""
    return _Tables(lowercase, strip_accents, True), _Tables(lowercase, strip_accents, False)


@dataclass(frozen=True)
class LlamaWpmPre:
    """llama.cpp's WPM preprocessing as one pre-tokenizer (no separate normalizer)."""

    lowercase: bool = True
    strip_accents: bool = True

    def split(self, pieces: list[Aligned]) -> list[Aligned]:
        """Normalize and split every piece into llama.cpp's words."""
        out: list[Aligned] = []
        kind_table, rep_table = _tables(self.lowercase, self.strip_accents)
        for p in pieces:
            # (each character's kind and replacement by str.translate, one character each:
            # the words are then runs of kinds, not a Python step per character)
            text, starts, ends = p.text, p.starts, p.ends
            kinds, reps = text.translate(kind_table), text.translate(rep_table)
            for m in _WORD.finditer(kinds):
                a, b = m.span()
                run = kinds[a:b]
                if "d" not in run:
                    out.append(Aligned(reps[a:b], starts[a:b], ends[a:b]))
                elif "p" in run:  # (dropped characters leave the word whole)
                    keep = [a + k for k, kind in enumerate(run) if kind == "p"]
                    out.append(Aligned("".join([reps[k] for k in keep]),
                                       [starts[k] for k in keep], [ends[k] for k in keep]))
        return out

    def nearest_tokenizer_json(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """HF's BERT normalizer and pre-tokenizer with these options: a ``tokenizer.json``
        export's nearest equivalent (it differs on Hangul, spacing marks, form feed, ...)."""
        return ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                 "strip_accents": self.strip_accents, "lowercase": self.lowercase},
                {"type": "BertPreTokenizer"})

    def describe(self) -> str:
        """Short summary."""
        return (f"llama.cpp WPM preprocess(lowercase={self.lowercase}, "
                f"strip_accents={self.strip_accents})")
