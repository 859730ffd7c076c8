"""The batch Unigram encode (numpy lock-step Viterbi): identical to sentencepiece and to the
per-text path, ties, unknowns, user-defined pieces, re-basing and float32-unsafe texts."""

from __future__ import annotations

import numpy as np
import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st
from sp_support import (
    REFERENCE_MODELS,
    TRAINED,
    check_offsets,
    multilingual_lines,
    reference_model,
    sp_offsets,
    trained_model,
)
from sp_support import udhr_paragraphs as udhr

from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.sentencepiece_model import save_sentencepiece_model
from explorer.engine.sentencepiece import SentencePieceTokenizer
from explorer.engine.sentencepiece.pieces import PieceType
from explorer.engine.unigram.batch import MAX_WORD, BatchViterbi
from explorer.engine.unigram.model import UnigramModel, user_defined_score

UNIGRAM_REFERENCES = [f"{k}/{n}" for k, n in REFERENCE_MODELS if "unigram" in n]
UNIGRAM_TRAINED = [name for name, opts in TRAINED.items() if opts["model_type"] == "unigram"]


def _path(model: str):
    return trained_model(model) if model in TRAINED else reference_model(*model.split("/"))


def _corpus() -> list[str]:
    lines = multilingual_lines()
    for lang in ["deu", "fin", "tur", "hin", "tha", "kor", "amh", "yor", "vie", "arb"]:
        lines += udhr(lang)
    return lines


@pytest.mark.parametrize("model", UNIGRAM_REFERENCES + UNIGRAM_TRAINED)
def test_batch_ids_match_sentencepiece(model: str) -> None:
    path = _path(model)
    tok = load_tokenizer(path)
    assert isinstance(tok, SentencePieceTokenizer)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    lines = _corpus()
    tok.model._cache.clear()
    assert tok.encode_ids_batch(lines) == sp.encode(lines), model
    # again with the cache partly warm (words cached by the first call)
    assert tok.encode_ids_batch(lines[::-1]) == sp.encode(lines[::-1]), model


