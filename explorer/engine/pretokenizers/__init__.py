"""Pre-tokenizers: regex splitting with the known encodings' patterns, byte-level alphabet."""

from explorer.engine.pretokenizers.byte_level import (
    bytes_to_piece,
    bytes_to_unicode,
    piece_to_bytes,
    unicode_to_bytes,
)
from explorer.engine.pretokenizers.patterns import PATTERNS
from explorer.engine.pretokenizers.regex_split import RegexSplitter, compile_pattern

__all__ = [
    "PATTERNS",
    "RegexSplitter",
    "bytes_to_piece",
    "bytes_to_unicode",
    "compile_pattern",
    "piece_to_bytes",
    "unicode_to_bytes",
]
