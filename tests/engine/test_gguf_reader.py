"""The GGUF metadata reader maps the file (a model's tensors are never read) and the
tokenizer's metadata comes from the vocabulary cache the second time."""

from __future__ import annotations

import resource
import shutil
from pathlib import Path

import pytest
from references import require

from explorer.engine.errors import VocabFormatError
from explorer.engine.formats import gguf_reader
from explorer.engine.formats.gguf_reader import cached_metadata, read_metadata


def test_a_model_file_s_tensor_bytes_are_not_read(tmp_path: Path) -> None:
    """Two gigabytes after the metadata (a sparse file: the size of a small model's
    tensors) leave the reader's memory as it was; the metadata is the vocabulary's."""
    path = tmp_path / "model.gguf"
    shutil.copyfile(require("llama-cpp", "ggml-vocab-gpt-2.gguf"), path)
    small = read_metadata(path, prefix="tokenizer.")
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size + (2 << 30))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert read_metadata(path, prefix="tokenizer.") == small
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 500  # (reading the file whole needs 2,048 MB)


def test_an_empty_file_is_no_gguf(tmp_path: Path) -> None:
    path = tmp_path / "empty.gguf"
    path.write_bytes(b"")
    with pytest.raises(VocabFormatError, match="not a GGUF file"):
        read_metadata(path)


def test_tokenizer_metadata_comes_from_the_cache_until_the_file_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EXPLORER_NO_VOCAB_CACHE", raising=False)
    path = tmp_path / "vocab.gguf"
    shutil.copyfile(require("llama-cpp", "ggml-vocab-gpt-2.gguf"), path)
    reads: list[Path] = []
    real = gguf_reader.read_metadata
    monkeypatch.setattr(gguf_reader, "read_metadata",
                        lambda p, *, prefix="": reads.append(p) or real(p, prefix=prefix))
    first = cached_metadata(path, "tokenizer.")
    assert cached_metadata(path, "tokenizer.") == first == real(path, prefix="tokenizer.")
    assert len(reads) == 1
    assert first["tokenizer.ggml.model"] == "gpt2" and len(first["tokenizer.ggml.tokens"]) > 50000
    with open(path, "ab") as f:  # (an edited file: read again)
        f.write(b"\0" * 8)
    cached_metadata(path, "tokenizer.")
    assert len(reads) == 2


def test_a_file_that_cannot_be_mapped_is_read(tmp_path: Path) -> None:
    """A pipe (or a file system without mmap) is read as it is."""
    import os
    import threading

    fifo = tmp_path / "vocab.gguf"
    os.mkfifo(fifo)
    data = require("llama-cpp", "ggml-vocab-gpt-2.gguf").read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    meta = read_metadata(fifo, prefix="tokenizer.ggml.model")
    writer.join()
    assert meta == {"GGUF.version": 3, "tokenizer.ggml.model": "gpt2"}
