"""Visual training: step/pause/resume give the run an uninterrupted training gives; cancel
keeps a usable model; the vocabulary slider equals the N-merge tokenizer; Train both opens
Compare; the step view shows pair counts and the marked sample."""

from __future__ import annotations

import pytest
from pair_recount import NaiveState
from PySide6.QtCore import Qt

from explorer.engine.formats import load_tokenizer
from explorer.engine.generators import run_to_end as run_generator
from explorer.engine.pretokenizers.byte_level import bytes_to_unicode
from explorer.engine.trainers import BpeConfig, Corpus, UnigramConfig, run, to_tokenizer, train
from explorer.engine.trainers.bpe_trainer import count_words
from explorer.engine.trainers.models import TrainedBpe, TrainedUnigram
from explorer.ui.dialogs.training import ALGORITHMS, STEP_PAIRS, TrainingDialog, bundled_corpora
from explorer.ui.dialogs.training_step import StepView, readable

TEXT = "The school was a grand old building. Tout être humain naît libre. Привет! 東京 🙂"


def _pick(dialog: TrainingDialog, prefix: str, vocab: int) -> None:
    dialog.algorithm.setCurrentText(next(k for k in ALGORITHMS if k.startswith(prefix)))
    dialog.vocab_size.setValue(vocab)
    for i in range(dialog.corpus.count()):
        item = dialog.corpus.item(i)
        name = item.data(Qt.ItemDataRole.UserRole).replace("\\", "/").rsplit("/", 1)[-1]
        item.setCheckState(Qt.CheckState.Checked if name == "botchan.txt"
                           else Qt.CheckState.Unchecked)


def _botchan() -> Corpus:
    return Corpus.from_files([p for p in bundled_corpora() if p.name == "botchan.txt"])


@pytest.fixture()
def dialog(qtbot):
    d = TrainingDialog()
    qtbot.addWidget(d)
    yield d
    d.reject()


def _step(qtbot, dialog: TrainingDialog, unit: str) -> None:
    dialog.controls.step_unit.setCurrentText(unit)
    with qtbot.waitSignal(dialog.paused, timeout=30000):
        qtbot.mouseClick(dialog.controls.step_button, Qt.MouseButton.LeftButton)
    assert dialog.is_paused()


class _Recount:
    """The botchan corpus replayed merge by merge, pairs recounted from scratch."""

    def __init__(self) -> None:
        words = run_generator(count_words(_botchan(), BpeConfig()))
        self.state = NaiveState(words)
        self.ids = {ch: i for i, ch in enumerate(sorted(bytes_to_unicode().values()))}

    def check(self, view: StepView, *, paused: bool = True) -> None:
        """The shown pair table equals a recount of the corpus before the merge it lists
        (paused: the last merge)."""
        last = view.last_counted
        assert last is not None and (last is view.last_merge or not paused)
        for m in view.merge_list:
            self.ids.setdefault(m.token, m.token_id)
        self.state.apply_all((m.left, m.right, m.token)
                             for m in view.merge_list[self.state.merged:last.rank])
        assert self.state.merged == last.rank
        expected = self.state.top(self.ids, STEP_PAIRS)
        assert [((p.left, p.right), p.count) for p in last.top_pairs] == expected
        shown = [(view.table.item(r, 0).text(), view.table.item(r, 1).text())
                 for r in range(view.table.rowCount())]
        assert shown == [(f"{readable(a, True)} + {readable(b, True)}", f"{c:,}")
                         for (a, b), c in expected]


