"""The words of German, French, Spanish, Italian, Portuguese, Dutch and Russian that change what a period
means, as the English ones do where time_intent.py and question_time.py read them: a range of months ("März
bis Mai 2026", "de mars à mai 2026": "March to May 2026"), a start ("seit März 2025", "depuis mars 2025":
"since March 2025"), a bound ("vor März 2026", "avant mars 2026": "before March 2026"), a purpose ("für März
2026": "for March 2026"), a plan ("Pläne": "plans") and a comparison ("verglichen mit", "par rapport à":
"compared with").

A module of its own because it is words, not rules, as month_words.py holds the months: the English
patterns take these beside their own, so the same rules apply in every language and the English words stay
where they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from backend.domain.periods import month_words

# a month, a word that joins it to another, the other and their year: "März bis Mai 2026", "März–Mai
# 2026", "zwischen März und Mai 2026", "de mars à mai 2026", "entre marzo y mayo de 2026", "da marzo a
# maggio 2026", "de março a maio de 2026", "van maart tot mei 2026", "с марта по май 2026": two words
# before a year, as month_words.WRITTEN_MONTH finds one, each a month (month_words.written_month: a name
# English writes, "Mars", is one beside another month)
_JOINS = (
    r"bis|und|à|au|et|jusqu['’](?:à|en)|a|al|y|hasta|e|fino\s+a|até|ao|tot(?:\s+en\s+met)?|t/m|en|по|и|до"
)
MONTH_PAIR = re.compile(
    rf"\b([^\W\d_]+\.?)(?:\s*[-\u2013\u2014]\s*|\s+(?:{_JOINS})\s+)([^\W\d_]+\.?),?\s+(?:de\s+|del\s+)?"
    r"((?:19|20)\d\d)(?:\s?г(?:ода|\.)?)?(?!\w)",
    re.I,
)


def pair_of_months(matches: Iterable[re.Match[str]]) -> tuple[str, int | None, int | None, int] | None:
    """The words, first and last month and year of the first of MONTH_PAIR's `matches` whose words are both
    months (month_words.written_month), or None."""
    for match in matches:
        first, last = month_words.written_month(match.group(1)), month_words.written_month(match.group(2))
        if first is not None and last is not None:
            return match.group(0), first, last, int(match.group(3))
    return None


# "since": "seit März 2025", "ab 2025", "depuis mars 2025", "dès 2025", "à partir de mars 2025", "desde marzo
# de 2025", "a partir de 2025", "dal 2024", "dal marzo 2025", "dall'aprile 2025", "sinds maart 2025", "vanaf
# 2025", "с марта 2025 года", "начиная с 2025 года": the word (group 1) and what follows it (group 2). "dal
# 2024" is the Italian "since 2024" far more often than an English dish and its year
_SINCE_WORDS = (
    r"seit|ab|depuis|dès|[àa]\s+partir\s+d(?:e|u|el|o|a|['’])|desde|da(?=\s+[^\W\d_])"
    r"|dal|dalla|dall['’]"
    r"|sinds|vanaf|начиная\s+с|с|со"
)
SINCE = re.compile(  # their first letters looked for first: the words tried at every place cost twice as much
    rf"(?=[sadvàнс])\b({_SINCE_WORDS})(?:\s+(?:dem|den|le|el|il|lo|la|o|a|het))?(?:\s+|(?<=['’]))(.{{1,40}})",
    re.I,
)
# after the time that follows one of those, the word to another: a range, not "since" ("с 2000 по 2005 год",
# "desde 2000 hasta 2005", "von 2000 bis 2005")
RANGE_GOES_ON = re.compile(rf"\s*[-\u2013\u2014]\s*\d|\s+(?:{_JOINS})\s", re.I)
# a month without its year after those: "seit März", "depuis mars" (the latest, as "since March")
_MONTH_ALONE = re.compile(r"([^\W\d_]+)\b(?!,?\s+(?:de\s+|del\s+)?(?:19|20)\d\d)", re.I)


def month_alone(rest: str) -> str | None:
    """The full month name `rest` opens with, without its year ("März, seit dem ..."), or None."""
    match = _MONTH_ALONE.match(rest)
    return match.group(1) if match is not None and month_words.names_a_month(match.group(1)) else None


# before a period, a bound of the time asked ("até" only with its accent: "What I ate March 2024" is English;
# the Dutch "tot", "na" in any case, as Dutch opens a sentence with them, though "Team Tot 2025" then is no
# label): "vor März 2026",
# "nach dem 12.03.2026", "bis Mai 2026",
# "avant mars 2026", "jusqu'en mai 2026", "antes de marzo de 2026", "hasta mayo", "prima di marzo 2026",
# "entro maggio", "depois de março", "até maio", "vóór maart 2026", "na maart 2025", "до марта 2026", "после"
BOUND = (
    r"(?:vor|nach|bis(?:\s+zu[mr]?)?|spätestens|avant|apr[èe]s|jusqu['’](?:à|au|en)|d['’]ici|antes\s+d[eo]l?"
    r"|despu[ée]s\s+del?|hasta|tras|prima\s+d(?:i|el)|dopo|entro|fino\s+a(?:l)?|depois\s+d[eo]|ap[óo]s|até"
    r"|vóór|voordat|na|tot|uiterlijk|до|после|перед)"
    r"(?:\s+(?:dem|der|den|le|la|les|el|il|lo|o|a|het|de))?"
)

# a start or a bound before a period in a note's name, as "since" or "before": not the time the note is of
# ("Seit März 2020", "Depuis mars 2020", "Desde marzo de 2020", "Bis Mai 2026")
NAME_BOUNDS = rf"{_SINCE_WORDS}|{BOUND}"

# the time a plan is for, not when it was written ("Pläne für März 2026", "objectifs pour 2026", "planes
# para 2026", "piani per il 2026", "plannen voor 2026"), as "plans for 2026" (not the Russian "на", as often
# "as of": "по состоянию на январь 2016 года")
# the Italian "per" alone only before an Italian month ("piani per marzo 2026"): before anything else it is
# the English "per" ("as per March 2024", "sales per June 2024"), which asks about that time
_FOR = re.compile(
    r"\b(?:für|pour|para|voor|per\s+(?:il|lo|la|l['’]))\s*(?<=\s|['’])"
    r"(?:(?:den|die|das|le|la|les|el|los|o|a|het|de)\s+|l['’]\s?)?$|\b(per)\s+$",
    re.I,
)
_WORD = re.compile(r"[^\W\d_]+")


def for_a_purpose(text: str, start: int) -> bool:
    """Whether `text` says the period starting at `start` is what something is for: "für März 2026", "per il
    2026", "per marzo 2026"."""
    match = _FOR.search(text, max(0, start - 30), start)
    if match is None or match.group(1) is None:
        return match is not None
    word = _WORD.match(text, start)
    return word is not None and month_words.italian_month(word.group(0))


