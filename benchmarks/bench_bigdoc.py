"""A 10 MB document in the window, and ``encode --lines`` over 100 MB: time and peak memory.

For each model (every bundled one: cl100k, o200k, the tokenizer.json BPE ``corpus_bpe_4k``
and the SentencePiece Unigram ``corpus_unigram_4k``; a 32k SentencePiece Unigram model
trained here with sentencepiece on English + the all-language UDHR; and five loaded from the
test references: all-MiniLM's WordPiece ``tokenizer.json``, Mistral's SentencePiece BPE
``tokenizer.model.v1``, mon_tokenizer's 64k-piece ``tokenizer.json`` Unigram, and llama.cpp's
Gemma 4 GGUF BPE vocabulary (262k pieces, 515k merges) and nomic-bert-moe GGUF Unigram
vocabulary (250k pieces)):

1. the real command, ``/usr/bin/time -v python -m explorer --screenshot OUT.png --vocab V
   --text-file BIG.txt`` (the window opens, encodes, highlights and renders, then exits):
   wall time and peak RSS (the largest of the process and its children);
2. the same start in a driver process that records when the shown part is first painted
   (the first window's partial result), when the whole text's result reaches the GUI thread
   ("encoded": the issue's target allows the paint of the shown part on top of 2x the
   reference) and when the whole text is highlighted, and the peak
   RSS of the window's process and of the first encode's child process
   (``explorer.workers.tail_encode``);
   ("from the text in the window": from the moment the editor holds the 10 MB text, which
   takes Qt ~0.6 s of the start-up, to the whole text highlighted);
3. the reference library encoding the same text in this process (tiktoken
   ``encode_ordinary`` / HF tokenizers ``encode`` (one thread) / sentencepiece ``encode`` /
   llama.cpp ``llama_tokenize`` of the whole text, CPU time).

Then ``/usr/bin/time -v python -m explorer encode --lines --output ids`` over 10 MB and 100 MB
(the 10 MB text repeated): the peak RSS must not grow with the input (streamed).

    python benchmarks/bench_bigdoc.py [--size-mb 10] [--lines-mb 100] [--unigram PATH]
        [--text english|udhr|oneline|longlines]
        [--only cl100k,o200k,bpe4k,unigram4k,unigram32k,minilm,mistral,mon,gemma4,nomic]
        (also: llamaspm, phi3, bge, commandr, deepseek, qwen2: more GGUF vocabularies)

The GGUF rows' reference is llama.cpp through llama-cpp-python (a test dependency; CI
builds it at -O0, so time it with an optimized build on ``PYTHONPATH``); without it they
show time and memory only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))


MODELS = {
    "cl100k": ("cl100k", "tiktoken", "cl100k_base.tiktoken"),
    "o200k": ("o200k", "tiktoken", "o200k_base.tiktoken"),
    "bpe4k": ("corpus_bpe_4k (tokenizer.json BPE)", "tokenizers", "corpus_bpe_4k.json"),
    "unigram4k": ("corpus_unigram_4k (SentencePiece Unigram)", "sentencepiece",
                  "corpus_unigram_4k.model"),
    "unigram32k": ("Unigram 32k (trained here, or --unigram)", "sentencepiece", ""),
    "minilm": ("all-MiniLM (tokenizer.json WordPiece)", "tokenizers", "minilm/tokenizer.json"),
    "mistral": ("Mistral v1 (SentencePiece BPE)", "sentencepiece",
                "mistral-common/tokenizer.model.v1"),
    "mon": ("mon_tokenizer (tokenizer.json Unigram, 64k pieces)", "tokenizers",
            "mon-tokenizer/mon_tokenizer.json"),
    "gemma4": ("Gemma 4 (GGUF BPE, 262k pieces)", "llama.cpp",
               "llama-cpp/ggml-vocab-gemma-4.gguf"),
    "nomic": ("nomic-bert-moe (GGUF llama.cpp Unigram, 250k pieces)", "llama.cpp",
              "llama-cpp/ggml-vocab-nomic-bert-moe.gguf"),
    # more GGUF vocabularies (not in the default run): other tokenizer families
    "llamaspm": ("Llama 2 (GGUF SentencePiece BPE)", "llama.cpp",
                 "llama-cpp/ggml-vocab-llama-spm.gguf"),
    "phi3": ("Phi-3 (GGUF SentencePiece BPE)", "llama.cpp", "llama-cpp/ggml-vocab-phi-3.gguf"),
    "bge": ("bert-bge (GGUF WordPiece)", "llama.cpp", "llama-cpp/ggml-vocab-bert-bge.gguf"),
    "commandr": ("Command R (GGUF BPE)", "llama.cpp", "llama-cpp/ggml-vocab-command-r.gguf"),
    "deepseek": ("DeepSeek Coder (GGUF BPE)", "llama.cpp",
                 "llama-cpp/ggml-vocab-deepseek-coder.gguf"),
    "qwen2": ("Qwen2 (GGUF BPE)", "llama.cpp", "llama-cpp/ggml-vocab-qwen2.gguf"),
}
DEFAULT = ("cl100k", "o200k", "bpe4k", "unigram4k", "unigram32k", "minilm", "mistral", "mon",
           "gemma4", "nomic")
"""``--only`` keys: (row name, reference library, bundled file or ``FOLDER/NAME`` of the
test references' cache, :func:`references.require`)."""


def time_v(cmd: list[str], stdout=subprocess.DEVNULL) -> tuple[float, float, int]:
    """``(wall s, peak RSS MB, exit status)`` of ``cmd`` under ``/usr/bin/time -v``."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], stdout=stdout, stderr=subprocess.PIPE,
                       env=env, text=True, check=False)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", r.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    assert wall and rss, r.stderr[-2000:]
    parts = [float(x) for x in wall.group(1).split(":")]
    seconds = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
    return seconds, int(rss.group(1)) / 1024, r.returncode


def driver(vocab: str, text_file: str) -> None:
    """Open the window on ``text_file`` as ``--screenshot`` does; print the times as JSON."""
    t0 = time.perf_counter()
    from PySide6.QtWidgets import QApplication

    from explorer.ui.app import (
        SCREENSHOT_SIZE,
        application,
        prefetch_start_text,
        wait_highlighted,
    )
    from explorer.ui.main_window import MainWindow
    from explorer.ui.settings import use_settings_dir

    tmp = tempfile.TemporaryDirectory()
    use_settings_dir(Path(tmp.name))
    children = ChildPeak()
    application()
    text = Path(text_file).read_text(encoding="utf-8-sig")  # (as run_app reads it)
    prefetch_start_text(text, vocab)  # as run_app does: the first encode's helper starts now
    window = MainWindow(autosave=False)
    marks: dict[str, float] = {}
    window.controller.partial_ready.connect(
        lambda _d: marks.setdefault("first_paint", time.perf_counter() - t0))
    expected = len(text.replace("\r\n", "\n"))  # (the editor reads CR LF as one break)
    on_result = window.controller._on_result

    def encoded(result) -> None:  # (the whole text's result reaches the GUI thread)
        if len(result.doc.text) == expected:
            marks.setdefault("encoded", time.perf_counter() - t0)
        on_result(result)

    window.controller._on_result = encoded  # (looked up when the encode is submitted)

    def text_in() -> None:  # (a big start-up text goes in on the event loop)
        if len(window.controller.text) == expected:
            marks.setdefault("window_with_text", time.perf_counter() - t0)

    window.editor.document().contentsChanged.connect(text_in)
    window.resize(*SCREENSHOT_SIZE)
    window.show()
    errors: list[str] = []  # (a vocabulary that does not load: say so, do not wait 600 s)
    window.loader.report_error = lambda _title, _msg: None
    window.loader.failed.connect(lambda _source, msg: errors.append(msg))
    window.restore(text=text, source=vocab)
    if not wait_highlighted(window, 600_000, stop=lambda: bool(errors)):
        raise SystemExit(errors[0] if errors else "timed out")
    if window.doc.text is not window.text():
        raise SystemExit("timed out")
    marks["highlighted"] = time.perf_counter() - t0
    marks.setdefault("first_paint", marks["highlighted"])
    marks["tokens"] = window.doc.token_count
    # VmHWM, not ru_maxrss: a process started by one that held more memory (this benchmark
    # after HF tokenizers encoded 10 MB: 1.87 GB) can report the parent's peak as its own.
    hwm = re.search(r"^VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    assert hwm
    marks["peak_rss_mb"] = int(hwm.group(1)) / 1024
    window.controller.shutdown()
    QApplication.processEvents()
    marks["child_peak_rss_mb"] = children.stop()
    print(json.dumps(marks))


class ChildPeak:
    """The largest peak RSS (``VmHWM``) of this process's children while it runs: the first
    encode's child process (``explorer.workers.tail_encode``). Polled, as ``ru_maxrss`` of a
    spawned child counts the parent's RSS at the fork before its ``exec``."""

    def __init__(self) -> None:
        import threading

        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        tasks = Path(f"/proc/{os.getpid()}/task")
        while not self._stop.wait(0.1):
            for children in tasks.glob("*/children"):
                try:
                    pids = children.read_text().split()
                except OSError:
                    continue
                for pid in pids:
                    try:
                        status = Path(f"/proc/{pid}/status").read_text()
                    except OSError:
                        continue
                    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
                    if found:
                        self.peak_kb = max(self.peak_kb, int(found.group(1)))

    def stop(self) -> float:
        """Stop polling; the peak in MB."""
        self._stop.set()
        self._thread.join()
        return self.peak_kb / 1024


def train_unigram(folder: Path) -> Path:
    import sentencepiece as spm
    from bench_unigram import english_lines, udhr_lines

    corpus = folder / "unigram32k_corpus.txt"
    corpus.write_text("\n".join(english_lines(3.0) + udhr_lines()[::2]) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(folder / "unigram32k"), vocab_size=32000,
        model_type="unigram", byte_fallback=True, character_coverage=0.9995, num_threads=1,
        minloglevel=2, input_sentence_size=300000, shuffle_input_sentence=False)
    return folder / "unigram32k.model"


def reference_seconds(kind: str, vocab: str, text: str) -> float:
    """CPU seconds of the reference library encoding ``text`` (best of 2); NaN for
    ``llama.cpp`` when llama-cpp-python is not installed."""
    if kind == "llama.cpp":
        try:
            import llama_cpp
        except ImportError:
            return float("nan")
        from explorer.engine.parity.llama_cpp_vocab import LlamaCppVocab

        llama = LlamaCppVocab(llama_cpp, Path(vocab))
        data = text.encode("utf-8")
        fn = lambda: llama.tokenize(data, add_special=False, parse_special=False)  # noqa: E731
    elif kind == "tokenizers":
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(vocab)
        hf.no_truncation()  # (all-MiniLM's file truncates to 128 tokens)
        hf.no_padding()
        fn = lambda: hf.encode(text, add_special_tokens=False)  # noqa: E731
    elif kind == "tiktoken":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from explorer.engine.formats import load_tokenizer

        pattern = load_tokenizer(vocab).info.extra["pattern"]
        enc = tiktoken.Encoding("cl100k", pat_str=pattern,
                                mergeable_ranks=load_tiktoken_bpe(vocab), special_tokens={})
        fn = lambda: enc.encode_ordinary(text)  # noqa: E731
    else:
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=vocab, num_threads=1)
        fn = lambda: sp.encode(text)  # noqa: E731
    best = float("inf")
    for _ in range(2):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def udhr_document(size_bytes: int, folder: Path) -> Path:
    """The UDHR in every language (:func:`bench_unigram.udhr_lines`, one paragraph a line),
    repeated and cut to ``size_bytes`` of UTF-8 at a line's end: ``folder/udhr_big.txt``."""
    from bench_unigram import udhr_lines

    one = "\n".join(udhr_lines()) + "\n"
    data = (one * (size_bytes // len(one.encode("utf-8")) + 1)).encode("utf-8")[:size_bytes]
    path = folder / "udhr_big.txt"
    path.write_bytes(data[: data.rfind(b"\n") + 1])
    return path


def one_line_document(size_bytes: int, folder: Path, english: Path) -> Path:
    """Minified JSON of ``size_bytes`` with no line break (records of the English
    document's words, ``separators=(",", ":")``): ``folder/one_line.json.txt``. A one-line
    document has no line start to cut at (:mod:`explorer.workers.long_lines`)."""
    import random

    words = english.read_text(encoding="utf-8").split()
    rng = random.Random(1)
    records, size = [], 0
    while size < size_bytes:
        record = {"id": len(records), "name": " ".join(rng.choices(words, k=5)),
                  "tags": rng.choices(words, k=3), "score": rng.random()}
        records.append(record)
        size += len(json.dumps(record, ensure_ascii=False).encode("utf-8")) + 1
    data = json.dumps(records, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    path = folder / "one_line.json.txt"
    path.write_bytes(data[:size_bytes].decode("utf-8", "ignore").encode("utf-8"))
    return path


def long_lines_document(folder: Path, one_line: Path, lines: int = 200) -> Path:
    """The one-line JSON (:func:`one_line_document`) cut after a comma into ``lines`` lines
    of ~47k characters each (a big JSON or CSV file with long rows):
    ``folder/long_lines.txt``. Lines this long are one segment each."""
    text = one_line.read_text(encoding="utf-8")
    step, parts, pos = len(text) // lines, [], 0
    while pos < len(text):
        cut = text.find(",", pos + step) + 1 or len(text)
        parts.append(text[pos:cut])
        pos = cut
    path = folder / "long_lines.txt"
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=10.0)
    parser.add_argument("--lines-mb", type=int, default=100)
    parser.add_argument("--unigram", help="a SentencePiece Unigram .model (default: train 32k)")
    parser.add_argument("--text", choices=("english", "udhr", "oneline", "longlines"),
                        default="english",
                        help="the document: English books (default), the UDHR in every "
                             "language of npm udhr (a test reference) repeated to the size, "
                             "one line of minified JSON made of the English words, or that "
                             "JSON in 200 lines")
    parser.add_argument("--only", default=",".join(DEFAULT),
                        help=f"comma-separated models (default: all of {', '.join(MODELS)})")
    parser.add_argument("--driver", nargs=2, metavar=("VOCAB", "TEXT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        driver(*args.driver)
        # (as the app ends: without the interpreter's teardown, whose last collection can
        # free a PySide wrapper after its Qt object and abort; seen with Gemma 4 on 10 MB
        # of Python source, every run)
        from explorer.cli import exit_process

        exit_process(0)
    # As installed: pip writes the package's bytecode; a checkout run with
    # PYTHONDONTWRITEBYTECODE (as here) would compile every module at each start.
    import compileall

    from train_corpus import build

    from explorer.bundled import resource_path

    compileall.compile_dir(str(ROOT / "explorer"), quiet=1)

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        size = int(args.size_mb * 1_000_000)
        if args.text == "udhr":
            big = udhr_document(size, tmp)
        else:
            big = build(size, tmp)
            if args.text in ("oneline", "longlines"):
                big = one_line_document(size, tmp, big)
            if args.text == "longlines":
                big = long_lines_document(tmp, big)
        text = big.read_text(encoding="utf-8")
        models = []
        for key in args.only.split(","):
            if key not in MODELS:
                parser.error(f"unknown model {key!r}; models: {', '.join(MODELS)}")
            name, kind, file = MODELS[key]
            if key == "unigram32k":
                vocab = args.unigram or str(train_unigram(tmp))
            elif "/" in file:
                from references import require

                vocab = str(require(*file.split("/")))
            else:
                vocab = str(resource_path("vocab", file))
            models.append((name, kind, vocab))
        print(f"document: {big.stat().st_size / 1e6:.2f} MB, {len(text):,} characters, "
              f"{text.count(chr(10)):,} lines")
        print("| model | screenshot command: wall / peak RSS | text in the window | shown part "
              "painted | whole text highlighted | reference encode (CPU) | highlighted / "
              "reference | from the text in the window / reference | of which encoded (to the "
              "result on the GUI thread) / reference, + shown (paint, table, counts) | peak "
              "RSS: window / its encode's child |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, kind, vocab in models:
            wall, rss, status = time_v([sys.executable, "-m", "explorer", "--screenshot",
                                        str(tmp / "out.png"), "--vocab", vocab, "--text-file",
                                        str(big)])
            assert status == 0, f"screenshot failed ({status})"
            out = subprocess.run([sys.executable, __file__, "--driver", vocab, str(big)],
                                 capture_output=True, text=True, check=True,
                                 env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                                      "PYTHONPATH": str(ROOT)})
            marks = json.loads(out.stdout.strip().splitlines()[-1])
            ref = reference_seconds(kind, vocab, text)
            after = marks["highlighted"] - marks["window_with_text"]
            # The target: highlighted within 2x the reference's encode plus the paint
            # of the shown part, so the encode's share and the rest are told apart.
            coded = marks.get("encoded", marks["highlighted"]) - marks["window_with_text"]
            shown = marks["highlighted"] - marks.get("encoded", marks["highlighted"])
            reference, whole, from_text, split = (
                (f"{kind} {ref:.2f} s", f"{marks['highlighted'] / ref:.1f}x",
                 f"{after:.2f} s: {after / ref:.1f}x",
                 f"{coded:.2f} s: {coded / ref:.1f}x, + {shown:.2f} s") if ref == ref
                else ("-", "-", f"{after:.2f} s", f"{coded:.2f} s + {shown:.2f} s"))
            print(f"| {name} | {wall:.1f} s / {rss:.0f} MB | {marks['window_with_text']:.2f} s | "
                  f"{marks['first_paint']:.2f} s | {marks['highlighted']:.2f} s "
                  f"({marks['tokens']:,} tokens) | {reference} | {whole} | {from_text} | {split} | "
                  f"{marks['peak_rss_mb']:.0f} / {marks['child_peak_rss_mb']:.0f} MB |")
        if args.lines_mb:
            reps = max(1, round(args.lines_mb / args.size_mb))
            many = tmp / "many.txt"
            with open(many, "w", encoding="utf-8") as f:
                for _ in range(reps):
                    f.write(text)
            print("\n| model | encode --lines: input | wall | peak RSS |\n|---|---|---|---|")
            for name, _kind, vocab in models:
                for path in (big, many):
                    wall, rss, status = time_v([sys.executable, "-m", "explorer", "encode",
                                                "--vocab", vocab, "--lines", "--output", "ids",
                                                str(path)])
                    assert status == 0
                    print(f"| {name} | {path.stat().st_size / 1e6:.0f} MB | {wall:.1f} s | "
                          f"{rss:.0f} MB |")


if __name__ == "__main__":
    from explorer.cli import exit_process

    main()
    exit_process(0)  # (no interpreter teardown once Qt ran: see exit_process)
