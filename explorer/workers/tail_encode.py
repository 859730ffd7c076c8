"""A big document's first encode on two cores: a child process encodes its tail, or
solves its words ahead.

The window's first encode of a long text runs in windows on one worker thread, which holds
the GIL (so a second thread would not help). For a tokenizer whose tokens after a safe cut do
not depend on what came before it (no exact resume points: every BPE, WordPiece and
byte-level model; :meth:`~explorer.engine.tokenizer.Tokenizer.encode_compact_resumed`), the
text from a line start a third in (a fifth for a child started before the window) is sent
to a child process that encodes it in chunks from its end back
(:mod:`~explorer.workers.tail_chunks`), sending each when done, while the thread goes on
from the start and reports its place; the child stops at the chunk the thread has reached,
so the two meet wherever their paces put them. At its first window boundary past the
lowest chunk's start, :func:`~explorer.workers.doctokens.encode_document` takes the child's
tokens from there on when they *agree* with the segment its own windows must reproduce
next (the same rule its windows follow, :func:`~explorer.workers.docstore.agrees`);
otherwise it goes on alone. The result is the one whole-text encode either way; the child
only saves time.

A tokenizer with exact resume points (a SentencePiece Unigram model: its near ties depend on
the float32 path score of everything before) cannot be encoded from the middle. Its child
does the other half of a cold encode instead: from a line start two megabytes in (in a long
line, a word start), it solves the text's words ahead of the thread
(:meth:`~explorer.engine.tokenizer.Tokenizer.cache_shares`), a quarter megabyte at a time,
and the thread takes each batch of solved words at its next window
(:meth:`~explorer.engine.tokenizer.Tokenizer.take_cache_share`; inside a window that grows,
a line of megabytes too, at each step): its windows then find their words solved, as in a
second encode. The thread still decides every
token from the exact running score; the words are the ones it would have solved itself. The
thread reports its place on the work pipe (:meth:`TailEncode.reached`); a child it has
caught up with skips ahead of it (:data:`AHEAD_LEAD`) instead of solving the words the
thread is solving too.

The child is started with ``spawn`` (a new interpreter, safe from a process with Qt
threads); it receives the pickled tokenizer and its part of the text and sends back its
chunks as :class:`~explorer.engine.compact.CompactTokens` (three ``array('i')``: ~12 bytes
a token).
Anything going wrong in it (a tokenizer that cannot be pickled, a crash) only means the
thread encodes the whole text itself. A cancelled encode terminates the child.

**Started before the window** (:func:`prefetch_tail`): a text the app opens with
(``--text-file``) is known before the window, its panels and the vocabulary exist, ~2-3 s
before the first encode starts. The child is then started at once with the vocabulary's
*path*: it loads the vocabulary itself, finds out which kind of help the tokenizer takes,
and takes a bigger part (from :data:`PREFETCH_AT` in; or solving words from the start); the
first encode's :func:`start_tail` adopts it when the text is the same and the child's
tokenizer encodes a probe exactly as the window's does (:func:`fingerprint`), and stops it
otherwise.

Pure Python (no Qt).
"""

from __future__ import annotations

import contextlib
import gc
import pickle
import queue
import threading
import time
from collections.abc import Callable
from functools import partial
from multiprocessing import get_context
from multiprocessing.connection import Connection

import numpy as np

from explorer.engine.compact import CompactTokens, token_table
from explorer.engine.generators import run_to_end
from explorer.engine.soft_cuts import end_after
from explorer.engine.tokenizer import Tokenizer
from explorer.workers.doctokens import encode_document
from explorer.workers.long_lines import has_exact_points
from explorer.workers.malloc import trim
from explorer.workers.tail_chunks import Chunk, encode_backward, join_arrays, joined_chunks

__all__ = ["HEAD_START", "PARALLEL_MIN", "SHARE_STEP", "WORDS_AHEAD", "TailEncode",
           "fingerprint", "prefetch_tail", "start_tail", "tail_start"]

