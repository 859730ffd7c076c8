"""Character classes HF tokenizers uses (Rust ``char`` semantics, not Python's ``str`` ones).

``is_whitespace`` is Unicode White_Space plus nothing else (Python's ``str.isspace`` also
accepts U+001C..U+001F). ``is_bert_control`` is HF's BERT ``is_control``: category ``C*``
except unassigned code points, tab, newline and carriage return. Python's ``unicodedata``
(Unicode 14 on 3.11) and HF's Rust tables differ on a few dozen recently added characters.
``is_punctuation`` is HF's BERT/Punctuation test:
ASCII symbols or any ``P*`` category.
"""

from __future__ import annotations

import unicodedata

WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def is_whitespace(c: str) -> bool:
    """Rust ``char::is_whitespace`` (Unicode White_Space)."""
    return c in WHITE_SPACE


def is_bert_control(c: str) -> bool:
    """HF BERT ``is_control``: Cc, Cf, Co or Cs, but not tab/LF/CR. Unassigned code points
    (Cn) are kept, as HF's category tables do."""
    if c in "\t\n\r":
        return False
    cat = unicodedata.category(c)
    return cat[0] == "C" and cat != "Cn"


def is_punctuation(c: str) -> bool:
    """HF BERT ``is_punc``: ASCII punctuation/symbols or a Unicode ``P*`` character."""
    o = ord(c)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    return unicodedata.category(c)[0] == "P"


_CJK = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


def is_chinese_char(c: str) -> bool:
    """The CJK ranges BERT pads with spaces."""
    o = ord(c)
    if o < 0x3400:
        return False
    return any(a <= o <= b for a, b in _CJK)
