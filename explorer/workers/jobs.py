"""Worker jobs (generator functions) the window runs: load a vocabulary, encode the document.

Each is run through :class:`~explorer.workers.latest.LatestRunner`; yields are progress and
cancellation points.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from explorer.engine.formats import detect_format, load_tokenizer
from explorer.engine.tokenizer import Tokenizer
from explorer.workers.doctokens import (
    CHUNK_CHARS,
    Change,
    DocTokens,
    Progress,
    encode_document,
    settle_document,
    update_document,
)
from explorer.workers.malloc import mapped_temporaries, trim
from explorer.workers.tail_encode import start_tail

INCREMENTAL_MAX_WINDOW = 4 * CHUNK_CHARS
"""Beyond this re-encode window (a big paste), encode in chunks with progress instead; in a
longer text, beyond a quarter of it, up to 4x this (:func:`incremental_window`)."""


def incremental_window(text_length: int) -> int:
    """The largest window :func:`encode_job` re-encodes around an edit of a text this long
    (a bigger one is a first encode, in chunks with progress, helped by a child process).
    A keystroke in a text of long lines re-encodes the lines around it: five lines of 47k
    characters passed :data:`INCREMENTAL_MAX_WINDOW`, and each keystroke encoded the whole
    text again (0.5 s in 1 MB, seconds in 10)."""
    return max(INCREMENTAL_MAX_WINDOW, min(text_length // 4, 4 * INCREMENTAL_MAX_WINDOW))
QUICK_MAX_WINDOW = 4096
"""The largest re-encode window :func:`quick_update` takes on (a few ms at worst: a line of
Thai costs ~1.3 µs per character with cl100k)."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A loaded vocabulary and where it came from."""

    tokenizer: Tokenizer
    path: Path
    format: str


@dataclass(frozen=True, slots=True)
class Encoded:
    """A document result; ``change`` is None for a full encode."""

    doc: DocTokens
    change: Change | None
    revision: int


def load_job(path: Path) -> Generator[str, None, Loaded]:
    """Detect the format of ``path`` and load it (errors propagate as ``errored``)."""
    fmt = detect_format(path)
    yield f"loading {fmt} file {path.name}"
    tokenizer = load_tokenizer(path, format=fmt)
    yield f"preparing {path.name}"
    # (a warm-up: an error there is the first encode's to report, where it says which text;
    # its big temporaries mapped, not left as free heap in this thread's malloc arena, which
    # the encode's thread does not reuse: the 250k-piece model's window on the UDHR text
    # peaked at 622-631 MB in about one run in three, 581-587 MB so)
    with contextlib.suppress(Exception), mapped_temporaries(True):
        tokenizer.prepare()
    trim()  # (the parse's temporaries: their heap goes back to the system)
    return Loaded(tokenizer, path, fmt)


def encode_job(tokenizer: Tokenizer, base: DocTokens | None, text: str, revision: int,
               same: tuple[int, int] | None = None) -> Generator[Progress, None, Encoded]:
    """Encode ``text``: incrementally from ``base`` when it used the same tokenizer
    (``same``: the unchanged prefix and suffix lengths, when known; see
    :func:`~explorer.workers.doctokens.update_document`)."""
    if base is not None and base.tokenizer is tokenizer:
        updated = update_document(base, text, max_window=incremental_window(len(text)),
                                  same=same)
        if updated is not None:
            return Encoded(updated[0], updated[1], revision)
    doc = yield from encode_document(tokenizer, text, tail=start_tail)
    return Encoded(doc, None, revision)


def quick_update(base: DocTokens, text: str, revision: int,
                 same: tuple[int, int] | None) -> Encoded | None:
    """A keystroke's re-encode when it is small enough to run where it is asked for (no
    thread hand-off): a window of at most :data:`QUICK_MAX_WINDOW` code points around the
    edit. None when it needs more (then run :func:`encode_job` on a worker)."""
    updated = update_document(base, text, max_window=QUICK_MAX_WINDOW, same=same)
    return None if updated is None else Encoded(updated[0], updated[1], revision)


@dataclass(frozen=True, slots=True)
class Settled:
    """One :func:`settle_job` step: ``doc`` is ``base`` made exact further on; ``change``
    None when no token differs (then nothing needs repainting)."""

    base: DocTokens
    doc: DocTokens
    change: Change | None
    revision: int


def settle_job(base: DocTokens, revision: int) -> Generator[str, None, Settled | None]:
    """One step of :func:`~explorer.workers.doctokens.settle_document` (None: nothing to
    do, ``base`` is exact)."""
    yield "re-deciding near ties after the last edits"
    step = settle_document(base)
    return None if step is None else Settled(base, step[0], step[1], revision)


def special_ids_job(tokenizer: Tokenizer, text: str) -> Generator[str, None, list[int]]:
    """Ids of ``text`` with the post-processor run, like HF ``encode(text,
    add_special_tokens=True).ids`` (the tokenizer must :meth:`~Tokenizer.supports_post_processor`).

    The whole text is encoded in one call: the template's tokens go around the whole
    sequence, which the document's segments cannot give."""
    yield "adding special tokens"
    return list(tokenizer.encode(text, add_special_tokens=True).ids)  # type: ignore[call-arg]
