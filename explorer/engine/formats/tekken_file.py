"""Mistral's ``tekken.json``: tiktoken-style byte-level BPE with special tokens first.

Layout (mistral-common's ``Tekkenizer``): ``config`` holds the split ``pattern``,
``default_vocab_size`` and ``default_num_special_tokens``; ``vocab`` lists
``{"rank", "token_bytes" (base64), "token_str"}`` with ``rank == index``; ``special_tokens``
lists ``{"rank", "token_str", "is_control"}`` (absent in files of version v7 and older, which
use mistral-common's fixed list). Ids: special token ``k`` is id ``k``; ordinary rank ``r`` is
id ``r + num_special``; only the first ``vocab_size - num_special`` ranks are used. Missing
special tokens are filled with ``<SPECIAL_k>`` as mistral-common does.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from pathlib import Path
from typing import Any

from explorer.engine.bpe.model import byte_pair_table
from explorer.engine.bpe.tokenizer import ByteLevelBPETokenizer
from explorer.engine.errors import VocabFormatError
from explorer.engine.formats.vocab_cache import cached
from explorer.engine.hf.jsonutil import parse_json_text
from explorer.engine.hf.post_processors import AddSpecialPost

_CACHE_KIND = "tekken-v1"
LEGACY_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
"""mistral-common's special tokens for files without a ``special_tokens`` list (<= v7)."""
LEGACY_VERSIONS = ("v1", "v2", "v3", "v7")
MAX_SPECIALS = 2**20
"""More special tokens than this is a corrupt count (real files have 1000)."""


def _int(obj: dict[str, Any], key: str, source: str) -> int:
    value = obj.get(key)
    if type(value) is not int or value < 0:
        raise VocabFormatError(f"{source}: config.{key} must be a non-negative integer")
    return value


def parse(data: bytes, source: str) -> tuple[str, dict[str, int], dict[bytes, int], str]:
    """``(pattern, special token -> id, token bytes -> id, version)`` of a tekken file."""
    obj = parse_json_text(data, source)
    if not isinstance(obj, dict):
        raise VocabFormatError(f"{source}: the top level must be a JSON object")
    config, vocab = obj.get("config"), obj.get("vocab")
    if not isinstance(config, dict):
        raise VocabFormatError(f"{source}: tekken file has no 'config' object")
    if not isinstance(vocab, list):
        raise VocabFormatError(f"{source}: tekken file has no 'vocab' list")
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise VocabFormatError(f"{source}: config.pattern must be a non-empty string")
    vocab_size = _int(config, "default_vocab_size", source)
    n_special = _int(config, "default_num_special_tokens", source)
    version = config.get("version")
    if not isinstance(version, str):
        raise VocabFormatError(f"{source}: config.version must be a string")
    inner = vocab_size - n_special
    if inner < 256 or inner > len(vocab) or n_special > MAX_SPECIALS:
        raise VocabFormatError(f"{source}: default_vocab_size {vocab_size} does not fit "
                               f"{len(vocab)} ranks and {n_special} special tokens")
    specials_list = obj.get("special_tokens")
    if specials_list is None:
        if version not in LEGACY_VERSIONS:
            raise VocabFormatError(f"{source}: tekken {version} file has no special_tokens")
        names = list(LEGACY_SPECIALS)
    else:
        if not isinstance(specials_list, list) or not all(
                isinstance(t, dict) and isinstance(t.get("token_str"), str)
                and t.get("rank") == i for i, t in enumerate(specials_list)):
            raise VocabFormatError(
                f"{source}: special_tokens must be a list of {{rank, token_str}} in rank order")
        names = [t["token_str"] for t in specials_list]
    if len(names) > n_special or len(set(names)) != len(names):
        raise VocabFormatError(f"{source}: special tokens are not {n_special} unique strings")
    names += [f"<SPECIAL_{i}>" for i in range(len(names), n_special)]
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(vocab[:inner]):
        if not isinstance(entry, dict) or entry.get("rank") != i \
                or not isinstance(entry.get("token_bytes"), str):
            raise VocabFormatError(f"{source}: vocab[{i}] is not {{rank: {i}, token_bytes}}")
        try:
            token = b64decode(entry["token_bytes"], validate=True)
        except (binascii.Error, ValueError):
            raise VocabFormatError(f"{source}: vocab[{i}].token_bytes is not base64") from None
        if i < 256 and token != bytes([i]):
            raise VocabFormatError(f"{source}: vocab[{i}] must be the single byte {i}")
        ranks[token] = i + n_special
    if len(ranks) != inner:
        raise VocabFormatError(f"{source}: two vocab entries have the same bytes")
    return pattern, {s: i for i, s in enumerate(names)}, ranks, version


def load(path: Path, *, preset: str | None = None) -> ByteLevelBPETokenizer:
    """Load a ``tekken.json`` (``preset`` is ignored: the file has its pattern)."""
    path = Path(path)

    def read() -> tuple[str, dict[str, int], dict[bytes, int], str, list[int]]:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
        pattern, specials, ranks, version = parse(data, str(path))
        return pattern, specials, ranks, version, byte_pair_table(ranks)

    pattern, specials, ranks, version, table = cached(path, _CACHE_KIND, read)
    tok = ByteLevelBPETokenizer(
        ranks, pattern, specials, name=path.name, format="tekken",
        pattern_name="tekken config.pattern", pair_table=table,
        extra={"tekken version": version, "special tokens first": f"ids 0..{len(specials) - 1}"},
    )
    return tok.with_post_processor(bos_post(specials))


def bos_post(specials: dict[str, int]) -> AddSpecialPost:
    """mistral-common's ``Tekkenizer.encode(text, bos=True, eos=False)``: ``<s>`` before the
    text (transformers' ``MistralCommonBackend`` asks exactly that for
    ``add_special_tokens=True``; EOS only in its fine-tuning mode or with ``eos=True``)."""
    rule = "mistral-common Tekkenizer.encode(text, bos=True, eos=False)"
    bos = specials.get("<s>")
    if bos is None:
        return AddSpecialPost((), (), rule, error="this tekken file has no <s> token: "
                              "mistral-common cannot add BOS")
    return AddSpecialPost(((bos, "<s>"),), (), rule)
