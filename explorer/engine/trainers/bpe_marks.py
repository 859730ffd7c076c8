"""HF ``BpeTrainer``'s word marks and length cap, for :mod:`.bpe_trainer`.

- :func:`word_symbols`: a word's initial symbols with ``continuing_subword_prefix`` on every
  character but the first and ``end_of_word_suffix`` on the last (HF ``tokenize_words``);
- :func:`merge_words_capped`: the merge step when ``max_token_length`` is set, which needs
  each symbol's length in characters (HF ``Word::merge`` with ``max_length``).

Pair keys are ``id_a << shift | id_b`` as in the trainer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

WordCounts = dict[str, int]


def word_symbols(word: str, known: dict[str, int], prefix: str | None, suffix: str | None
                 ) -> Iterator[str]:
    """HF ``tokenize_words``: a word's symbols with prefix/suffix marks.

    Characters outside ``known`` are skipped, but still count as the word's first or last
    (HF tests the position in the word, not among the kept characters).
    """
    last = len(word) - 1
    for k, ch in enumerate(word):
        if ch not in known:
            continue
        if k and prefix is not None:
            ch = prefix + ch
        if k == last and suffix is not None:
            ch += suffix
        yield ch


def marked_symbols(counts: WordCounts, known: dict[str, int], prefix: str | None,
                   suffix: str | None) -> Iterator[str]:
    """Every marked symbol of the words, in first-occurrence order (may repeat)."""
    for word in counts:
        yield from word_symbols(word, known, prefix, suffix)


def merge_words_capped(
    words: list[list[int]],
    lens: list[list[int]],
    wcounts: list[int],
    pos: set[int],
    a: int,
    b: int,
    new: int,
    pair_counts: defaultdict[int, int],
    cap: int,
    shift: int,
) -> tuple[defaultdict[int, set[int]], int]:
    """Merge ``a b`` -> ``new`` in the words of ``pos``, counting a new pair only when it
    is shorter than ``cap`` characters (``lens``: each symbol's length, kept in step).

    Updates ``pair_counts`` in place (the joined occurrences stay counted, as in HF);
    returns the pairs that gained occurrences, with the words where they did, and the
    weighted number of occurrences joined.
    """
    touched: defaultdict[int, set[int]] = defaultdict(set)
    merged = 0
    sh = shift
    for i in pos:
        w = words[i]
        if a not in w:
            continue
        ln = lens[i]
        c = wcounts[i]
        before = len(w)
        j = 0
        while j < len(w) - 1:  # HF Word::merge: left to right, re-scanning after a merge
            if w[j] == a and w[j + 1] == b:
                merged = ln[j] + ln[j + 1]
                if j:
                    prev = w[j - 1]
                    pair_counts[prev << sh | a] -= c
                    if ln[j - 1] + merged < cap:
                        k = prev << sh | new
                        pair_counts[k] += c
                        touched[k].add(i)
                w[j] = new
                ln[j] = merged
                del w[j + 1], ln[j + 1]
                if j < len(w) - 1:
                    nxt = w[j + 1]
                    pair_counts[b << sh | nxt] -= c
                    if ln[j + 1] + merged < cap:
                        k = new << sh | nxt
                        pair_counts[k] += c
                        touched[k].add(i)
            j += 1
        merged += c * (before - len(w))
    return touched, merged
