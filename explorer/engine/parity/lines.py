"""Parity over a whole file: each line encoded on its own by every implementation.

:func:`check_lines` is a generator job (every yield is progress and a cancellation point); it
returns a :class:`FileParity`: the lines that differ, per implementation, with counts and the
stage of each line's first differing span; :func:`to_csv` / :func:`to_json` export it.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from explorer.engine.parity.check import check_text
from explorer.engine.parity.implementations import ImplementationSet


@dataclass(frozen=True, slots=True)
class Progress:
    """Lines checked so far (``total`` None when unknown)."""

    done: int
    total: int | None


@dataclass(frozen=True, slots=True)
class LineDiff:
    """One line on which one implementation differs from ours."""

    line: int
    """1-based line number."""
    implementation: str
    text: str
    spans: int
    """Differing spans on the line."""
    first_token: int | None
    """Index of the first differing token (None when the library failed)."""
    stage: str
    """Cause of the line's first differing span (or ``error``)."""
    ours: str
    theirs: str
    """Pieces of the first differing span on each side (or the error)."""
    ours_stage: str | None = None
    theirs_stage: str | None = None
    """That stage's output for the span on each side (None: not exposed)."""
    explanation: str = ""


@dataclass(slots=True)
class FileParity:
    """Result of a whole-file parity check."""

    implementations: list[str]
    unavailable: list[str]
    lines: int = 0
    differing: list[LineDiff] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Differing lines per reference implementation (every reference listed)."""
        c = Counter(d.implementation for d in self.differing)
        return {name: c.get(name, 0) for name in self.implementations[1:]}

    def stage_counts(self) -> dict[str, int]:
        """Differing lines per cause stage."""
        return dict(Counter(d.stage for d in self.differing))

    @property
    def agree(self) -> bool:
        """True when no line differs."""
        return not self.differing


def check_lines(impls: ImplementationSet, lines: Iterable[str], *, total: int | None = None,
                every: int = 16) -> Generator[Progress, None, FileParity]:
    """Check every line (without its newline); yield :class:`Progress` every ``every``
    lines."""
    out = FileParity(impls.names, [u.describe() for u in impls.unavailable])
    n = 0
    for n, line in enumerate(lines, 1):
        result = check_text(impls, line)
        for row in result.rows[1:]:
            if row.agrees:
                continue
            if row.error is not None:
                out.differing.append(LineDiff(n, row.name, line, 0, None, "error", "",
                                              row.error))
                continue
            assert row.diff is not None
            first = row.spans[0] if row.spans else None
            out.differing.append(LineDiff(
                n, row.name, line, len(row.spans), row.diff.first_index,
                first.cause.stage if first else "merges/scores",
                " ".join(t.piece for t in first.span.ours) if first else "",
                " ".join(t.piece for t in first.span.theirs) if first else "",
                first.cause.ours if first else None, first.cause.theirs if first else None,
                first.cause.explanation if first else ""))
        if n % every == 0:
            yield Progress(n, total)
    out.lines = n
    yield Progress(n, total)
    return out


@dataclass(frozen=True, slots=True)
class FileProgress:
    """Bytes of the file checked so far."""

    done: int
    total: int
    lines: int


def check_file(impls: ImplementationSet, path: str | Path, *,
               every: int = 16) -> Generator[FileProgress, None, FileParity]:
    """:func:`check_lines` over a UTF-8 file, streamed, with progress in bytes.

    Raises :class:`~explorer.engine.errors.CorpusError` for a missing or non-UTF-8 file.
    """
    from explorer.engine.stats.corpus import CorpusSource

    source = CorpusSource.file(path)
    total = source.size()
    read = 0

    def lines() -> Iterator[str]:
        nonlocal read
        for line, size in source.lines():
            read += size
            yield line

    job = check_lines(impls, lines(), every=every)
    try:
        while True:
            p = next(job)
            yield FileProgress(read, total, p.done)
    except StopIteration as stop:
        return stop.value
    finally:
        job.close()


CSV_HEADER = ("line", "implementation", "spans", "first_token", "stage", "ours", "theirs",
              "ours_stage_output", "theirs_stage_output", "explanation", "text")


def to_csv(result: FileParity) -> str:
    """The differing lines as CSV (one row per line and implementation)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for d in result.differing:
        w.writerow((d.line, d.implementation, d.spans,
                    "" if d.first_token is None else d.first_token, d.stage, d.ours, d.theirs,
                    d.ours_stage or "", d.theirs_stage or "", d.explanation, d.text))
    return buf.getvalue()


def to_json(result: FileParity) -> str:
    """The whole result as JSON: implementations, counts and differing lines."""
    return json.dumps({
        "implementations": result.implementations,
        "unavailable": result.unavailable,
        "lines": result.lines,
        "differing_lines": result.counts(),
        "stages": result.stage_counts(),
        "differing": [
            {"line": d.line, "implementation": d.implementation, "spans": d.spans,
             "first_token": d.first_token, "stage": d.stage, "ours": d.ours,
             "theirs": d.theirs, "ours_stage_output": d.ours_stage,
             "theirs_stage_output": d.theirs_stage, "explanation": d.explanation,
             "text": d.text}
            for d in result.differing],
    }, ensure_ascii=False, indent=1)
