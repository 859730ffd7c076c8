"""What every normalizer returns: the normalized text and its alignment to the original.

``norm_to_orig[i]`` is the code-point offset in the original text of normalized code point
``i``; it has one extra entry, the original offset one past the end of what was consumed
(sentencepiece's ``norm_to_orig``, in code points instead of bytes). A token spanning
normalized ``[i, j)`` covers original ``[norm_to_orig[i], norm_to_orig[j])``.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Normalized:
    """Normalized text with its alignment (``len(norm_to_orig) == len(text) + 1``).

    Immutable. A normalizer that builds the alignment as an array may give only that: the
    list is then made on first use (a 32k-character window's list cost as much as finding
    its words; the Unigram document path reads the array only)."""

    __slots__ = ("_norm_to_orig", "offsets", "text")

    def __init__(self, text: str, norm_to_orig: list[int] | None = None,
                 offsets: np.ndarray | None = None) -> None:
        if norm_to_orig is None and offsets is None:
            raise ValueError("Normalized needs norm_to_orig or offsets")
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "_norm_to_orig", norm_to_orig)
        object.__setattr__(self, "offsets", offsets)
        """``norm_to_orig`` as an int64 array, when the normalizer built one (see
        :meth:`offset_array`)."""

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Normalized is immutable ({name})")

    @property
    def norm_to_orig(self) -> list[int]:
        """Original code-point offset of each normalized code point, then one past the end
        of what was consumed."""
        found = self._norm_to_orig
        if found is None:
            assert self.offsets is not None
            found = self.offsets.tolist()
            object.__setattr__(self, "_norm_to_orig", found)
        return found

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Normalized):
            return NotImplemented
        return self.text == other.text and self.norm_to_orig == other.norm_to_orig

    __hash__ = None  # type: ignore[assignment]  # (as the dataclass it was: mutable list)

    def __reduce__(self) -> tuple[type[Normalized], tuple[object, ...]]:
        return Normalized, (self.text, self._norm_to_orig, self.offsets)

    def __repr__(self) -> str:
        return f"Normalized(text={self.text!r}, norm_to_orig={self.norm_to_orig!r})"

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
