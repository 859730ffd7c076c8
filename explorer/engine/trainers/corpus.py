"""Training text from files or from an iterable of strings, read in blocks of whole lines.

Line semantics follow HF ``tokenizers``' ``train(files)``: lines are split at ``\\n`` only and
keep their ending. A block is a run of whole lines (up to about ``block_chars``); an item of an
iterable that does not end with a newline ends its line (and its block), like one sequence of
``train_from_iterator``. Files must be UTF-8 (a BOM is kept as text, like HF); other encodings
raise :class:`CorpusError`. Progress is counted in UTF-8 bytes.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from explorer.engine.errors import TokenizerError

BLOCK_CHARS = 1 << 20


class CorpusError(TokenizerError):
    """A corpus file is missing, unreadable or not UTF-8."""


class Corpus:
    """Text to train on. Iterate :meth:`blocks` (re-iterable: files are reopened)."""

    def __init__(
        self,
        *,
        paths: Sequence[str | Path] = (),
        texts: Iterable[str] | None = None,
        block_chars: int = BLOCK_CHARS,
    ) -> None:
        self.paths = [Path(p) for p in paths]
        self.texts = texts
        self.block_chars = block_chars
        for p in self.paths:
            if not p.is_file():
                raise CorpusError(f"{p}: no such file")

    @classmethod
    def from_files(cls, paths: Sequence[str | Path]) -> Corpus:
        """A corpus of UTF-8 text files, read in order."""
        return cls(paths=paths)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Corpus:
        """A corpus of strings (each ends its line; strings may hold several lines)."""
        return cls(texts=texts)

    @property
    def total_bytes(self) -> int | None:
        """Total size for file corpora (for progress bars); None for iterables."""
        if self.texts is not None:
            return None
        return sum(os.path.getsize(p) for p in self.paths)

    def blocks(self) -> Iterator[tuple[str, int]]:
        """Yield ``(block, bytes_read_so_far)``; every block is a run of whole lines."""
        done = 0
        for path in self.paths:
            for block, size in _file_blocks(path, self.block_chars):
                done += size
                yield block, done
        if self.texts is not None:
            pending: list[str] = []
            pending_len = 0
            for text in self.texts:
                if not isinstance(text, str):
                    raise CorpusError(f"corpus items must be str, got {type(text).__name__}")
                pending.append(text)
                pending_len += len(text)
                if pending_len >= self.block_chars or not text.endswith("\n"):
                    block = "".join(pending)
                    done += len(block.encode("utf-8", "surrogatepass"))
                    yield block, done
                    pending, pending_len = [], 0
            if pending:
                block = "".join(pending)
                done += len(block.encode("utf-8", "surrogatepass"))
                yield block, done


def _file_blocks(path: Path, block_chars: int) -> Iterator[tuple[str, int]]:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    carry = ""
    offset = 0
    try:
        with path.open("rb") as f:
            while True:
                raw = f.read(block_chars)
                final = not raw
                try:
                    text = carry + decoder.decode(raw, final=final)
                except UnicodeDecodeError as e:
                    raise CorpusError(
                        f"{path}: not UTF-8 (bad byte near offset {offset + e.start})"
                    ) from None
                offset += len(raw)
                if final:
                    if text:
                        yield text, len(text.encode("utf-8", "surrogatepass"))
                    return
                cut = text.rfind("\n") + 1
                if cut == 0:
                    carry = text  # a line longer than a block: keep reading
                    continue
                block, carry = text[:cut], text[cut:]
                yield block, len(block.encode("utf-8", "surrogatepass"))
    except OSError as e:
        raise CorpusError(f"cannot read {path}: {e.strerror}") from None


def split_lines(block: str) -> list[str]:
    """Lines of ``block`` split at ``\\n`` only, endings kept (no empty last item)."""
    lines = [line + "\n" for line in block.split("\n")]
    last = lines.pop()
    if last != "\n":
        lines.append(last[:-1])
    return lines
