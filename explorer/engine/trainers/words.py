"""Reduce a corpus to word (pre-token) frequencies, the only input trainers work on.

Three pre-tokenizations, each matching a reference trainer's view of the text:

- :func:`count_byte_level`: regex split (GPT-2 pattern by default), each line on its own
  (HF ``ByteLevel`` fed line by line), then bytes spelled with the GPT-2 byte alphabet.
- :func:`count_metaspace`: HF ``Metaspace`` (``▁`` for spaces, prepended to every line,
  split before each ``▁``); line endings are dropped.
- :func:`count_sentencepiece_words`: sentencepiece's view with ``split_by_whitespace`` and
  ``remove_extra_whitespaces``: ``▁`` + each space-separated word of each line; user-defined
  symbols are cut out (sentencepiece replaces them by a boundary no piece crosses), so a
  word ``▁a<sym>b`` counts as ``▁a`` and ``b``.

Each is a generator yielding :class:`BytesRead` events and returning a ``dict[str, int]``.
Normalization (NFKC...) is not applied: words are counted as written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Generator, Iterator

import regex

from explorer.engine.pretokenizers.byte_level import bytes_to_unicode
from explorer.engine.pretokenizers.patterns import GPT2
from explorer.engine.trainers.corpus import Corpus, split_lines
from explorer.engine.trainers.events import BytesRead

SPACE_SYMBOL = "▁"

# GPT-2's pattern rewritten so that one findall over a block of lines gives exactly the
# pre-tokens of findall on each line separately: whitespace runs never cross a newline, and
# a run reaching the end of its line takes the newline with it, as at the end of a string.
# Letters come first (most pre-tokens; ~10% faster): it cannot clash with the contractions,
# which start with ``'``, and the contractions differ in their second character.
GPT2_LINEWISE = (
    r""" ?\p{L}+|'(?:[stmd]|re|ve|ll)| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
    r"""|[^\S\n]*\n|[^\S\n]+(?!\S)|[^\S\n]+"""
)
_LINEWISE = {GPT2: GPT2_LINEWISE}

# The same pattern for ASCII-only text, spelled for the standard ``re`` module, which runs it
# about twice as fast as ``regex`` (in ASCII, \p{L} is [A-Za-z], \p{N} is [0-9] and \s is
# [\t\n\v\f\r ]). Lines never share a pre-token, so a block may be cut at line ends and
# each piece matched by whichever pattern fits it.
_S = r"\t\n\x0b\x0c\r "
_H = r"\t\x0b\x0c\r "
GPT2_LINEWISE_ASCII = (
    rf""" ?[A-Za-z]+|'(?:[stmd]|re|ve|ll)| ?[0-9]+| ?[^{_S}A-Za-z0-9]+"""
    rf"""|[{_H}]*\n|[{_H}]+(?![^{_S}])|[{_H}]+"""
)
_ASCII_TWIN = {GPT2_LINEWISE: GPT2_LINEWISE_ASCII}
_PIECE_CHARS = 1 << 14  # small enough that a stray non-ASCII character costs little

WordCounts = dict[str, int]


def byte_level_table() -> dict[int, str]:
    """``str.translate`` table respelling Latin-1-decoded bytes with the GPT-2 alphabet."""
    return {b: ch for b, ch in bytes_to_unicode().items()}


def count_byte_level(
    corpus: Corpus, pattern: str = GPT2, *, add_prefix_space: bool = False
) -> Generator[BytesRead, None, WordCounts]:
    """Count regex pre-tokens line by line, returned in byte-level spelling."""
    counter: Counter[str] = Counter()
    total = corpus.total_bytes
    linewise = None if add_prefix_space else _LINEWISE.get(pattern)
    if linewise is not None:
        findall = regex.compile(linewise).findall
        ascii_findall = re.compile(_ASCII_TWIN[linewise]).findall
        for block, done in corpus.blocks():
            if block.isascii():
                counter.update(ascii_findall(block))
            else:
                for piece in _line_pieces(block, _PIECE_CHARS):
                    counter.update((ascii_findall if piece.isascii() else findall)(piece))
            yield BytesRead(done, total)
    else:
        findall = regex.compile(pattern).findall
        for block, done in corpus.blocks():
            for line in split_lines(block):
                if add_prefix_space and not line.startswith(" "):
                    line = " " + line
                counter.update(findall(line))
            yield BytesRead(done, total)
    table = byte_level_table()
    return {
        w.encode("utf-8", "surrogatepass").decode("latin-1").translate(table): c
        for w, c in counter.items()
    }


def _line_pieces(block: str, size: int) -> Iterator[str]:
    """``block`` cut into runs of whole lines of about ``size`` characters."""
    start = 0
    n = len(block)
    while start < n:
        cut = block.find("\n", start + size) + 1
        if cut == 0:
            cut = n
        yield block[start:cut]
        start = cut


def count_metaspace(corpus: Corpus) -> Generator[BytesRead, None, WordCounts]:
    """Count HF ``Metaspace(prepend_scheme="always", split=True)`` pre-tokens per line."""
    counter: Counter[str] = Counter()
    total = corpus.total_bytes
    findall = regex.compile(SPACE_SYMBOL + "[^" + SPACE_SYMBOL + "]*").findall
    for block, done in corpus.blocks():
        for line in split_lines(block):
            line = line.removesuffix("\n").removesuffix("\r").replace(" ", SPACE_SYMBOL)
            if not line:
                continue
            if not line.startswith(SPACE_SYMBOL):
                line = SPACE_SYMBOL + line
            counter.update(findall(line))
        yield BytesRead(done, total)
    return dict(counter)


def count_sentencepiece_words(
    corpus: Corpus, user_symbols: tuple[str, ...] = ()
) -> Generator[BytesRead, None, tuple[WordCounts, WordCounts]]:
    """Count ``▁word`` for each space-separated word of each line (sentencepiece's split).

    Returns the counts and, separately, how often each word ended its line (sentencepiece
    seeds from whole lines, where a word is followed by ``▁`` or by the end of the line).
    ``user_symbols`` are removed, the longest first at each position (sentencepiece's
    prefix matcher), and split their word: ``a<sym>b`` gives ``▁a`` and ``b``.
    """
    counter: Counter[str] = Counter()
    final: Counter[str] = Counter()
    total = corpus.total_bytes
    cut = _symbol_cutter(user_symbols)
    for block, done in corpus.blocks():
        for line in split_lines(block):
            parts = [w for w in line.removesuffix("\n").removesuffix("\r").split(" ") if w]
            if not parts:
                continue
            words = [SPACE_SYMBOL + w for w in parts]
            if cut is not None:
                words = [piece for w in words for piece in cut(w)]
                if not words:
                    continue
            counter.update(words)
            final[words[-1]] += 1
        yield BytesRead(done, total)
    return dict(counter), dict(final)


def _symbol_cutter(symbols: tuple[str, ...]) -> Callable[[str], list[str]] | None:
    """``▁word`` -> its parts around user symbols (``▁`` kept when a symbol starts it)."""
    if not symbols:
        return None
    split = regex.compile("|".join(map(regex.escape, sorted(symbols, key=len, reverse=True))))

    def cut(word: str) -> list[str]:
        parts = split.split(word)
        if len(parts) == 1:
            return parts
        return [p for p in parts if p]

    return cut
