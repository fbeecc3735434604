"""Scripts and languages the keyword side tells apart: which script a character is in, which Snowball
stemmer a language has (and for which script), and how frontmatter names a language."""

from __future__ import annotations

import re
from bisect import bisect_right

LATIN, CYRILLIC, GREEK, ARABIC, OTHER = "latin", "cyrillic", "greek", "arabic", "other"
# scripts written without spaces between words (Korean has spaces, but particles cling to the word)
UNSPACED = frozenset({"cjk", "hangul", "thai", "lao", "khmer", "myanmar"})

_SCRIPT_RANGES = sorted(
    [
        (0x0370, 0x03FF, GREEK),
        (0x1F00, 0x1FFF, GREEK),
        (0x0400, 0x052F, CYRILLIC),
        (0x1C80, 0x1C8F, CYRILLIC),
        (0x2DE0, 0x2DFF, CYRILLIC),
        (0xA640, 0xA69F, CYRILLIC),
        (0x0530, 0x058F, "armenian"),
        (0x0590, 0x05FF, "hebrew"),
        (0x0600, 0x06FF, ARABIC),
        (0x0750, 0x077F, ARABIC),
        (0x08A0, 0x08FF, ARABIC),
        (0xFB50, 0xFDFF, ARABIC),
        (0xFE70, 0xFEFF, ARABIC),
        (0x0900, 0x097F, "devanagari"),
        (0x0B80, 0x0BFF, "tamil"),
        (0x0E00, 0x0E7F, "thai"),
        (0x0E80, 0x0EFF, "lao"),
        (0x1000, 0x109F, "myanmar"),
        (0x1100, 0x11FF, "hangul"),
        (0x1780, 0x17FF, "khmer"),
        (0x3005, 0x3007, "cjk"),  # 々 〆 〇
        (0x3040, 0x30FF, "cjk"),  # hiragana, katakana
        (0x3130, 0x318F, "hangul"),
        (0x31F0, 0x31FF, "cjk"),
        (0x3400, 0x4DBF, "cjk"),
        (0x4E00, 0x9FFF, "cjk"),
        (0xA960, 0xA97F, "hangul"),
        (0xAC00, 0xD7FF, "hangul"),
        (0xF900, 0xFAFF, "cjk"),
        (0xFF66, 0xFF9F, "cjk"),  # half-width katakana (NFKC makes them full width first)
        (0x20000, 0x3FFFF, "cjk"),
    ]
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
