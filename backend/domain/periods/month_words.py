"""The months of the other languages people keep vaults in, and the words around them that make a period:
German, French, Spanish, Italian, Portuguese, Dutch and Russian month names with their cases and common
abbreviations, the day-first dotted form ("12.03.2026") and the Chinese, Japanese and Korean forms
("2026年3月12日", "2026년 3월"). A note that writes "Am 12. März 2026" is of that day as much as one that
writes "12 March 2026", and "letzten März" asks what "last March" does.

A module of its own because it is words, not rules: time_intent.py and question_time.py read these forms
where they read the English ones, so the same precedence holds in every language. Plain patterns, no
library, for time_intent.py's reasons.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# each language's months in order, a comma between two: the full names first (with the cases Russian
# declines a month into), then abbreviations, written with their dot (optional when read: "12 gen 2026" is
# how Italian calendars write it)
_LANGUAGES = {
    "de": (
        "januar jänner jan., februar feber feb. febr., märz maerz mär. mrz., april apr., mai, juni jun., "
        "juli jul., august aug., september sep. sept., oktober okt., november nov., dezember dez."
    ),
    "fr": (
        "janvier janv., février févr. fév., mars, avril avr., mai, juin, juillet juil., août, septembre "
        "sept., octobre oct., novembre nov., décembre déc."
    ),
    "es": (
        "enero ene., febrero feb., marzo mar., abril abr., mayo may., junio jun., julio jul., agosto "
        "ago., septiembre setiembre sep. sept. set., octubre oct., noviembre nov., diciembre dic."
    ),
    "it": (
        "gennaio gen., febbraio feb., marzo mar., aprile apr., maggio mag., giugno giu., luglio lug., "
        "agosto ago., settembre set., ottobre ott., novembre nov., dicembre dic."
    ),
    "pt": (
        "janeiro jan., fevereiro fev., março mar., abril abr., maio mai., junho jun., julho jul., agosto "
        "ago., setembro set., outubro out., novembro nov., dezembro dez."
    ),
    "nl": (
        "januari jan., februari feb., maart mrt., april apr., mei, juni jun., juli jul., augustus aug., "
        "september sep. sept., oktober okt., november nov., december dec."
    ),
    "ru": (
        "январь января январе янв., февраль февраля феврале фев. февр., март марта марте мар., апрель "
        "апреля апреле апр., май мая мае, июнь июня июне июн., июль июля июле июл., август августа "
        "августе авг., сентябрь сентября сентябре сен. сент., октябрь октября октябре окт., ноябрь ноября "
        "ноябре ноя. нояб., декабрь декабря декабре дек."
    ),
}
# spellings that are also ordinary words or names ("out", "ago", "set", "gen", "mag", "Marco" for março
# without its cedilla): a month only with a day before them ("12 out. 2026"), never with a year alone ("sold
# out. 2026 will...")
_ORDINARY_WORDS = frozenset({"out", "ago", "set", "gen", "mag", "marco"})
# months that English text writes capitalised before a year as names ("the Mars 2020 mission", "Julio 2026
# visited", "Avril 2026 tour"): so written, a month only after a word of its language that makes it one ("en
# Mars 2026", "début Mars 2026", "desde Julio 2026") or with "de" before its year ("Julio de 2026"); in lower
# case, as French, Spanish and Portuguese write their months ("mars 2026", "julio 2026"), a month
_NAMES = frozenset({"mars", "julio", "avril", "abril", "mayo"})
_MONTH_AFTER = re.compile(
    r"(?:\b(?:en|de|d[ée]but|fin|courant|depuis|d[èe]s|avant|apr[èe]s|jusqu['’](?:en|à|a)|desde|hasta|em|"
    r"at[ée]|ap[óo]s)\s+|\bd['’]\s?|\bmi-)$",
    re.I,
)
_OF_YEAR = re.compile(r",?\s+del?\s", re.I)


def _folded(word: str) -> str:
    """`word` casefolded without its accents, as people type a month on a keyboard without them (and as a
    case-blind pattern matched it: "auguſtus" is "augustus")."""
    bare = "".join(c for c in unicodedata.normalize("NFD", word.casefold()) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


def _spellings(form: str) -> set[str]:
    """A form as written and, in the Latin script, without its accents ("märz", "marz")."""
    folded = _folded(form)
    return {form, folded} if folded.isascii() else {form}


_NUMBERS = {
    _folded(spelling.rstrip(".")): number
    for months in _LANGUAGES.values()
    for number, forms in enumerate(months.split(", "), start=1)
    for form in forms.split()
    for spelling in _spellings(form)
}


def month_number(word: str) -> int | None:
    """The month (1-12) a name or abbreviation of these languages is, however it is cased or accented, or
    None for a word that is none."""
    return _NUMBERS.get(_folded(word.rstrip(".")))


def _written() -> dict[str, tuple[int, bool]]:
    """Each spelling as a case-blind pattern of it reads it: its month, and whether it is an abbreviation
    written with a dot ("sept.": "März." is no month)."""
    written: dict[str, tuple[int, bool]] = {}
    for months in _LANGUAGES.values():
        for number, forms in enumerate(months.split(", "), start=1):
            for spelling in (spelling for form in forms.split() for spelling in _spellings(form)):
                bare = spelling.rstrip(".").casefold()
                written[bare] = (number, written.get(bare, (0, False))[1] or spelling.endswith("."))
    return written


_WRITTEN = _written()


def _full_names(languages: Iterable[str]) -> frozenset[str]:
    """The full names of the months of `languages` (no abbreviation), casefolded, with and without accents."""
    return frozenset(
        spelling.casefold()
        for language in languages
        for form in _LANGUAGES[language].replace(",", "").split()
        if not form.endswith(".")
        for spelling in _spellings(form)
    )


# the full names alone: the abbreviations ("mar", "nov") are English ones too ("sales per Mar 2024")
_ITALIAN = _full_names(["it"])


def italian_month(word: str) -> bool:
    """Whether `word` names an Italian month (the Italian "per" before one is a purpose)."""
    return word.casefold() in _ITALIAN


def written_month(word: str) -> int | None:
    """The month a word before a year (WRITTEN_MONTH's) is, or None: a word that is no month here, a full
    name with a dot, or an ordinary word ("out", "ago": a month only with a day before it)."""
    bare = word[:-1] if word.endswith(".") else word
    found = _WRITTEN.get(bare.casefold())
    if found is None or (bare != word and not found[1]) or bare.casefold() in _ORDINARY_WORDS:
        return None
    return found[0]


def month_before_year(match: re.Match[str]) -> int | None:
    """The month WRITTEN_MONTH's match is ("März 2026", "marzo de 2026"), or None (`written_month`; a name
    English writes capitalised, unless a word of its language makes it a month: _NAMES)."""
    word = match.group(1)
    month = written_month(word)
    if month is None or word[:1].islower() or word.casefold() not in _NAMES:
        return month
    if _OF_YEAR.match(match.group(0), len(word)):
        return month
    before = match.string[max(0, match.start() - 20) : match.start()]
    return month if _MONTH_AFTER.search(before) else None


def _alternation(languages: Iterable[str], *, full: bool = False, ordinary: bool = True) -> str:
    """A pattern of the months of `languages`, longest first, an abbreviation's dot optional: only the full
    names (`full`), or without the ordinary words (not `ordinary`)."""
    pieces = {
        spelling: re.escape(spelling.rstrip(".")) + ("\\.?" if spelling.endswith(".") else "")
        for language in languages
        for form in _LANGUAGES[language].replace(",", "").split()
        if not (full and form.endswith("."))
        for spelling in _spellings(form)
        if ordinary or spelling.rstrip(".") not in _ORDINARY_WORDS
    }
    return "|".join(pieces[spelling] for spelling in sorted(pieces, key=lambda s: (-len(s), s)))


_YEAR = r"((?:19|20)\d\d)"
# the Russian "г." or "года" after a year ("12 марта 2026 г.") belongs to the date
_YEAR_END = r"(?:\s?г(?:ода|\.)?)?(?!\w)"
_OF = r"(?:de\s+|del\s+)?"  # "12 de marzo de 2026", "marzo del 2026"

# "12. März 2026", "1er mars 2026", "12 de marzo de 2026", "1º maggio 2026", "12 марта 2026 г.": day,
# month, year
WRITTEN_DAY = re.compile(
    rf"\b(\d{{1,2}})(?:\.|er|ᵉʳ|\.?[º°ª])?\s*(?:de\s+)?({_alternation(_LANGUAGES)}),?\s+{_OF}{_YEAR}"
    rf"{_YEAR_END}",
    re.I,
)
# "März 2026", "marzo de 2026", "mars 2026", "марте 2026": a word before a year (group "w"), which
# `written_month` says is a month or not. Not the months' alternation, as WRITTEN_DAY is: tried at every word
# of a text, its ~300 spellings took more than every other form of a day or month together (a 2,000-character
# chunk of the Zettelkasten: ~300 us of ~500), where a word and a year are found at the cost of any pattern
WRITTEN_MONTH = re.compile(rf"\b([^\W\d_]+\.?),?\s+{_OF}{_YEAR}{_YEAR_END}", re.I)
# "12.03.2026", "1.2.2026": day, month, year; never a version ("v1.2.2026", "Version 1.2.2026"), an address
# or a number of more parts ("10.1.2026.4"), nor a two-digit year ("1.2.26": a version as often as a day)
DOTTED_DAY = re.compile(  # the digit looked for first: the lookbehinds, tried at every place, cost more
    r"(?=\d)(?<![\w.,:/])(?<!\bv\s)(?<!\bv\.\s)(?<!\bver\.\s)(?<!\bbuild\s)(?<!\bversion\s)(?<!\bversión\s)"
    r"(?<!\brelease\s)(\d{1,2})\.(\d{1,2})\.((?:19|20)\d\d)(?!\d|[.,]\d)",
    re.I,
)
# "2026年3月12日" (Chinese, Japanese; "号" in spoken Chinese), "2026년 3월 12일": year, month, day
CJK_DAY = re.compile(r"(?<!\d)((?:19|20)\d\d)\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日号일]")
# "2026年3月", "2026년 3월": year, month
CJK_MONTH = re.compile(r"(?<!\d)((?:19|20)\d\d)\s*[年년]\s*(\d{1,2})\s*[月월]")


# the full names NAMED_MONTHS read, each a whole word there: a question naming none of them (most) is not
# tried against its 17 patterns (~50 us a question)
_FULL_NAMES = _full_names(_LANGUAGES)
_LETTERS = re.compile(r"[^\W\d_]+")


def names_a_month(text: str) -> bool:
    """Whether `text` writes a month's full name of these languages: what NAMED_MONTHS need."""
    return any(word.casefold() in _FULL_NAMES for word in _LETTERS.findall(text))