def test_bpe_step_pause_resume_equals_an_uninterrupted_run(qtbot, dialog):
    recount = _Recount()
    _pick(dialog, "BPE (byte-level", 700)
    _step(qtbot, dialog, "1 merge")
    view = dialog.step_view
    recount.check(view)
    assert len(view.merge_list) == 1
    first = view.merge_list[0]
    # the pair table: the winner first and highlighted, counts falling
    assert view.table.item(0, 1).text() == f"{first.count:,}"
    assert view.table.item(0, 0).background().color().name() == "#9fe29f"
    counts = [p.count for p in first.top_pairs]
    assert counts == sorted(counts, reverse=True) and len(counts) == 20
    # the sample is segmented and the first merge's spans are marked
    assert view.sample.marked and set(view.sample.marked) <= set(view.sample.spans)
    _step(qtbot, dialog, "10 merges")
    assert len(view.merge_list) == 11
    recount.check(view)
    _step(qtbot, dialog, "100 merges")
    assert len(view.merge_list) == 111
    recount.check(view)
    # run on slowly, pause, then at full speed to the end
    dialog.controls.speed.setCurrentText("100 steps/s")
    with qtbot.waitSignal(dialog.paused, timeout=30000):
        qtbot.mouseClick(dialog.controls.resume_button, Qt.MouseButton.LeftButton)
        qtbot.wait(50)
        assert not dialog.is_paused()
        qtbot.mouseClick(dialog.controls.pause_button, Qt.MouseButton.LeftButton)
    assert 111 < len(view.merge_list) < 444
    recount.check(view)  # paused from a speed-limited run
    dialog.controls.speed.setCurrentText("max speed")
    with qtbot.waitSignal(dialog.finished_training, timeout=60000) as blocker:
        dialog.resume()
    assert blocker.args == ["done"]
    assert view.last_counted is not None and view.last_counted.rank > 111
    recount.check(view, paused=False)  # the last table drawn at full speed
    plain = run(train(_botchan(), BpeConfig(vocab_size=700))).model
    assert dialog.model == plain
    assert [(m.left, m.right) for m in view.merge_list] == list(plain.merges)

    # click a merge: the sample marks where it applied
    rank = next(r for r, spans in view.applied.items() if spans and r > 5)
    line = view.merges.document().findBlockByNumber(rank).text()
    assert line.split()[0] == str(rank + 1)
    cursor = view.merges.textCursor()
    cursor.setPosition(view.merges.document().findBlockByNumber(rank).position())
    view.merges.setTextCursor(cursor)
    view.merges.ensureCursorVisible()
    qtbot.mouseClick(view.merges.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.merges.line_rect(rank).center())
    assert view.sample.marked == view.applied[rank]


def test_unigram_steps_equal_an_uninterrupted_run(qtbot, dialog):
    _pick(dialog, "Unigram", 800)
    _step(qtbot, dialog, "1 EM sub-iteration")
    view = dialog.step_view
    assert view.seeds is not None and view.last_em is not None and view.last_prune is None
    _step(qtbot, dialog, "1 pruning round")
    assert view.last_prune is not None and view.last_prune.round == 0
    assert view.table.rowCount() > 0 and view.table.horizontalHeaderItem(0).text() == \
        "removed piece"
    qtbot.waitUntil(lambda: not view.busy() and bool(view.sample.spans), timeout=20000)
    assert view._bars is not None  # the score histogram
    with qtbot.waitSignal(dialog.finished_training, timeout=60000) as blocker:
        dialog.resume()
    assert blocker.args == ["done"]
    plain = run(train(_botchan(), UnigramConfig(vocab_size=800))).model
    assert dialog.model == plain


def test_cancel_mid_run_keeps_a_usable_saveable_tokenizer(qtbot, dialog, tmp_path):
    _pick(dialog, "BPE (byte-level", 900)
    _step(qtbot, dialog, "100 merges")
    _step(qtbot, dialog, "10 merges")
    with qtbot.waitSignal(dialog.finished_training, timeout=30000) as blocker:
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["stopped"]
    model = dialog.model
    assert isinstance(model, TrainedBpe) and len(model.merges) == 110
    full = run(train(_botchan(), BpeConfig(vocab_size=900))).model
    assert isinstance(full, TrainedBpe) and model.merges == full.prefix(110).merges
    assert model.vocab == full.prefix(110).vocab and "stopped early" in model.stop_reason
    assert dialog.save_button.isEnabled() and dialog.use_button.isEnabled()
    tok = dialog.trained_tokenizer()
    assert tok.decode(tok.encode(TEXT).ids) == TEXT
    path = dialog.save_to(tmp_path / "cut.tiktoken")
    assert load_tokenizer(path).encode(TEXT).ids == tok.encode(TEXT).ids

    # a cancel before anything is learned keeps nothing, and the dialog stays usable
    dialog.start(paused=True)
    with qtbot.waitSignal(dialog.finished_training, timeout=5000) as blocker:
        dialog.cancel()
    assert blocker.args == ["cancelled"] and dialog.model is None
    assert dialog.start_button.isEnabled() and not dialog.save_button.isEnabled()


