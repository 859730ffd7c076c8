"""A word's re-run at a large prefix score depends on the score only through its binade key
(explorer/engine/unigram/binade.py), so re-runs are cached per key and stay exact.

Near-tie vocabularies (multi-character pieces within a few float32 ulps of their parts' sum):
every pair of prefix scores with the same key gives the same pieces, while different keys do
give different pieces (the key is not too coarse a test); a score that is an odd multiple of
half an ulp makes the parity of the prefix score decide, and the key carries it.
"""

from __future__ import annotations

import math
import random

import pytest
from test_unigram_limits import SPACE, f32, near_tie_model

from explorer.engine.sentencepiece.pieces import PieceType
from explorer.engine.unigram.limits import RESET_GUARD
from explorer.engine.unigram.many import encode_from
from explorer.engine.unigram.model import UnigramModel


def binade_scores(rng: random.Random, per_binade: int) -> list[float]:
    """float32 prefix scores in every binade from 2^6 up to the re-basing threshold."""
    out: list[float] = []
    for e in range(6, 17):
        for _ in range(per_binade):
            out.append(f32(-(2.0**e) * rng.uniform(1.0, 2.0)))
    return [s for s in out if abs(s) < 99_000]


def tie_prone(model: UnigramModel, rng: random.Random) -> UnigramModel:
    """``model`` with a few scores moved to odd multiples of 2^-8 .. 2^-12: half-ulp ties at
    prefix scores in the binades [2^12, 2^17)."""
    scores = list(model.scores)
    for i in rng.sample(range(1, len(scores)), 6):
        step = 2.0 ** -rng.randint(8, 12)
        scores[i] = (2 * math.floor(scores[i] / (2 * step)) + 1) * step
    return UnigramModel(model.pieces, scores, model.types)


def model_and_words(rng: random.Random, seed: int, count: int
                    ) -> tuple[UnigramModel, list[str]]:
    """A near-tie model (tie-prone for odd seeds) and up to ``count`` distinct words of it."""
    model = near_tie_model(rng)
    if seed % 2:
        model = tie_prone(model, rng)
    words = sorted({SPACE + "".join(rng.choice("abcd") for _ in range(rng.randint(1, 12)))
                    for _ in range(count)})
    return model, words


@pytest.mark.parametrize("seed", range(8))
def test_same_key_same_pieces(seed: int) -> None:
    rng = random.Random(seed)
    model, words = model_and_words(rng, seed, 80)
    path = model._words
    compared = differ = 0
    for word in words:
        word_max = path._part_entry(word)[3]
        by_key: dict[int, tuple[int, ...]] = {}
        for s in binade_scores(rng, 12):
            key = path.binade_key(s, word_max, word)
            if key is None:
                continue
            ids = path.viterbi(word, s)[1]
            first = by_key.setdefault(key, ids)
            assert ids == first, (word, s, key)
            compared += 1
        differ += len(set(by_key.values())) > 1
    assert compared > 5000
    assert differ > 0, "no word differs between binades: nothing was tested"


def test_key_is_none_where_the_pass_may_leave_the_binade() -> None:
    model = near_tie_model(random.Random(1))
    path = model._words
    span = path.score_span()
    w = SPACE + "ab"
    assert path.binade_key(0.0, 5.0, w) is None
    assert path.binade_key(-(2.0**16) - 1.0, 5.0, w) is None  # too close above 2^16
    assert path.binade_key(-(2.0**17) + 2.0, 5.0, w) is None  # would cross 2^17
    assert path.binade_key(-(2.0**16) - 10.0 - span, 5.0, w) is not None
    # the sign is part of the key
    assert path.binade_key(-3000.0, 5.0, w) != path.binade_key(3000.0, 5.0, w)


