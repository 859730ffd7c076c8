"""Command line: ``tokenizer-explorer [gui options] | encode | info | chat | pipeline | train |
parity | stats``.

The ``encode`` and ``info`` contract is used by other tools; keep it stable. Every expected
failure (missing or corrupt file, unknown format, invalid UTF-8) prints one line on stderr
and exits 2, never a traceback.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import NoReturn, TextIO

from explorer import __version__
from explorer.engine.errors import TokenizerError

EXIT_USAGE = 2
INFO_MAX_SPECIALS = 40
"""``info`` lists this many special tokens, then says how many more there are."""


class CliError(Exception):
    """An error to print as one line before exiting with status 2."""


def _read_input(source: str) -> str:
    """Read UTF-8 text from a file path or ``-`` (stdin), strictly."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
            where = "stdin"
        else:
            with open(source, "rb") as f:
                data = f.read()
            where = source
    except OSError as e:
        raise CliError(f"cannot read {source}: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError(f"{where}: invalid UTF-8 at byte {e.start}") from None


def _load(args: argparse.Namespace):  # noqa: ANN202 - Tokenizer, imported lazily
    from explorer.engine.formats import load_tokenizer

    vocab = _bundled_path(args.vocab)
    return load_tokenizer(vocab, format=getattr(args, "format", None), preset=args.preset)


def _bundled_path(vocab: str) -> str:
    """The file of a ``bundled:NAME`` vocabulary (shipped with the app, also when frozen);
    any other value as it is."""
    if not vocab.startswith("bundled:"):
        return vocab
    from explorer.bundled import bundled_vocabulary

    try:
        return str(bundled_vocabulary(vocab))
    except KeyError as e:
        raise CliError(e.args[0]) from None


def _encode_payload(enc) -> dict:  # noqa: ANN001
    return {"ids": enc.ids, "pieces": enc.pieces, "offsets": [list(o) for o in enc.offsets]}


def _print_encoding(enc, output: str, out: TextIO) -> None:  # noqa: ANN001
    if output == "ids":
        out.write(" ".join(map(str, enc.ids)) + "\n")
    elif output == "pieces":
        out.write(" ".join(enc.pieces) + "\n")
    else:
        out.write(json.dumps(_encode_payload(enc), ensure_ascii=False) + "\n")


OUTPUT_CHUNK = 65_536
"""Tokens written at a time by :func:`_print_compact`."""


def _print_compact(tok, text: str, output: str, out: TextIO) -> None:  # noqa: ANN001
    """``pieces`` or ``json`` of ``tok.encode(text)``, written from its compact arrays a
    chunk at a time, exactly as :func:`_print_encoding` writes them: no Token object per
    token, and a text over a megabyte encoded in chunks (:mod:`~explorer.workers.long_lines`;
    a 9 MB one-line text asked for as JSON held 1.37 GB)."""
    from explorer.engine.compact import token_table
    from explorer.workers.long_lines import encode_long

    toks = encode_long(tok, text, None)  # (a long text in chunks: bounded temporaries)
    proto, irregular, n = token_table(tok).proto, toks.irregular, len(toks.ids)
    text_pieces = tok.text_piece_ids

    def pieces(a: int, b: int) -> list[str]:
        return [irregular[i].piece if i in irregular
                else text[toks.starts[i]:toks.ends[i]] if tid in text_pieces
                else proto(tid).piece  # type: ignore[union-attr]
                for i, tid in enumerate(toks.ids[a:b], a)]

    def chunks(chunk: Callable[[int, int], str], separator: str) -> None:
        for a in range(0, n, OUTPUT_CHUNK):
            out.write((separator if a else "") + chunk(a, min(n, a + OUTPUT_CHUNK)))

    if output == "pieces":
        chunks(lambda a, b: " ".join(pieces(a, b)), " ")
        out.write("\n")
        return

    def field(name: str, first: bool, chunk: Callable[[int, int], str]) -> None:
        out.write(("{" if first else ", ") + f'"{name}": [')
        chunks(chunk, ", ")
        out.write("]")

    field("ids", True, lambda a, b: ", ".join(map(str, toks.ids[a:b])))
    field("pieces", False, lambda a, b: json.dumps(pieces(a, b), ensure_ascii=False)[1:-1])
    field("offsets", False, lambda a, b: ", ".join(
        f"[{s}, {e}]" for s, e in zip(toks.starts[a:b], toks.ends[a:b], strict=True)))
    out.write("}\n")


LINES_BATCH = 4096
"""``encode --lines`` reads and encodes this many lines at a time (memory stays flat)."""


def _read_lines(source: str) -> Iterator[str]:
    """The lines of a file path or ``-`` (stdin), read as they are encoded (strict UTF-8,
    a final ``\r`` dropped). An invalid line stops the stream with a :class:`CliError`."""
    try:
        f = sys.stdin.buffer if source == "-" else open(source, "rb")  # noqa: SIM115
    except OSError as e:
        raise CliError(f"cannot read {source}: {e.strerror}") from None
    where = "stdin" if source == "-" else source
    offset = 0
    try:
        for raw in f:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise CliError(f"{where}: invalid UTF-8 at byte {offset + e.start}") from None
            offset += len(raw)
            yield line.removesuffix("\n").removesuffix("\r")
    except OSError as e:
        raise CliError(f"cannot read {source}: {e.strerror}") from None
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def cmd_encode(args: argparse.Namespace) -> int:
    """``encode``: print ids, pieces or JSON for the input text (or each line of it).

    ``--lines`` streams: lines are read, encoded and printed in batches, so memory does not
    grow with the input (an invalid UTF-8 line ends the output there, with the error).
    """
    text = None if args.lines else _read_input(args.input)
    tok = _load(args)
    out = sys.stdout
    add_special = getattr(args, "add_special_tokens", False)
    if add_special and not tok.supports_post_processor():
        raise CliError(f"--add-special-tokens: {tok.info.format} files have no post-processor "
                       "(tokenizer.json, model folders and GGUF have one)")
    # Ids only: tokenizers with an ids fast path skip building Token objects.
    encode_ids = (getattr(tok, "encode_ids", None)
                  if args.output == "ids" and not add_special else None)

    def emit(chunk: str) -> None:
        if encode_ids is not None:
            out.write(" ".join(map(str, encode_ids(chunk))) + "\n")
        elif add_special:
            _print_encoding(tok.encode(chunk, add_special_tokens=True), args.output, out)
        elif args.output != "ids":
            _print_compact(tok, chunk, args.output, out)
        else:
            _print_encoding(tok.encode(chunk), args.output, out)

    if args.lines:
        encode_batch = getattr(tok, "encode_ids_batch", None) if encode_ids is not None else None
        lines = _read_lines(args.input)
        while batch := list(islice(lines, LINES_BATCH)):
            if encode_batch is not None:  # Unigram models solve a batch's new words at once
                out.writelines(" ".join(map(str, ids)) + "\n" for ids in encode_batch(batch))
            else:
                for line in batch:
                    emit(line)
    else:
        assert text is not None
        emit(text)
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """``info``: format, model type, vocab size, special tokens, components."""
    tok = _load(args)
    info = tok.info
    ordered = sorted(info.special_tokens.items(), key=lambda kv: kv[1])
    specials = ", ".join(f"{k}={v}" for k, v in ordered[:INFO_MAX_SPECIALS])
    if len(ordered) > INFO_MAX_SPECIALS:  # tekken has 1000 (<SPECIAL_20>...)
        specials += f", ... and {len(ordered) - INFO_MAX_SPECIALS} more"
    rows = [
        ("name", info.name),
        ("format", info.format),
        ("model", info.model_type),
        ("vocab size", str(info.vocab_size)),
        ("special tokens", f"{len(info.special_tokens)}" + (f" ({specials})" if specials else "")),
        ("normalizer", info.normalizer),
        ("pre-tokenizer", info.pre_tokenizer),
        ("decoder", info.decoder),
        *info.extra.items(),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k.ljust(width)}  {v}")
    return 0


# -- chat (issue 16) -------------------------------------------------------------------------


def _read_messages(source: str) -> tuple[list[dict], list | None, list | None]:
    """``messages.json``: a list of ``{"role", "content"}`` objects (transformers' convention),
    or an object with ``messages`` (and optional ``tools``, ``documents``)."""
    from explorer.engine.hf.jsonutil import parse_json_text

    where = "stdin" if source == "-" else source
    obj = parse_json_text(_read_input(source), where)
    tools = documents = None
    if isinstance(obj, dict):
        tools, documents, obj = obj.get("tools"), obj.get("documents"), obj.get("messages")
    if not isinstance(obj, list) or not obj:
        raise CliError(f"{where}: expected a non-empty list of {{\"role\", \"content\"}} objects")
    for i, m in enumerate(obj):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise CliError(f"{where}: message {i} is not an object with a string 'role'")
    for name, value in (("tools", tools), ("documents", documents)):
        if value is not None and not isinstance(value, list):
            raise CliError(f"{where}: '{name}' must be a list")
    return obj, tools, documents


def cmd_chat(args: argparse.Namespace) -> int:
    """``chat``: render a conversation with the vocabulary's chat template and tokenize it."""
    from pathlib import Path

    from explorer.engine.chat.prompt import build_prompt
    from explorer.engine.chat.sandbox import render
    from explorer.engine.chat.templates import BUILTIN_TEMPLATES, chat_setup

    messages, tools, documents = _read_messages(args.messages)
    tok = _load(args)
    bundled = args.vocab.startswith("bundled:")  # built-in templates only
    setup = chat_setup(None if bundled else args.vocab, tok.info.special_tokens)
    if args.template and Path(args.template).is_file():
        try:
            source = Path(args.template).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise CliError(f"cannot read the template {args.template}: {e}") from None
    else:
        name = args.template or setup.default_name()
        if name is None:
            raise CliError(f"{args.vocab} has no chat template; choose one with --template "
                           f"({', '.join(BUILTIN_TEMPLATES)}) or a template file")
        source = setup.template(name)
    variables = setup.variables
    if args.output == "text":
        sys.stdout.write(render(source, messages, add_generation_prompt=args.add_generation_prompt,
                                tools=tools, documents=documents, variables=variables))
        return 0
    prompt = build_prompt(tok, source, messages, add_generation_prompt=args.add_generation_prompt,
                          variables=variables, tools=tools, documents=documents,
                          context_length=setup.context_length)
    out = sys.stdout
    if args.output == "ids":
        out.write(" ".join(map(str, prompt.encoding.ids)) + "\n")
    elif args.output == "counts":
        for m, n in zip(messages, prompt.counts, strict=True):
            out.write(f"{m['role']}\t{'?' if n is None else n}\n")
        if prompt.tail_count:
            out.write(f"generation prompt\t{prompt.tail_count}\n")
        limit = f" of {prompt.context_length}" if prompt.context_length else ""
        out.write(f"total\t{prompt.total}{limit}\n")
    else:
        payload = {**_encode_payload(prompt.encoding), "prompt": prompt.text,
                   "messages": [{"role": m["role"], "tokens": n, "span": list(sp) if sp else None}
                                for m, n, sp in zip(messages, prompt.counts, prompt.spans,
                                                    strict=True)],
                   "generation_prompt_tokens": prompt.tail_count, "total": prompt.total,
                   "context_length": prompt.context_length}
        out.write(json.dumps(payload, ensure_ascii=False) + "\n")
    return 0


def _add_chat_parser(sub: argparse._SubParsersAction) -> None:
    chat = sub.add_parser("chat", help="render a conversation with a chat template and count "
                                       "its tokens")
    _add_vocab_args(chat)
    chat.add_argument("messages", metavar="MESSAGES.json",
                      help='a list of {"role", "content"} objects (- for stdin)')
    chat.add_argument("--template", metavar="NAME|FILE", default=None,
                      help="a template of the vocabulary (default, or a named one), a built-in "
                           "(chatml, llama-3, mistral-instruct, gemma, phi-3) or a Jinja file")
    chat.add_argument("--add-generation-prompt", action="store_true",
                      help="end with the assistant header, as for generation")
    chat.add_argument("--output", choices=["text", "ids", "json", "counts"], default="text",
                      help="text: the prompt exactly as apply_chat_template(tokenize=False)")
    chat.set_defaults(func=cmd_chat)


def _add_vocab_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vocab", required=True, metavar="PATH",
                   help="vocabulary file: .tiktoken, tokenizer.json, SentencePiece .model, .gguf, "
                        "tiktoken JSON, tekken.json, minbpe .model, a model folder (or any "
                        "file in it), or bundled:NAME (e.g. bundled:cl100k_base)")
    p.add_argument("--preset", metavar="NAME", default=None,
                   help="tiktoken preset for the pattern and specials "
                        "(r50k, p50k, cl100k, o200k, qwen); detected from the file when absent")
    p.add_argument("--format", default=None,
                   choices=["tiktoken", "tokenizer.json", "sentencepiece", "gguf",
                            "tiktoken-json", "tekken", "minbpe", "folder"],
                   help="force the file format instead of detecting it")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(
        prog="tokenizer-explorer",
        description="See what a tokenizer does. With no command, opens the explorer window; "
                    "`tokenizer-explorer [options] PATH` opens it on the vocabulary PATH.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--vocab", metavar="PATH", help="open this vocabulary file")
    parser.add_argument("--text-file", metavar="FILE", help="start with the text of FILE")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="render the window offscreen after highlighting, save, and exit")
    parser.add_argument("--view", metavar="NAME", default="main",
                        help="which view to show: main or a panel (compare, vocab, bpe, "
                             "lattice, train, ...; an unknown name lists them)")
    desktop = parser.add_mutually_exclusive_group()
    desktop.add_argument("--install-desktop", action="store_true",
                         help="add the app to the desktop menu, with its icon and file types "
                              "(.tiktoken, .gguf, SentencePiece .model), for this user")
    desktop.add_argument("--uninstall-desktop", action="store_true",
                         help="remove what --install-desktop added")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    enc = sub.add_parser("encode", help="encode text and print ids, pieces or JSON")
    _add_vocab_args(enc)
    enc.add_argument("--lines", action="store_true",
                     help="encode each input line separately; one output line per input line")
    enc.add_argument("--output", choices=["ids", "pieces", "json"], default="ids")
    enc.add_argument("--add-special-tokens", action="store_true",
                     help="run the tokenizer.json post-processor ([CLS]/[SEP], <s>/</s>, BOS) "
                          "like HF encode(text, add_special_tokens=True); for GGUF, llama.cpp's "
                          "tokenize(text, add_special=true) BOS/EOS")
    enc.add_argument("input", nargs="?", default="-", metavar="FILE|-",
                     help="UTF-8 text to encode (default: stdin)")
    enc.set_defaults(func=cmd_encode)

    inf = sub.add_parser("info", help="describe a vocabulary file")
    _add_vocab_args(inf)
    inf.set_defaults(func=cmd_info)
    _add_chat_parser(sub)

    from explorer.engine.explain.cli import add_pipeline_parser  # issue 17

    add_pipeline_parser(sub, _add_vocab_args, _run_with_text)

    try:
        from explorer.engine.trainers.cli import add_train_parser
    except ImportError:
        pass
    else:
        add_train_parser(sub)
    # Parity and corpus statistics (issue 14).
    from explorer.engine.parity.cli import add_parity_parser
    from explorer.engine.stats.cli import add_stats_parser

    add_parity_parser(sub, _add_vocab_args)
    add_stats_parser(sub)
    return parser


