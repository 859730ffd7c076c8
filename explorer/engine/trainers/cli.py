"""``tokenizer-explorer train``: train BPE or Unigram on text files, with a progress bar.

The output format follows the extension: ``.json`` -> tokenizer.json, ``.model`` ->
SentencePiece, ``.tiktoken`` -> ranks. Progress goes to stderr (a one-line bar redrawn at
most ten times a second); a summary is printed on stdout at the end. The output file is
written atomically after training, so Ctrl-C leaves no partial file.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from explorer.engine.errors import TokenizerError
from explorer.engine.pretokenizers.patterns import PATTERNS
from explorer.engine.trainers.events import (
    BytesRead,
    EmStep,
    MergeSummary,
    PhaseStarted,
    Progress,
    PruneStep,
    TrainEvent,
    TrainingDone,
    WordsCounted,
)
from explorer.engine.trainers.models import TrainedBpe

_METASPACE_SPECIALS = ("<unk>", "<s>", "</s>")


class _UsageError(TokenizerError):
    """Options that cannot work together."""


def add_train_parser(subparsers: Any) -> None:
    """Register the ``train`` command on the main parser's subparsers."""
    p = subparsers.add_parser(
        "train", help="train a BPE or Unigram tokenizer on text files",
        description="Train a tokenizer; the output format follows the extension "
                    "(.json tokenizer.json, .model SentencePiece, .tiktoken ranks).")
    p.add_argument("--algorithm", choices=["bpe", "unigram"], required=True)
    p.add_argument("--vocab-size", type=int, required=True, metavar="N")
    p.add_argument("--output", required=True, metavar="PATH",
                   help="output file: .json, .model or .tiktoken")
    p.add_argument("--mode", choices=["byte-level", "metaspace"], default="byte-level",
                   help="BPE only: GPT-style byte-level with a regex split (default) or "
                        "SentencePiece-style characters with ▁ for spaces")
    p.add_argument("--pattern", default="gpt2", choices=sorted(PATTERNS),
                   help="BPE byte-level split pattern (default gpt2)")
    p.add_argument("--min-frequency", type=int, default=0, metavar="N",
                   help="BPE: stop when the best pair is rarer than N")
    p.add_argument("--limit-alphabet", type=int, default=None, metavar="N",
                   help="BPE: keep at most N initial characters")
    p.add_argument("--special-token", action="append", dest="special_tokens", default=None,
                   metavar="TOKEN",
                   help="BPE special token, repeatable; they take the first ids "
                        "(metaspace default: <unk> <s> </s>)")
    p.add_argument("--continuing-subword-prefix", default=None, metavar="STR",
                   help="BPE: mark non-initial symbols of a word (HF, e.g. ##); .json only")
    p.add_argument("--end-of-word-suffix", default=None, metavar="STR",
                   help="BPE: mark a word's last symbol (HF, e.g. </w>); .json only")
    p.add_argument("--max-token-length", type=int, default=None, metavar="N",
                   help="BPE: no merge makes a token of N characters or more (HF)")
    p.add_argument("--character-coverage", type=float, default=0.9995, metavar="F",
                   help="Unigram: share of characters that must be pieces")
    p.add_argument("--byte-fallback", action="store_true",
                   help="Unigram: add the 256 <0xNN> byte pieces for unknown characters")
    p.add_argument("--user-defined-symbol", action="append", dest="user_symbols",
                   default=None, metavar="SYMBOL",
                   help="Unigram: a piece always kept whole (sentencepiece "
                        "user_defined_symbols), repeatable")
    p.add_argument("--split-digits", action="store_true",
                   help="Unigram: every digit is a piece of its own")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("corpus", nargs="+", metavar="CORPUS", help="UTF-8 text files")
    p.set_defaults(func=cmd_train)


def _config(args: argparse.Namespace) -> Any:
    from explorer.engine.trainers.bpe_trainer import BpeConfig
    from explorer.engine.trainers.export import format_for_path
    from explorer.engine.trainers.unigram_trainer import UnigramConfig

    fmt = format_for_path(args.output)
    try:
        if args.algorithm == "unigram":
            if fmt == "tiktoken":
                raise _UsageError(".tiktoken holds byte-level BPE; use .json or .model")
            return UnigramConfig(vocab_size=args.vocab_size,
                                 character_coverage=args.character_coverage,
                                 byte_fallback=args.byte_fallback,
                                 user_defined_symbols=tuple(args.user_symbols or ()),
                                 split_digits=args.split_digits)
        mode = args.mode.replace("-", "_")
        specials = args.special_tokens
        if specials is None:
            specials = _METASPACE_SPECIALS if mode == "metaspace" else ()
        if fmt == "tiktoken" and mode != "byte_level":
            raise _UsageError(".tiktoken holds byte-level BPE; use --mode byte-level")
        if fmt == "sentencepiece" and (mode != "metaspace" or "<unk>" not in specials):
            raise _UsageError("a SentencePiece .model needs --mode metaspace and an <unk> "
                              "special token (--special-token '<unk>')")
        marked = args.continuing_subword_prefix or args.end_of_word_suffix
        if marked and fmt != "tokenizer.json":
            raise _UsageError("--continuing-subword-prefix and --end-of-word-suffix need a "
                              ".json output")
        return BpeConfig(vocab_size=args.vocab_size, mode=mode, pattern=PATTERNS[args.pattern],
                         min_frequency=args.min_frequency, limit_alphabet=args.limit_alphabet,
                         special_tokens=tuple(specials), merge_events=False,
                         continuing_subword_prefix=args.continuing_subword_prefix or None,
                         end_of_word_suffix=args.end_of_word_suffix or None,
                         max_token_length=args.max_token_length)
    except ValueError as e:
        raise _UsageError(str(e)) from None