def test_unigram_cancel_after_a_round_keeps_its_pieces(qtbot, dialog):
    _pick(dialog, "Unigram", 800)
    _step(qtbot, dialog, "1 pruning round")
    with qtbot.waitSignal(dialog.finished_training, timeout=30000) as blocker:
        dialog.cancel()
    assert blocker.args == ["stopped"]
    assert isinstance(dialog.model, TrainedUnigram) and dialog.model.vocab_size <= 800
    tok = dialog.trained_tokenizer()
    assert tok.supports_lattice() and tok.encode("the school").ids


def test_slider_at_n_equals_the_n_merge_tokenizer(qtbot, window, tmp_path):
    w = window
    w.set_text(TEXT)
    w.show_view("train")
    dialog = w.panels["train"].findChild(TrainingDialog)
    _pick(dialog, "BPE (byte-level", 600)
    with qtbot.waitSignal(dialog.finished_training, timeout=60000):
        dialog.start()
    model = dialog.model
    assert isinstance(model, TrainedBpe)
    n = 77
    with qtbot.waitSignal(w.tokenizer_changed, timeout=20000):
        dialog.history.set_position(n)
    assert "first 77 merges" in dialog.history.describe()
    qtbot.waitUntil(lambda: w.doc is not None and w.doc.tokenizer is w.tokenizer
                    and w.doc.text == w.text(), timeout=20000)
    short = run(train(_botchan(), BpeConfig(vocab_size=256 + n))).model
    ids = [tok.id for tok, _a, _b in w.doc.tokens()]
    assert ids == to_tokenizer(short).encode(TEXT).ids
    assert f"{len(ids)} tokens" in w.status.stats.text()
    assert w.source.startswith("trained:") and not w.settings.vocabulary.startswith("trained")
    # export at the chosen point
    for ext in (".json", ".tiktoken"):
        out = dialog.save_to(tmp_path / f"n{ext}")
        assert load_tokenizer(out).encode(TEXT).ids == ids


def test_unigram_slider_at_a_round_is_that_rounds_model(qtbot, window, tmp_path):
    w = window
    w.set_text(TEXT)
    w.show_view("train")
    dialog = w.panels["train"].findChild(TrainingDialog)
    _pick(dialog, "Unigram", 800)
    with qtbot.waitSignal(dialog.finished_training, timeout=60000):
        dialog.start()
    final = dialog.model
    rounds = dialog.history.rounds
    assert isinstance(final, TrainedUnigram) and len(rounds) >= 2
    with qtbot.waitSignal(w.tokenizer_changed, timeout=20000):
        dialog.history.set_position(0)
    assert "after pruning round 1" in dialog.history.describe()
    snap = rounds[0][1]
    assert dialog.chosen_model() is snap and snap.vocab_size > final.vocab_size
    expected = to_tokenizer(snap).encode(TEXT).ids
    qtbot.waitUntil(lambda: w.doc is not None and w.doc.tokenizer is w.tokenizer
                    and w.doc.text == w.text(), timeout=20000)
    assert [tok.id for tok, _a, _b in w.doc.tokens()] == expected
    for ext in (".model", ".json"):  # export at the chosen point
        out = dialog.save_to(tmp_path / f"r{ext}")
        assert load_tokenizer(out).encode(TEXT).ids == expected, ext


def test_train_both_opens_compare_with_both(qtbot, window):
    w = window
    w.show_view("train")
    dialog = w.panels["train"].findChild(TrainingDialog)
    _pick(dialog, "BPE (byte-level", 500)
    with qtbot.waitSignal(dialog.both_ready, timeout=90000) as blocker:
        qtbot.mouseClick(dialog.both_button, Qt.MouseButton.LeftButton)
    labels = [label for label, _tok in blocker.args[0]]
    assert labels == ["trained bpe 500", "trained unigram 500"]
    compare = w.panel_objects["compare"].compare
    qtbot.waitUntil(lambda: w.is_panel_shown("compare"), timeout=5000)
    qtbot.waitUntil(lambda: len(compare._tokenizers) == 3, timeout=20000)
    names = [t.info.name for t in compare._tokenizers]
    assert names[1:] == ["trained bpe 500", "trained unigram 500"]
    assert w.tokenizer is compare._tokenizers[0]  # the editor's tokenizer is kept


def test_training_views_are_offered(window):
    assert {"train-step", "train-unigram"} <= set(window.view_names())