def _run_with_text(args: argparse.Namespace, emit) -> int:  # noqa: ANN001 - emit(tok, text, args)
    """Read the input, load the vocabulary, hand both to ``emit``."""
    text = _read_input(args.input)
    emit(_load(args), text, args)
    return 0


def _run_gui(args: argparse.Namespace) -> int:
    try:
        from explorer.ui.app import run_app
    except ImportError as e:
        raise CliError(f"the explorer window is not available: {e}") from None
    return run_app(args)


GUI_VALUE_OPTIONS = ("--vocab", "--text-file", "--screenshot", "--view")


def split_open_path(argv: Sequence[str], commands: Sequence[str]) -> tuple[list[str], str | None]:
    """``tokenizer-explorer [options] PATH``: take out the file to open (not a command name)."""
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--" and i + 1 < len(args):
            return [*args[:i], *args[i + 2:]], args[i + 1]
        if arg in GUI_VALUE_OPTIONS:
            i += 2
            continue
        if arg.startswith("-") and arg != "-":
            i += 1
            continue
        if arg in commands:
            return args, None
        return [*args[:i], *args[i + 1:]], arg
    return args, None


def _desktop(args: argparse.Namespace) -> int:
    from explorer.desktop import data_home, install_desktop, uninstall_desktop

    try:
        if args.install_desktop:
            files = install_desktop()
            print(f"installed {len(files)} files under {data_home()} "
                  f"(menu entry, icons, file types); undo with --uninstall-desktop")
        else:
            files = uninstall_desktop()
            print(f"removed {len(files)} files under {data_home()}")
    except OSError as e:
        raise CliError(f"desktop integration failed: {e}") from None
    return 0


