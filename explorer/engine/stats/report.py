"""Tables of :class:`~explorer.engine.stats.run.CorpusStats`: dicts, JSON, CSV and text.

JSON (``--output json``): ``{"tokenizers": [{"name", "tokens", "chars", "bytes", "by_script":
{SCRIPT: {"tokens", "chars", "bytes"}}, ...}, ...]}`` in the tokenizers' order, plus rates,
the vocabulary share used, the token-length histogram, the most frequent tokens, per-file
counts and (with ``--diff``) the differing lines.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from explorer.engine.stats.counts import Counts
from explorer.engine.stats.run import CorpusStats, most_common


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def summary(stats: CorpusStats, k: int, *, top: int = 20) -> dict[str, Any]:
    """Every statistic of tokenizer ``k`` as a JSON-ready dict."""
    c: Counts = stats.counts[k]
    vocab = stats.vocab_sizes[k]
    return {
        "name": stats.names[k],
        "lines": c.lines,
        "tokens": c.tokens,
        "chars": c.chars,
        "bytes": c.bytes,
        "words": c.words,
        "bytes_per_token": _ratio(c.bytes, c.tokens),
        "chars_per_token": _ratio(c.chars, c.tokens),
        "words_per_token": _ratio(c.words, c.tokens),
        "tokens_per_word": _ratio(c.tokens, c.words),
        "unknown": c.unknown,
        "byte_fallback": c.byte_fallback,
        "special": c.special,
        "unknown_rate": _ratio(c.unknown + c.byte_fallback, c.tokens),
        "vocab_size": vocab,
        "vocab_used": len(c.ids),
        "vocab_share": _ratio(len(c.ids), vocab),
        "length_histogram": {str(n): c.lengths[n] for n in sorted(c.lengths)},
        "top_tokens": [{"id": i, "piece": stats.pieces[k].get(i, ""), "count": n}
                       for i, n in most_common(c, top)],
        "by_script": {s: {"tokens": r[0], "chars": r[1], "bytes": r[2],
                          "chars_per_token": _ratio(r[1], r[0])}
                      for s, r in sorted(c.by_script.items(), key=lambda kv: -kv[1][1])},
        "by_file": {f: {"tokens": r[0], "chars": r[1], "bytes": r[2], "lines": r[3],
                        "words": r[4], "chars_per_token": _ratio(r[1], r[0])}
                    for f, r in c.by_file.items()},
    }


def to_dict(stats: CorpusStats, *, diff: bool = False) -> dict[str, Any]:
    """The whole result (``--output json``)."""
    out: dict[str, Any] = {"tokenizers": [summary(stats, k) for k in range(len(stats.names))],
                           "files": stats.files}
    if diff:
        out["diff"] = {"lines": stats.diff_count,
                       "shown": [{"file": d.file, "line": d.line, "tokens": list(d.tokens),
                                  "text": d.text} for d in stats.diff_lines]}
    return out


def to_json(stats: CorpusStats, *, diff: bool = False) -> str:
    """JSON text of :func:`to_dict`."""
    return json.dumps(to_dict(stats, diff=diff), ensure_ascii=False, indent=1)


MAIN_COLUMNS = ("tokens", "chars", "bytes", "words", "bytes_per_token", "chars_per_token",
                "words_per_token", "unknown_rate", "vocab_used", "vocab_share")


def to_csv(stats: CorpusStats, *, by_script: bool = False, diff: bool = False) -> str:
    """One row per tokenizer (``by_script``: per tokenizer and script; ``diff``: then the
    differing lines)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    rows = [summary(stats, k) for k in range(len(stats.names))]
    if by_script:
        w.writerow(("tokenizer", "script", "tokens", "chars", "bytes", "chars_per_token"))
        for r in rows:
            for script, v in r["by_script"].items():
                w.writerow((r["name"], script, v["tokens"], v["chars"], v["bytes"],
                            v["chars_per_token"]))
    else:
        w.writerow(("tokenizer", *MAIN_COLUMNS))
        for r in rows:
            w.writerow((r["name"], *(r[c] for c in MAIN_COLUMNS)))
    if diff:
        w.writerow(())
        w.writerow(("file", "line", *(f"tokens {n}" for n in stats.names), "text"))
        for d in stats.diff_lines:
            w.writerow((d.file, d.line, *d.tokens, d.text))
    return buf.getvalue()


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(header, widths, strict=True)))]
    for r in rows:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                               for i, (v, w) in enumerate(zip(r, widths, strict=True))))
    return "\n".join(lines)


def to_text(stats: CorpusStats, *, by_script: bool = False, diff: bool = False) -> str:
    """Aligned tables for a terminal."""
    rows = [summary(stats, k) for k in range(len(stats.names))]
    out = [_table(
        ["tokenizer", "tokens", "bytes/tok", "chars/tok", "words/tok", "unk+byte",
         "vocab used"],
        [[r["name"], f"{r['tokens']:,}", f"{r['bytes_per_token']:.2f}",
          f"{r['chars_per_token']:.2f}", f"{r['words_per_token']:.2f}",
          f"{100 * r['unknown_rate']:.2f}%",
          f"{r['vocab_used']:,} ({100 * r['vocab_share']:.1f}%)"] for r in rows])]
    if by_script:
        scripts = sorted({s for r in rows for s in r["by_script"]},
                         key=lambda s: -max(r["by_script"].get(s, {"chars": 0})["chars"]
                                            for r in rows))
        out.append("")
        out.append("tokens per script (chars/token)")
        out.append(_table(
            ["script", "chars", *[r["name"] for r in rows]],
            [[s, f"{max(r['by_script'].get(s, {'chars': 0})['chars'] for r in rows):,}",
              *[(f"{r['by_script'][s]['tokens']:,} ({r['by_script'][s]['chars_per_token']:.2f})"
                 if s in r["by_script"] else "-") for r in rows]] for s in scripts]))
    if len(stats.files) > 1:
        out.append("")
        out.append("tokens per file (chars/token)")
        out.append(_table(
            ["file", *[r["name"] for r in rows]],
            [[f, *[f"{r['by_file'][f]['tokens']:,} ({r['by_file'][f]['chars_per_token']:.2f})"
                   if f in r["by_file"] else "-" for r in rows]] for f in stats.files]))
    if diff:
        out.append("")
        out.append(f"{stats.diff_count:,} lines where the token boundaries differ"
                   + (f" (first {len(stats.diff_lines)} shown)"
                      if stats.diff_count > len(stats.diff_lines) else ""))
        for d in stats.diff_lines:
            counts = " / ".join(str(n) for n in d.tokens)
            out.append(f"{d.file}:{d.line}: [{counts}] {d.text}")
    return "\n".join(out) + "\n"