PARALLEL_MIN = 2_000_000
"""Texts at least this long (code points) get a child process. Measured (cold caches, wall
clock): at 1 MB a child's start (~0.5 s) is about a whole cl100k encode, 2 MB breaks even
within the noise; cl100k 4 MB 2.0 s instead of 2.5, a 32k Unigram model 6 MB 3.7-4.0 s
instead of 4.4-5.7, 10 MB 6.9-7.3 s instead of 9.3-10.4."""
HEAD_START = 700_000
"""Code points the thread encodes while the child starts (a new interpreter, the engine's
imports and the tokenizer unpickled: ~0.4 s), so both halves end about together."""
WORDS_AHEAD = 2_000_000
"""Where a child solving words starts (at most a quarter of the text in). The child solves
~1.9 MB of text a second, about as fast as the thread's windows run warm: started closer,
the thread catches up with it and solves words itself (a 10 MB document with a 32k model:
7.3-7.9 s from 1 MB in, 6.2-7.5 s from 2 or 3 MB in, 9.6-10.3 s without a child)."""
SHARE_STEP = 262_144
"""Code points of text whose solved words a word-solving child sends at a time."""
AHEAD_LEAD = 2 * SHARE_STEP
"""A word-solving child keeps this far ahead of the thread's window: the thread reports
where it is (:meth:`TailEncode.reached`), and a child the thread has caught up with skips to
the line after that place plus this lead (the thread solves the words in between itself).
Without it, a child that started too close was overtaken and both solved the same words;
started farther, the thread solved everything before it cold (the all-language UDHR: each
language's words are new, the thread runs warm at ~1.6x the child's pace)."""
REPORT_STEP = SHARE_STEP // 2
"""The thread reports its place to a word-solving child when it moved this far."""
PREFETCH_AT = 0.2
"""Where a child started before the window starts its part, as a fraction of the text (a
third for one started with the encode, :func:`tail_start`). Since the child encodes its
part from the end back and stops where the thread is (session 25), this only bounds how
far back it may go: on the 10 MB English document the two met 0.26-0.33 in with cl100k and
o200k, on the all-language UDHR text ~0.44 in. Before, the child encoded its part from its
start, and 0.3 was best: it started ~1 s before the window's first encode, but shared the
cores with the window's start-up and its tokens came only when all were done. Measured then
on the 10 MB document (from the text in the editor to the whole text highlighted, three
runs each): o200k 0.86-1.07 s from 0.3 in, 0.98-1.18 s from 0.35, 1.01-1.06 s from 0.4;
cl100k 0.83-0.87 s from 0.3, 0.92-0.97 s from 0.4. From a quarter in the child answered
after the thread had passed its start (and the thread went on alone until it did). Slower
tokenizers' children started later then, up to 0.47 in, from their pace on a probe of the
text (~0.1 s of the child's start-up, no longer spent)."""
FLAT_SEGMENT_CHARS = 2048
"""The least segment of the child's encode (its segments are joined again at once): 8x
fewer than the document's 256, for a next window's context 2 kB longer (a 6 MB part cut
~20k segments)."""
PROBE = "Probe: héllo wörld 123, 日本語 😀\n  x = f(y)  # ok\n"
"""Encoded by both tokenizers (with the text's start) before a prefetched child is adopted."""
ADOPT_WAIT = 3.0
"""Seconds the first encode waits for a prefetched child to report what it does."""

PREFETCH = -1
"""The work's ``step`` that asks the child to load the vocabulary and choose its part."""

_prefetched: list[TailEncode] = []
"""The child :func:`prefetch_tail` started, until the first encode adopts or stops it."""


