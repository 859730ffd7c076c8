"""Test support for the panel tests: real vocabularies seen through small adapters.

Only what the browser reads (``info.name``, ``vocab_size``, ``id_to_token``); the entries are
the real 200k ranks from the bundled file.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from explorer.bundled import resource_path
from explorer.engine.encoding import Token


@dataclass
class _Info:
    name: str


class RankVocab:
    """``id_to_token`` over a ``.tiktoken`` file: rank = id, piece = decoded bytes."""

    def __init__(self, name: str = "o200k_base", limit: int | None = None) -> None:
        lines = resource_path(f"vocab/{name}.tiktoken").read_bytes().splitlines()
        pairs = [line.split() for line in lines if line]
        self._bytes: list[bytes] = [b""] * len(pairs)
        for b64, rank in pairs:
            self._bytes[int(rank)] = base64.b64decode(b64)
        if limit is not None:
            self._bytes = self._bytes[:limit]
        self.info = _Info(name)

    @property
    def vocab_size(self) -> int:
        return len(self._bytes)

    def id_to_token(self, token_id: int) -> Token:
        b = self._bytes[token_id]
        return Token(token_id, b.decode("utf-8", errors="backslashreplace"), b, 0, 0,
                     rank=token_id)

