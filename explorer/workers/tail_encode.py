"""A big document's first encode on two cores: a child process encodes its tail, or
solves its words ahead.

The window's first encode of a long text runs in windows on one worker thread, which holds
the GIL (so a second thread would not help). For a tokenizer whose tokens after a safe cut do
not depend on what came before it (no exact resume points: every BPE, WordPiece and
byte-level model; :meth:`~explorer.engine.tokenizer.Tokenizer.encode_compact_resumed`), the
text from a line start past the middle is sent to a child process that encodes it (as one
text, in the document encoder's windows, which hold less memory than one call), while the
thread goes on from the start. At its next window boundary after the child
has answered, :func:`~explorer.workers.doctokens.encode_document` takes the child's tokens
from there on when they *agree* with the segment its own windows must reproduce next (the
same rule its windows follow, :func:`~explorer.workers.docstore.agrees`); otherwise it goes
on alone. The result is the one whole-text encode either way; the child only saves time.

A tokenizer with exact resume points (a SentencePiece Unigram model: its near ties depend on
the float32 path score of everything before) cannot be encoded from the middle. Its child
does the other half of a cold encode instead: from a line start two megabytes in, it
solves the text's words ahead of the thread (:meth:`~explorer.engine.tokenizer.Tokenizer.
cache_shares`), a quarter megabyte at a time, and the thread takes each batch of solved words
at its next window (:meth:`~explorer.engine.tokenizer.Tokenizer.take_cache_share`): its
windows then find their words solved, as in a second encode. The thread still decides every
token from the exact running score; the words are the ones it would have solved itself. The
thread reports its place on the work pipe (:meth:`TailEncode.reached`); a child it has
caught up with skips ahead of it (:data:`AHEAD_LEAD`) instead of solving the words the
thread is solving too.

The child is started with ``spawn`` (a new interpreter, safe from a process with Qt
threads); it receives the pickled tokenizer and its part of the text and sends back
:class:`~explorer.engine.compact.CompactTokens` (three ``array('i')``: ~12 bytes a token).
Anything going wrong in it (a tokenizer that cannot be pickled, a crash) only means the
thread encodes the whole text itself. A cancelled encode terminates the child.

**Started before the window** (:func:`prefetch_tail`): a text the app opens with
(``--text-file``) is known before the window, its panels and the vocabulary exist, ~2-3 s
before the first encode starts. The child is then started at once with the vocabulary's
*path*: it loads the vocabulary itself, finds out which kind of help the tokenizer takes,
and starts earlier in the text (from three tenths to nearly halfway in, as fast as it finds the
tokenizer on the text: :func:`prefetch_fraction`; or solving words from the start); the first
encode's :func:`start_tail` adopts it when the text is the same and the child's tokenizer
encodes a probe exactly as the window's does (:func:`fingerprint`), and stops it otherwise.

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
from dataclasses import replace
from multiprocessing import get_context
from multiprocessing.connection import Connection

import numpy as np

from explorer.engine.compact import CompactTokens, token_table
from explorer.engine.encoding import Token
from explorer.engine.generators import run_to_end
from explorer.engine.tokenizer import Tokenizer
from explorer.workers.doctokens import encode_document
from explorer.workers.malloc import trim

__all__ = ["HEAD_START", "PARALLEL_MIN", "SHARE_STEP", "WORDS_AHEAD", "TailEncode",
           "fingerprint", "prefetch_fraction", "prefetch_tail", "start_tail", "tail_start"]

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
PREFETCH_AT = 0.3
"""The earliest a child started before the window starts its part, as a fraction of the text
(:func:`prefetch_fraction`). It starts ~1 s before the window's first encode, but shares the
cores with the window's start-up and its tokens come only when all are done. Measured on the
10 MB document (from the text in the editor to the whole text highlighted, three runs each):
o200k 0.86-1.07 s from 0.3 in, 0.98-1.18 s from 0.35, 1.01-1.06 s from 0.4; cl100k
0.83-0.87 s from 0.3, 0.92-0.97 s from 0.4. From a quarter in the child answered after the
thread had passed its start (and the thread went on alone until it did)."""
PREFETCH_LATEST = 0.47
"""The latest a prefetched child starts its part (a tokenizer so slow that the child's head
start is nothing beside the encode). A little before halfway: the window's thread also
paints and answers the window, and went 0.85-1.0x its child's pace (10 MB document:
all-MiniLM's child from 0.47 in answered with the thread at its start; Mistral's
SentencePiece BPE and the bundled tokenizer.json BPE from 0.48 and 0.43, 1.2 and 0.6 s before
the thread got there)."""
PREFETCH_LEAD_S = 0.4
"""Seconds of the prefetched child's own pace that its head start is worth
(:func:`prefetch_fraction`): with it, o200k's child (~5M characters a second) starts at
:data:`PREFETCH_AT`, where it was measured best."""
PROBE_SECONDS = 0.1
"""The prefetched child times its tokenizer on the text for about this long
(:func:`_chars_per_second`)."""
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
    """Where the child's part starts: the line start after ``(len + HEAD_START) / 2``
    (``len(text)`` when there is none)."""
    cut = text.find("\n", (len(text) + HEAD_START) // 2)
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
        """Document offset of the child's part."""
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
        self._tokens: CompactTokens | None = None
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
        """The child's tokens (offsets into ``text[start:]``) once it has sent them; None
        while it works, when it failed (see :attr:`failed`) or when it solves words (each
        batch it has sent is taken into the tokenizer here). Never blocks."""
        while self._tokens is None and not self.failed and not self._done:
            try:
                self._handle(*self._inbox.get_nowait())
            except queue.Empty:
                return None
        return self._tokens

    def reached(self, offset: int) -> None:
        """Tell a child solving words that the encode's thread is at document ``offset``
        (it skips what the thread will reach before its next batch is solved:
        :data:`AHEAD_LEAD`). Reported every :data:`REPORT_STEP` code points; never blocks
        for long (a few bytes on a pipe the child drains at every batch)."""
        if (not self.words or not self._sent.is_set() or self._done or self.failed
                or offset - self._reported < REPORT_STEP or offset <= self.start):
            return
        self._reported = offset
        with contextlib.suppress(OSError, ValueError):  # (the child ended: nothing to tell)
            self._work.send(offset - self.start + AHEAD_LEAD)

    def _handle(self, kind: str, value: object) -> None:
        """One message of the child (or the reader's ``eof``)."""
        if kind == "ready":
            self.start, self.words, self.probe = value  # type: ignore[misc]
        elif kind == "share" and self._tokenizer is not None:
            self._tokenizer.take_cache_share(value)
            self.shares += 1
        elif kind == "tokens" and isinstance(value, CompactTokens):
            self._tokens = value
            self.close()
        elif kind == "done":
            self._done = True
            self.close()
        else:  # an error, or the child ended without an answer
            self.failed = True

    def wait(self, timeout: float) -> CompactTokens | None:
        """:meth:`poll` until the child has finished, at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self._tokens is None and not self.failed and not self._done:
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
    if exact:
        start = text.find("\n", min(WORDS_AHEAD, len(text) // 4)) + 1 or len(text)
    else:
        start = tail_start(text)
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
    if tokenizer.encode_compact_resumed(PROBE, None).resume is not None:
        return 0, True
    at = prefetch_fraction(_chars_per_second(tokenizer, text), len(text))
    cut = text.find("\n", int(len(text) * at))
    return (len(text) if cut == -1 else cut + 1), False


def prefetch_fraction(chars_per_second: float, size: int) -> float:
    """Where a prefetched child starts its part of a text of ``size`` code points (a
    fraction of it), for a tokenizer that encodes ``chars_per_second``.

    The child starts encoding about a second before the window's thread does, and then both
    go at about the same pace; the child's part should end when the thread reaches it. A
    fast tokenizer's child is far ahead: it starts at :data:`PREFETCH_AT`; the slower the
    tokenizer, the less its head start counts, up to nearly halfway
    (:data:`PREFETCH_LATEST`).
    Measured on the 10 MB document: a child solving all-MiniLM's WordPiece (~0.4M
    characters a second) from 0.3 in answered 4 s after the thread had passed its start.
    """
    if size <= 0 or chars_per_second <= 0:
        return PREFETCH_LATEST
    head = PREFETCH_LEAD_S * chars_per_second / size
    return min(PREFETCH_LATEST, max(PREFETCH_AT, PREFETCH_LATEST - head))


def _chars_per_second(tokenizer: Tokenizer, text: str) -> float:
    """The tokenizer's pace on ``text`` (code points a second of this process's CPU): a
    slice of the text's middle encoded to warm it up, then the slices after it for about
    :data:`PROBE_SECONDS` (a fast tokenizer's first slice is mostly its one-time costs)."""
    step = 32_768
    middle = len(text) // 2
    tokenizer.encode_compact(text[middle:middle + step])
    at = middle + step if middle + step < len(text) else 0  # (a short text: from its start)
    done, began = 0, time.process_time()
    for _ in range(4):
        piece = text[at:at + 2 * step]
        if not piece:
            break
        tokenizer.encode_compact(piece)
        done += len(piece)
        at += len(piece)
        if time.process_time() - began >= PROBE_SECONDS:
            break
    spent = time.process_time() - began
    return done / spent if spent > 0 else 0.0


def _encode_flat(tokenizer: Tokenizer, text: str) -> CompactTokens:
    """``tokenizer.encode_compact(text)``, computed in windows (the document encoder's
    :func:`~explorer.workers.doctokens.encode_document`: one encode of a 5 MB part held
    ~150 MB of temporaries; the child's peak was 242 MB)."""
    doc = run_to_end(encode_document(tokenizer, text, segment_chars=FLAT_SEGMENT_CHARS))
    table = token_table(tokenizer)
    segments = doc.segments
    out = CompactTokens()
    # (joined as bytes, then shifted by one numpy pass: a 6 MB part has ~20k segments, and
    # a shifted copy of each took ~8% of the child)
    counts = np.fromiter(map(len, (seg.ids for seg in segments)), np.int64, len(segments))
    shifts = np.array(doc.cp_starts[:len(segments)], np.int64) - np.fromiter(
        (seg.origin for seg in segments), np.int64, len(segments))
    out.ids.frombytes(b"".join(seg.ids.tobytes() for seg in segments))
    moved = np.repeat(shifts, counts)
    for name in ("starts", "ends"):
        joined = np.frombuffer(b"".join(getattr(seg, name).tobytes() for seg in segments),
                               np.int32)
        getattr(out, name).frombytes((joined + moved).astype(np.int32).tobytes())
    irregular: dict[int, Token] = {}
    firsts = (np.cumsum(counts) - counts).tolist()
    for k, seg in enumerate(segments):
        if seg.irregular:
            shift, base = int(shifts[k]), firsts[k]
            for j, tok in seg.irregular.items():
                irregular[base + j] = replace(tok, start=tok.start + shift,
                                              end=tok.end + shift)
    out.irregular = irregular
    if any(seg.unknown for seg in doc.segments):  # (else no regular token is unknown)
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
            outbox.put(("tokens", _encode_flat(tokenizer, text)))
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
