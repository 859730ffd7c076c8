"""tokenizer.json and GGUF: load time and encode speed vs the reference, ids checked identical.

    python benchmarks/bench_hf_gguf.py [--repeat 3] [--mb 1]
    python benchmarks/bench_hf_gguf.py --load-table [--repeat 3]

``--load-table``: cold and warm load of every ``.refcache/llama-cpp/*.gguf``, the largest
tokenizer.json files and the SentencePiece ``.model`` files, each load in a **fresh Python
process** (engine modules imported before the clock starts; CPU time of
``load_tokenizer`` alone). *cold* = an empty vocabulary cache directory (the load parses
everything and writes the cache), *warm* = a second process with that cache. Best of
``--repeat`` (each cold round with a new empty cache dir).

Load: every ``ggml-vocab-*.gguf`` of the llama-cpp-python sdist through our loader, and the
same file through ``gguf.GGUFReader`` (metadata + arrays, what a naive loader would use);
tokenizer.json files through our loader and ``tokenizers.Tokenizer.from_file``.

Encode: the bundled UDHR sample (16 languages) + botchan, repeated up to ``--mb`` MB, line by
line; ours ``encode`` (Token objects with offsets) vs HF ``encode_batch`` (one thread,
``add_special_tokens=False``) on mon-tokenizer (Unigram), MiniLM (WordPiece) and two
GGUF-derived byte-level BPEs (Llama 3, Qwen2) exported to tokenizer.json; ours also as
``encode_ids`` when the tokenizer has it. Best of ``--repeat``; every round of ours starts
cold (``clear_caches()``: no per-word memo from an earlier round). ``--encode-only`` skips
the GGUF load table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import gguf  # noqa: E402
from references import CACHE  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer  # noqa: E402

from explorer.engine.formats import load_tokenizer  # noqa: E402
from explorer.engine.hf.export import to_tokenizer_json  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def corpus(mb: float) -> list[str]:
    text = ((ROOT / "resources/corpus/udhr_sample.txt").read_text(encoding="utf-8")
            + (ROOT / "resources/corpus/botchan.txt").read_text(encoding="utf-8"))
    lines = [ln for ln in text.split("\n") if ln.strip()]
    out, size = [], 0
    while size < mb * 1e6:
        for ln in lines:
            out.append(ln)
            size += len(ln.encode("utf-8")) + 1
            if size >= mb * 1e6:
                break
    return out


_LOAD_ONE = """
import sys, time
from pathlib import Path
from explorer.engine.formats import load_tokenizer
import explorer.engine.formats.gguf_file, explorer.engine.formats.hf_json
import explorer.engine.formats.sentencepiece_model, explorer.engine.formats.tiktoken_file
import explorer.engine.sentencepiece.tokenizer, explorer.engine.unigram.model
start = time.process_time()
tok = load_tokenizer(Path(sys.argv[1]))
print(time.process_time() - start, tok.vocab_size)
"""


def load_in_fresh_process(path: Path, cache_dir: str) -> tuple[float, int]:
    """CPU seconds of ``load_tokenizer(path)`` in a new interpreter, and the vocab size."""
    env = dict(os.environ, EXPLORER_CACHE_DIR=cache_dir)
    env.pop("EXPLORER_NO_VOCAB_CACHE", None)
    out = subprocess.run([sys.executable, "-c", _LOAD_ONE, str(path)], env=env, check=True,
                         capture_output=True, text=True, cwd=ROOT).stdout.split()
    return float(out[0]), int(out[1])


def load_table(repeat: int) -> None:
    files = sorted((CACHE / "llama-cpp").glob("*.gguf"))
    files += [CACHE / "mon-tokenizer/mon_tokenizer.json", CACHE / "minilm/tokenizer.json"]
    files += sorted(CACHE.glob("sentencepiece/*.model"))
    files += sorted(CACHE.glob("mistral-common/*.model.v*"))
    print(f"## Load in a fresh process (CPU s, best of {repeat})")
    print("| file | size MB | tokens | cold (parse + write cache) | warm (cache) |")
    print("|---|---|---|---|---|")
    for path in files:
        cold = warm = float("inf")
        n = 0
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache_dir:
                t, n = load_in_fresh_process(path, cache_dir)
                cold = min(cold, t)
                warm = min(warm, load_in_fresh_process(path, cache_dir)[0])
        size = path.stat().st_size / 1e6
        print(f"| {path.name} | {size:.1f} | {n} | {cold:.2f} | {warm:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--load-table", action="store_true",
                    help="cold/warm load of every reference file in fresh processes, then exit")
    ap.add_argument("--encode-only", action="store_true",
                    help="only the encode table (skip the GGUF load table)")
    args = ap.parse_args()
    if args.load_table:
        load_table(args.repeat)
        return
    if not args.encode_only:
        gguf_load_table(args.repeat)
    encode_table(args.repeat, args.mb)


def gguf_load_table(repeat: int) -> None:
    """Every GGUF through our loader and through gguf.GGUFReader."""

    print("## GGUF load (seconds, best of", repeat, ")")
    print("| file | tokens | ours | gguf.GGUFReader | ratio |")
    print("|---|---|---|---|---|")
    for path in sorted((CACHE / "llama-cpp").glob("ggml-vocab-*.gguf")):
        ours = best(lambda p=path: load_tokenizer(p), repeat)
        ref = best(lambda p=path: gguf.GGUFReader(p), 1)
        n = load_tokenizer(path).vocab_size
        print(f"| {path.name} | {n} | {ours:.2f} | {ref:.2f} | {ref / ours:.1f}x |")


def _cold(t) -> None:
    """Forget every per-text memo (model cache, ...) so each round starts cold."""
    clear = getattr(t, "clear_caches", None)
    if clear is not None:
        clear()
        return
    cache = getattr(t.model, "_cache", None)
    if cache is not None:
        cache.clear()


def encode_table(repeat: int, mb_wanted: float) -> None:
    """Ours ``encode`` (and ``encode_ids``) vs HF ``encode_batch`` on one thread."""
    lines = corpus(mb_wanted)
    mb = sum(len(x.encode("utf-8")) + 1 for x in lines) / 1e6
    print(f"\n## Encode, {mb:.2f} MB, line by line (MB/s, best of {repeat}, cold caches)")
    print("| tokenizer | ours encode | ours encode_ids | HF encode_batch | encode/HF "
          "| encode_ids/HF | ids identical |")
    print("|---|---|---|---|---|---|---|")
    cases: list[tuple[str, object, HFTokenizer]] = []
    for name, path in [("mon-tokenizer (Unigram)", CACHE / "mon-tokenizer/mon_tokenizer.json"),
                       ("MiniLM (WordPiece)", CACHE / "minilm/tokenizer.json")]:
        cases.append((name, load_tokenizer(path), HFTokenizer.from_file(str(path))))
    for name, file in [("Llama 3 GGUF -> tokenizer.json (BPE)", "ggml-vocab-llama-bpe.gguf"),
                       ("Qwen2 GGUF -> tokenizer.json (BPE)", "ggml-vocab-qwen2.gguf")]:
        tok = load_tokenizer(CACHE / "llama-cpp" / file)
        cases.append((name, tok, HFTokenizer.from_str(json.dumps(to_tokenizer_json(tok)))))
    for name, ours_tok, ref in cases:
        ref.no_padding()
        ref.no_truncation()

        def run_ours(t=ours_tok) -> list[list[int]]:
            _cold(t)
            return [t.encode(x).ids for x in lines]

        def run_ids(t=ours_tok) -> list[list[int]]:
            _cold(t)
            return [t.encode_ids(x) for x in lines]

        def run_ref(r=ref) -> list[list[int]]:
            return [e.ids for e in r.encode_batch(lines, add_special_tokens=False)]

        expected = run_ref()
        same = run_ours() == expected
        to = best(run_ours, repeat)
        tr = best(run_ref, repeat)
        ids_speed = ids_ratio = "-"
        if hasattr(ours_tok, "encode_ids"):
            same = same and run_ids() == expected
            ti = best(run_ids, repeat)
            ids_speed, ids_ratio = f"{mb / ti:.2f}", f"{tr / ti:.2f}x"
        print(f"| {name} | {mb / to:.2f} | {ids_speed} | {mb / tr:.2f} | {tr / to:.2f}x "
              f"| {ids_ratio} | {same} |")


if __name__ == "__main__":
    main()