class ProgressBar:
    """A one-line progress display on a text stream, redrawn at most every 0.1 s."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.phase = "starting"
        self.fraction: float | None = None
        self.detail = ""
        self._last = 0.0
        self._width = 0
        self.live = out.isatty()
        """On a terminal the line is redrawn; elsewhere one line per phase is printed."""

    def update(self, event: TrainEvent) -> None:
        """Fold one event into the display."""
        if isinstance(event, PhaseStarted):
            if not self.live and self._width:
                self.out.write(f"{self.phase}: {self.detail}\n")
            self.phase, self.fraction, self.detail = event.phase, None, ""
            self._width = 1
            self.draw(force=True)
            return
        if isinstance(event, BytesRead):
            mb = event.bytes_read / 1e6
            if event.total_bytes:
                self.fraction = event.bytes_read / event.total_bytes
            self.detail = f"{mb:.1f} MB"
        elif isinstance(event, Progress):
            self.fraction = event.done / max(1, event.total)
            self.detail = f"step {event.done} of {event.total}"
        elif isinstance(event, WordsCounted):
            self.detail = f"{event.unique_words} unique words"
        elif isinstance(event, MergeSummary):
            self.fraction = event.merges_done / max(1, event.merges_target)
            self.detail = f"{event.merges_done} merges, vocab {event.vocab_size}"
        elif isinstance(event, EmStep):
            self.detail = (f"round {event.round}.{event.sub_iteration} vocab {event.vocab_size}"
                           f" objective {event.objective:.3f}")
        elif isinstance(event, PruneStep):
            self.detail = f"pruned {len(event.removed)}, kept {event.kept}"
        self.draw()

    def draw(self, *, force: bool = False) -> None:
        """Redraw the line (throttled unless ``force``)."""
        if not self.live:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        if self.fraction is not None:
            filled = int(24 * min(1.0, self.fraction))
            bar = f"[{'#' * filled}{'.' * (24 - filled)}] {100 * self.fraction:3.0f}% "
        else:
            bar = ""
        line = f"{self.phase:<10} {bar}{self.detail}"
        self.out.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self.out.flush()

    def close(self) -> None:
        """End the progress line."""
        if self._width:
            self.out.write("\n" if self.live else f"{self.phase}: {self.detail}\n")
            self.out.flush()


def cmd_train(args: argparse.Namespace) -> int:
    """Run the ``train`` command."""
    from explorer.engine.trainers.api import train_to_file
    from explorer.engine.trainers.corpus import Corpus

    config = _config(args)
    corpus = Corpus.from_files(args.corpus)
    bar = None if args.quiet else ProgressBar(sys.stderr)
    done: TrainingDone | None = None
    try:
        for event in train_to_file(corpus, config, args.output):
            if bar is not None:
                bar.update(event)
            if isinstance(event, TrainingDone):
                done = event
    finally:
        if bar is not None:
            bar.close()
    assert done is not None
    model = done.model
    rows = [("algorithm", args.algorithm), ("vocab size", str(model.vocab_size))]
    if isinstance(model, TrainedBpe):
        rows += [("mode", model.mode), ("merges", str(len(model.merges))),
                 ("special tokens", " ".join(model.special_tokens) or "none")]
        if model.stop_reason:
            rows += [("stopped early", model.stop_reason)]
        if model.marked:
            rows += [("marks", f"prefix {model.continuing_subword_prefix!r}, "
                               f"suffix {model.end_of_word_suffix!r}")]
    else:
        rows += [("byte fallback", str(model.byte_fallback))]
        if model.user_symbols:
            rows += [("user symbols", " ".join(model.user_symbols))]
    rows += [("unique words", str(int(done.stats.get("unique_words", 0)))),
             ("time", f"{done.elapsed:.2f} s"), ("output", str(args.output))]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k.ljust(width)}  {v}")
    return 0