def tie_model() -> UnigramModel:
    """``a`` scores an odd multiple of half an ulp at binade [2^16, 2^17) (ulp 2^-7):
    ``a|b`` against ``ab`` is decided by which way ``S + score(a)`` rounds half to even,
    which depends on the parity of ``S / ulp``."""
    u = 2.0**-7
    pieces = ["<unk>", "a", "b", "ab", SPACE]
    scores = [0.0, -1.0 - u / 2, -1.0, -2.0 - 0.75 * u, -5.0]
    types = [PieceType.UNKNOWN] + [PieceType.NORMAL] * 4
    return UnigramModel(pieces, scores, types)


def test_parity_decides_when_a_score_can_tie() -> None:
    model = tie_model()
    path = model._words
    a, b, ab = 1, 2, 3
    u = 2.0**-7
    seen: dict[int, tuple[int, ...]] = {}
    for q in range(70_000 * 128, 70_000 * 128 + 40):
        s = -q * u  # a float32 in [2^16, 2^17)
        assert f32(s) == s
        ids = path.viterbi("ab", s)[1]
        assert ids == ((a, b) if q % 2 == 0 else (ab,)), q
        key = path.binade_key(s, path._part_entry("ab")[3], "ab")
        assert key is not None
        assert seen.setdefault(key, ids) == ids
    assert len(seen) == 2  # one key per parity
    # a word without the tie-prone piece: one key for both parities
    other = {path.binade_key(-q * u, 4.0, "bb") for q in range(70_000 * 128, 70_000 * 128 + 8)}
    assert len(other) == 1
    # a binade where no score can tie has one key for both parities
    low = {path.binade_key(-(q * 2.0**-13), 4.0, "ab")
           for q in range(1024 * 2**13, 1024 * 2**13 + 8)}
    assert len(low) == 1


def test_document_reruns_come_from_the_cache() -> None:
    """A long text through the exact-score path: the second time a word is re-run in the
    same binade it is a cache hit, and the pieces are the ones one pass over the text gives."""
    rng = random.Random(5)
    model = near_tie_model(rng)
    path = model._words
    words = [SPACE + "".join(rng.choice("abcd") for _ in range(rng.randint(1, 8)))
             for _ in range(60)]
    text = "".join(rng.choice(words) for _ in range(30_000))
    keyed = 0  # passes run from a score with a binade key (cacheable)
    real = path.viterbi

    def counting(word: str, base: float):  # type: ignore[no-untyped-def]
        nonlocal keyed
        row = path.cache.rows.row_of.get(word)  # (the many-texts path's words)
        word_max = 0.0 if row is None else float(path.cache.rows.table().word_max[row])
        if (row is not None and abs(base) + word_max < RESET_GUARD
                and path.binade_key(base, word_max, word) is not None):
            keyed += 1
        return real(word, base)

    path.viterbi = counting  # type: ignore[method-assign]
    cold = encode_from(path, text, None, 0.0)
    cold_keyed, keyed = keyed, 0
    assert cold is not None
    assert path.cache.at_binade, "no word was re-run: the text does not test the cache"
    warm = encode_from(path, text, None, 0.0)
    path.viterbi = real  # type: ignore[method-assign]
    assert warm is not None and warm.ids.tolist() == cold.ids.tolist()
    assert warm.lengths.tolist() == cold.lengths.tolist()
    assert cold_keyed > 20
    assert len(path.cache.at_binade) > 100
    assert keyed == 0  # every re-run with a key came from the cache
    # an independent pass: the per-word Viterbi over the whole text at once (re-basing
    # included) decides exactly as sentencepiece's one pass
    whole = real(text, 0.0)
    assert list(whole[1]) == cold.ids.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_reruns_made_ahead_are_the_reruns_a_pass_makes(seed: int) -> None:
    """:meth:`WordPath.runs_ahead` (a helper process's re-runs, sent with its words): each
    is the pieces a pass makes from any score with its key, and every key a word with a low
    limit meets from its limit up to the re-basing guard is there."""
    import numpy as np

    from explorer.engine.unigram.binade import LOW_LIMIT

    rng = random.Random(seed)
    model, words = model_and_words(rng, seed, 60)
    path = model._words
    entries = [path._part_entry(w) for w in words]
    limits = np.array([entry[2] for entry in entries])
    word_max = np.array([entry[3] for entry in entries])
    runs = path.runs_ahead(words, limits, word_max)
    assert runs is not None
    ahead = {(word, key): runs.pieces(k)
             for k, (word, key) in enumerate(zip(runs.words, runs.keys.tolist(), strict=True))}
    assert len(ahead) > 40
    compared = 0
    for word, limit, most in zip(words, limits.tolist(), word_max.tolist(), strict=True):
        for s in binade_scores(rng, 6):
            key = path.binade_key(s, most, word)
            if key is None or abs(s) < limit:
                continue
            if limit >= LOW_LIMIT:
                assert (word, key) not in ahead
                continue
            assert (word, key) in ahead, (word, s, limit)
            assert tuple(map(tuple, path.viterbi(word, s)[:2])) == ahead[(word, key)]
            compared += 1
    assert compared > 300
    if seed % 2:  # (the tie-prone pieces give keys with a parity)
        assert any(key & 3 != 2 for _, key in ahead)
    # taken by another copy of the model: kept as arrays until a pass asks for one
    other = type(model)(model.pieces, model.scores, model.types)._words
    other.cache.take_ahead(runs)
    word, key = next(iter(ahead))
    assert other.cache.at_binade == {}
    assert other.cache.at(word, key) == ahead[(word, key)]
    assert other.cache.at_binade == {(word, key): ahead[(word, key)]}
    assert other.cache.at(word, key + 1000) is None


