"""GPT-2 byte-level alphabet: every byte 0..255 spelled as one printable Unicode character.

Byte-level BPE vocabularies (GPT-2, RoBERTa, Llama 3, Qwen in tokenizer.json form) spell token
bytes with this alphabet: printable Latin-1 bytes stand for themselves, the rest are shifted
to U+0100.. (so a space is ``Ġ`` and a newline ``Ċ``). ``.tiktoken`` files store raw bytes; we
still show their pieces in this spelling, like HF ``tokens``. This module only maps between
bytes and that spelling; it does not split text.
"""

from __future__ import annotations

from functools import cache


@cache
def bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 ``bytes_to_unicode`` table: byte value -> its one-character spelling."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table: dict[int, str] = {b: chr(b) for b in printable}
    shift = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shift)
            shift += 1
    return dict(sorted(table.items()))


@cache
def unicode_to_bytes() -> dict[str, int]:
    """Inverse of :func:`bytes_to_unicode`."""
    return {ch: b for b, ch in bytes_to_unicode().items()}


@cache
def _translate_table() -> dict[int, str]:
    # Latin-1 decoding turns byte b into chr(b); this table then respells it.
    return {b: ch for b, ch in bytes_to_unicode().items()}


def bytes_to_piece(data: bytes) -> str:
    """Spell ``data`` in the byte-level alphabet (``b" hi"`` -> ``"Ġhi"``)."""
    return data.decode("latin-1").translate(_translate_table())


def piece_to_bytes(piece: str) -> bytes:
    """Bytes of a byte-level piece; raises ``KeyError`` for a character outside the alphabet."""
    table = unicode_to_bytes()
    return bytes(table[ch] for ch in piece)