def _open_path(args: argparse.Namespace, path: str) -> None:
    """``tokenizer-explorer PATH`` (what a file manager runs): open PATH as the vocabulary."""
    if args.vocab:
        raise CliError(f"give either a file to open or --vocab, not both ({path})")
    if not os.path.isfile(path):
        raise CliError(f"cannot open {path}: no such file")
    args.vocab = os.path.abspath(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tokenizer-explorer`` and ``python -m explorer``."""
    parser = build_parser()
    commands = next((list(a.choices or ()) for a in parser._actions if a.dest == "command"), [])
    argv, open_path = split_open_path(sys.argv[1:] if argv is None else argv, commands)
    args = parser.parse_args(argv)
    try:
        if args.install_desktop or args.uninstall_desktop:
            return _desktop(args)
        if open_path is not None:
            _open_path(args, open_path)
        if args.command is None:
            return _run_gui(args)
        if args.command in ("parity", "stats"):  # their --vocab reads files: bundled: too
            vocab = args.vocab
            args.vocab = ([_bundled_path(v) for v in vocab] if isinstance(vocab, list)
                          else _bundled_path(vocab))
        return int(args.func(args) or 0)
    except (CliError, TokenizerError) as e:
        print(f"tokenizer-explorer: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


def run() -> NoReturn:
    """The process's entry (the ``tokenizer-explorer`` command, ``python -m explorer``):
    :func:`main`, then :func:`exit_process`."""
    exit_process(main())


def exit_process(code: int) -> NoReturn:
    """Exit with ``code``; once Qt has run, without tearing the interpreter down.

    At interpreter shutdown Python's last collection frees PySide wrappers in whatever order
    the module dicts give, after their Qt objects went: freeing a ``QTextCharFormat``
    wrapper then aborted the process (``free(): invalid pointer``, in shiboken's
    deallocator, from ``finalize_modules``), in one run of two to eight of a 2.2M-character
    screenshot. Everything the app must do on exit is done by then (the window's close
    saved the text and synced the settings, the workers were stopped); the ``atexit``
    handlers run here (multiprocessing's children, temporary folders), the standard streams
    are flushed, and the process ends with ``os._exit``.
    """
    qt = sys.modules.get("PySide6.QtCore")
    if qt is None or qt.QCoreApplication.instance() is None:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
