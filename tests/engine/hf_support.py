"""Shared helpers for the tokenizer.json / GGUF tests: texts, trained HF tokenizers, parity."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from scratch import scratch_dir
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "resources" / "corpus" / "udhr_sample.txt"
MULTILINGUAL = ROOT / "tests" / "data" / "multilingual.txt"

EXTRA_TEXTS = [
    "",
    " ",
    "   leading and trailing   ",
    "2000000 and 1234567 and 3.14",
    "tabs\tand\nnewlines\r\n\n",
    "naïve café Ångström ﬁne ＡＢＣ① Ⅻ",
    "👩‍👩‍👧‍👦 🏳️‍🌈 🇫🇷",
    "ကောင်းမွန်သော နေ့ ပါ။",
    "हिन्दी में लिखा गया पाठ",
    "Здравствуй, мир! Привет",
    "日本語のテキストと中文文本",
    "don't won't I'm you'll they've",
    "<s>special</s> [CLS] [SEP] <unk>",
    "\u200bzero\u200dwidth\ufeffbom\u00adsoft",
]


def parity_texts() -> list[str]:
    """Multilingual lines plus edge cases."""
    lines = [ln for ln in MULTILINGUAL.read_text(encoding="utf-8").split("\n") if ln]
    return lines + EXTRA_TEXTS


def corpus_lines() -> list[str]:
    """The training corpus (UDHR sample in 16 languages)."""
    return [ln for ln in CORPUS.read_text(encoding="utf-8").split("\n") if ln.strip()]


def train_all(out_dir: Path) -> dict[str, Path]:
    """Train several HF tokenizers (one per model family / option set); return their files."""
    lines = corpus_lines()
    specials = ["<unk>", "<s>", "</s>"]
    made: dict[str, HFTokenizer] = {}

    bl = HFTokenizer(models.BPE())
    bl.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bl.decoder = decoders.ByteLevel()
    bl.train_from_iterator(lines, trainers.BpeTrainer(
        vocab_size=2000, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    made["bytelevel_bpe"] = bl

    sp = HFTokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    sp.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                          normalizers.Replace(" ", "▁")])
    sp.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                    decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    sp.train_from_iterator(lines, trainers.BpeTrainer(
        vocab_size=1500, special_tokens=[*specials, *[f"<0x{b:02X}>" for b in range(256)]],
        show_progress=False))
    made["llama_style_bpe"] = sp

    wp_bpe = HFTokenizer(models.BPE(unk_token="<unk>", continuing_subword_prefix="##",
                                    end_of_word_suffix="</w>"))
    wp_bpe.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    wp_bpe.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.Punctuation()])
    wp_bpe.decoder = decoders.BPEDecoder("</w>")
    wp_bpe.train_from_iterator(lines, trainers.BpeTrainer(
        vocab_size=1500, special_tokens=specials, continuing_subword_prefix="##",
        end_of_word_suffix="</w>", show_progress=False))
    made["prefix_suffix_bpe"] = wp_bpe

    uni = HFTokenizer(models.Unigram())
    uni.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(),
                                           normalizers.Strip()])
    uni.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    uni.decoder = decoders.Metaspace(prepend_scheme="first")
    uni.train_from_iterator(lines, trainers.UnigramTrainer(
        vocab_size=1200, special_tokens=specials, unk_token="<unk>", show_progress=False))
    made["unigram"] = uni

    wp = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=False)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.decoder = decoders.WordPiece()
    wp.train_from_iterator(lines, trainers.WordPieceTrainer(
        vocab_size=1500, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False))
    made["wordpiece"] = wp

    wl = HFTokenizer(models.WordLevel(unk_token="<unk>"))
    wl.pre_tokenizer = pre_tokenizers.Whitespace()
    wl.train_from_iterator(lines, trainers.WordLevelTrainer(
        vocab_size=800, special_tokens=specials, show_progress=False))
    made["wordlevel"] = wl

    out: dict[str, Path] = {}
    for name, tok in made.items():
        p = out_dir / f"{name}.json"
        tok.save(str(p))
        out[name] = p
    return out


def hf_reference(path: Path) -> HFTokenizer:
    """The reference tokenizer with padding and truncation off."""
    ref = HFTokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    return ref


def mismatches(ours, ref: HFTokenizer, texts: list[str]) -> list[str]:
    """Describe every text whose ids, tokens or offsets differ."""
    bad = []
    for t in texts:
        e = ref.encode(t, add_special_tokens=False)
        o = ours.encode(t)
        if e.ids != o.ids:
            bad.append(f"ids {t!r}: {e.tokens} vs {o.pieces}")
        elif e.tokens != o.pieces:
            bad.append(f"tokens {t!r}: {e.tokens} vs {o.pieces}")
        elif [tuple(x) for x in e.offsets] != o.offsets:
            bad.append(f"offsets {t!r}: {e.offsets} vs {o.offsets}")
    return bad


@cache
def trained_files() -> dict[str, Path]:
    """:func:`train_all` once per test process (the files live in a temporary folder)."""
    return train_all(scratch_dir("hf_trained_"))


@cache
def load_cached(path: Path):
    """Load a vocabulary once per test process (tokenizers are immutable)."""
    from explorer.engine.formats import load_tokenizer

    return load_tokenizer(path)