def _month_after(words: str, language: str) -> re.Pattern[str]:
    """A month's full name (group 1) after `words`, as a question names one without its year."""
    return re.compile(rf"\b{words}\s*({_alternation([language], full=True)})\b", re.I)


def _month_before(words: str, language: str, *, opening: str) -> re.Pattern[str]:
    """A month's full name (group 1) before `words`, after the words that may open the phrase."""
    return re.compile(rf"\b(?:(?:{opening})\s+)?({_alternation([language], full=True)})\s+{words}\b", re.I)


# a month without its year, and whether "last" goes with it: "letzten März", "en mars dernier", "el pasado
# marzo", "в прошлом марте" (the latest before this month) before "im März", "en mars", "a marzo", "в марте"
# (the latest not after it), as question_time's English "last March" and "in March" are read. A word beside
# the month makes it one: "Mars" alone is the planet, "Mayo" a name
NAMED_MONTHS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (
        _month_after(r"(?:(?:im\s+)?(?:letzten|vergangenen|vorigen)|letzter|vergangener|voriger)\s+", "de"),
        True,
    ),
    (_month_before(r"derni[eè]r", "fr", opening=r"en|au\s+mois\s+de"), True),
    (_month_after(r"(?:el\s+|en\s+el\s+)?pasado\s+", "es"), True),
    (_month_before(r"pasado", "es", opening=r"en|el|en\s+el"), True),
    (_month_after(r"(?:lo\s+)?scorso\s+", "it"), True),
    (_month_before(r"scorso", "it", opening=r"a|ad|in|lo"), True),
    (_month_after(r"(?:no\s+)?[úu]ltimo\s+", "pt"), True),
    (_month_before(r"passado", "pt", opening=r"em|no"), True),
    (_month_after(r"(?:afgelopen|vorige)\s+", "nl"), True),
    (_month_after(r"в\s+прошлом\s+", "ru"), True),
    (_month_after(r"(?:im|in|anfang|ende|mitte)\s+", "de"), False),
    (_month_after(r"(?:(?:en|d[ée]but|fin|courant)\s+|mi-|au\s+mois\s+d(?:e\s+|['’]))", "fr"), False),
    (
        _month_after(
            r"(?:en|durante|a\s+(?:principios|mediados|finales)\s+de)\s+(?:el\s+mes\s+de\s+)?", "es"
        ),
        False,
    ),
    (_month_after(r"(?:a|ad|in|durante|a\s+(?:inizio|fine|met[àa])|nel\s+mese\s+di)\s+", "it"), False),
    (_month_after(r"(?:em|durante|no\s+m[êe]s\s+de|no\s+(?:in[íi]cio|fim)\s+de)\s+", "pt"), False),
    (_month_after(r"(?:in|begin|eind|half|medio)\s+", "nl"), False),
    (_month_after(r"(?:в|во|в\s+(?:начале|конце|середине))\s+", "ru"), False),
)

