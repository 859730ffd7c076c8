"""Unicode normalization forms (NFC, NFD, NFKC, NFKD) with alignment, via ``unicodedata``.

Text is cut into segments that normalize independently (a segment grows while normalizing it
together with the next character differs from normalizing them apart, which keeps combining
sequences and Hangul jamo together); every output code point of a segment maps to the
segment's first original code point. If the segment-wise result ever differs from normalizing
the whole text, the whole text becomes one segment, so the text is always exact.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

from explorer.engine.normalizers.base import Normalized

Form = Literal["NFC", "NFD", "NFKC", "NFKD"]


class UnicodeNormalizer:
    """One of the four Unicode normalization forms."""

    def __init__(self, form: Form) -> None:
        if form not in ("NFC", "NFD", "NFKC", "NFKD"):
            raise ValueError(f"unknown normalization form {form!r}")
        self.form: Form = form
        self.name = form

    def normalize(self, text: str) -> Normalized:
        """Normalize ``text``; unchanged text takes a fast path."""
        form = self.form
        if unicodedata.is_normalized(form, text):
            return Normalized(text, list(range(len(text) + 1)))
        out: list[str] = []
        n2o: list[int] = []
        seg_start = 0
        seg_norm = unicodedata.normalize(form, text[:1])
        for i in range(1, len(text)):
            ch_norm = unicodedata.normalize(form, text[i])
            joined = unicodedata.normalize(form, text[seg_start : i + 1])
            if joined == seg_norm + ch_norm and _stable_start(text[i]):
                out.append(seg_norm)
                n2o.extend([seg_start] * len(seg_norm))
                seg_start, seg_norm = i, ch_norm
            else:
                seg_norm = joined
        out.append(seg_norm)
        n2o.extend([seg_start] * len(seg_norm))
        result = "".join(out)
        if result != unicodedata.normalize(form, text):  # never trust the segmentation blindly
            result = unicodedata.normalize(form, text)
            n2o = [0] * len(result)
        n2o.append(len(text))
        return Normalized(result, n2o)


def _stable_start(ch: str) -> bool:
    """A character that can start a new segment: a starter that composes with nothing before."""
    return unicodedata.combining(ch) == 0 and not (0x1160 <= ord(ch) <= 0x11FF)
