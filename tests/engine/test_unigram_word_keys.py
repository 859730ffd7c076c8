"""Words found and keyed with numpy (``unigram.word_keys``): the same words as the model's
pattern, equal keys for equal words, and a text whose keys collide still encodes exactly
(the string way), for prefix and suffix (``treat_whitespace_as_suffix``) models."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sentencepiece as spm
from sp_support import multilingual_lines, trained_model
from sp_support import udhr_paragraphs as udhr

import explorer.engine.unigram.many as many
import explorer.engine.unigram.solve as solve
import explorer.engine.unigram.word_keys as keys_module
from explorer.engine.formats import load_tokenizer
from explorer.engine.sentencepiece.pieces import SPACE_SYMBOL, word_splitter
from explorer.engine.unigram.word_keys import (
    KeyedWords,
    TextWords,
    codes_of,
    splits_words,
    word_bounds,
    word_keys,
)

PREFIX = word_splitter(["\u2581a", "b"])
SUFFIX = word_splitter(["a\u2581", "b"])
ALPHABET = [SPACE_SYMBOL, SPACE_SYMBOL, "a", "b", "é", "\U00020000", "\u0301", " "]


def _texts(rng: random.Random) -> list[str]:
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 30)))
            for _ in range(rng.randrange(1, 6))]


@pytest.mark.parametrize("pattern", [PREFIX, SUFFIX], ids=["prefix", "suffix"])
@pytest.mark.parametrize("seed", range(40))
def test_bounds_cut_the_words_the_pattern_finds(pattern, seed: int) -> None:
    assert pattern is not None
    kind = splits_words(pattern)
    assert kind is not None
    texts = _texts(random.Random(seed))
    starts = np.cumsum([0] + [len(t) for t in texts])
    joined = "".join(texts)
    bounds = word_bounds(codes_of(joined), kind, starts[:-1])
    words = TextWords(joined, bounds)
    assert list(words) == [w for t in texts for w in pattern.findall(t)]
    keys = word_keys(codes_of(joined), bounds)
    assert -1 not in keys.tolist()
    by_word: dict[str, int] = {}
    for word, key in zip(words, keys.tolist(), strict=True):
        assert by_word.setdefault(word, key) == key  # equal words, equal keys
    if len(words) > 1:
        assert list(words[1:]) == list(words)[1:]


def test_other_patterns_take_the_string_way() -> None:
    import re
    assert splits_words(re.compile("[^ ]+")) is None


def _model_texts() -> list[str]:
    lines = multilingual_lines()
    for lang in ["eng", "hin", "tha", "jpn", "rus"]:
        lines += udhr(lang)
    return lines


@pytest.mark.parametrize("name", ["uni_nfkc", "uni_suffix"])
def test_keys_that_collide_fall_back_to_the_strings(name: str, monkeypatch) -> None:
    """Words of a length given one key: the rows found hold other words, which the check of
    their code points catches; the ids are still sentencepiece's. Keyed for real, the
    numpy way is taken (no string lookup) with the same ids."""
    path = trained_model(name)
    tok = load_tokenizer(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    lines = _model_texts()
    expected = sp.encode(lines)
    one = " ".join(lines)  # one long text too: the exact path, resumed documents
    calls: list[int] = []
    real_rows = many.word_rows

    def counting(solver, words):
        calls.append(len(words))
        return real_rows(solver, words)

    monkeypatch.setattr(many, "word_rows", counting)
    tok.model._cache.clear()
    assert tok.encode_ids_batch(lines) == expected
    assert tok.encode_ids(one) == sp.encode(one)
    assert not calls, "the numpy way fell back to strings"
    def same_key(codes, bounds):  # every word of a length has one key
        return np.diff(bounds).astype(np.int64) + 7

    # the rows' keys collide too: a row of the same length is found for every word,
    # holding another word
    monkeypatch.setattr(solve, "word_keys", same_key)
    monkeypatch.setattr(keys_module, "word_keys", same_key)  # (the rows' KeyedWords.of)
    for cold in (True, False):
        if cold:
            tok.model._cache.clear()
        assert tok.encode_ids_batch(lines) == expected
        assert tok.encode_ids(one) == sp.encode(one)
    assert calls, "colliding keys were not caught"


@pytest.mark.parametrize("name", ["uni_nfkc", "uni_suffix"])
def test_words_of_several_parts_are_put_together_as_entry_does(name: str) -> None:
    """New words are solved part by part: a word's row holds its parts' pieces in order
    (the pieces the per-word path finds for it), its bound is theirs summed and its limit
    is each part's less the bound before it, the smallest (``WordPath.entry``'s rule)."""
    tok = load_tokenizer(trained_model(name))
    model = tok.model
    solver = model._words
    texts = [tok.normalizer.normalize(line).text for line in _model_texts()]
    texts += ["\u2581self.assertEqual(x,\u2581y)\u2581foo_bar[1:2]+=baz;"] * 3
    model._cache.clear()
    solve.solve_words(solver, texts)
    store = solver.cache.rows
    table = store.table()
    several = 0
    for word, row in list(store.row_of.items()):
        parts = solver._parts(word)
        if len(parts) < 2:
            continue
        several += 1
        assert table.pieces(row) == list(solver.entry(word)[1]), word
        limit, bound = float("inf"), 0.0
        for part in parts:
            part_row = store.row_of[part]  # every part is a row of its own
            limit = min(limit, float(table.limit[part_row]) - bound)
            bound += float(table.word_max[part_row])
        assert float(table.word_max[row]) == pytest.approx(bound, abs=1e-9), word
        assert float(table.limit[row]) == pytest.approx(limit, abs=1e-9), word
    assert several > 20


def test_rows_keep_code_points_past_the_bmp() -> None:
    """Rows keep their code points in 16 bits until a word needs more; the check of a word
    against its row still sees every code point."""
    from explorer.engine.unigram.rows import WordRows

    store = WordRows()
    one = np.ones(1, np.int64)
    store.append(KeyedWords.of(["\u2581ab"]), np.zeros(1, np.int64), one,
                 np.zeros(1), np.zeros(1), one, one)
    assert store._codes.dtype == np.uint16
    store.append(KeyedWords.of(["\u2581\U00020000"]), np.zeros(1, np.int64), one,
                 np.zeros(1), np.zeros(1), one, one)
    assert store._codes.dtype == np.uint32
    assert store.words(0, 2) == ["\u2581ab", "\u2581\U00020000"]
    text = "\u2581ab\u2581\U00020000"
    codes = codes_of(text)
    bounds = np.array([0, 3, 5], np.int64)
    rows = store.rows_of(word_keys(codes, bounds))
    assert rows.tolist() == [0, 1] and store.holds(codes, bounds, rows)
    other = codes_of("\u2581ab\u2581\U00020001")
    assert not store.holds(other, bounds, rows)
    # widened inside reserved room: the room stays, the words held so far too
    roomy = WordRows()
    roomy.reserve(100, 100, 50_000)
    roomy.append(KeyedWords.of(["\u2581ab", "cd"]), np.zeros(2, np.int64), np.ones(2, np.int64),
                 np.zeros(2), np.zeros(2), one, one)
    roomy.append(KeyedWords.of(["\U00020000"]), np.zeros(1, np.int64), one,
                 np.zeros(1), np.zeros(1), one, one)
    assert roomy._codes.dtype == np.uint32 and len(roomy._codes) == 50_000
    assert roomy.words(0, 3) == ["\u2581ab", "cd", "\U00020000"]


def test_rows_give_back_their_words_as_strings() -> None:
    """Rows keep code points only; the strings made from them when asked (the string map,
    a share for another process) are the words appended, lone surrogates, combining marks
    and code points past the BMP included, across appends and the switch to 32 bits."""
    from explorer.engine.unigram.rows import WordRows

    batches = [["\u2581ab", "\u2581e\u0301", "x\ud800y", "\u2581\udc00"],
               ["\u2581\U0001f600\u200d", "\u2581\U00020000b"], ["\u2581\ud83d", "z"]]
    store = WordRows()
    for words in batches:
        keyed = KeyedWords.of(words)
        assert keyed.strings() == words
        assert [keyed.word(k) for k in range(len(words))] == words
        n = len(words)
        ones = np.ones(n, np.int64)
        store.append(keyed, np.arange(n), ones, np.zeros(n), np.zeros(n), ones, ones)
    every = [w for words in batches for w in words]
    assert store.words(0, store.size) == every
    assert store.words(2, 5) == every[2:5]
    assert store.row_of == {w: k for k, w in enumerate(every)}
    assert store.share(3).words == every[3:]
    assert store.share(store.size).words == [] and len(store.share(store.size)) == 0


def test_keys_are_the_documented_hash_for_short_and_long_words() -> None:
    """The numpy keys equal the hash computed with Python ints (mod 2**64), for words longer
    than any seen before (the table of powers grows) and after it."""
    import explorer.engine.unigram.word_keys as wk

    def reference(word: str) -> int:
        mask = (1 << 64) - 1
        h = 0
        for j, c in enumerate(word):
            h = (h + ord(c) * pow(int(wk._BASE), j, 1 << 64)) & mask
        h ^= (len(word) * int(wk._LENGTH_MIX)) & mask
        h ^= h >> 31
        h = (h * int(wk._FINAL_MIX)) & mask
        h ^= h >> 29
        h = h - (1 << 64) if h >= 1 << 63 else h
        return -2 if h == -1 else h

    words = ["\u2581a", "\u2581" + "x\U00020000" * 1500, "\u2581bc", "\u2581" + "y" * 7000]
    text = "".join(words)
    bounds = np.cumsum([0] + [len(w) for w in words])
    assert word_keys(codes_of(text), bounds).tolist() == [reference(w) for w in words]


@pytest.mark.parametrize("placed_max", [0, 5, 1 << 19])
def test_keys_by_place_in_the_text_equal_keys_by_place_in_the_word(placed_max: int,
                                                                   monkeypatch) -> None:
    """A text up to ``PLACED_MAX`` long is keyed from each code point's place in the text
    (times the inverse power of its word's start), a longer one from its place in its word:
    the same keys, whatever the words' places and lengths."""
    import explorer.engine.unigram.word_keys as wk

    rng = random.Random(placed_max)
    words = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12)))
             for _ in range(3000)]
    words += ["\u2581" + "z" * 900, "q"]
    codes = codes_of("".join(words))
    bounds = np.cumsum([0] + [len(w) for w in words]).astype(np.int64)
    expected = [word_keys(codes_of(w), np.array([0, len(w)], np.int64))[0] for w in words]
    monkeypatch.setattr(wk, "PLACED_MAX", placed_max)
    assert word_keys(codes, bounds).tolist() == expected
    assert word_keys(codes.astype(np.uint16) if codes.max() < 1 << 16 else codes,
                     bounds).tolist() == expected