# a plan is written before the time it is for: "Pläne", "geplant", "prévu", "planeado", "previsto",
# "pianificato", "planejado", "gepland", "планирую", "собираюсь" (not the German "plant", "plante": English
# plants them: "when did I plant the tomatoes in May 2024")
PLAN = (
    r"Pläne[n]?|planen|geplant|vorhaben|vorgenommen|pr[ée]vu[es]*|pr[ée]voi[st]|planifi\w+"
    r"|planead[oa]s?|planeaba|planeo|previst[oaie]s?|pianificat\w+|piani|planejad[oa]s?|pretend(?:o|ia|emos)"
    r"|plannen|gepland|van\s+plan|план\w*|собира\w+"
)

# a period a question compares against, before it: "verglichen mit", "im Vergleich zum", "gegenüber",
# "comparé à", "par rapport à", "comparado con", "en comparación con", "frente a", "rispetto al",
# "confrontato con", "em comparação com", "em relação ao", "vergeleken met", "in vergelijking met", "по
# сравнению с", "чем" ("than": "als", "que", "dan" are also "when", "that", "then" before a time)
COMPARED = (
    r"(?:verglichen\s+mit|im\s+Vergleich\s+(?:zu[mr]?|mit)|gegenüber|compar[ée]e?s?\s+(?:à|au|aux|avec)"
    r"|par\s+rapport\s+(?:à|au|aux)|en\s+comparaison\s+(?:de|du|avec)|comparad[oa]s?\s+(?:con|com|a|ao)"
    r"|en\s+comparaci[óo]n\s+con|frente\s+al?|(?:con\s+)?respecto\s+al?|rispetto\s+a(?:l|ll['’]|llo)?"
    r"|confrontat[oaie]\s+con|in\s+confronto\s+(?:a|al|con)|em\s+compara[çc][ãa]o\s+(?:com|a|ao)"
    r"|em\s+rela[çc][ãa]o\s+ao?|vergeleken\s+met|in\s+vergelijking\s+met|ten\s+opzichte\s+van"
    r"|по\s+сравнению\s+с|в\s+сравнении\s+с|чем)"
    r"(?:\s+(?:dem|den|der|das|im|le|la|les|el|il|lo|o|a|het|de|в|во))?"
)
