"""What every normalizer returns: the normalized text and its alignment to the original.

``norm_to_orig[i]`` is the code-point offset in the original text of normalized code point
``i``; it has one extra entry, the original offset one past the end of what was consumed
(sentencepiece's ``norm_to_orig``, in code points instead of bytes). A token spanning
normalized ``[i, j)`` covers original ``[norm_to_orig[i], norm_to_orig[j])``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass(frozen=True, slots=True)
class Normalized:
    """Normalized text with its alignment (``len(norm_to_orig) == len(text) + 1``)."""

    text: str
    norm_to_orig: list[int]
    offsets: np.ndarray | None = field(default=None, compare=False, repr=False)
    """``norm_to_orig`` as an int64 array, when the normalizer built one (see
    :meth:`offset_array`)."""

    def orig_span(self, start: int, end: int) -> tuple[int, int]:
        """Original-text span of normalized code points ``[start, end)``."""
        return self.norm_to_orig[start], self.norm_to_orig[end]

    def offset_array(self) -> np.ndarray:
        """``norm_to_orig`` as an int64 array (the normalizer's own, or converted)."""
        if self.offsets is not None:
            return self.offsets
        return np.array(self.norm_to_orig, np.int64)


class Normalizer(Protocol):
    """Anything with ``normalize(text) -> Normalized`` and a short ``name`` for display."""

    name: str

    def normalize(self, text: str) -> Normalized:
        """Normalize ``text`` and align every output code point with the input."""
        ...


class IdentityNormalizer:
    """Leaves text unchanged (sentencepiece ``identity`` without whitespace handling)."""

    name = "identity"

    def normalize(self, text: str) -> Normalized:
        """Return ``text`` with the identity alignment."""
        return Normalized(text, list(range(len(text) + 1)))


def compose(first: Normalized, second: Normalized) -> Normalized:
    """Alignment of ``second`` (which normalized ``first.text``) back to ``first``'s input."""
    inner = first.norm_to_orig
    return Normalized(second.text, [inner[i] for i in second.norm_to_orig])


class SequenceNormalizer:
    """Apply normalizers in order, composing their alignments."""

    def __init__(self, normalizers: list[Normalizer]) -> None:
        self.normalizers = list(normalizers)
        self.name = " + ".join(n.name for n in self.normalizers) or "identity"

    def normalize(self, text: str) -> Normalized:
        """Run every normalizer on the previous one's output."""
        result = Normalized(text, list(range(len(text) + 1)))
        for normalizer in self.normalizers:
            result = compose(result, normalizer.normalize(result.text))
        return result
