"""Per-shard counters of corpus statistics (the *map*) and their merge (the *reduce*).

:func:`count_shard` encodes every line of a :class:`Shard` on its own with every tokenizer
(special tokens recognised the way the format's reference library does, so ``tokens`` equals
the reference's count) and returns one :class:`Counts` per tokenizer plus the lines whose
token boundaries differ between tokenizers. Counters only add up, so merging shards in any
order gives the same totals: a process pool and a Dask cluster give identical tables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from explorer.engine.parity.implementations import reference_allowed_special
from explorer.engine.stats.scripts import COMMON, line_scripts
from explorer.engine.tokenizer import Tokenizer


@dataclass(frozen=True, slots=True)
class Shard:
    """Consecutive lines of one corpus file."""

    file: str
    """The file's label (its name; each file may be a language)."""
    first_line: int
    """1-based number of ``lines[0]`` in its file."""
    lines: tuple[str, ...]
    index: int = 0
    """Position of the shard in the corpus (for ordering diff lines)."""


@dataclass(frozen=True, slots=True)
class DiffLine:
    """A line whose token boundaries differ between tokenizers."""

    file: str
    line: int
    text: str
    tokens: tuple[int, ...]
    """Token count per tokenizer."""


def _add(table: dict[str, list[int]], key: str, values: Sequence[int]) -> None:
    row = table.get(key)
    if row is None:
        table[key] = list(values)
    else:
        for k, v in enumerate(values):
            row[k] += v


@dataclass(slots=True)
class Counts:
    """Additive statistics of one tokenizer over some lines."""

    lines: int = 0
    tokens: int = 0
    chars: int = 0
    bytes: int = 0
    words: int = 0
    unknown: int = 0
    byte_fallback: int = 0
    special: int = 0
    ids: Counter[int] = field(default_factory=Counter)
    lengths: Counter[int] = field(default_factory=Counter)
    """Token length (characters of the text it covers) -> number of tokens."""
    by_script: dict[str, list[int]] = field(default_factory=dict)
    """Script -> ``[tokens, chars, bytes]``."""
    by_file: dict[str, list[int]] = field(default_factory=dict)
    """File -> ``[tokens, chars, bytes, lines, words]``."""

    def merge(self, other: Counts) -> Counts:
        """Add ``other`` into this (in place); returns self."""
        self.lines += other.lines
        self.tokens += other.tokens
        self.chars += other.chars
        self.bytes += other.bytes
        self.words += other.words
        self.unknown += other.unknown
        self.byte_fallback += other.byte_fallback
        self.special += other.special
        self.ids.update(other.ids)
        self.lengths.update(other.lengths)
        for key, row in other.by_script.items():
            _add(self.by_script, key, row)
        for key, row in other.by_file.items():
            _add(self.by_file, key, row)
        return self


@dataclass(slots=True)
class ShardResult:
    """Counts of one shard for every tokenizer, and its differing lines."""

    counts: list[Counts]
    diff_lines: list[DiffLine] = field(default_factory=list)
    diff_count: int = 0
    chars: int = 0
    """Characters read (progress)."""


def _is_byte_piece(piece: str) -> bool:
    return len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">")


def count_line(tokenizer: Tokenizer, line: str, counts: Counts, file: str,
               scripts: list[str]) -> tuple[frozenset[int], int]:
    """Add one line's statistics to ``counts``; return its token ends and token count."""
    enc = tokenizer.encode(line, allowed_special=reference_allowed_special(tokenizer))
    n_chars = len(line)
    n_bytes = len(line.encode("utf-8", errors="surrogatepass"))
    n_words = len(line.split())
    tokens = enc.tokens
    counts.lines += 1
    counts.tokens += len(tokens)
    counts.chars += n_chars
    counts.bytes += n_bytes
    counts.words += n_words
    _add(counts.by_file, file, (len(tokens), n_chars, n_bytes, 1, n_words))
    ids = counts.ids
    lengths = counts.lengths
    per_script: Counter[str] = Counter()
    ends = set()
    last = n_chars - 1
    for t in tokens:
        ids[t.id] += 1
        lengths[t.end - t.start] += 1
        if t.unknown:
            counts.unknown += 1
        elif t.special:
            counts.special += 1
        elif _is_byte_piece(t.piece):
            counts.byte_fallback += 1
        per_script[scripts[min(t.start, last)] if last >= 0 else COMMON] += 1
        ends.add(t.end)
    if not scripts:
        for script, n in per_script.items():
            _add(counts.by_script, script, (n, 0, 0))
    elif scripts[0] == scripts[-1] and scripts.count(scripts[0]) == n_chars:  # one script
        _add(counts.by_script, scripts[0], (per_script.get(scripts[0], 0), n_chars, n_bytes))
    else:
        runs: dict[str, list[int]] = {}
        start = 0
        for i in range(1, n_chars + 1):
            if i == n_chars or scripts[i] != scripts[start]:
                row = runs.setdefault(scripts[start], [0, 0])
                row[0] += i - start
                row[1] += len(line[start:i].encode("utf-8", errors="surrogatepass"))
                start = i
        for script in runs.keys() | per_script.keys():
            chars, nb = runs.get(script, (0, 0))
            _add(counts.by_script, script, (per_script.get(script, 0), chars, nb))
    return frozenset(ends), len(tokens)


def count_shard(tokenizers: Sequence[Tokenizer], shard: Shard, *,
                diff_limit: int = 0) -> ShardResult:
    """Map step: statistics of every tokenizer over ``shard``'s lines.

    ``diff_limit``: keep up to this many lines whose token boundaries differ between the
    tokenizers (all are counted).
    """
    result = ShardResult([Counts() for _ in tokenizers])
    for k, line in enumerate(shard.lines):
        scripts = line_scripts(line)
        result.chars += len(line)
        got = [count_line(tok, line, c, shard.file, scripts)
               for tok, c in zip(tokenizers, result.counts, strict=True)]
        if len(got) > 1 and any(b != got[0][0] for b, _ in got[1:]):
            result.diff_count += 1
            if len(result.diff_lines) < diff_limit:
                result.diff_lines.append(DiffLine(shard.file, shard.first_line + k, line,
                                                  tuple(n for _, n in got)))
    return result
