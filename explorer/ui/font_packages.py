"""Which script a character belongs to, and which font package draws it (Debian, Fedora).

Used to say in the status bar what to install when no installed font can draw some text.
Debian: ``fonts-noto-core`` has a Noto face for nearly every script (checked against its
file list), CJK is ``fonts-noto-cjk``, colour emoji ``fonts-noto-color-emoji``, and the rare
Han ideographs of CJK Extension B and later (planes 2 and 3), which Noto CJK mostly lacks,
``fonts-hanazono``. Fedora packages Noto one script at a time
(``google-noto-sans-<script>-fonts``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import regex

#: Scripts with a face in Debian's fonts-noto-core (names as Unicode spells them, CamelCase).
NOTO_CORE_SCRIPTS = (
    "Latin", "Greek", "Cyrillic", "Adlam", "AnatolianHieroglyphs", "Arabic", "Armenian",
    "Avestan", "Balinese", "Bamum", "BassaVah", "Batak", "Bengali", "Bhaiksuki", "Brahmi",
    "Buginese", "Buhid", "CanadianAboriginal", "Carian", "CaucasianAlbanian", "Chakma", "Cham",
    "Cherokee", "Coptic", "Cuneiform", "Cypriot", "Deseret", "Devanagari", "Dogra", "Duployan",
    "EgyptianHieroglyphs", "Elbasan", "Elymaic", "Ethiopic", "Georgian", "Glagolitic",
    "Gothic", "Grantha", "Gujarati", "GunjalaGondi", "Gurmukhi", "HanifiRohingya", "Hanunoo",
    "Hatran", "Hebrew", "ImperialAramaic", "InscriptionalPahlavi", "InscriptionalParthian",
    "Javanese", "Kaithi", "Kannada", "KayahLi", "Kharoshthi", "Khmer", "Khojki", "Khudawadi",
    "Lao", "Lepcha", "Limbu", "LinearA", "LinearB", "Lisu", "Lycian", "Lydian", "Mahajani",
    "Malayalam", "Mandaic", "Manichaean", "Marchen", "MasaramGondi", "Medefaidrin",
    "MeeteiMayek", "MendeKikakui", "Meroitic_Cursive", "Miao", "Modi", "Mongolian", "Mro",
    "Multani", "Myanmar", "Nko", "Nabataean", "NewTaiLue", "Newa", "Nushu", "Ogham", "OlChiki",
    "OldHungarian", "OldItalic", "OldNorthArabian", "OldPermic", "OldPersian", "OldSogdian",
    "OldSouthArabian", "OldTurkic", "Oriya", "Osage", "Osmanya", "PahawhHmong", "Palmyrene",
    "PauCinHau", "PhagsPa", "Phoenician", "PsalterPahlavi", "Rejang", "Runic", "Samaritan",
    "Saurashtra", "Sharada", "Shavian", "Siddham", "SignWriting", "Sinhala", "Sogdian",
    "SoraSompeng", "Soyombo", "Sundanese", "SylotiNagri", "Syriac", "Tagalog", "Tagbanwa",
    "TaiLe", "TaiTham", "TaiViet", "Takri", "Tamil", "Telugu", "Thaana", "Thai", "Tibetan",
    "Tifinagh", "Tirhuta", "Ugaritic", "Vai", "Wancho", "WarangCiti", "Yi", "ZanabazarSquare",
    "Ahom", "Tangut", "Yezidi", "NyiakengPuachueHmong",
)
CJK_SCRIPTS = ("Han", "Hiragana", "Katakana", "Hangul", "Bopomofo")
SERIF_ONLY = {"Tibetan", "Tangut", "Ahom", "Dogra", "Yezidi", "NyiakengPuachueHmong"}
EMOJI = "Emoji"
RARE_HAN = "Han Ext. B+"


@dataclass(frozen=True, slots=True)
class FontPackage:
    """The packages that add a font for one script."""

    script: str
    debian: str
    fedora: str


def _words(camel: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", camel.replace("_", " "))


@cache
def _script_patterns() -> list[tuple[str, regex.Pattern[str]]]:
    found = []
    for name in (*CJK_SCRIPTS, *NOTO_CORE_SCRIPTS):
        try:
            found.append((name, regex.compile(rf"\p{{Script={name}}}")))
        except regex.error:  # a script this regex version does not know yet
            continue
    return found


_EMOJI = regex.compile(r"[\p{Emoji_Presentation}\p{Extended_Pictographic}]")


@cache
def script_of(ch: str) -> str:
    """The script a character needs a font for (``Emoji`` for pictographs), or ``""``."""
    if _EMOJI.match(ch) and ord(ch) > 0xFF:
        return EMOJI
    for name, pattern in _script_patterns():
        if pattern.match(ch):
            if name == "Han" and ord(ch) >= 0x20000:
                return RARE_HAN
            return name
    return ""


def package_for(script: str) -> FontPackage | None:
    """Debian and Fedora packages with a font for ``script`` (a :func:`script_of` name)."""
    if script == EMOJI:
        return FontPackage(script, "fonts-noto-color-emoji", "google-noto-color-emoji-fonts")
    if script == RARE_HAN:
        return FontPackage(script, "fonts-hanazono", "hanazono-fonts")
    if script in CJK_SCRIPTS:
        return FontPackage(script, "fonts-noto-cjk", "google-noto-sans-cjk-fonts")
    if script in NOTO_CORE_SCRIPTS:
        style = "serif" if script in SERIF_ONLY else "sans"
        slug = _words(script).lower().replace(" ", "-")
        fedora = (f"google-noto-{style}-fonts" if script in ("Latin", "Greek", "Cyrillic")
                  else f"google-noto-{style}-{slug}-fonts")
        return FontPackage(script, "fonts-noto-core", fedora)
    return None


def display_name(script: str) -> str:
    """``OlChiki`` -> ``Ol Chiki``."""
    return _words(script)
