"""Training speed, side by side with the reference trainers, in one run (single thread).

    python benchmarks/bench_train.py            # 1 MB and 10 MB (a few minutes)
    python benchmarks/bench_train.py --sizes 1  # 1 MB only
    python benchmarks/bench_train.py --options  # BPE 16k with HF's prefix/suffix/length cap

Corpora: botchan + CPython standard-library sources, deterministic (``train_corpus.py``).
BPE (byte-level, GPT-2 split, 4k and 16k) vs HF ``BpeTrainer``: merges must be identical.
Unigram 8k vs HF ``UnigramTrainer`` (Metaspace) and sentencepiece (``num_threads=1``,
identity normalization), with tokens per character on held-out English (the UDHR sample).
Times are process CPU times (every trainer runs on one thread; CPU time does not count the
waits for other jobs on a shared machine) and include reading and counting the corpus.
Reference and ours run back to back, in alternating order, ``--runs`` times; the ratio is the
median of the per-pair ratios. Prints a Markdown table (ratio = ours / reference).
"""

from __future__ import annotations

import os

os.environ["RAYON_NUM_THREADS"] = "1"  # before tokenizers is imported
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sentencepiece as spm
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_corpus

from explorer.bundled import resource_path
from explorer.engine.trainers import BpeConfig, Corpus, UnigramConfig, export, run, train

WORK = Path(tempfile.gettempdir()) / "tokenizer-explorer-bench"


def _median_time(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        t = time.process_time()
        result = fn()
        times.append(time.process_time() - t)
    return statistics.median(times), result


def _paired(ref: Callable[[], Any], ours: Callable[[], Any], runs: int
            ) -> tuple[float, float, float, Any, Any]:
    """Run reference and ours back to back ``runs`` times (alternating which goes first, so
    load drift hits both); return median times, the median of per-pair ratios, results."""
    t_ref: list[float] = []
    t_us: list[float] = []
    r_ref = r_us = None
    for i in range(runs):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            t = time.process_time()
            if which == 0:
                r_ref = ref()
                t_ref.append(time.process_time() - t)
            else:
                r_us = ours()
                t_us.append(time.process_time() - t)
    ratio = statistics.median(u / r for u, r in zip(t_us, t_ref, strict=True))
    return statistics.median(t_ref), statistics.median(t_us), ratio, r_ref, r_us


def _hf_bpe(path: Path, vocab_size: int, **options: Any) -> list[tuple[str, str]]:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  **options)
    tok.train([str(path)], trainer)
    return [tuple(m) for m in json.loads(tok.to_str())["model"]["merges"]]


def _our_bpe(path: Path, vocab_size: int, **options: Any) -> list[tuple[str, str]]:
    cfg = BpeConfig(vocab_size=vocab_size, merge_events=False, **options)
    return list(run(train(Corpus.from_files([path]), cfg)).model.merges)


BPE_OPTIONS: tuple[dict[str, Any], ...] = (
    {"continuing_subword_prefix": "##"}, {"end_of_word_suffix": "</w>"},
    {"max_token_length": 8})


def _option_rows(path: Path, size: str, runs: int) -> list[str]:
    """BPE 16k with each HF option. Prefix/suffix symbols get ids in HF's hash-map order,
    which varies per run, so only the merge count is compared for them."""
    rows = []
    for options in BPE_OPTIONS:
        t_hf, t_us, ratio, hf, us = _paired(
            lambda o=options: _hf_bpe(path, 16000, **o),
            lambda o=options: _our_bpe(path, 16000, **o), runs)
        marked = "max_token_length" not in options
        check = (f"{len(us)} merges, HF {len(hf)}" if marked
                 else f"merges {'identical' if us == hf else 'DIFFERENT'} ({len(us)})")
        name = ", ".join(f"{k}={v}" for k, v in options.items())
        rows.append(f"| BPE 16k {name} | {size} | HF BpeTrainer {t_hf:.2f} s | {t_us:.2f} s "
                    f"| **{ratio:.2f}x** | {check} |")
        print(rows[-1], flush=True)
    return rows


