"""``.tiktoken`` rank files: load as a :class:`ByteLevelBPETokenizer`, and save ranks back.

Format: one ``<base64 token bytes> <rank>`` per line; the rank is the token id. The file has
no pattern or special tokens: they come from a preset (``--preset``) or are detected from the
ranks (:mod:`tiktoken_presets`); an unrecognised file uses the cl100k pattern and no specials.
Parsed ranks are cached on disk (:mod:`vocab_cache`). Corrupt lines raise a one-line
:class:`VocabFormatError` naming the line.
"""

from __future__ import annotations

import binascii
from base64 import b64decode, b64encode
from collections.abc import Mapping
from pathlib import Path

from explorer.engine.bpe.model import byte_pair_table
from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
from explorer.engine.errors import VocabFormatError
from explorer.engine.formats import tiktoken_presets
from explorer.engine.formats.vocab_cache import cached
from explorer.engine.pretokenizers import patterns

_CACHE_KIND = "tiktoken-ranks-v3"


def parse_tiktoken(data: bytes, *, source: str = "<data>") -> dict[bytes, int]:
    """Parse ``.tiktoken`` content into ``token bytes -> rank``."""
    ranks: dict[bytes, int] = {}
    try:
        for token, rank in (line.split() for line in data.splitlines() if line):
            ranks[b64decode(token, validate=True)] = int(rank)
    except (ValueError, binascii.Error):
        return _parse_slowly(data, source)  # find the bad line for the message
    if not ranks:
        raise VocabFormatError(f"{source}: no ranks in the file")
    if min(ranks.values()) < 0:
        return _parse_slowly(data, source)  # names the line with the negative rank
    if len(set(ranks.values())) != len(ranks):
        raise VocabFormatError(f"{source}: two tokens share one rank")
    check_rank_range(ranks, source)
    return ranks


MAX_RANK_SLACK = 65536
"""How far the largest rank may lie beyond the number of tokens (ids are array indexes)."""


def check_rank_range(ranks: Mapping[bytes, int], source: str) -> None:
    """Refuse ranks that would make the id table absurdly large or overflow tiktoken's u32.

    Ids index a list sized by the largest rank: a corrupt rank of 2**31 would allocate
    gigabytes. Real files are dense (ranks ``0..n-1`` with a few gaps).
    """
    top = max(ranks.values())
    if top >= 2**32:
        raise VocabFormatError(f"{source}: rank {top} does not fit tiktoken's 32-bit ranks")
    if top >= 2 * len(ranks) + MAX_RANK_SLACK:
        raise VocabFormatError(f"{source}: rank {top} is far beyond the {len(ranks)} tokens "
                               "(corrupt rank?)")


def _parse_slowly(data: bytes, source: str) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise VocabFormatError(f"{source}:{lineno}: expected '<base64> <rank>'")
        try:
            token = b64decode(parts[0], validate=True)
            rank = int(parts[1])
        except (ValueError, binascii.Error):
            raise VocabFormatError(f"{source}:{lineno}: bad base64 token or rank") from None
        if rank < 0:
            raise VocabFormatError(f"{source}:{lineno}: negative rank")
        ranks[token] = rank
    raise VocabFormatError(f"{source}: corrupt .tiktoken file")  # pragma: no cover


def read_ranks(path: Path) -> dict[bytes, int]:
    """Ranks of a ``.tiktoken`` file, from the on-disk cache when unchanged."""
    return read_parsed(path)[0]


def read_parsed(path: Path) -> tuple[dict[bytes, int], list[int]]:
    """Ranks and their byte-pair table (see ``bpe.model``), cached together on disk."""

    def parse() -> tuple[dict[bytes, int], list[int]]:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise VocabFormatError(f"{path}: no such file") from None
        except OSError as e:
            raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
        ranks = parse_tiktoken(data, source=str(path))
        return ranks, byte_pair_table(ranks)

    ranks, table = cached(path, _CACHE_KIND, parse)
    return ranks, table


def save_tiktoken(ranks: Mapping[bytes, int], path: str | Path) -> None:
    """Write ``ranks`` as a ``.tiktoken`` file, in rank order (what tiktoken writes)."""
    lines = [b64encode(token) + b" " + str(rank).encode()
             for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])]
    Path(path).write_bytes(b"\n".join(lines) + b"\n")


def load(path: Path, *, preset: str | None = None) -> ByteLevelBPETokenizer:
    """Load a ``.tiktoken`` file; ``preset`` names the pattern/specials (else detected)."""
    chosen = tiktoken_presets.get_preset(preset) if preset else None
    ranks, pair_table = read_parsed(Path(path))
    tok_name = Path(path).name
    id_to_bytes: list[bytes | None] = [None] * (max(ranks.values()) + 1)
    for b, i in ranks.items():
        id_to_bytes[i] = b  # ranks are unique (checked by the parser)
    how = "given"
    if chosen is None:
        chosen = tiktoken_presets.detect_preset(ranks, id_to_bytes)
        how = "detected"
    if chosen is None:
        return ByteLevelBPETokenizer(
            ranks, patterns.CL100K, {}, name=tok_name, pattern_name="cl100k (default)",
            extra={"preset": "none (unrecognised ranks: cl100k pattern, no specials)"},
            id_to_bytes=id_to_bytes, pair_table=pair_table,
        )
    return ByteLevelBPETokenizer(
        ranks, chosen.pattern, chosen.special_tokens, name=tok_name,
        pattern_name=chosen.name, extra={"preset": f"{chosen.name} ({how})"},
        id_to_bytes=id_to_bytes, pair_table=pair_table,
    )
