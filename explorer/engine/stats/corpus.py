"""A corpus streamed as shards of lines: files of any size in bounded memory.

Lines are split on ``\\n`` only and a trailing ``\\r`` is dropped, exactly as
``tokenizer-explorer encode --lines`` does; a final empty line after the last newline is not
a line. Invalid UTF-8 raises :class:`CorpusError` naming the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from explorer.engine.errors import CorpusError
from explorer.engine.stats.counts import Shard

SHARD_CHARS = 256_000
"""Characters per shard: a unit of work for a pool process (about a second of encoding)."""


@dataclass(frozen=True, slots=True)
class CorpusSource:
    """One corpus part: a file on disk, or a text in memory (the editor's)."""

    label: str
    path: Path | None = None
    text: str | None = None

    @classmethod
    def file(cls, path: str | Path, label: str | None = None) -> CorpusSource:
        """A file, labelled by its name unless ``label`` is given."""
        p = Path(path)
        return cls(label or p.name, p, None)

    @classmethod
    def memory(cls, label: str, text: str) -> CorpusSource:
        """A text in memory."""
        return cls(label, None, text)

    def size(self) -> int:
        """Size in bytes (for progress); CorpusError when the file cannot be read."""
        if self.text is not None:
            return len(self.text.encode("utf-8", errors="surrogatepass"))
        assert self.path is not None
        try:
            return os.stat(self.path).st_size
        except FileNotFoundError:
            raise CorpusError(f"{self.path}: no such file") from None
        except OSError as e:
            raise CorpusError(f"{self.path}: cannot read ({e.strerror})") from None

    def lines(self) -> Iterator[tuple[str, int]]:
        """``(line, size in bytes with its newline)``, streamed."""
        if self.text is not None:
            parts = self.text.split("\n")
            if parts and parts[-1] == "":
                parts.pop()
            for part in parts:
                yield part.removesuffix("\r"), len(part.encode("utf-8", "surrogatepass")) + 1
            return
        assert self.path is not None
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed below, lines are streamed
        except IsADirectoryError:
            raise CorpusError(f"{self.path}: is a directory, not a text file") from None
        except OSError as e:
            raise CorpusError(f"{self.path}: cannot read ({e.strerror})") from None
        with f:
            for number, raw in enumerate(f, 1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise CorpusError(f"{self.path}:{number}: invalid UTF-8 at byte "
                                      f"{e.start}") from None
                yield text.removesuffix("\n").removesuffix("\r"), len(raw)


def iter_shards(sources: Sequence[CorpusSource], *,
                shard_chars: int = SHARD_CHARS) -> Iterator[tuple[Shard, int]]:
    """``(shard, bytes it covers)`` over every source in order; memory bounded by one shard."""
    index = 0
    for source in sources:
        lines: list[str] = []
        chars = size = 0
        first = 1
        number = 0
        for number, (line, nbytes) in enumerate(source.lines(), 1):
            lines.append(line)
            chars += len(line) + 1
            size += nbytes
            if chars >= shard_chars:
                yield Shard(source.label, first, tuple(lines), index), size
                index += 1
                lines, chars, size, first = [], 0, 0, number + 1
        if lines:
            yield Shard(source.label, first, tuple(lines), index), size
            index += 1
