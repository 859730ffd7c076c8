"""A SentencePiece tokenizer's piece outputs in one buffer (``PieceBytes``): the same bytes
as one ``bytes`` per piece, set outputs, odd pieces, and the memory it saves."""

from __future__ import annotations

import sys

import pytest

from explorer.engine.sentencepiece.piece_bytes import PieceBytes

SP = "\u2581"


def one_by_one(pieces: list[str]) -> list[bytes]:
    return [p.replace(SP, " ").encode("utf-8", "surrogateescape") for p in pieces]


@pytest.mark.parametrize("pieces", [
    ["<unk>", f"{SP}a", f"b{SP}", "", "é", "😀", "字", f"{SP}{SP}"],
    ["x\0y", "a", "\0", ""],  # NUL inside pieces: no separators to cut at
    ["\udcff", "a\udc80b"],  # a GGUF's undecodable bytes, kept as surrogates
    [],
    [""],
])
def test_each_piece_is_its_utf8_with_spaces(pieces: list[str]) -> None:
    out = PieceBytes(pieces)
    assert len(out) == len(pieces)
    assert list(out) == one_by_one(pieces)
    assert [out[k - len(pieces)] for k in range(len(pieces))] == one_by_one(pieces)


def test_a_lone_surrogate_that_is_no_byte_keeps_its_three_bytes() -> None:
    assert list(PieceBytes(["a", "\ud800"])) == [b"a", b"\xed\xa0\x80"]


def test_set_outputs_replace_a_pieces_bytes() -> None:
    out = PieceBytes(["<unk>", "<0x41>", "<s>", "a"])
    out[1] = b"A"
    out[-2] = b""
    assert list(out) == [b"<unk>", b"A", b"", b"a"]
    with pytest.raises(IndexError):
        out[4] = b"x"
    with pytest.raises(IndexError):
        out[-5]


def test_one_buffer_is_smaller_than_a_bytes_per_piece() -> None:
    pieces = [f"{SP}piece{k}" for k in range(20_000)]
    listed = sum(map(sys.getsizeof, one_by_one(pieces))) + sys.getsizeof(one_by_one(pieces))
    out = PieceBytes(pieces)
    packed = sys.getsizeof(out._blob) + sys.getsizeof(out._bounds)
    assert packed * 2 < listed