def test_lattice_and_bpe_tabs_offer_a_tokenizer_of_their_kind(qtbot, window):
    w = window
    lattice = w.panel_objects["lattice"].lattice
    merge_queue = w.panel_objects["bpe"].merge_queue
    editor_tok = w.tokenizer
    w.show_view("lattice")
    cur = w.editor.textCursor()
    cur.setPosition(8)  # in " world"
    w.editor.setTextCursor(cur)
    title = lattice.title
    qtbot.waitUntil(lambda: "corpus_unigram_4k" in title.text(), timeout=5000)
    assert 'href="stand-in"' in title.text() and "not a Unigram model" in title.text()
    assert title.textInteractionFlags() & Qt.TextInteractionFlag.LinksAccessibleByMouse
    title.linkActivated.emit("stand-in")  # what a click on the link sends
    qtbot.waitUntil(lambda: "the editor keeps cl100k_base" in title.text(), timeout=20000)
    assert "Lattice of" in title.text() and lattice.isEnabled()
    assert w.tokenizer is editor_tok  # the editor's tokenizer is unchanged

    # under a Unigram editor tokenizer the BPE tab offers the bundled BPE model
    with qtbot.waitSignal(w.tokenizer_changed, timeout=20000):
        w.open_source("bundled:corpus_unigram_4k")
    w.show_view("bpe")
    qtbot.waitUntil(lambda: "corpus_bpe_4k" in merge_queue.title.text(), timeout=5000)
    merge_queue.title.linkActivated.emit("stand-in")
    qtbot.waitUntil(lambda: "the editor keeps corpus_unigram_4k" in merge_queue.title.text(),
                    timeout=20000)
    assert merge_queue.final.chips


@pytest.mark.parametrize("view", ["train-step", "train-unigram"])
def test_training_views_pause_at_a_fixed_step(qtbot, window, view):
    from explorer.ui.panels.training_steps import BPE_VIEW_MERGES, UNIGRAM_VIEW_ROUNDS

    w = window
    assert w.show_view(view)
    qtbot.waitUntil(lambda: not w.panels_busy(), timeout=60000)
    dialog = w.panels["train"].findChild(TrainingDialog)
    step = dialog.step_view
    assert dialog.is_paused() and w.is_panel_shown("train")
    if view == "train-step":
        assert len(step.merge_list) == BPE_VIEW_MERGES
        assert step.table.rowCount() == 20 and step.sample.marked
        assert step.merges.count == BPE_VIEW_MERGES
    else:
        assert step.last_prune is not None and step.last_prune.round == UNIGRAM_VIEW_ROUNDS - 1
        assert step.sample.spans and step.sample.marked and step._bars is not None
        assert step.table.item(0, 0).text() == step.last_prune.removed[0][0]
        snap = step.last_prune.snapshot
        best = snap.pieces[snap.num_meta]
        assert step.table.item(0, 2).text() == f"{best[0]}  ({best[1]:.2f})"
    heading = step.heading.text()
    dialog.cancel()  # the window is reused by no one, but leave no paused run behind
    qtbot.waitUntil(lambda: not dialog.is_running(), timeout=30000)
    assert heading


def test_tokens_are_shown_on_one_readable_line():
    from explorer.ui.dialogs.training_step import readable

    assert readable("Ġthe", True) == "␣the"
    assert readable("čĊ", True) == "␍↵"  # byte-level \r\n
    assert readable("æĿ", True) == "\\xe6\\x9d"  # bytes e6 9d: half a character
    assert readable("a\u2028b\x85", False) == "a\\u2028b\\x85"


def test_a_merge_hf_took_by_a_stale_count_is_named(qtbot):
    from explorer.engine.trainers.events import Merge, PairCount

    view = StepView()
    qtbot.addWidget(view)
    view.reset("bpe", BpeConfig(mode="metaspace", step_pairs=2), "aab ab")
    pairs = (PairCount("a", "b", 5, 1, 2), PairCount("x", "y", 4, 3, 4))
    view.add_events([Merge(0, "a", "b", "ab", 5, 5, 6, pairs, 1)])
    view.flush()
    assert "stale" not in view.heading.text()
    assert view.table.item(0, 0).font().bold() and not view.table.item(1, 0).font().bold()
    # HF re-merged x + y by its old count 9; the live table has it second, at 4
    view.add_events([Merge(1, "x", "y", "xy", 6, 9, 6, pairs, 0)])
    view.flush()
    assert "stale count (9" in view.heading.text()
    assert view.table.item(1, 0).font().bold() and not view.table.item(0, 0).font().bold()
    assert view.table.horizontalHeaderItem(1).text() == "live count"