def test_very_long_lines_take_the_exact_path_where_rounding_could_decide() -> None:
    """Whole declarations as one line: prefix scores of thousands, where cached word
    segmentations are not always safe to reuse; ids must stay identical."""
    path = reference_model("sentencepiece", "botchan_en_unigram_1000.model")
    tok = load_tokenizer(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    lines = [" ".join(udhr(lang)) for lang in ["eng", "deu", "fin", "vie", "tur"]]
    lines += [" ".join(lines)]  # one line of ~70k characters: past sentencepiece's re-basing
    tok.model._cache.clear()
    many = tok.model.encode_many([tok.normalizer.normalize(x).text for x in lines])
    assert many._exact, "expected some texts on the exact path"
    assert tok.encode_ids_batch(lines) == sp.encode(lines)


@pytest.mark.parametrize("model", ["sentencepiece/kyoto_ja_unigram_8000.model", "uni_nfkc"])
def test_batch_viterbi_matches_the_per_word_viterbi(model: str) -> None:
    tok = load_tokenizer(_path(model))
    m = tok.model
    assert isinstance(m, UnigramModel)
    words: set[str] = set()
    for line in _corpus():
        words.update(w for w in m._split.findall(tok.normalizer.normalize(line).text))
    ordered = sorted(w for w in words if len(w) <= MAX_WORD)
    result = m._batch_viterbi().run(ordered)
    for k, word in enumerate(ordered):
        lengths, ids, _, spread, _ = m._viterbi(word, 0.0)
        a = int(result.start[k])
        b = a + int(result.count[k])
        assert tuple(result.piece_len[a:b].tolist()) == lengths, word
        assert tuple(result.piece_id[a:b].tolist()) == ids, word
        assert result.top[k] + 1.0 == pytest.approx(spread, abs=1e-3), word


def _toy(scores: dict[str, float], *, user: tuple[str, ...] = (), unused: tuple[str, ...] = ()):
    pieces = ["<unk>", *scores, *user, *unused]
    values = [0.0, *scores.values(), *(0.0 for _ in user), *(-1.0 for _ in unused)]
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * len(scores)
    types += [PieceType.USER_DEFINED] * len(user) + [PieceType.UNUSED] * len(unused)
    return UnigramModel(pieces, values, types)


def _batch_equals_per_word(model: UnigramModel, texts: list[str]) -> None:
    expected = [model.encode_ids(t) for t in texts]
    model._cache.clear()
    assert model.encode_ids_many(texts) == expected
    model._cache.clear()
    segments = model.segments_many(texts)
    model._cache.clear()
    assert segments == [model.segments(t) for t in texts]


def test_ties_keep_the_earliest_start_as_sentencepiece() -> None:
    # "ab" ties with "a" + "b" exactly (float32: -1.5 = -0.5 + -1.0): the earlier start wins
    model = _toy({"\u2581": -3.0, "a": -0.5, "b": -1.0, "ab": -1.5, "ba": -1.5, "bab": -3.0})
    texts = ["\u2581" + "ab" * k + "a" * (k % 3) for k in range(1, 400)]
    _batch_equals_per_word(model, texts)
    # many tied words in one text: each one after the first is re-run from its exact prefix
    texts = ["\u2581ab\u2581b\u2581ba" * k for k in range(1, 200)]
    _batch_equals_per_word(model, texts)
    many = model.encode_many(texts)
    assert len(many._exact) > 150
    result = model._batch_viterbi().run(["ab"])
    assert result.piece_len.tolist() == [2] and result.margin[0] == 0.0


def test_unknowns_user_defined_and_unused_pieces() -> None:
    model = _toy(
        {"\u2581": -2.0, "x": -1.0, "y": -1.5, "xy": -2.0, "\u2581x": -1.2},
        user=("<sep>", "yyy"),
        unused=("xx", "q"),
    )
    alphabet = "xyq<sep>z\u2581\U0001f600"
    texts = ["".join(alphabet[(i * 7 + j * 3) % len(alphabet)] for j in range(i % 40 + 1))
             for i in range(600)]
    _batch_equals_per_word(model, texts)


def test_scores_past_the_rebasing_threshold_fall_back_to_the_exact_path() -> None:
    # unknown characters cost min_score - 10 = -40010: a few make |path score| > 100000
    model = _toy({"\u2581": -1.0, "a": -40000.0, "b": -2.0})
    texts = ["\u2581" + "zzzab" * (k % 9 + 1) + "b" * k for k in range(300)]
    _batch_equals_per_word(model, texts)


def test_words_longer_than_the_lock_step_limit() -> None:
    model = _toy({"\u2581": -2.0, "a": -1.0, "b": -1.3, "ab": -2.0, "aba": -2.9})
    texts = ["\u2581" + "ab" * (MAX_WORD + k) for k in range(3)] + ["\u2581ab"] * 600
    _batch_equals_per_word(model, texts)


def test_empty_and_blank_texts() -> None:
    path = reference_model("sentencepiece", "botchan_en_unigram_1000.model")
    tok = load_tokenizer(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    texts = ["", " ", "   ", "\t", "a", ""] * 300
    assert tok.encode_ids_batch(texts) == sp.encode(texts)
    assert tok.encode_ids_batch([]) == []


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(alphabet="ab \u00e9\u3042\u00a8x", max_size=30), max_size=80))
def test_random_batches_match_sentencepiece(texts: list[str]) -> None:
    path = reference_model("sentencepiece", "botchan_en_unigram_1000.model")
    tok = _cached(str(path))
    tok.model._cache.clear()
    assert tok.encode_ids_batch(texts * 20) == _sp(str(path)).encode(texts * 20)


_CACHE: dict = {}


def _cached(path: str):
    if path not in _CACHE:
        _CACHE[path] = load_tokenizer(path)
    return _CACHE[path]


def _sp(path: str) -> spm.SentencePieceProcessor:
    key = ("sp", path)
    if key not in _CACHE:
        _CACHE[key] = spm.SentencePieceProcessor(model_file=path)
    return _CACHE[key]


