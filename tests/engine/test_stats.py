"""Corpus statistics: hand-computed values, scripts, reference token counts, pickling, the
process pool and a Dask LocalCluster giving identical tables, and clean cancellation."""

from __future__ import annotations

import json
import multiprocessing
import pickle
import time
from pathlib import Path

import distributed
import pytest
import sentencepiece as spm
import tiktoken
import tiktoken.load
import tokenizers
from references import require

from explorer.engine.errors import CorpusError
from explorer.engine.formats import load_tokenizer
from explorer.engine.formats.tiktoken_presets import PRESETS
from explorer.engine.generators import run_to_end as run
from explorer.engine.stats import CorpusSource, corpus_stats
from explorer.engine.stats.report import to_csv, to_dict, to_json, to_text
from explorer.engine.stats.scripts import script_runs

ROOT = Path(__file__).resolve().parents[2]
UDHR = ROOT / "resources" / "corpus" / "udhr_sample.txt"
VOCAB = ROOT / "resources" / "vocab"


@pytest.fixture(scope="module")
def wordlevel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A word-level tokenizer whose tokens are easy to count by hand."""
    path = tmp_path_factory.mktemp("stats") / "words.json"
    path.write_text(json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
        "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "unk_token": "[UNK]",
                  "vocab": {"[UNK]": 0, "hello": 1, "world": 2, "мир": 3, "!": 4}},
    }), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("corpus")
    a, b = d / "a.txt", d / "b.txt"
    a.write_bytes("hello world\nпривет мир\n".encode())
    b.write_bytes("日本 hello\r\n\n".encode())
    return [a, b]


def test_statistics_equal_hand_computed_values(wordlevel: Path, tiny_corpus: list[Path]) -> None:
    tok = load_tokenizer(wordlevel)
    stats = run(corpus_stats([tok], [CorpusSource.file(p) for p in tiny_corpus], workers=1,
                             names=["words"]))
    s = to_dict(stats)["tokenizers"][0]
    # hello|world, [UNK]|мир, [UNK]|hello, (empty line)
    assert (s["lines"], s["tokens"], s["chars"], s["words"]) == (4, 6, 29, 6)
    assert s["bytes"] == 11 + (12 + 1 + 6) + (6 + 1 + 5)
    assert (s["unknown"], s["byte_fallback"], s["special"]) == (2, 0, 0)
    assert s["unknown_rate"] == round(2 / 6, 4)
    assert s["chars_per_token"] == round(29 / 6, 4)
    assert s["bytes_per_token"] == 7.0 and s["words_per_token"] == 1.0
    assert (s["vocab_size"], s["vocab_used"], s["vocab_share"]) == (5, 4, 0.8)
    assert [(t["id"], t["count"]) for t in s["top_tokens"]] == [(0, 2), (1, 2), (2, 1), (3, 1)]
    assert [t["piece"] for t in s["top_tokens"]] == ["[UNK]", "hello", "world", "мир"]
    # characters each token covers: hello, world, hello 5; [UNK]=привет 6; мир 3; [UNK]=日本 2
    assert s["length_histogram"] == {"2": 1, "3": 1, "5": 3, "6": 1}
    assert s["by_script"] == {
        "Latin": {"tokens": 3, "chars": 16, "bytes": 16, "chars_per_token": round(16 / 3, 4)},
        "Cyrillic": {"tokens": 2, "chars": 10, "bytes": 19, "chars_per_token": 5.0},
        "CJK": {"tokens": 1, "chars": 3, "bytes": 7, "chars_per_token": 3.0},
    }
    assert s["by_file"]["a.txt"] == {"tokens": 4, "chars": 21, "bytes": 30, "lines": 2,
                                     "words": 4, "chars_per_token": 5.25}
    assert s["by_file"]["b.txt"]["tokens"] == 2 and s["by_file"]["b.txt"]["lines"] == 2
    hf = tokenizers.Tokenizer.from_file(str(wordlevel))
    lines = ["hello world", "привет мир", "日本 hello", ""]
    assert s["tokens"] == sum(len(hf.encode(x, add_special_tokens=False).ids) for x in lines)


def test_scripts_of_known_strings() -> None:
    cases = {
        "Hello": "Latin", "Привет": "Cyrillic", "Γειά": "Greek", "مرحبا": "Arabic",
        "שלום": "Hebrew", "नमस्ते": "Devanagari", "日本語": "CJK", "ひらがな": "CJK",
        "カタカナ": "CJK", "한국어": "Hangul", "สวัสดี": "Thai", "Բարեւ": "Armenian",
        "გამარჯობა": "Georgian", "ሰላም": "Ethiopic", "ᚠᚢᚦ": "Other", "123 !?": "Common",
        "😀": "Common",
    }
    for text, script in cases.items():
        assert script_runs(text) == [(script, 0, len(text))], text
    # Neutral characters join the run before them (or after, at the start of a line).
    assert script_runs("  (Hello), Привет!") == [("Latin", 0, 11), ("Cyrillic", 11, 18)]
    assert script_runs("नमस्ते 世界") == [("Devanagari", 0, 7), ("CJK", 7, 9)]


def _udhr_lines() -> list[str]:
    return UDHR.read_text(encoding="utf-8").split("\n")[:-1]


def test_tokens_equal_the_reference_libraries_counts() -> None:
    lines = _udhr_lines()
    cl100k = require("gpt-tokenizer", "cl100k_base.tiktoken")
    p = PRESETS["cl100k"]
    tk = tiktoken.Encoding("cl100k", pat_str=p.pattern,
                           mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(cl100k)),
                           special_tokens=p.special_tokens)
    sp = spm.SentencePieceProcessor(model_file=str(VOCAB / "corpus_unigram_4k.model"))
    hf = tokenizers.Tokenizer.from_file(str(VOCAB / "corpus_bpe_4k.json"))
    toks = [load_tokenizer(cl100k), load_tokenizer(VOCAB / "corpus_unigram_4k.model"),
            load_tokenizer(VOCAB / "corpus_bpe_4k.json")]
    stats = run(corpus_stats(toks, [CorpusSource.file(UDHR)], workers=1))
    got = [c["tokens"] for c in to_dict(stats)["tokenizers"]]
    assert got == [
        sum(len(tk.encode(x, allowed_special="all")) for x in lines),
        sum(len(ids) for ids in sp.encode(lines)),
        sum(len(hf.encode(x, add_special_tokens=False).ids) for x in lines),
    ]


@pytest.mark.parametrize("vocab", [
    ("gpt-tokenizer", "o200k_base.tiktoken"),
    ("mon-tokenizer", "mon_tokenizer.json"),
    ("minilm", "tokenizer.json"),
    ("sentencepiece", "botchan_en_bpe_1000.model"),
    ("llama-cpp", "ggml-vocab-gpt-2.gguf"),
    ("llama-cpp", "ggml-vocab-llama-spm.gguf"),
    ("llama-cpp", "ggml-vocab-bert-bge.gguf"),
])
def test_every_format_pickles(vocab: tuple[str, str]) -> None:
    tok = load_tokenizer(require(*vocab))
    copy = pickle.loads(pickle.dumps(tok))
    for line in _udhr_lines()[::40]:
        assert copy.encode(line).ids == tok.encode(line).ids


def test_bundled_tokenizers_pickle() -> None:
    for name in ("cl100k_base.tiktoken", "corpus_bpe_4k.json", "corpus_unigram_4k.model"):
        tok = load_tokenizer(VOCAB / name)
        copy = pickle.loads(pickle.dumps(tok))
        assert copy.encode("Hello wörld 2000 日本").ids == tok.encode("Hello wörld 2000 日本").ids


@pytest.fixture(scope="module")
def two_tokenizers() -> list:
    return [load_tokenizer(VOCAB / "cl100k_base.tiktoken"),
            load_tokenizer(VOCAB / "corpus_unigram_4k.model")]


def test_process_pool_and_dask_local_cluster_give_identical_tables(two_tokenizers: list) -> None:
    sources = [CorpusSource.file(UDHR),
               CorpusSource.file(ROOT / "resources" / "samples" / "multilingual.txt")]
    kw = dict(shard_chars=30_000, diff_limit=5)
    inline = run(corpus_stats(two_tokenizers, sources, workers=1, **kw))
    pool = run(corpus_stats(two_tokenizers, sources, workers=2, **kw))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster:
        dask = run(corpus_stats(two_tokenizers, sources, scheduler=cluster.scheduler_address,
                                **kw))
    assert to_json(inline, diff=True) == to_json(pool, diff=True) == to_json(dask, diff=True)
    assert to_csv(pool, by_script=True) == to_csv(dask, by_script=True)
    assert inline.diff_count > 5 and len(inline.diff_lines) == 5
    assert [d.line for d in inline.diff_lines] == [1, 2, 3, 4, 5]


def test_corpus_job_cancels_cleanly(two_tokenizers: list) -> None:
    text = UDHR.read_text(encoding="utf-8") * 4
    job = corpus_stats(two_tokenizers, [CorpusSource.memory("big", text)], workers=2,
                       shard_chars=20_000)
    first = next(job)
    assert 0 < first.done < first.total
    job.close()
    assert multiprocessing.active_children() == []
    with pytest.raises(StopIteration):
        next(job)


def test_bad_corpus_is_a_one_line_error(tmp_path: Path, two_tokenizers: list) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff oops\n")
    with pytest.raises(CorpusError, match=r"bad.txt:2: invalid UTF-8"):
        run(corpus_stats(two_tokenizers, [CorpusSource.file(bad)], workers=1))
    with pytest.raises(CorpusError, match="no such file"):
        run(corpus_stats(two_tokenizers, [CorpusSource.file(tmp_path / "none")], workers=1))


def test_text_report_has_scripts_files_and_diff(wordlevel: Path, tiny_corpus: list[Path]) -> None:
    toks = [load_tokenizer(wordlevel), load_tokenizer(VOCAB / "corpus_bpe_4k.json")]
    stats = run(corpus_stats(toks, [CorpusSource.file(p) for p in tiny_corpus], workers=1,
                             diff_limit=10, names=["words", "bpe"]))
    text = to_text(stats, by_script=True, diff=True)
    assert "tokens per script" in text and "Cyrillic" in text
    assert "tokens per file" in text and "a.txt" in text
    assert "a.txt:1: [2 / " in text


def test_dask_keeps_no_shard_after_it_is_counted() -> None:
    """Memory stays bounded on Dask: no shard outlives its count anywhere in the scheduler's
    or worker's process (an in-process LocalCluster). Shards sent inside their tasks were all
    kept by the scheduler (36 of 36 here), so the driver grew with the corpus."""
    import gc

    from explorer.engine.stats.counts import Shard

    tok = load_tokenizer(VOCAB / "corpus_bpe_4k.json")
    text = "\n".join(f"line {i} of the corpus" for i in range(3000))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        stats = run(corpus_stats([tok], [CorpusSource.memory("dask-memory", text)],
                                 scheduler=cluster.scheduler_address, shard_chars=2000))
        # (the cluster lets go of a finished task's data on its own thread: on a loaded
        # machine the last one can still be held just after the result; a kept one is
        # still held 5 s later)
        deadline = time.monotonic() + 5.0
        while True:
            gc.collect()
            alive = [o for o in gc.get_objects()
                     if isinstance(o, Shard) and o.file == "dask-memory"]
            if not alive or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert stats.counts[0].lines == 3000
    assert alive == []
