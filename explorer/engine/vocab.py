"""A vocabulary: token id <-> token bytes, special tokens, optional scores and types.

Ids may have holes (cl100k has no id 100256; p50k none at 50256). Validation rejects negative
or duplicate ids, duplicate token bytes (unless allowed) and special tokens that collide with
ordinary ids, with a :class:`VocabFormatError` that says what is wrong. This type stores; it
does not encode. Format loaders build one, models read ``bytes_to_id``/``id_to_bytes``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from explorer.engine.errors import VocabFormatError


class Vocab:
    """Ordinary tokens (id -> bytes) plus special tokens (string -> id). Immutable by use."""

    __slots__ = ("_id_to_bytes", "bytes_to_id", "scores", "special_ids", "special_tokens",
                 "types")

    def __init__(
        self,
        bytes_to_id: Mapping[bytes, int],
        special_tokens: Mapping[str, int] | None = None,
        *,
        scores: Sequence[float] | None = None,
        types: Sequence[int] | None = None,
        id_to_bytes: Sequence[bytes | None] | None = None,
    ) -> None:
        """Build from ``bytes -> id`` (e.g. tiktoken ranks) and ``special -> id``.

        ``id_to_bytes`` may be given when the caller already has it (saves the inversion);
        it is trusted to be the inverse of ``bytes_to_id``.
        """
        self.bytes_to_id: dict[bytes, int] = dict(bytes_to_id)
        self.special_tokens: dict[str, int] = dict(special_tokens or {})
        self.special_ids: dict[int, str] = {i: s for s, i in self.special_tokens.items()}
        if id_to_bytes is None:
            id_to_bytes = self._invert(self.bytes_to_id)
        self._id_to_bytes: list[bytes | None] = list(id_to_bytes)
        for s, i in self.special_tokens.items():
            if not isinstance(i, int) or i < 0:
                raise VocabFormatError(f"special token {s!r} has invalid id {i!r}")
            if i < len(self._id_to_bytes) and self._id_to_bytes[i] is not None:
                raise VocabFormatError(
                    f"special token {s!r} id {i} collides with an ordinary token"
                )
        if len(self.special_ids) != len(self.special_tokens):
            raise VocabFormatError("two special tokens share one id")
        self.scores = list(scores) if scores is not None else None
        self.types = list(types) if types is not None else None

    @staticmethod
    def _invert(bytes_to_id: Mapping[bytes, int]) -> list[bytes | None]:
        if not bytes_to_id:
            return []
        top = max(bytes_to_id.values())
        if min(bytes_to_id.values()) < 0:
            raise VocabFormatError("negative token id")
        out: list[bytes | None] = [None] * (top + 1)
        for b, i in bytes_to_id.items():
            if out[i] is not None:
                raise VocabFormatError(f"id {i} is used by two tokens ({out[i]!r}, {b!r})")
            out[i] = b
        return out

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[bytes, int]],
                   special_tokens: Mapping[str, int] | None = None) -> Vocab:
        """Build from ``(token bytes, id)`` pairs; duplicate bytes are an error."""
        mapping: dict[bytes, int] = {}
        for b, i in pairs:
            if b in mapping:
                raise VocabFormatError(f"token {b!r} appears twice (ids {mapping[b]} and {i})")
            mapping[b] = i
        return cls(mapping, special_tokens)

    @property
    def size(self) -> int:
        """Number of ids, holes included: one past the largest id."""
        top = len(self._id_to_bytes)
        if self.special_ids:
            top = max(top, max(self.special_ids) + 1)
        return top

    def __len__(self) -> int:
        return self.size

    def __contains__(self, token_id: object) -> bool:
        if not isinstance(token_id, int):
            return False
        return token_id in self.special_ids or (
            0 <= token_id < len(self._id_to_bytes) and self._id_to_bytes[token_id] is not None
        )

    @property
    def id_to_bytes(self) -> list[bytes | None]:
        """Ordinary token bytes by id (None for holes and special ids). Do not mutate."""
        return self._id_to_bytes

    def token_bytes(self, token_id: int) -> bytes:
        """Bytes of ``token_id`` (a special token's UTF-8 text); KeyError when unknown."""
        if 0 <= token_id < len(self._id_to_bytes):
            b = self._id_to_bytes[token_id]
            if b is not None:
                return b
        special = self.special_ids.get(token_id)
        if special is None:
            raise KeyError(f"no token with id {token_id}")
        return special.encode("utf-8")

    def is_special(self, token_id: int) -> bool:
        """True for a special token id."""
        return token_id in self.special_ids
