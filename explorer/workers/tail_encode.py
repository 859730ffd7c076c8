"""A big document's first encode on two cores: its tail encoded in a child process.

The window's first encode of a long text runs in windows on one worker thread, which holds
the GIL (so a second thread would not help). For a tokenizer whose tokens after a safe cut do
not depend on what came before it (no exact resume points: every BPE, WordPiece and
byte-level model; :meth:`~explorer.engine.tokenizer.Tokenizer.encode_compact_resumed`), the
text from a line start past the middle is sent to a child process that encodes it in one
call, while the thread goes on from the start. At its next window boundary after the child
has answered, :func:`~explorer.workers.doctokens.encode_document` takes the child's tokens
from there on when they *agree* with the segment its own windows must reproduce next (the
same rule its windows follow, :func:`~explorer.workers.docstore.agrees`); otherwise it goes
on alone. The result is the one whole-text encode either way; the child only saves time.

The child is started with ``spawn`` (a new interpreter, safe from a process with Qt
threads); it receives the pickled tokenizer and its part of the text and sends back
:class:`~explorer.engine.compact.CompactTokens` (three ``array('i')``: ~12 bytes a token).
Anything going wrong in it (a tokenizer that cannot be pickled, a crash) only means the
thread encodes the whole text itself. A cancelled encode terminates the child.

Pure Python (no Qt).
"""

from __future__ import annotations

import contextlib
import gc
from multiprocessing import get_context
from multiprocessing.connection import Connection
from typing import Any

from explorer.engine.compact import CompactTokens
from explorer.engine.tokenizer import Tokenizer

__all__ = ["HEAD_START", "PARALLEL_MIN", "TailEncode", "start_tail", "tail_start"]

PARALLEL_MIN = 1_000_000
"""Texts at least this long (code points) get a child process for their tail."""
HEAD_START = 700_000
"""Code points the thread encodes while the child starts (a new interpreter, the engine's
imports and the tokenizer unpickled: ~0.4 s), so both halves end about together."""


def tail_start(text: str) -> int:
    """Where the child's part starts: the line start after ``(len + HEAD_START) / 2``
    (``len(text)`` when there is none)."""
    cut = text.find("\n", (len(text) + HEAD_START) // 2)
    return len(text) if cut == -1 else cut + 1


class TailEncode:
    """``text[start:]`` encoded in a child process; :meth:`poll` it, :meth:`close` it."""

    def __init__(self, tokenizer: Tokenizer, text: str, start: int) -> None:
        """Start the child (raises when it cannot be started, e.g. an unpicklable
        tokenizer: see :func:`start_tail`)."""
        self.start = start
        """Document offset of the child's part."""
        self.failed = False
        """The child answered with an error or died: it will give no tokens."""
        self.taken_at: int | None = None
        """Document offset from which the encode took the child's tokens (None: not)."""
        self._tokens: CompactTokens | None = None
        context = get_context("spawn")
        receive, send = context.Pipe(duplex=False)
        self._connection: Connection = receive
        self._process = context.Process(target=_encode_part, args=(tokenizer, text[start:], send),
                                        name="explorer-tail-encode", daemon=True)
        try:
            self._process.start()
        finally:
            send.close()

    def poll(self) -> CompactTokens | None:
        """The child's tokens (offsets into ``text[start:]``) once it has sent them; None
        while it works or when it failed (see :attr:`failed`). Never blocks."""
        if self._tokens is not None or self.failed:
            return self._tokens
        try:
            if not self._connection.poll():
                if not self._process.is_alive():
                    self.failed = not self._connection.poll()
                return None
            kind, value = self._connection.recv()
        except (EOFError, OSError):
            self.failed = True
            return None
        except Exception:  # an answer that does not unpickle here
            self.failed = True
            return None
        if kind != "tokens" or not isinstance(value, CompactTokens):
            self.failed = True
            return None
        self._tokens = value
        self.close()
        return value

    def wait(self, timeout: float) -> CompactTokens | None:
        """:meth:`poll`, first waiting up to ``timeout`` seconds for the child's answer."""
        if self._tokens is None and not self.failed:
            self._connection.poll(timeout)
        return self.poll()

    @property
    def running(self) -> bool:
        """The child process is alive."""
        return self._process.is_alive()

    def close(self) -> None:
        """Stop the child if it still runs and release it (idempotent)."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=5)
        with contextlib.suppress(OSError):
            self._connection.close()


def start_tail(tokenizer: Tokenizer, text: str) -> TailEncode | None:
    """A :class:`TailEncode` of ``text``'s tail, or None when the text is too short or the
    child cannot be started (the caller then encodes everything itself)."""
    if len(text) < PARALLEL_MIN:
        return None
    start = tail_start(text)
    if start >= len(text):
        return None
    try:
        return TailEncode(tokenizer, text, start)
    except Exception:  # unpicklable tokenizer, no processes here...
        return None


def _encode_part(tokenizer: Tokenizer, text: str, connection: Connection) -> None:
    """The child: encode ``text`` in one call and send ``("tokens", CompactTokens)`` or
    ``("error", message)``."""
    gc.disable()  # (a short life making millions of objects: collections only cost)
    answer: tuple[str, Any]
    try:
        answer = ("tokens", tokenizer.encode_compact(text))
    except Exception as e:
        answer = ("error", f"{type(e).__name__}: {e}")
    try:
        connection.send(answer)
    finally:
        connection.close()
