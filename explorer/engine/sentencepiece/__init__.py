"""SentencePiece: tokenizer, score-driven BPE model, CHAR/WORD models and piece helpers.

- :class:`SentencePieceTokenizer` (``explorer.engine.tokenizer.Tokenizer``) over any model +
  normalizer built from in-memory data
- :class:`SentencePieceBPEModel` (Llama/Mistral-style BPE with scores and byte pieces) and
  :class:`SimpleLookupModel` (CHAR / WORD models); the Unigram model lives in
  ``explorer.engine.unigram``
- :class:`PieceType`, :func:`byte_piece`, :func:`piece_byte` (from ``.pieces``)

The tokenizer and models load on first access: ``explorer.engine.unigram`` imports
``.pieces`` from here, and the tokenizer imports the Unigram model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from explorer.engine.sentencepiece.pieces import PieceType, byte_piece, piece_byte

if TYPE_CHECKING:
    from explorer.engine.sentencepiece.bpe import SentencePieceBPEModel
    from explorer.engine.sentencepiece.simple import SimpleLookupModel
    from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer

__all__ = [
    "PieceType",
    "SentencePieceBPEModel",
    "SentencePieceTokenizer",
    "SimpleLookupModel",
    "byte_piece",
    "piece_byte",
]

_LAZY = {
    "SentencePieceTokenizer": "explorer.engine.sentencepiece.tokenizer",
    "SentencePieceBPEModel": "explorer.engine.sentencepiece.bpe",
    "SimpleLookupModel": "explorer.engine.sentencepiece.simple",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    return getattr(importlib.import_module(module), name)
