"""The pure-Python tokenizer engine (no Qt). Public API:

>>> from explorer.engine import load_tokenizer
"""

from explorer.engine.encoding import Encoding, Token
from explorer.engine.errors import (
    Cancelled,
    SpecialTokenError,
    TokenizerError,
    UnsupportedComponentError,
    VocabFormatError,
)
from explorer.engine.formats import detect_format, load_tokenizer
from explorer.engine.tokenizer import PipelineStages, PreToken, Tokenizer, TokenizerInfo

__all__ = [
    "Cancelled",
    "Encoding",
    "PipelineStages",
    "PreToken",
    "SpecialTokenError",
    "Token",
    "Tokenizer",
    "TokenizerError",
    "TokenizerInfo",
    "UnsupportedComponentError",
    "VocabFormatError",
    "detect_format",
    "load_tokenizer",
]
