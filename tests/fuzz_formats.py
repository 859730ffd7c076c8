"""Seeded fuzzing of every vocabulary format through ``info`` and ``encode``, in-process.

Small valid seed files of every format are written to a folder, then mutated (truncation,
bit flips, huge length/count fields, invalid UTF-8, deep JSON nesting, huge JSON integers,
wrong JSON types, huge ranks). Each mutant goes through ``explorer.cli.main(["info", ...])``
and, when that works, ``main(["encode", ...])``. The only acceptable outcomes are exit 0, or
exit 2 with exactly one line on stderr; any exception escaping ``main`` is a failure.

Run it out of process (the test does) so an address-space cap protects the test runner:

    python tests/fuzz_formats.py --seed 1 --mutants 20 --max-as-gb 3

It prints one JSON object: ``{"cases": N, "failures": [{"format", "mutation", "error"}]}``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import shutil
import struct
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "resources" / "vocab"
TEXT = "Hello wörld 😀 naïve 東京 <|endoftext|> 12345\n  tabs\tand spaces  "

# ---------------------------------------------------------------- seed files (all small)


def _tiktoken_lines(limit: int) -> list[bytes]:
    lines = (RESOURCES / "cl100k_base.tiktoken").read_bytes().splitlines()
    return lines[:limit]


def seed_tiktoken(folder: Path) -> Path:
    p = folder / "small.tiktoken"
    p.write_bytes(b"\n".join(_tiktoken_lines(600)) + b"\n")
    return p


def seed_tokenizer_json(folder: Path) -> Path:
    p = folder / "tokenizer.json"
    shutil.copyfile(RESOURCES / "corpus_bpe_4k.json", p)
    return p


def seed_sentencepiece(folder: Path) -> Path:
    p = folder / "unigram.model"
    shutil.copyfile(RESOURCES / "corpus_unigram_4k.model", p)
    return p


def seed_gguf(folder: Path) -> Path:
    import gguf

    from explorer.engine.pretokenizers.byte_level import bytes_to_unicode

    table = bytes_to_unicode()
    tokens = [table[b] for b in range(256)]
    merges = []
    for a, b in (("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w"), ("o", "r")):
        merges.append(f"{a} {b}")
        tokens.append(a + b)
    tokens.append("<|endoftext|>")
    p = folder / "tiny.gguf"
    w = gguf.GGUFWriter(str(p), "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types([1] * (len(tokens) - 1) + [3])
    w.add_token_merges(merges)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return p


def _ranks_b64(limit: int) -> list[tuple[str, int]]:
    return [(t.decode(), int(r)) for t, r in (ln.split() for ln in _tiktoken_lines(limit))]


def seed_tiktoken_json(folder: Path) -> Path:
    ranks = _ranks_b64(600)
    p = folder / "ranks.json"
    p.write_text(json.dumps({
        "pat_str": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
                   r"""|\s+(?!\S)|\s+""",
        "special_tokens": {"<|endoftext|>": 600},
        "bpe_ranks": "! 0 " + " ".join(t for t, _ in ranks)}))
    return p


def seed_tekken(folder: Path) -> Path:
    ranks = _ranks_b64(600)
    p = folder / "tekken.json"
    p.write_text(json.dumps({
        "config": {"pattern": r"\s+|[^\s]+", "default_vocab_size": 610,
                   "default_num_special_tokens": 10, "version": "v13", "num_vocab_tokens": 600},
        "vocab": [{"rank": r, "token_bytes": t, "token_str": None} for t, r in ranks],
        "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": True},
                           {"rank": 1, "token_str": "<s>", "is_control": True}]}))
    return p


def seed_minbpe(folder: Path) -> Path:
    merges = [(97, 97), (256, 97), (257, 98), (32, 116), (104, 101)]
    lines = ["minbpe v1", r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}""",
             "1", "<|endoftext|> 300", *(f"{a} {b}" for a, b in merges)]
    (folder / "toy.vocab").write_text("[a] 97\n", encoding="utf-8")
    p = folder / "toy.model"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def seed_folder_bpe(folder: Path) -> Path:
    from explorer.engine.pretokenizers.byte_level import bytes_to_unicode

    table = bytes_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    merges = []
    for a, b in (("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w"), ("o", "r")):
        vocab[a + b] = len(vocab)
        merges.append(f"{a} {b}")
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n",
                                       encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "GPT2Tokenizer", "model_max_length": 1024,
        "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"}))
    return folder / "vocab.json"