def test_short_texts_find_their_words_by_key_while_the_string_map_is_behind() -> None:
    """After a long text's words became rows by key, a short text (the string way's size)
    finds its words by key too: the string map is not brought up to date for every row (a
    first keystroke after a big document's encode), and the ids are sentencepiece's, new
    words included."""
    path = trained_model("uni_nfkc")
    tok = load_tokenizer(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    lines = _model_texts()
    one = " ".join(lines)
    tok.model._cache.clear()
    assert tok.encode_ids(one) == sp.encode(one)
    store = tok.model._words.cache.rows
    behind = store.unsynced
    assert behind > solve.UNSYNCED_ROWS
    short = [line for line in lines if 0 < len(line) < 120][:12]
    short += ["zqxjv wvqk " + short[0], "Ωμέγα qqqz 𠀀x"]  # new words among known ones
    assert sum(map(len, short)) < solve.KEYED_MIN_CHARS  # (the string way's texts)
    assert tok.encode_ids_batch(short) == sp.encode(short)
    assert store.unsynced >= behind, "the string map was brought up to date"


def test_the_word_splitter_decides_as_one_search_per_piece_does() -> None:
    """word_splitter searches all pieces joined by NUL; a piece holding a NUL takes the
    search per piece; both decide as the per-piece rule on random pieces."""
    import re

    def per_piece(pieces: list[str]) -> str | None:
        after = any(re.search(f"[^{SPACE_SYMBOL}]{SPACE_SYMBOL}", p) for p in pieces)
        before = any(re.search(f"{SPACE_SYMBOL}[^{SPACE_SYMBOL}]", p) for p in pieces)
        return None if after and before else "prefix" if not after else "suffix"

    rng = random.Random(5)
    for _ in range(400):
        pieces = ["".join(rng.choice(f"ab{SPACE_SYMBOL}\0") for _ in range(rng.randint(1, 4)))
                  for _ in range(rng.randint(0, 6))]
        got = word_splitter(pieces)
        want = per_piece(pieces)
        assert (got is None) == (want is None), pieces
        if got is not None:
            assert got.pattern == (PREFIX if want == "prefix" else SUFFIX).pattern, pieces