def test_trie_table_finds_every_piece() -> None:
    """The numpy trie (hash table of node/character edges) holds exactly the dict trie."""
    tok = load_tokenizer(reference_model("sentencepiece", "kyoto_ja_unigram_8000.model"))
    m = tok.model
    batch = BatchViterbi(m.trie.entries, unk_id=m.unk_id, unk_score=m.unk_score,
                         user_score=user_defined_score)
    pieces = [p for p, e in m.trie.entries.items() if e is not None]
    result = batch.run(pieces)
    for k, piece in enumerate(pieces):
        a = int(result.start[k])
        b = a + int(result.count[k])
        # a piece can be beaten by a better split, but never left unmatched
        assert sum(result.piece_len[a:b].tolist()) == len(piece)
        assert m.unk_id not in result.piece_id[a:b].tolist() or any(
            m.trie.entries.get(c) is None for c in piece
        )


def test_prefix_scores_that_flip_float32_ties_match_sentencepiece(tmp_path) -> None:
    """"ab" ties "a" + "b" exactly from score 0, but at some prefix scores float32 rounding
    makes the two-piece path strictly better (found by search): sentencepiece then splits.
    The batch path must re-run those words from the exact prefix, as sentencepiece decides."""
    a, b, ab = -0.7733107805252075, -1.5899378061294556, -2.363248586654663
    model = _toy({"\u2581": -3.0999999046325684, "a": a, "b": b, "ab": ab,
                  "x": -2.369999885559082, "y": -1.1299999952316284})
    path = save_sentencepiece_model(model, tmp_path / "ties.model")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    texts = [" ".join(["x"] * (k % 700) + ["y"] * (k // 7) + ["ab"] * 5) for k in range(1, 900)]
    expected = sp.encode(texts)
    tok = load_tokenizer(path)
    tok.model._cache.clear()
    assert tok.encode_ids_batch(texts) == expected
    split_ab = [model.pieces.index(p) for p in ("a", "b")]
    assert sum(ids[-2:] == split_ab for ids in expected) > 50  # the flip really happens
    assert [tok.encode_ids(t) for t in texts] == expected
    # the same words in texts long enough for sentencepiece to re-base its scores
    long_texts = [" ".join(texts[k : k + 80]) for k in range(0, 800, 80)]  # past 100000
    tok.model._cache.clear()
    assert tok.encode_ids_batch(long_texts) == sp.encode(long_texts)


@pytest.mark.parametrize("model", ["sentencepiece/botchan_en_unigram_1000.model", "uni_nfkc"])
def test_one_long_text_goes_through_the_batch_path(model: str) -> None:
    """A text of 8192+ characters is solved by the batch path on its own (the UI's document
    windows, big pastes); past sentencepiece's re-basing it continues word by word."""
    path = _path(model)
    tok = load_tokenizer(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    long_text = " ".join(line for lang in ["eng", "deu", "hin", "vie"] for line in udhr(lang))
    assert len(long_text) > 30_000
    for text in [long_text[:9000], long_text]:
        tok.model._cache.clear()
        assert tok.encode_ids(text) == sp.encode(text)
        tok.model._cache.clear()
        enc = tok.encode(text, allowed_special=())
        assert enc.ids == sp.encode(text)
        check_offsets(enc, sp_offsets(sp, text), text)


def test_batch_words_are_kept_as_array_rows_once() -> None:
    """The batch path keeps its words as rows of arrays (explorer.engine.unigram.rows), not a
    tuple per word: a later call maps them to the same rows without solving them again, and
    clearing the cache empties them."""
    tok = load_tokenizer(_path(UNIGRAM_TRAINED[0]))
    model = tok.model
    model._cache.clear()
    lines = _corpus()
    first = tok.encode_ids_batch(lines)
    rows = model._cache.rows
    size = rows.size
    assert size > 1000
    assert len(model._cache) < size // 4  # the per-word dict holds long words' parts only
    table = rows.table()
    assert table.piece_id.dtype == np.int32 and len(table.first) == size
    row_of = dict(rows.row_of)
    solved = []
    real = model._words.batch_viterbi

    def counting():  # type: ignore[no-untyped-def]
        solved.append(1)
        return real()

    model._words.batch_viterbi = counting  # type: ignore[method-assign]
    try:
        assert tok.encode_ids_batch(lines) == first
    finally:
        model._words.batch_viterbi = real  # type: ignore[method-assign]
    assert not solved and rows.size == size and rows.row_of == row_of
    model._cache.clear()
    assert rows.size == 0 and not rows.row_of


def test_two_threads_filling_the_rows_get_the_same_ids() -> None:
    """Two threads encoding with one model append rows at once (the window's encoder and
    its settler do): each gets the ids it gets alone."""
    import threading

    tok = load_tokenizer(_path(UNIGRAM_TRAINED[0]))
    lines = _corpus()
    parts = [[lines[k::8] for k in range(j, 8, 2)] for j in (0, 1)]  # two threads' batches
    tok.model._cache.clear()
    alone = [[tok.encode_ids_batch(batch) for batch in mine] for mine in parts]
    for _ in range(3):
        tok.model._cache.clear()
        got: list[list[list[list[int]]]] = [[], []]

        def work(k: int, out: list[list[list[list[int]]]] = got) -> None:
            out[k] = [tok.encode_ids_batch(batch) for batch in parts[k]]

        threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == alone


def test_rows_solved_by_a_copy_are_the_rows_solved_here() -> None:
    """A copy of the model (a child process's, pickled) solves a text's words ahead and shares
    its rows: taken here, their pieces are the ones this model solves itself, an encode then
    solves nothing, and its ids are the cold encode's; words already here are not added
    twice. (A row's reuse bounds depend on whether its word was solved in a batch or alone,
    as in one model: they only decide when a word is re-run from its exact score.)"""
    import pickle

    tok = load_tokenizer(_path(UNIGRAM_TRAINED[0]))
    lines = _corpus()
    text = "\n".join(lines)
    copy = pickle.loads(pickle.dumps(tok))
    shares = list(copy.cache_shares(text, 2000))
    assert len(shares) > 3
    tok.model._cache.clear()
    cold = tok.encode_compact(text).ids
    mine = tok.model._cache.rows
    table = mine.table()
    expected = {w: table.pieces(r) for w, r in mine.row_of.items()}
    tok.model._cache.clear()
    taken = 0
    for share in shares:
        taken += tok.model.take_rows(share)
    assert taken == mine.size == len(set(mine.row_of))
    assert tok.model.take_rows(shares[0]) == 0  # all there already
    table = mine.table()
    shared = {w: table.pieces(r) for w, r in mine.row_of.items()}
    # every word of the text is there, with the pieces solved here; so is every part of a
    # word solved here, except the parts of words the copy solved a few at a time (those
    # are solved whole, their parts only in the per-word cache)
    words = set(tok.model._words.split.findall(tok.normalizer.normalize(text).text))
    assert words <= shared.keys()
    assert {w: shared[w] for w in expected if w in shared} == {
        w: p for w, p in expected.items() if w in shared}
    solved = []
    real = tok.model._words.batch_viterbi

    def counting():  # type: ignore[no-untyped-def]
        solved.append(1)
        return real()

    tok.model._words.batch_viterbi = counting  # type: ignore[method-assign]
    try:
        assert tok.encode_compact(text).ids == cold
    finally:
        tok.model._words.batch_viterbi = real  # type: ignore[method-assign]
    assert not solved


def test_shared_rows_are_not_taken_past_the_limit() -> None:
    import pickle

    tok = load_tokenizer(_path(UNIGRAM_TRAINED[0]))
    copy = pickle.loads(pickle.dumps(tok))
    [share, *_] = copy.cache_shares("\n".join(_corpus()), 2000)
    tok.model._cache.clear()
    rows = tok.model._cache.rows
    n = len(share.words)
    assert n > 10
    assert rows.take(share, limit=n) == 0 and rows.size == 0
    assert rows.take(share, limit=n + 1) == n == rows.size


def test_shares_carry_their_words_keys_and_rows_keep_them() -> None:
    """A share sends each word's key (the receiver does not hash the words again): the keys
    are the words' own, a share taken in part keeps the keys of the words taken, and a
    share without keys is keyed here. The rows' code points and keys are the ones the words
    give (whichever way the rows came: solved here, or taken)."""
    import dataclasses
    import pickle

    import numpy as np

    from explorer.engine.unigram.word_keys import KeyedWords

    tok = load_tokenizer(_path(UNIGRAM_TRAINED[0]))
    copy = pickle.loads(pickle.dumps(tok))
    shares = list(copy.cache_shares("\n".join(_corpus()), 2000))
    for share in shares:
        assert share.keys is not None
        assert share.keys.tolist() == KeyedWords.of(share.words).keys.tolist()
    rows = tok.model._cache.rows
    for keyed in (True, False):
        tok.model._cache.clear()
        first = shares[0]
        every_other = np.arange(0, len(first), 2)
        words = first.keyed().take(every_other)
        half = dataclasses.replace(first, codes=words.codes,
                                   bounds=words.bounds.astype(np.int32),
                                   first=first.first[::2], count=first.count[::2],
                                   limit=first.limit[::2], word_max=first.word_max[::2],
                                   keys=first.keys[::2] if keyed else None)
        assert half.words == first.words[::2]
        assert rows.take(half, limit=10**6) == len(half)
        later = [s if keyed else dataclasses.replace(s, keys=None) for s in shares]
        for share in later:
            rows.take(share, limit=10**6)
        words = rows.words(0, rows.size)
        assert len(set(words)) == rows.size
        expected = KeyedWords.of(words)
        assert rows._row_keys[:rows.size].tolist() == expected.keys.tolist()
        assert rows._codes[:rows._code_count].tolist() == expected.codes.tolist()
        assert rows.rows_of(expected.keys).tolist() == list(range(rows.size))
    # the rows a cold encode solves here keep their words' keys and code points too
    tok.model._cache.clear()
    tok.encode_compact("\n".join(_corpus()))
    words = rows.words(0, rows.size)
    expected = KeyedWords.of(words)
    assert rows._row_keys[:rows.size].tolist() == expected.keys.tolist()
    assert rows._codes[:rows._code_count].tolist() == expected.codes.tolist()
    some = np.array([5, 1, 3, 3, 0])
    assert KeyedWords.of(words).take(some).codes.tolist() == KeyedWords.of(
        [words[k] for k in some]).codes.tolist()


def test_shares_say_how_much_is_coming_and_the_rows_make_room_once() -> None:
    """A copy solving a text's words says with each share how many rows, pieces and code
    points it expects to send in all (what it solved so far, scaled to the whole text);
    the receiver makes room for them once (its key table is not grown share after share),
    and holds the same rows as when it grew them."""
    import dataclasses
    import pickle

    from explorer.engine.unigram.rows import WordRows

    tok = load_tokenizer(_path(UNIGRAM_TRAINED[0]))
    text = "\n".join(_corpus())
    copy = pickle.loads(pickle.dumps(tok))
    shares = list(copy.cache_shares(text, 2000))
    assert len(shares) > 3
    sent = [0, 0, 0]
    for k, share in enumerate(shares):
        sent[0] += len(share)
        sent[1] += len(share.piece_id)
        sent[2] += len(share.codes)
        assert share.expected is not None
        if k == 0:  # (what the first one held, times a power of the text over what it covered)
            assert share.expected[0] > 5 * len(share)
        assert share.expected[0] >= sent[0]
    assert shares[-1].expected == (sent[0], sent[1], sent[2])  # (the whole text solved)
    grown, reserved = WordRows(), WordRows()
    tables = []
    for share in shares:
        grown.take(dataclasses.replace(share, expected=None), limit=10**6)
        reserved.take(share, limit=10**6)
        tables.append(reserved._keys._keys)
    assert all(t is tables[1] for t in tables[1:])  # (sized once, at the first share)
    assert reserved.size == grown.size
    assert reserved.words(0, reserved.size) == grown.words(0, grown.size)
    a, b = reserved.table(), grown.table()
    for name in ("first", "count", "limit", "word_max", "piece_len", "piece_id"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert reserved.rows_of(grown._row_keys[:grown.size]).tolist() == list(range(grown.size))