@pytest.mark.parametrize("few", [0, 1_000_000])
def test_can_tie_finds_exactly_the_words_holding_a_tie_prone_piece(
        few: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """:meth:`BinadeKeys._can_tie` against testing every piece: its substring sets (``few``
    0) and its piece by piece test."""
    import explorer.engine.unigram.binade as binade

    monkeypatch.setattr(binade, "FEW_TIE_PIECES", few)
    rng = random.Random(3)
    model = tie_prone(near_tie_model(rng), rng)
    path = model._words
    path.binade_key(-3000.0, 1.0, SPACE + "a")  # (builds the keys)
    keys = path._binade_keys
    assert keys is not None
    found = 0
    for e in range(6, 18):
        keys._can_tie(e, "")
        unk, pieces = keys._ties[e][:2]
        for _ in range(300):
            word = SPACE * rng.randint(0, 1) + "".join(rng.choice("abcd")
                                                      for _ in range(rng.randint(1, 14)))
            naive = unk or any(piece in word for piece in pieces)
            assert keys._can_tie(e, word) == naive, (e, word)
            found += naive
    assert 100 < found < 12 * 300


def test_tie_answers_are_kept_per_binade_and_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """:meth:`BinadeKeys.key` asks :meth:`BinadeKeys._can_tie` once per ``(binade, word)``
    and gives the same keys from the kept answers; past ``TIES_KEPT`` they are cleared."""
    import explorer.engine.unigram.binade as binade

    model = tie_model()
    path = model._words
    u = 2.0**-7
    bases = [-q * u for q in range(70_000 * 128, 70_000 * 128 + 6)]
    words = ["ab", "bb", "ba", "aab"]
    first = [[path.binade_key(s, 4.0, w) for s in bases] for w in words]
    keys = path._binade_keys
    assert keys is not None
    asked: list[tuple[int, str]] = []
    real = keys._can_tie
    monkeypatch.setattr(keys, "_can_tie", lambda e, w: asked.append((e, w)) or real(e, w))
    assert [[path.binade_key(s, 4.0, w) for s in bases] for w in words] == first
    assert asked == []
    assert len({k for row in first for k in row}) == 3  # "ab", "aab": two parities
    monkeypatch.setattr(binade, "TIES_KEPT", 2)
    path.binade_key(bases[0], 4.0, "abb")
    assert asked == [(17, "abb")] and len(keys._known) == 1
    assert [path.binade_key(s, 4.0, "aab") for s in bases] == first[3]
    assert len(keys._known) == 2


@pytest.mark.parametrize("few", [0, 1_000_000])
def test_can_tie_takes_pieces_literally(few: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tie-prone pieces holding a regular expression's special characters are searched for
    as text (the alternation of few pieces), and a binade without any never ties."""
    import numpy as np

    import explorer.engine.unigram.binade as binade

    monkeypatch.setattr(binade, "FEW_TIE_PIECES", few)
    u = 2.0**-7  # the ulp of [2^16, 2^17): e = 17
    pieces = ["<unk>", "a.b", "(", "x*", "[z]", "\\", "q"]
    scores = [-20.0, -1.0 - u / 2, -2.0 - u / 2, -3.0 - 1.5 * u, -4.0 - u / 2, -5.0 - u / 2,
              -6.0]
    keys = binade.BinadeKeys(np.array(scores, np.float32), pieces, 0, 30.0)
    for word, tie in [("a.b", True), ("axb", False), ("((", True), ("x*y", True),
                      ("xxy", False), ("[z]", True), ("z", False), ("a\\b", True),
                      ("q", False)]:
        assert keys._can_tie(17, word) is tie, word
    assert not keys._can_tie(16, "a.b(x*")


def test_tie_binades_match_the_test_per_binade() -> None:
    """:func:`tie_binades` gives each score the one binade where it is an odd multiple of
    half an ulp, as testing every binade does (float32 scores of every size, zero, powers of
    two, tiny and big ones)."""
    import numpy as np

    from explorer.engine.unigram.binade import tie_binades

    rng = np.random.default_rng(1)
    scores = np.concatenate([
        (-rng.random(20_000) * 30).astype(np.float32),
        (-rng.random(2_000) * 1e-6).astype(np.float32),
        np.float32([0.0, -0.5, 1.0, -(2.0**-30), 3.0, -0.1, -(2.0**20) - 1, 0.1 * 7]),
    ]).astype(np.float64)
    binades = tie_binades(scores)
    for e in range(-40, 50):
        halves = scores / math.ldexp(1.0, e - 25)
        whole = np.floor(halves)
        odd = (halves == whole) & (np.mod(whole, 2.0) == 1.0)
        assert np.array_equal(odd, binades == e), e
    assert (binades[scores == 0.0] < -1000).all()


def test_same_binades_need_every_run_of_a_binade_to_agree() -> None:
    """:func:`same_binades`: a word's bit ``e`` is set where its re-run at a negative key
    without parity gives its pieces, or both parities' re-runs do; not for a run that
    differs (in an id, a length or the count), a positive key, one parity alone, or runs
    without their words' rows."""
    import numpy as np

    from explorer.engine.unigram.binade import RunsAhead, same_binades

    def key(e: int, negative: bool, parity: int) -> int:
        return (e * 2 + int(negative)) * 4 + parity

    # words' pieces: word 0 = (1, 2), word 1 = (3,), word 2 = (4, 5)
    first, count = np.array([0, 2, 3]), np.array([2, 1, 2])
    piece_len, piece_id = np.array([1, 2, 3, 1, 1]), np.array([1, 2, 3, 4, 5])
    runs = [  # (row, key, lengths, ids)
        (0, key(17, True, 2), [1, 2], [1, 2]),   # word 0, e=17: same
        (0, key(16, True, 0), [1, 2], [1, 2]),   # e=16, both parities same
        (0, key(16, True, 1), [1, 2], [1, 2]),
        (0, key(15, True, 0), [1, 2], [1, 2]),   # e=15, the odd parity differs
        (0, key(15, True, 1), [3], [9]),
        (0, key(14, False, 2), [1, 2], [1, 2]),  # positive: not known
        (1, key(17, True, 2), [3], [3]),         # word 1, e=17: same
        (1, key(16, True, 2), [2, 1], [7, 8]),   # e=16: another count
        (1, key(15, True, 0), [3], [3]),         # e=15: one parity only
        (2, key(17, True, 2), [1, 1], [4, 6]),   # word 2: an id differs
        (2, key(16, True, 2), [2, 0], [4, 5]),   # a length differs
        (2, key(13, True, 2), [1, 1], [4, 5]),   # e=13: same
    ]
    starts = np.cumsum([0] + [len(r[2]) for r in runs])[:-1]
    made = RunsAhead(["w"] * len(runs), np.array([r[1] for r in runs], np.int32),
                     starts.astype(np.int32), np.array([len(r[2]) for r in runs], np.int32),
                     np.array([x for r in runs for x in r[2]], np.int32),
                     np.array([x for r in runs for x in r[3]], np.int32),
                     np.array([r[0] for r in runs], np.int32))
    bits = same_binades(made, 3, first, count, piece_len, piece_id)
    assert bits.dtype == np.uint32
    assert bits.tolist() == [(1 << 17) | (1 << 16), 1 << 17, 1 << 13]
    unrowed = RunsAhead(*[getattr(made, f) for f in ("words", "keys", "start", "count",
                                                     "piece_len", "piece_id")])
    assert same_binades(unrowed, 3, first, count, piece_len, piece_id).tolist() == [0, 0, 0]
    assert same_binades(None, 2, first, count, piece_len, piece_id).tolist() == [0, 0]


@pytest.mark.parametrize("seed", range(4))
def test_a_pass_keeps_pieces_known_the_same_without_rerunning(seed: int) -> None:
    """Rows taken from a copy's shares carry the binades where their re-runs made ahead
    give their pieces: a long text's exact pass then asks for few re-runs, and its pieces
    are still the one pass's over the whole text (re-basing included), near-tie and
    tie-prone models alike; the words whose re-runs differ are still re-run."""
    import explorer.engine.unigram.many as many

    rng = random.Random(seed)
    model = near_tie_model(rng)
    if seed % 2:
        model = tie_prone(model, rng)
    words = [SPACE + "".join(rng.choice("abcd") for _ in range(rng.randint(1, 8)))
             for _ in range(60)]
    text = "".join(rng.choice(words) for _ in range(30_000))
    copy = type(model)(model.pieces, model.scores, model.types)
    share = copy.share_rows([text])
    assert share.same_at is not None and share.same_at.any()
    taker = type(model)(model.pieces, model.scores, model.types)
    assert taker.take_rows(share) == len(share)
    asked: list[int] = []
    real = many._rerun

    def counting(solver, words_, pos, redo, starts, word_max):  # type: ignore[no-untyped-def]
        asked.append(len(redo))
        return real(solver, words_, pos, redo, starts, word_max)

    many._rerun = counting
    try:
        known = encode_from(taker._words, text, None, 0.0)
        known_asked = sum(asked)
        asked.clear()
        plain = type(model)(model.pieces, model.scores, model.types)
        plain.take_rows(replace_same_at(share))
        unknown = encode_from(plain._words, text, None, 0.0)
        unknown_asked = sum(asked)
    finally:
        many._rerun = real
    assert known is not None and unknown is not None
    whole = model._words.viterbi(text, 0.0)
    assert known.ids.tolist() == list(whole[1]) == unknown.ids.tolist()
    assert known.lengths.tolist() == list(whole[0])
    assert unknown_asked > 200
    assert known_asked < 0.9 * unknown_asked  # (near ties everywhere: most re-runs differ)


def replace_same_at(share):  # type: ignore[no-untyped-def]
    """``share`` without its known binades."""
    from dataclasses import replace

    return replace(share, same_at=None)
