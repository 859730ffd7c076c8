"""Vocabulary files: detect the format of a file and load it as a :class:`Tokenizer`.

Formats and their modules (each exposes ``load(path, *, preset=None) -> Tokenizer``):

- ``tiktoken``: ``.tiktoken`` rank files (base64 token, rank per line) -> ``tiktoken_file``
- ``tokenizer.json``: Hugging Face tokenizers JSON -> ``hf_json``
- ``sentencepiece``: SentencePiece ``ModelProto`` (``.model``) -> ``sentencepiece_model``
- ``gguf``: GGUF (llama.cpp), vocabulary part only -> ``gguf_file``
- ``tiktoken-json``: ``pat_str`` + ``special_tokens`` + ``bpe_ranks`` (js-tiktoken,
  Anthropic's ``claude.json``) -> ``tiktoken_json``
- ``tekken``: Mistral's ``tekken.json`` -> ``tekken_file``
- ``minbpe``: minbpe's ``minbpe v1`` ``.model`` (its ``.vocab`` beside it) -> ``minbpe_file``
- ``folder``: a Hugging Face model folder (``tokenizer.json`` or the slow-tokenizer files
  ``vocab.json`` + ``merges.txt``, ``vocab.txt``, ``tokenizer.model``, with
  ``tokenizer_config.json``), chosen as the folder or any file in it -> ``model_folder``
"""

from __future__ import annotations

import importlib
from pathlib import Path

from explorer.engine.errors import VocabFormatError
from explorer.engine.tokenizer import Tokenizer

FORMAT_MODULES = {
    "tiktoken": "explorer.engine.formats.tiktoken_file",
    "tokenizer.json": "explorer.engine.formats.hf_json",
    "sentencepiece": "explorer.engine.formats.sentencepiece_model",
    "gguf": "explorer.engine.formats.gguf_file",
    "tiktoken-json": "explorer.engine.formats.tiktoken_json",
    "tekken": "explorer.engine.formats.tekken_file",
    "minbpe": "explorer.engine.formats.minbpe_file",
    "folder": "explorer.engine.formats.model_folder",
}


FOLDER_FILES = frozenset({
    "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt",
    "vocab.txt", "added_tokens.json", "config.json", "generation_config.json",
    "chat_template.jinja", "chat_template.json",
})
"""Files that only make sense with their siblings: choosing one opens the whole folder."""


def detect_format(path: str | Path) -> str:
    """Guess the format of a vocabulary file (or model folder) from its content, then name.

    Raises :class:`VocabFormatError` for a missing, empty or unrecognised file.
    """
    p = Path(path)
    if p.is_dir():
        return "folder"
    if p.name in FOLDER_FILES and p.exists():
        return "folder"
    try:
        with p.open("rb") as f:
            head = f.read(65536)
    except FileNotFoundError:
        raise VocabFormatError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise VocabFormatError(f"{p}: is a directory, not a vocabulary file") from None
    except OSError as e:
        raise VocabFormatError(f"{p}: cannot read ({e.strerror})") from None
    if not head:
        raise VocabFormatError(f"{p}: file is empty")
    if head.startswith(b"minbpe v") or (p.suffix == ".vocab"
                                         and _starts_with(p.with_suffix(".model"), b"minbpe v")):
        return "minbpe"
    if head[:4] == b"GGUF":
        return "gguf"
    stripped = head.lstrip()
    if stripped[:1] == b"{" or stripped.startswith(b"export default"):
        from explorer.engine.formats import tiktoken_json

        if tiktoken_json.looks_like(head):
            return "tiktoken-json"
        if b'"token_bytes"' in head or b'"default_num_special_tokens"' in head:
            return "tekken"
        return "tokenizer.json"
    first_line = head.split(b"\n", 1)[0].strip()
    parts = first_line.split()
    if len(parts) == 2 and parts[1].isdigit():
        return "tiktoken"
    if p.suffix == ".tiktoken":
        return "tiktoken"
    # SentencePiece ModelProto: field 1 (pieces), wire type 2 -> first byte 0x0A.
    if head[:1] == b"\x0a" or ".model" in p.name:
        return "sentencepiece"
    raise VocabFormatError(
        f"{p}: unknown vocabulary format (expected .tiktoken, tokenizer.json, "
        "SentencePiece .model, .gguf, tiktoken JSON, tekken.json, minbpe .model or a "
        "model folder)"
    )


def _starts_with(path: Path, prefix: bytes) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(len(prefix)) == prefix
    except OSError:
        return False


def load_tokenizer(
    path: str | Path, *, format: str | None = None, preset: str | None = None
) -> Tokenizer:
    """Load any supported vocabulary file. ``format`` overrides detection."""
    fmt = format or detect_format(path)
    module_name = FORMAT_MODULES.get(fmt)
    if module_name is None:
        raise VocabFormatError(f"unknown format {fmt!r}; known: {', '.join(FORMAT_MODULES)}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name == module_name:
            raise VocabFormatError(f"{fmt} files are not supported yet") from None
        raise
    return module.load(Path(path), preset=preset)
