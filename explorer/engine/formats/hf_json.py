"""Load a Hugging Face ``tokenizer.json`` as a :class:`PipelineTokenizer`, and save one.

See :mod:`explorer.engine.hf` for the supported components; :func:`save` writes any
supported tokenizer (pipeline, byte-level BPE ranks, SentencePiece) through
:mod:`explorer.engine.hf.export`.
"""

from __future__ import annotations

from pathlib import Path

from explorer.engine.errors import VocabFormatError
from explorer.engine.hf.export import save_tokenizer_json
from explorer.engine.hf.parse import components_from_json, loads
from explorer.engine.hf.pipeline import PipelineTokenizer
from explorer.engine.tokenizer import Tokenizer


def load(path: Path, *, preset: str | None = None) -> PipelineTokenizer:
    """Read ``path``; ``preset`` is ignored (tokenizer.json carries its own pipeline)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise VocabFormatError(f"{path}: cannot read ({e.strerror})") from None
    obj = loads(data, str(path))
    return from_dict(obj, name=Path(path).name)


def from_dict(obj: dict, *, name: str = "tokenizer.json") -> PipelineTokenizer:
    """Build the tokenizer of an already parsed tokenizer.json object."""
    return PipelineTokenizer(components_from_json(obj), name=name, fmt="tokenizer.json")


def save(tokenizer: Tokenizer, path: str | Path) -> Path:
    """Write ``tokenizer`` as a tokenizer.json that HF ``tokenizers`` loads with the same ids."""
    return save_tokenizer_json(tokenizer, path)