def seed_folder_bert(folder: Path) -> Path:
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz",
              "##s", "##ing", "hello", "world", ",", "."]
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "do_lower_case": True, "tokenizer_class": "BertTokenizer", "model_max_length": 512}))
    (folder / "special_tokens_map.json").write_text(json.dumps({
        "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]"}))
    return folder / "vocab.txt"


def seed_folder_tokenizer_json(folder: Path) -> Path:
    shutil.copyfile(RESOURCES / "corpus_bpe_4k.json", folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "model_max_length": 2048, "bos_token": "<s>", "add_bos_token": True,
        "chat_template": [{"name": "default", "template": "{{ messages }}"}]}))
    return folder / "tokenizer_config.json"


SEEDS: dict[str, Callable[[Path], Path]] = {
    "tiktoken": seed_tiktoken,
    "tokenizer.json": seed_tokenizer_json,
    "sentencepiece": seed_sentencepiece,
    "gguf": seed_gguf,
    "tiktoken-json": seed_tiktoken_json,
    "tekken": seed_tekken,
    "minbpe": seed_minbpe,
    "folder (vocab.json + merges.txt)": seed_folder_bpe,
    "folder (vocab.txt)": seed_folder_bert,
    "folder (tokenizer.json + config)": seed_folder_tokenizer_json,
}
"""Format name -> builder of one small valid file (or folder's main file) in a folder."""


def register_seed(name: str) -> Callable[[Callable[[Path], Path]], Callable[[Path], Path]]:
    """Decorator adding a seed builder (new formats add theirs here)."""

    def deco(fn: Callable[[Path], Path]) -> Callable[[Path], Path]:
        SEEDS[name] = fn
        return fn

    return deco


# ---------------------------------------------------------------- mutations


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(0, max(1, len(data)))]


def _bit_flips(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def _huge_field(data: bytes, rng: random.Random) -> bytes:
    # Overwrite an (aligned, then any) 8-byte window with a huge little-endian count.
    buf = bytearray(data)
    i = rng.randrange(0, max(1, len(buf) - 8))
    if rng.random() < 0.5:
        i -= i % 8
    value = rng.choice((2**31, 2**32 - 1, 2**40, 2**63 - 1, 2**64 - 1))
    buf[i:i + 8] = struct.pack("<Q", value)
    return bytes(buf)


def _invalid_utf8(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data))
    bad = rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80"))
    return data[:i] + bad + data[i:]


def _huge_number_text(data: bytes, rng: random.Random) -> bytes:
    # Replace one decimal number with a huge one (ranks, ids, counts in text formats).
    numbers = list(re.finditer(rb"\d+", data))
    if not numbers:
        return data
    m = rng.choice(numbers)
    huge = rng.choice((b"2147483648", b"4294967296", b"99999999999999999999", b"9" * 5000))
    return data[:m.start()] + huge + data[m.end():]


def _deep_nesting(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice((1200, 5000, 100000))
    nest = b"[" * depth + b"]" * depth
    colons = [m.end() for m in re.finditer(rb'":\s*', data[:200000])]
    if not colons:
        return nest
    i = rng.choice(colons)
    return data[:i] + nest + b"," + data[i:] if rng.random() < 0.5 else data[:i] + nest + data[i:]


def _json_wrong_type(data: bytes, rng: random.Random) -> bytes:
    try:
        obj = json.loads(data)
    except ValueError:
        return data
    replacement = rng.choice((None, True, 3, -1, 2**70, 1.5, "x", [], {}, [[1]], {"a": 1}))
    paths: list[list] = []

    def walk(o: object, path: list) -> None:
        if len(paths) > 3000:
            return
        paths.append(path)
        if isinstance(o, dict):
            for k in list(o)[:50]:
                walk(o[k], [*path, k])
        elif isinstance(o, list):
            for i in range(min(len(o), 20)):
                walk(o[i], [*path, i])

    walk(obj, [])
    path = rng.choice(paths[1:] or paths)
    if not path:
        return json.dumps(replacement).encode()
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = replacement
    return json.dumps(obj, ensure_ascii=False).encode()


def _json_huge_int(data: bytes, rng: random.Random) -> bytes:
    numbers = list(re.finditer(rb"(?<=[:\[, ])\d+(?=[,\]}\s])", data[:200000]))
    if not numbers:
        return data
    m = rng.choice(numbers)
    return data[:m.start()] + b"7" * rng.choice((4301, 10000)) + data[m.end():]


BYTE_MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": _truncate,
    "bit-flips": _bit_flips,
    "huge-field": _huge_field,
    "invalid-utf8": _invalid_utf8,
    "huge-number": _huge_number_text,
}
JSON_MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "deep-nesting": _deep_nesting,
    "wrong-type": _json_wrong_type,
    "huge-int": _json_huge_int,
}