# "last year" and "this year" (whether back one year): "letztes Jahr", "l'année dernière", "el año pasado",
# "в прошлом году", "去年", "작년"; "dieses Jahr", "cette année", "este año", "в этом году", "今年", "올해".
# Not the year a plan is for ("Ziele für dieses Jahr", as "goals for this year"), nor someone's or a part of
# another time ("mein letztes Jahr an der Schule", "im letzten Jahr meines Studiums", as "my last year at
# school"); Chinese, Japanese and Korean are written without spaces, so their words stand without a word
# boundary
_NOT_A_PURPOSE = r"(?<!\bfür\s)(?<!\bpour\s)(?<!\bpara\s)(?<!\bper\s)(?<!\bvoor\s)(?<!\bна\s)"
_NOT_SOMEONES = r"(?<!\bmein\s)(?<!\bdein\s)(?<!\bsein\s)(?<!\bihr\s)(?<!\bunser\s)(?<!\beuer\s)"
_NOT_A_PART = r"(?!\s+(?:des|der|(?:mein|dein|sein|ihr|unser|eur)(?:es|er))\b)"
_LAST_YEAR = (
    r"(?:im\s+)?(?:letzten|vergangenen|vorigen)\s+Jahr(?:es)?|(?:letztes|vergangenes|voriges)\s+Jahr"
    r"|l['’]\s?(?:ann[ée]e|an)\s+(?:derni[èe]re?|pass[ée]e?)|(?:el\s+)?año\s+pasado|(?:o\s+|no\s+)?ano\s+passado"
    r"|l['’]\s?anno\s+(?:scorso|passato)|lo\s+scorso\s+anno|vorig\s+jaar|в\s+прошлом\s+году|прошлый\s+год"
)
_THIS_YEAR = (
    r"(?:in\s+)?diese[ms]\s+Jahr(?:es)?|cette\s+ann[ée]e|este\s+año|(?:n?este|n?esse)\s+ano|quest['’]\s?anno"
    r"|questo\s+anno|dit\s+jaar|в\s+этом\s+году|этот\s+год"
)
# Chinese, Japanese and Korean write no spaces, so "去年" and "今年" are also the middle of other
# words: a verb ending in 去 before 年 ("过去", "失去": "过去年代的音乐", "我失去年轻时的梦想"),
# "如今" ("如今年轻人"), a word starting with 年 after ("年轻", "年代", "年龄", "年纪", "年华"; not
# "今年纪念", "今年代表", "今年华为"); "一昨年" and "재작년" are the year before last
_NOT_IN_WORD = r"(?!轻(?!松)|輕|代(?!表|理|替|价)|龄|齡|纪(?!念|录)|紀|华(?!为|人|侨|语)|華)"
_GONE = r"(?<![过過失离離逝死老除减減删刪抹褪淡远遠])"  # "过去", "失去", "逝去" ...
_LAST_YEAR_CJK = rf"{_GONE}去年{_NOT_IN_WORD}|(?<!一)昨年{_NOT_IN_WORD}|(?<!재)작년|지난해"
_THIS_YEAR_CJK = rf"(?<![如当當现現而])今年{_NOT_IN_WORD}|올해|금년"
# a word for a year that RELATIVE_YEARS need (their lookbehinds, tried at every place of a question, cost
# ~40 us a question; this, a few)
YEAR_WORD = re.compile(
    r"jahr|ann[ée]e|l['’]\s?an\b|año|\bano\b|anno|jaar|год|去年|昨年|작년|지난해|今年|올해|금년", re.I
)
RELATIVE_YEARS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (
        re.compile(
            rf"{_NOT_A_PURPOSE}{_NOT_SOMEONES}(?:\b(?:{_LAST_YEAR})\b{_NOT_A_PART}|{_LAST_YEAR_CJK})",
            re.I,
        ),
        True,
    ),
    (re.compile(rf"{_NOT_A_PURPOSE}(?:\b(?:{_THIS_YEAR})\b|{_THIS_YEAR_CJK})", re.I), False),
)
