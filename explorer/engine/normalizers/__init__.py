"""Normalizers with alignment: every one returns the normalized text and ``norm_to_orig``.

- :class:`IdentityNormalizer`, :class:`UnicodeNormalizer` (NFC/NFD/NFKC/NFKD),
  :class:`SequenceNormalizer` (composes alignments)
- :class:`SentencePieceNormalizer`: sentencepiece's normalizer (precompiled charsmap such as
  ``nmt_nfkc``, user-defined symbols, ``add_dummy_prefix``, ``remove_extra_whitespaces``,
  escaping spaces to ``▁``), built from a ``.model`` or from in-memory spec fields
- :class:`PrecompiledCharsMap`: the decoded Darts double array + replacement blob, for loaders
  (HF ``Precompiled``, GGUF ``precompiled_charsmap``) that apply it their own way
"""

from explorer.engine.normalizers.base import (
    IdentityNormalizer,
    Normalized,
    Normalizer,
    SequenceNormalizer,
    compose,
)
from explorer.engine.normalizers.charsmap import PrecompiledCharsMap
from explorer.engine.normalizers.sentencepiece import SPACE_SYMBOL, SentencePieceNormalizer
from explorer.engine.normalizers.unicode import UnicodeNormalizer

__all__ = [
    "SPACE_SYMBOL",
    "IdentityNormalizer",
    "Normalized",
    "Normalizer",
    "PrecompiledCharsMap",
    "SentencePieceNormalizer",
    "SequenceNormalizer",
    "UnicodeNormalizer",
    "compose",
]