def mutations_for(data: bytes) -> dict[str, Callable[[bytes, random.Random], bytes]]:
    """Byte mutations for every file, JSON ones too for JSON files."""
    if data.lstrip()[:1] == b"{":
        return BYTE_MUTATIONS | JSON_MUTATIONS
    return dict(BYTE_MUTATIONS)


# ---------------------------------------------------------------- running


def _run_cli(argv: list[str]) -> tuple[int, str]:
    from explorer.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(TEXT.encode()), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        sys.stdin = old_stdin
    return code, err.getvalue()


def check_file(path: Path) -> str | None:
    """None when ``info`` and ``encode`` on ``path`` behave; else what went wrong."""
    for argv in (["info", "--vocab", str(path)],
                 ["encode", "--vocab", str(path), "--output", "json"]):
        try:
            code, err = _run_cli(argv)
        except SystemExit as e:  # argparse errors are exit 2 too
            code, err = int(e.code or 0), "argparse"
        except BaseException as e:  # the point is to catch everything
            tb = traceback.extract_tb(e.__traceback__)[-1]
            return f"{argv[0]}: {type(e).__name__}: {str(e)[:200]} at {tb.filename}:{tb.lineno}"
        if code == 2:
            lines = err.strip().splitlines()
            if len(lines) != 1:
                return f"{argv[0]}: exit 2 with {len(lines)} stderr lines: {err[:300]!r}"
            return None  # rejected cleanly: encode is not attempted
        if code != 0:
            return f"{argv[0]}: exit {code}: {err[:300]!r}"
    return None


def fuzz(seed: int, mutants: int, formats: list[str] | None = None) -> dict:
    """Run ``mutants`` mutants per format; return ``{"cases", "failures"}``."""
    rng = random.Random(seed)
    failures: list[dict] = []
    cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for name in formats or list(SEEDS):
            seed_dir = base / f"seed-{re.sub(r'[^a-z0-9]', '_', name)}"
            seed_dir.mkdir()
            main_file = SEEDS[name](seed_dir)
            error = check_file(main_file)
            if error:
                failures.append({"format": name, "mutation": "none (seed)", "error": error})
                continue
            targets = sorted(p for p in seed_dir.iterdir() if p.is_file())
            for k in range(mutants):
                case_dir = base / f"case-{len(failures)}-{cases}"
                shutil.copytree(seed_dir, case_dir)
                target = case_dir / rng.choice(targets).name
                data = target.read_bytes()
                muts = mutations_for(data)
                mname = rng.choice(sorted(muts))
                target.write_bytes(muts[mname](data, rng))
                opened = case_dir / main_file.name
                cases += 1
                error = check_file(opened)
                if error:
                    failures.append({"format": name, "mutation": f"{mname} of {target.name} "
                                     f"(#{k})", "error": error})
                shutil.rmtree(case_dir)
    return {"cases": cases, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutants", type=int, default=20, help="mutants per format")
    ap.add_argument("--format", action="append", help="only these formats (repeatable)")
    ap.add_argument("--max-as-gb", type=float, default=0, help="address-space cap (Linux)")
    args = ap.parse_args(argv)
    if args.max_as_gb:
        import resource

        cap = int(args.max_as_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.environ["EXPLORER_NO_VOCAB_CACHE"] = "1"
    sys.path.insert(0, str(ROOT))
    result = fuzz(args.seed, args.mutants, args.format)
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
