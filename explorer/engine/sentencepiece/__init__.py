"""SentencePiece: tokenizer, score-driven BPE model and piece helpers.

- :class:`SentencePieceTokenizer` (``explorer.engine.tokenizer.Tokenizer``) over any model +
  normalizer built from in-memory data
- :class:`SentencePieceBPEModel` (Llama/Mistral-style BPE with scores and byte pieces); the
  Unigram model lives in ``explorer.engine.unigram``
- :class:`PieceType`, :func:`byte_piece`, :func:`piece_byte` (from ``.pieces``)

The tokenizer and BPE model load on first access: ``explorer.engine.unigram`` imports
``.pieces`` from here, and the tokenizer imports the Unigram model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from explorer.engine.sentencepiece.pieces import PieceType, byte_piece, piece_byte

if TYPE_CHECKING:
    from explorer.engine.sentencepiece.bpe import SentencePieceBPEModel
    from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer

__all__ = [
    "PieceType",
    "SentencePieceBPEModel",
    "SentencePieceTokenizer",
    "byte_piece",
    "piece_byte",
]


def __getattr__(name: str) -> Any:
    if name == "SentencePieceTokenizer":
        from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer

        return SentencePieceTokenizer
    if name == "SentencePieceBPEModel":
        from explorer.engine.sentencepiece.bpe import SentencePieceBPEModel

        return SentencePieceBPEModel
    raise AttributeError(name)