def _hf_unigram(path: Path, vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, show_progress=False,
                                      special_tokens=["<unk>"], unk_token="<unk>")
    tok.train([str(path)], trainer)
    return tok


def _sp_unigram(path: Path, vocab_size: int) -> spm.SentencePieceProcessor:
    prefix = WORK / f"sp_{path.stem}"
    spm.SentencePieceTrainer.train(
        input=str(path), model_prefix=str(prefix), vocab_size=vocab_size,
        model_type="unigram", normalization_rule_name="identity", num_threads=1,
        minloglevel=2, max_sentence_length=1 << 16)
    return spm.SentencePieceProcessor(model_file=f"{prefix}.model")


def _our_unigram(path: Path, vocab_size: int) -> spm.SentencePieceProcessor:
    model = run(train(Corpus.from_files([path]), UnigramConfig(vocab_size=vocab_size))).model
    out = export(model, WORK / f"ours_{path.stem}.model")
    return spm.SentencePieceProcessor(model_file=str(out))


def _held_out() -> list[str]:
    lines = resource_path("corpus", "udhr_sample.txt").read_text("utf-8").splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("Déclaration universelle"))
    return [line for line in lines[:end] if line]


def main() -> int:
    """Run the benchmark and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,10", help="corpus sizes in MB (default 1,10)")
    ap.add_argument("--runs", type=int, default=5,
                    help="paired runs per BPE measurement at 1 MB (half at 10 MB; Unigram: "
                         "2 at 1 MB, 1 at 10 MB)")
    ap.add_argument("--options", action="store_true",
                    help="only BPE 16k with continuing_subword_prefix / end_of_word_suffix / "
                         "max_token_length")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    held = _held_out()
    chars = sum(len(line) for line in held)
    rows: list[str] = []
    for mb in (int(s) for s in args.sizes.split(",")):
        path = train_corpus.build(mb * 1_000_000, WORK)
        runs = args.runs if mb <= 1 else max(1, args.runs // 2)
        size = f"{path.stat().st_size / 1e6:.1f} MB"
        if args.options:
            rows += _option_rows(path, size, runs)
            continue
        for vocab in (4000, 16000):
            t_hf, t_us, ratio, hf, us = _paired(lambda v=vocab, p=path: _hf_bpe(p, v),
                                                lambda v=vocab, p=path: _our_bpe(p, v), runs)
            same = "identical" if us == hf else "DIFFERENT"
            rows.append(f"| BPE {vocab // 1000}k | {size} | HF BpeTrainer {t_hf:.2f} s | "
                        f"{t_us:.2f} s | **{ratio:.2f}x** | merges {same} ({len(us)}) |")
            print(rows[-1], flush=True)
        u_runs = 1 if mb > 1 else 2
        t_hf, t_us, ratio, hf_tok, ours = _paired(lambda p=path: _hf_unigram(p, 8000),
                                                  lambda p=path: _our_unigram(p, 8000), u_runs)
        t_sp, sp = _median_time(lambda p=path: _sp_unigram(p, 8000), u_runs)
        tpc_hf = sum(len(hf_tok.encode(line).ids) for line in held) / chars
        tpc_sp = sum(len(sp.encode(line)) for line in held) / chars
        tpc_us = sum(len(ours.encode(line)) for line in held) / chars
        rows.append(f"| Unigram 8k | {size} | HF UnigramTrainer {t_hf:.2f} s | {t_us:.2f} s | "
                    f"**{ratio:.2f}x** | tokens/char: ours {tpc_us:.4f}, "
                    f"HF {tpc_hf:.4f} |")
        print(rows[-1], flush=True)
        rows.append(f"| Unigram 8k | {size} | sentencepiece {t_sp:.2f} s | {t_us:.2f} s | "
                    f"{t_us / t_sp:.2f}x | tokens/char: sentencepiece {tpc_sp:.4f} "
                    f"(ours/spm {tpc_us / tpc_sp:.3f}) |")
        print(rows[-1], flush=True)
    print("\n| trainer | corpus | reference | ours | ratio | check |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
