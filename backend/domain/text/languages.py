"""Scripts and languages the keyword side tells apart: which script a character is in, which Snowball
stemmer a language has (and for which script), and how frontmatter names a language."""

from __future__ import annotations

import re
from bisect import bisect_right

LATIN, CYRILLIC, GREEK, ARABIC, OTHER = "latin", "cyrillic", "greek", "arabic", "other"
# scripts written without spaces between words (Korean has spaces, but particles cling to the word)
UNSPACED = frozenset({"cjk", "hangul", "thai", "lao", "khmer", "myanmar"})

# Code point ranges of each script the analysis tells apart; anything else is read as Latin (letters, digits).
_SCRIPT_BLOCKS = {
    GREEK: "0370-03FF 1F00-1FFF",
    CYRILLIC: "0400-052F 1C80-1C8F 2DE0-2DFF A640-A69F",
    "armenian": "0530-058F",
    "hebrew": "0590-05FF",
    ARABIC: "0600-06FF 0750-077F 08A0-08FF FB50-FDFF FE70-FEFF",
    "devanagari": "0900-097F",
    "tamil": "0B80-0BFF",
    "thai": "0E00-0E7F",
    "lao": "0E80-0EFF",
    "myanmar": "1000-109F",
    "khmer": "1780-17FF",
    "hangul": "1100-11FF 3130-318F A960-A97F AC00-D7FF",
    # 々〆〇, kana, Han (and its extensions), half-width katakana (NFKC makes them full width first)
    "cjk": "3005-3007 3040-30FF 31F0-31FF 3400-4DBF 4E00-9FFF F900-FAFF FF66-FF9F 20000-3FFFF",
}
_SCRIPT_RANGES = sorted(
    (int(low, 16), int(high, 16), script)
    for script, blocks in _SCRIPT_BLOCKS.items()
    for low, high in (block.split("-") for block in blocks.split())
)
_RANGE_STARTS = [start for start, _, _ in _SCRIPT_RANGES]

# ISO 639-1 code -> (Snowball stemmer, script it stems)
STEMMERS: dict[str, tuple[str, str]] = {
    **{
        code: (name, LATIN)
        for code, name in {
            "en": "english",
            "de": "german",
            "fr": "french",
            "es": "spanish",
            "it": "italian",
            "pt": "portuguese",
            "nl": "dutch",
            "sv": "swedish",
            "da": "danish",
            "no": "norwegian",
            "nb": "norwegian",
            "nn": "norwegian",
            "fi": "finnish",
            "hu": "hungarian",
            "ro": "romanian",
            "tr": "turkish",
            "id": "indonesian",
            "ms": "indonesian",
            "ga": "irish",
            "lt": "lithuanian",
            "et": "estonian",
            "ca": "catalan",
            "eu": "basque",
            "eo": "esperanto",
            "cs": "czech",
            "pl": "polish",
        }.items()
    },
    "ru": ("russian", CYRILLIC),
    "sr": ("serbian", CYRILLIC),
    "el": ("greek", GREEK),
    "ar": ("arabic", ARABIC),
    "fa": ("persian", ARABIC),
    "hy": ("armenian", "armenian"),
    "hi": ("hindi", "devanagari"),
    "ne": ("nepali", "devanagari"),
    "ta": ("tamil", "tamil"),
    "yi": ("yiddish", "hebrew"),
}
# languages without a stemmer whose words must not be stemmed as their script's usual language
UNSTEMMED: dict[str, str] = {
    "uk": CYRILLIC,
    "be": CYRILLIC,
    "bg": CYRILLIC,
    "mk": CYRILLIC,
    "kk": CYRILLIC,
    "ky": CYRILLIC,
    "mn": CYRILLIC,
    "ur": ARABIC,
    "ps": ARABIC,
    "he": "hebrew",
    "mr": "devanagari",
}
SCRIPT_LANGUAGE = {LATIN: "en", CYRILLIC: "ru", GREEK: "el", ARABIC: "ar", "armenian": "hy"}
SCRIPT_LANGUAGE |= {"devanagari": "hi", "tamil": "ta"}


UNSPACED_LANGUAGES = {"zh": "cjk", "ja": "cjk", "ko": "hangul", "th": "thai", "lo": "lao", "km": "khmer"}
UNSPACED_LANGUAGES["my"] = "myanmar"
# the script each language we know is written in (a query in another script is in another language)
LANGUAGE_SCRIPTS = {lang: script for lang, (_, script) in STEMMERS.items()} | UNSTEMMED | UNSPACED_LANGUAGES
KNOWN_LANGUAGES = frozenset(LANGUAGE_SCRIPTS)


def script_of(ch: str) -> str:
    """The script class of one character: a name from `_SCRIPT_RANGES`, else "latin" (Latin letters, digits
    and any script without a stemmer or a range of its own)."""
    cp = ord(ch)
    if cp < 0x370:
        return LATIN
    at = bisect_right(_RANGE_STARTS, cp) - 1
    if at >= 0:
        start, end, script = _SCRIPT_RANGES[at]
        if start <= cp <= end:
            return script
    return LATIN


def stem_language(language: str, script: str) -> str | None:
    """The language whose stemmer handles a word of `script` in a note of `language` (None: no stemming)."""
    known = STEMMERS.get(language)
    if known is not None and known[1] == script:
        return language
    if UNSTEMMED.get(language) == script:
        return None
    return SCRIPT_LANGUAGE.get(script)


def language_code(value: object) -> str | None:
    """An ISO 639-1 code from a frontmatter `lang`/`language` value ("de", "de-AT", "pt_BR", "German")."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().lower()
    if text in _LANGUAGE_NAMES:
        return _LANGUAGE_NAMES[text]
    code = re.split(r"[-_\s]", text, maxsplit=1)[0]
    return code if re.fullmatch(r"[a-z]{2,3}", code) else None


_LANGUAGE_NAMES = {
    name: code
    for code, names in {
        "en": "english",
        "de": "german deutsch",
        "fr": "french français francais",
        "es": "spanish español espanol",
        "it": "italian italiano",
        "pt": "portuguese português portugues",
        "nl": "dutch nederlands",
        "ru": "russian русский",
        "zh": "chinese 中文 汉语 漢語",
        "ja": "japanese 日本語",
        "ko": "korean 한국어",
        "th": "thai ไทย",
        "ar": "arabic العربية",
        "uk": "ukrainian українська",
        "pl": "polish polski",
        "sv": "swedish svenska",
        "tr": "turkish türkçe",
        "el": "greek ελληνικά",
        "hi": "hindi हिन्दी",
    }.items()
    for name in names.split()
}
