"""Each piece's output bytes (``▁`` as a space), in one buffer.

A list of 250k ``bytes`` objects was 12 MB of a big vocabulary's load; one buffer with
offsets is ~3.5 MB, and a piece's bytes are sliced from it when asked for (a token's bytes,
a decode). Byte pieces, control pieces and the unknown piece output something else than
their text: those few are kept on the side.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence

import numpy as np

from explorer.engine.sentencepiece.pieces import SPACE_SYMBOL


class PieceBytes(Sequence[bytes]):
    """The UTF-8 of each piece with ``▁`` as a space, and set outputs for a few pieces."""

    __slots__ = ("_blob", "_bounds", "_set")

    def __init__(self, pieces: Sequence[str]) -> None:
        joined = "\0".join(pieces).replace(SPACE_SYMBOL, " ")
        try:
            blob = joined.encode("utf-8", "surrogateescape")  # (a GGUF's undecodable bytes)
        except UnicodeEncodeError:
            blob = b"\0".join(map(_utf8, joined.split("\0")))
        cuts = np.flatnonzero(np.frombuffer(blob, np.uint8) == 0)
        bounds = np.zeros(len(pieces) + 1, np.int64)
        if len(cuts) == len(pieces) - 1:  # no piece holds NUL: the separators are the cuts
            bounds[1:-1] = cuts - np.arange(len(cuts))
            blob = blob.replace(b"\0", b"")
            bounds[-1] = len(blob)
        else:
            encoded = [_utf8(p.replace(SPACE_SYMBOL, " ")) for p in pieces]
            np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=bounds[1:])
            blob = b"".join(encoded)
        self._blob = blob
        self._bounds = array("q", bounds.tobytes())
        """Piece ``k``'s bytes are ``blob[bounds[k]:bounds[k + 1]]``."""
        self._set: dict[int, bytes] = {}

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def __getitem__(self, index: int) -> bytes:  # type: ignore[override]
        out = self._set.get(index)
        if out is not None:
            return out
        bounds = self._bounds
        if index < 0:
            index += len(bounds) - 1
            if index < 0:
                raise IndexError("piece index out of range")
        return self._blob[bounds[index]:bounds[index + 1]]

    def __setitem__(self, index: int, value: bytes) -> None:
        """Set piece ``index``'s output (a byte piece's byte, nothing for a control)."""
        count = len(self)
        if not -count <= index < count:
            raise IndexError("piece index out of range")
        self._set[index % count] = value

    def __iter__(self) -> Iterator[bytes]:
        return map(self.__getitem__, range(len(self)))


def _utf8(text: str) -> bytes:
    """UTF-8; undecodable bytes a GGUF reader kept as surrogates come back as bytes, any
    other lone surrogate keeps its 3-byte form."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
