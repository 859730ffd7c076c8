"""SentencePiece: tokenizer, score-driven BPE model and piece helpers.

- :class:`SentencePieceTokenizer` (``explorer.engine.tokenizer.Tokenizer``) over any model +
  normalizer built from in-memory data
- :class:`SentencePieceBPEModel` (Llama/Mistral-style BPE with scores and byte pieces); the
  Unigram model lives in ``explorer.engine.unigram``
- :class:`PieceType`, :func:`byte_piece`, :func:`piece_byte`
"""

from explorer.engine.sentencepiece.bpe import SentencePieceBPEModel
from explorer.engine.sentencepiece.pieces import PieceType, byte_piece, piece_byte
from explorer.engine.sentencepiece.tokenizer import SentencePieceTokenizer

__all__ = [
    "PieceType",
    "SentencePieceBPEModel",
    "SentencePieceTokenizer",
    "byte_piece",
    "piece_byte",
]
