"""tokenizer.json and GGUF: load time and encode speed vs the reference, ids checked identical.

    python benchmarks/bench_hf_gguf.py [--repeat 3] [--mb 1]

Load: every ``ggml-vocab-*.gguf`` of the llama-cpp-python sdist through our loader, and the
same file through ``gguf.GGUFReader`` (metadata + arrays, what a naive loader would use);
tokenizer.json files through our loader and ``tokenizers.Tokenizer.from_file``.

Encode: the bundled UDHR sample (16 languages) + botchan, repeated up to ``--mb`` MB, line by
line; ours ``encode`` (Token objects with offsets) vs HF ``encode_batch`` (one thread,
``add_special_tokens=False``) on mon-tokenizer (Unigram), MiniLM (WordPiece) and a
GGUF-derived byte-level BPE (Llama 3) exported to tokenizer.json. Best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mb", type=float, default=1.0)
    args = ap.parse_args()

    print("## GGUF load (seconds, best of", args.repeat, ")")
    print("| file | tokens | ours | gguf.GGUFReader | ratio |")
    print("|---|---|---|---|---|")
    for path in sorted((CACHE / "llama-cpp").glob("ggml-vocab-*.gguf")):
        ours = best(lambda p=path: load_tokenizer(p), args.repeat)
        ref = best(lambda p=path: gguf.GGUFReader(p), 1)
        n = load_tokenizer(path).vocab_size
        print(f"| {path.name} | {n} | {ours:.2f} | {ref:.2f} | {ref / ours:.1f}x |")

    lines = corpus(args.mb)
    mb = sum(len(x.encode("utf-8")) + 1 for x in lines) / 1e6
    print(f"\n## Encode, {mb:.2f} MB, line by line (MB/s)")
    print("| tokenizer | ours encode | HF encode_batch | ours/HF | ids identical |")
    print("|---|---|---|---|---|")
    llama = load_tokenizer(CACHE / "llama-cpp/ggml-vocab-llama-bpe.gguf")
    llama_json = json.dumps(to_tokenizer_json(llama))
    cases = [
        ("mon-tokenizer (Unigram)", CACHE / "mon-tokenizer/mon_tokenizer.json", None),
        ("MiniLM (WordPiece)", CACHE / "minilm/tokenizer.json", None),
        ("Llama 3 GGUF -> tokenizer.json (BPE)", None, llama_json),
    ]
    for name, path, doc in cases:
        if path is not None:
            ours_tok = load_tokenizer(path)
            ref = HFTokenizer.from_file(str(path))
        else:
            ours_tok = llama
            ref = HFTokenizer.from_str(doc)
        ref.no_padding()
        ref.no_truncation()

        def run_ours(t=ours_tok) -> list[list[int]]:
            cache = getattr(t.model, "_cache", None)
            if cache is not None:
                cache.clear()  # cold cache every round
            return [t.encode(x).ids for x in lines]

        def run_ref(r=ref) -> list[list[int]]:
            return [e.ids for e in r.encode_batch(lines, add_special_tokens=False)]

        same = run_ours() == run_ref()
        to = best(run_ours, args.repeat)
        tr = best(run_ref, args.repeat)
        print(f"| {name} | {mb / to:.2f} | {mb / tr:.2f} | {tr / to:.2f}x | {same} |")


if __name__ == "__main__":
    main()