def tail_start(text: str) -> int:
    """Where the child's part starts: the line start after ``(len + HEAD_START) / 3``
    (``len(text)`` when there is none). It encodes that part from its end back and stops
    where the thread is: the start only bounds how far back it may go."""
    cut = text.find("\n", (len(text) + HEAD_START) // 3)
    return len(text) if cut == -1 else cut + 1


class TailEncode:
    """``text[start:]`` encoded in a child process (or its words solved: ``words``);
    :meth:`poll` it, :meth:`close` it."""

    def __init__(self, tokenizer: Tokenizer | None, text: str, start: int, words: bool = False,
                 *, vocab: str | None = None) -> None:
        """Start the child (raises when it cannot be started, e.g. an unpicklable
        tokenizer: see :func:`start_tail`). ``vocab``: instead of ``tokenizer``, the path
        the child loads its own from; it then chooses ``start`` and ``words`` itself and
        reports them (:meth:`ready`)."""
        self.start = start
        """Document offset of the child's part; for a child encoding it, of the lowest
        chunk it has sent (see :mod:`~explorer.workers.tail_chunks`)."""
        self._part = start
        self.words = words
        """The child solves words (else it encodes ``text[start:]``)."""
        self.probe: list[int] | None = None
        """A prefetched child's :func:`fingerprint` of its tokenizer (once :meth:`ready`)."""
        self._text: str | None = text if vocab is not None else None
        self.shares = 0
        """Batches of solved words taken into ``tokenizer`` so far."""
        self._tokenizer = tokenizer
        self.failed = False
        """The child answered with an error or died: it will give no tokens."""
        self.taken_at: int | None = None
        """Document offset from which the encode took the child's tokens (None: not)."""
        self._chunks: list[Chunk] = []
        """The chunks the child has sent (offsets in its part)."""
        self._tokens: CompactTokens | None = None  # (the chunks joined, when asked for)
        self._done = False
        self._reported = 0
        """The last place reported to the child (:meth:`reached`)."""
        self._sent = threading.Event()
        """Set once the work is written: the thread's places may follow on the same pipe."""
        # The work goes through a pipe written by a thread: passed as the process's
        # arguments, it would be written while starting it, and the child reads those only
        # after its interpreter has started and while it imports what unpickling needs
        # (~0.5 s the encode waited; a 1 MB text took twice as long).
        if vocab is not None:
            payload = pickle.dumps((("path", vocab), text, PREFETCH),
                                   protocol=pickle.HIGHEST_PROTOCOL)
        else:
            payload = pickle.dumps((tokenizer, text[start:], SHARE_STEP if words else 0),
                                   protocol=pickle.HIGHEST_PROTOCOL)
        context = get_context("spawn")
        receive, send = context.Pipe(duplex=False)
        work_in, work_out = context.Pipe(duplex=False)
        self._inbox: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
        self._process = context.Process(target=_help, args=(work_in, send),
                                        name="explorer-tail-encode", daemon=True)
        try:
            self._process.start()
        finally:
            send.close()
            work_in.close()
        self._work = work_out
        threading.Thread(target=_send_work, args=(work_out, payload, self._sent), daemon=True,
                         name="explorer-tail-work").start()
        # Its answers are read as they come (a child solving words ahead of a window that
        # does not poll yet would otherwise wait on a full pipe).
        threading.Thread(target=_receive, args=(receive, self._inbox), daemon=True,
                         name="explorer-tail-read").start()

    def poll(self) -> CompactTokens | None:
        """The tokens of ``text[start:]`` the child has sent so far (offsets from
        :attr:`start`); None before its first chunk, when it failed (see :attr:`failed`)
        or when it solves words (each batch it has sent is taken into the tokenizer here).
        Never blocks."""
        if self.covered_from() is None:
            return None
        if self._tokens is None:  # (joined once per new chunk; kept as the one chunk)
            start, end, self._tokens = joined_chunks(self._chunks)
            self._chunks = [(start, end, self._tokens)]
        return self._tokens

    def covered_from(self) -> int | None:
        """Where the tokens the child has sent begin (:attr:`start`), after taking in
        what it sent since the last call; None before any (cheap: nothing is joined)."""
        while not self.failed and not self._done:
            try:
                self._handle(*self._inbox.get_nowait())
            except queue.Empty:
                break
        return self.start if self._chunks and not self.words else None

    def reached(self, offset: int) -> None:
        """Tell the child that the encode's thread is at document ``offset``: a child
        solving words skips what the thread will reach before its next batch is solved
        (:data:`AHEAD_LEAD`), a child encoding chunks stops before one the thread has got
        halfway into. Reported every :data:`REPORT_STEP` code points; never blocks for long
        (a few bytes on a pipe the child drains at every batch or chunk)."""
        if (not self._sent.is_set() or self._done or self.failed
                or offset - self._reported < REPORT_STEP or offset <= self._part):
            return
        self._reported = offset
        with contextlib.suppress(OSError, ValueError):  # (the child ended: nothing to tell)
            self._work.send(offset - self._part + (AHEAD_LEAD if self.words else 0))

    def _handle(self, kind: str, value: object) -> None:
        """One message of the child (or the reader's ``eof``)."""
        if kind == "ready":
            self.start, self.words, self.probe = value  # type: ignore[misc]
            self._part = self.start
        elif kind == "share" and self._tokenizer is not None:
            self._tokenizer.take_cache_share(value)
            self.shares += 1
        elif kind == "chunk" and isinstance(value, tuple):
            self._chunks.append(value)
            self.start = self._part + min(c[0] for c in self._chunks)
            self._tokens = None
        elif kind == "done":
            self._done = True
            self.close()
        else:  # an error, or the child ended without an answer
            self.failed = True

    def wait(self, timeout: float) -> CompactTokens | None:
        """:meth:`poll` when the child has finished, waiting at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.failed and not self._done:
            left = deadline - time.monotonic()
            try:
                self._handle(*self._inbox.get(timeout=max(left, 0.001)))
            except queue.Empty:
                break
        return self.poll()

    def ready(self, timeout: float) -> bool:
        """A prefetched child has reported its part and its tokenizer's probe (waits at most
        ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while self.probe is None and not self.failed:
            left = deadline - time.monotonic()
            try:
                kind, value = self._inbox.get(timeout=max(left, 0.001))
            except queue.Empty:
                return False
            if kind != "ready":
                self.failed = True
                return False
            self._handle(kind, value)
        return not self.failed

    def adopt(self, tokenizer: Tokenizer, text: str, exact: bool) -> bool:
        """Make a prefetched child this encode's helper: True when it was started for this
        text (equal), does the help ``exact`` asks for and its tokenizer encodes the probe
        as ``tokenizer`` does; its shares then go into ``tokenizer``."""
        if self._text is None or not self.ready(ADOPT_WAIT):
            return False
        same = (self.words == exact and self.start < len(text) and self._text == text
                and self.probe == fingerprint(tokenizer, text))
        self._text = None  # (the text is the window's now; do not hold a second copy)
        if same:
            self._tokenizer = tokenizer
        return same

    @property
    def running(self) -> bool:
        """The child process is alive."""
        return self._process.is_alive()

    def close(self) -> None:
        """Stop the child if it still runs and release it (idempotent)."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=5)  # (the reader then ends at the pipe's end)
        if self._sent.is_set():  # (else the writer thread still owns it, and closes it)
            with contextlib.suppress(OSError):
                self._work.close()


def start_tail(tokenizer: Tokenizer, text: str, exact: bool = False) -> TailEncode | None:
    """A :class:`TailEncode` of ``text``, or None when the text is too short or the child
    cannot be started (the caller then does everything itself). ``exact``: the tokenizer has
    exact resume points; the child then solves words ahead (see the module notes)."""
    while _prefetched:  # (a child started before the window: for this text?)
        early = _prefetched.pop()
        if len(text) >= PARALLEL_MIN and early.adopt(tokenizer, text, exact):
            return early
        early.close()
    if len(text) < PARALLEL_MIN:
        return None
    # (a child solving words: from a line start, or in a long line a word start)
    start = end_after(text, min(WORDS_AHEAD, len(text) // 4)) if exact else tail_start(text)
    if start >= len(text):
        return None
    try:
        return TailEncode(tokenizer, text, start, words=exact)
    except Exception:  # unpicklable tokenizer, no processes here...
        return None


def prefetch_tail(vocab: str, text: str) -> None:
    """Start the child a first encode of ``text`` with the vocabulary at path ``vocab`` will
    want, now, before the window exists (see the module notes); :func:`start_tail` adopts
    it. Nothing happens for a text under :data:`PARALLEL_MIN` or when no child can start."""
    if len(text) < PARALLEL_MIN:
        return
    for early in _prefetched:
        early.close()
    _prefetched.clear()
    with contextlib.suppress(Exception):
        _prefetched.append(TailEncode(None, text, len(text), vocab=vocab))


def fingerprint(tokenizer: Tokenizer, text: str) -> list[int]:
    """Ids of :data:`PROBE` and the text's first line(s): two tokenizers that give the same
    are taken for the same vocabulary (a prefetched child's, and the window's)."""
    return list(tokenizer.encode_compact(PROBE + text[:2000]).ids)


def _prefetch_part(tokenizer: Tokenizer, text: str) -> tuple[int, bool]:
    """Where a prefetched child starts and whether it solves words (the tokenizer has exact
    resume points: :meth:`~Tokenizer.encode_compact_resumed` reports some)."""
    if has_exact_points(tokenizer):
        return 0, True
    cut = text.find("\n", int(len(text) * PREFETCH_AT))
    return (len(text) if cut == -1 else cut + 1), False


def _encode_flat(tokenizer: Tokenizer, text: str) -> CompactTokens:
    """``tokenizer.encode_compact(text)``, computed in windows (the document encoder's
    :func:`~explorer.workers.doctokens.encode_document`: one encode of a 5 MB part held
    ~150 MB of temporaries; the child's peak was 242 MB)."""
    doc = run_to_end(encode_document(tokenizer, text, segment_chars=FLAT_SEGMENT_CHARS))
    table = token_table(tokenizer)
    segments = doc.segments
    shifts = (np.array(doc.cp_starts[:len(segments)], np.int64) - np.fromiter(
        (seg.origin for seg in segments), np.int64, len(segments))).tolist()
    out = join_arrays(shifts, [(seg.ids, seg.starts, seg.ends) for seg in segments],
                      [seg.irregular or {} for seg in segments])
    if any(seg.unknown for seg in doc.segments):  # (else no regular token is unknown)
        irregular = out.irregular
        regular = set(out.ids) if not irregular else {
            i for k, i in enumerate(out.ids) if k not in irregular}
        out.unknown_ids = frozenset(i for i in regular if table.flags(i)[1])
    return out


def _receive(connection: Connection, inbox: queue.SimpleQueue[tuple[str, object]]) -> None:
    """Put every message of the child in ``inbox``, then ``("eof", None)`` (the reader)."""
    try:
        while True:
            inbox.put(connection.recv())
    except Exception:  # (the pipe's end, a broken pipe, an answer that does not unpickle)
        inbox.put(("eof", None))
    finally:
        with contextlib.suppress(OSError):
            connection.close()


def _send_work(connection: Connection, payload: bytes, sent: threading.Event) -> None:
    """Write the child's work (a thread: it blocks until the child reads it all), then let
    :meth:`TailEncode.reached` use the pipe (or close it when the write failed)."""
    try:
        connection.send_bytes(payload)
    except OSError:  # (the child was stopped or died)
        with contextlib.suppress(OSError):
            connection.close()
        return
    sent.set()


def _thread_place(work: Connection) -> Callable[[], int]:
    """In the child: where the parent's thread will be by the next batch (the last place
    :meth:`TailEncode.reached` sent, in the child's part; 0 before any)."""
    least = 0

    def floor() -> int:
        nonlocal least
        with contextlib.suppress(EOFError, OSError):
            while work.poll():
                least = int(work.recv())
        return least

    return floor


def _help(work: Connection, connection: Connection) -> None:
    """The child: read ``(tokenizer, text, step)`` from ``work``; send ``("tokens",
    CompactTokens)`` of ``text`` (:func:`_encode_flat`), or when ``step`` is not 0 each ``("share",
    data)`` of its :meth:`~Tokenizer.cache_shares` (``step`` code points each) then
    ``("done", None)``; ``("error", message)`` when that raises.

    Messages are written by a thread of their own (:func:`_send_in_turn`): the parent's
    reader needs the GIL to take them off the pipe, and while Qt lays a 10 MB text out in
    the editor it holds the GIL for ~0.7 s; a child writing its shares itself stopped at
    the full pipe for that long instead of solving on."""
    gc.disable()  # (a short life making millions of objects: collections only cost)
    outbox: queue.SimpleQueue[tuple[str, object] | None] = queue.SimpleQueue()
    sender = threading.Thread(target=_send_in_turn, args=(connection, outbox),
                              name="explorer-tail-send", daemon=True)
    sender.start()
    try:
        tokenizer, text, step = pickle.loads(work.recv_bytes())
        if step == PREFETCH:
            from explorer.engine.formats import load_tokenizer

            tokenizer = load_tokenizer(tokenizer[1])
            trim()
            start, words = _prefetch_part(tokenizer, text)
            outbox.put(("ready", (start, words, fingerprint(tokenizer, text))))
            text = text[start:]
            step = SHARE_STEP if words else 0
        if step:
            for share in tokenizer.cache_shares(text, step, _thread_place(work)):
                outbox.put(("share", share))
            outbox.put(("done", None))
        else:
            for chunk in encode_backward(partial(_encode_flat, tokenizer), text,
                                         _thread_place(work)):
                outbox.put(("chunk", chunk))
            outbox.put(("done", None))
    except Exception as e:  # (reported to the parent, which goes on alone)
        outbox.put(("error", f"{type(e).__name__}: {e}"))
    finally:
        outbox.put(None)
        sender.join()
        connection.close()
        work.close()


def _send_in_turn(connection: Connection,
                  outbox: queue.SimpleQueue[tuple[str, object] | None]) -> None:
    """In the child: send each message of ``outbox`` in order, until None (or until the
    parent has gone: the rest is dropped)."""
    while (message := outbox.get()) is not None:
        try:
            connection.send(message)
        except OSError:
            while outbox.get() is not None:
                pass
            return
