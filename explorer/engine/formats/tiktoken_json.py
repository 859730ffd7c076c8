"""tiktoken JSON: ``pat_str`` + ``special_tokens`` + ``bpe_ranks`` in one file.

This is how JavaScript ships tiktoken encodings: js-tiktoken's ranks (``cl100k_base.json``,
also as the ES module ``export default {...};`` in ``dist/ranks/*.js``) and Anthropic's
``claude.json`` (``@anthropic-ai/tokenizer``). ``bpe_ranks`` is either js-tiktoken's
compressed text -- lines of ``<label> <offset> <base64> <base64> ...``, the i-th token of a
line having rank ``offset + i`` -- or a plain ``{base64: rank}`` object. ``explicit_n_vocab``
is only shown (claude.json's disagrees with its own ranks; the JS libraries ignore it).

``claude.json`` is recognised by its special tokens (``<EOT>``, ``<META>``...) and gets the
NFKC normalization its npm library applies before encoding (``text.normalize('NFKC')``).
"""

from __future__ import annotations

import binascii
import re
from base64 import b64decode
from pathlib import Path
from typing import Any

from explorer.engine.bpe.model import byte_pair_table
from explorer.engine.bpe.normalized import NormalizedBPETokenizer
from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
from explorer.engine.errors import VocabFormatError
from explorer.engine.formats.tiktoken_file import check_rank_range
from explorer.engine.formats.vocab_cache import cached
from explorer.engine.hf.jsonutil import parse_json_text
from explorer.engine.normalizers.unicode import UnicodeNormalizer

_CACHE_KIND = "tiktoken-json-v1"
_JS_MODULE = re.compile(rb"^\s*export\s+default\s+(\{.*\})\s*;?\s*$", re.S)
CLAUDE_SPECIALS = frozenset({"<EOT>", "<META>", "<META_START>", "<META_END>", "<SOS>"})
"""The special tokens of Anthropic's ``claude.json``: the file that wants NFKC first."""


def looks_like(head: bytes) -> bool:
    """True when the start of a file looks like tiktoken JSON (or its JS module)."""
    return (b'"pat_str"' in head or b'"bpe_ranks"' in head) and (
        head.lstrip()[:1] == b"{" or _JS_MODULE.match(head + b"}") is not None
        or head.lstrip().startswith(b"export default"))


def parse(data: bytes, source: str) -> tuple[str, dict[str, int], dict[bytes, int], int | None]:
    """``(pat_str, special_tokens, ranks, explicit_n_vocab)`` of a tiktoken JSON file."""
    m = _JS_MODULE.match(data)
    obj = parse_json_text(m.group(1) if m else data, source)
    if not isinstance(obj, dict):
        raise VocabFormatError(f"{source}: the top level must be a JSON object")
    pat = obj.get("pat_str")
    if not isinstance(pat, str) or not pat:
        raise VocabFormatError(f"{source}: 'pat_str' must be a non-empty string")
    specials = obj.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(
            isinstance(k, str) and type(v) is int and v >= 0 for k, v in specials.items()):
        raise VocabFormatError(f"{source}: 'special_tokens' must map strings to token ids")
    ranks = _ranks(obj.get("bpe_ranks"), source)
    n_vocab = obj.get("explicit_n_vocab")
    if n_vocab is not None and type(n_vocab) is not int:
        raise VocabFormatError(f"{source}: 'explicit_n_vocab' must be an integer")
    return pat, specials, ranks, n_vocab


def _ranks(value: Any, source: str) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    try:
        if isinstance(value, str):
            for lineno, line in enumerate(value.split("\n"), 1):
                if not line:
                    continue
                parts = line.split(" ")
                if len(parts) < 2 or not re.fullmatch(r"[0-9]{1,18}", parts[1]):
                    raise VocabFormatError(
                        f"{source}: bpe_ranks line {lineno} is not '<label> <offset> tokens...'")
                offset = int(parts[1])
                for i, token in enumerate(parts[2:]):
                    ranks[b64decode(token, validate=True)] = offset + i
        elif isinstance(value, dict):
            for token, rank in value.items():
                if type(rank) is not int or rank < 0:
                    raise VocabFormatError(f"{source}: bpe_ranks[{token!r}] is not a rank")
                ranks[b64decode(token, validate=True)] = rank
        else:
            raise VocabFormatError(f"{source}: 'bpe_ranks' must be a string or an object")
    except (binascii.Error, ValueError) as e:
        if isinstance(e, VocabFormatError):
            raise
        raise VocabFormatError(f"{source}: bad base64 token in bpe_ranks") from None
    if not ranks:
        raise VocabFormatError(f"{source}: no ranks in bpe_ranks")
    if len(set(ranks.values())) != len(ranks):
        raise VocabFormatError(f"{source}: two tokens share one rank in bpe_ranks")
    check_rank_range(ranks, source)
    return ranks


def load(path: Path, *, preset: str | None = None) -> ByteLevelBPETokenizer:
    """Load a tiktoken JSON file (``preset`` is ignored: the file has its pattern)."""
    path = Path(path)
    source = str(path)

    def read() -> tuple[str, dict[str, int], dict[bytes, int], int | None, list[int]]:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
        pat, specials, ranks, n_vocab = parse(data, source)
        return pat, specials, ranks, n_vocab, byte_pair_table(ranks)

    pat, specials, ranks, n_vocab, table = cached(path, _CACHE_KIND, read)
    if any(bytes([b]) not in ranks for b in range(256)):
        raise VocabFormatError(f"{path}: bpe_ranks lack some of the 256 single bytes")
    extra = {"source": "tiktoken JSON (pat_str, special_tokens, bpe_ranks)"}
    if n_vocab is not None:  # informative only: claude.json's disagrees and no library checks
        extra["explicit_n_vocab"] = f"{n_vocab} (file: {len(ranks) + len(specials)} tokens)"
    kwargs: dict[str, Any] = dict(name=path.name, format="tiktoken-json",
                                  pattern_name="file's pat_str", pair_table=table)
    if set(specials) >= CLAUDE_SPECIALS:
        extra["normalization"] = "NFKC before encoding (as @anthropic-ai/tokenizer does)"
        return NormalizedBPETokenizer(ranks, pat, specials, normalizer=UnicodeNormalizer("NFKC"),
                                      extra=extra, **kwargs)
    return ByteLevelBPETokenizer(ranks, pat, specials, extra=extra, **kwargs)
