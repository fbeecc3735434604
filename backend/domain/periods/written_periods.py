"""The periods a note's chunk is of, read from what it says: the days and months its text and headings
write out, the daily notes it links to, then its note's own periods. What a question's period meets
(search.ranking).

A chunk speaks of the time it names: the decision section of a project note created in February that says
"decided at the 2026-03-12 kickoff" is of March 2026. When a file was made (`created:`, `modified:`) is not
what it speaks of, and never counts (frontmatter.note_periods leaves those out).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from backend.domain.periods import period_words
from backend.domain.periods.time_intent import (
    _ISO_WEEK,
    DAY_FORMS,
    MONTH_FORMS,
    TimeSpan,
    _iso_week,
    _month_span,
    day_written,
    month_written,
    name_span,
)

# periods kept for one chunk from what it writes: beyond it, its days are kept as their months
MAX_WRITTEN = 12


# a year after these words in a title is a bound, not the note's time: "What changed since 1989", "Seit März
# 2020" (period_words.NAME_BOUNDS)
_BOUND_BEFORE = re.compile(
    rf"\b(?:since|before|after|until|till|from|by|pre|post|circa|ca|c|{period_words.NAME_BOUNDS})\.?[\s-]*$",
    re.I,
)
_EDGE = " -_.,:;()[]#"
# words besides its time a name that labels a note with it holds at most ("Trip to Lisbon 2019"); more is
# a sentence that mentions a time ("1466 starben mutmaßlich 40.000 Menschen an": named by its first words)
LABEL_MAX_WORDS = 4


def title_span(name: str, *, southern: bool = False) -> TimeSpan | None:
    """The period a note's name labels it with, or None: `name_span`'s, when the name is a label of that
    time. An ISO day or week labels a note wherever it stands ("Meeting 2024-12-03 Boatyard quote call");
    a month, season or year in words only at either end of a short name ("Trip to Lisbon 2019", "2024
    budget"), and never after a word that makes it a bound ("What changed since 1989"): a year in the middle
    of a name, or opening a sentence, is something the note mentions (a note named by its first words), not
    when it is of."""
    span = mentioned_span(name, southern=southern)
    if span is None or span.granularity in ("day", "week"):
        return span
    at = name.find(span.text)
    before, after = name[:at].strip(_EDGE), name[at + len(span.text) :].strip(_EDGE)
    if (before and after) or len((before + " " + after).split()) > LABEL_MAX_WORDS:
        return None
    return span


def mentioned_span(name: str, *, southern: bool = False) -> TimeSpan | None:
    """The period a note's name mentions, a label or not ("Im Jahr 2010 erlitt der Amazonas-Regenwald"),
    but not one it names as a bound ("What changed since 1989"): a question about 2010 prefers the note, but
    the note does not say it is of no other time (`title_span` says which names do)."""
    span = name_span(name, southern=southern)
    if span is None or span.granularity in ("day", "week"):
        return span
    return None if _BOUND_BEFORE.search(name[: name.find(span.text)]) else span


def spans_in_text(text: str) -> list[TimeSpan]:
    """The days and months a text writes out, in order, each once: ISO days ("2026-03-12"), days in words
    ("12 March 2026", "March 12, 2026", "12. März 2026", "2026年3月12日") or dotted ("12.03.2026"), ISO weeks,
    and months with their year ("March 2026", "2026-03", "marzo de 2026") not inside a day already found.
    Bare years are left out: prose mentions years it is not about ("founded in 1989")."""
    found: list[tuple[int, TimeSpan]] = []
    taken: list[tuple[int, int]] = []

    def claim(match: re.Match[str], span: TimeSpan | None) -> None:
        """Keep what a match writes, unless a day already found holds its words."""
        if span is not None and not any(a < match.end() and match.start() < b for a, b in taken):
            taken.append((match.start(), match.end()))
            found.append((match.start(), span))

    for pattern, order in DAY_FORMS:
        for match in pattern.finditer(text):
            claim(match, day_written(match, order))
    for match in _ISO_WEEK.finditer(text):
        claim(match, _iso_week(match.group(0), dt.date.min, False))
    for pattern, order in MONTH_FORMS:
        for match in pattern.finditer(text):
            claim(match, month_written(match, order))
    return [span for _, span in sorted(found, key=lambda item: item[0])]


def chunk_periods(
    text: str, heading_path: Sequence[str], note_periods: Sequence[str], *, note_states: bool
) -> tuple[tuple[str, ...], bool]:
    """Each period a chunk is of, as payloads store them (an ISO day, or "start/end" inclusive days), and
    whether the chunk says so itself. A note that states when it is of (`note_states`: a journal day, a
    Zettelkasten note, `date:`, a label in its name, a year folder) is of that time in every chunk; one that
    does not (a project or reference note) is of the days each of its chunks writes out (`written_periods`):
    the decision section of a project note is of the day it was decided. The days a dated note's chunk
    writes are left out: a training log dated 2021 that notes "2022-01-01: new program" is not of 2022."""
    written = () if note_states else written_periods(text, heading_path)
    return tuple(dict.fromkeys([*written, *note_periods])), bool(written) or note_states


def written_periods(text: str, heading_path: Sequence[str]) -> tuple[str, ...]:
    """The days and months a chunk's text and headings write out — a link to a daily or weekly note
    ("[[2026-03-12]]", "[[2026-W11]]") among them, as its target is written in the text — and the period a
    heading labels its section with, as a name labels a note ("## 2025" in a ledger, "## One-offs 2025",
    "### Summer 2024": `title_span`), at most MAX_WRITTEN (beyond, the months of its days)."""
    written: list[str] = []
    for heading in heading_path:
        spans = spans_in_text(heading)
        if not spans and (label := title_span(heading)) is not None:
            spans = [label]
        written += [_period(span) for span in spans]
    written += [_period(span) for span in spans_in_text(text)]
    written = list(dict.fromkeys(written))
    if len(written) > MAX_WRITTEN:
        written = list(dict.fromkeys(_month_of(period) for period in written))[:MAX_WRITTEN]
    return tuple(written)


def _period(span: TimeSpan) -> str:
    if span.start == span.end:
        return span.start.isoformat()
    return f"{span.start.isoformat()}/{span.end.isoformat()}"


def _month_of(period: str) -> str:
    """A day's month ("2026-03-12" -> "2026-03-01/2026-03-31"); a longer period as it is."""
    if "/" in period:
        return period
    day = dt.date.fromisoformat(period)
    return _period(_month_span("", day.year, day.month))


# a year as a text writes one, alone or in a date of any form ("in 1992", "1992年", "[[1992-12-20]]",
# "20.12.1992", "03.1992", "1992/03/12", "12 March 1992"), a decade ("the 1990s": group 2) or a school or
# financial year ("1992–93", "1992/93": groups 3 and 4), not inside a code, an ID, a decimal or a sum
# ("£1992", "BA1992", "IMG_1992.jpg", "report-1992.pdf", "#1992", "?p=1992", "1992f9a", "0.1992",
# "v2.1992"); its digits looked for first (a lookbehind tried at every place of a chunk cost five times
# as much)
_YEAR_IN_TEXT = re.compile(
    r"(?=(?:19|20)\d\d)(?<![0-9A-Za-z_#=$£€¥])"
    # after a digit and a point or a comma only in a dotted day, a dotted month ("03.2024") or "March 3,2019"
    r"(?:(?<=\d\.\d\.)|(?<=\d\.\d\d\.)|(?<=\d\d\.\d\.)|(?<=\d\d\.\d\d\.)"
    r"|(?<=[^\w.,][1-9][.,])|(?<=[^\w.,]0[1-9]\.)|(?<=[^\w.,][12]\d,)|(?<=[^\w.,]1[0-2]\.)|(?<=[^\w.,]3[01],)"
    r"|(?<=^[1-9]\.)|(?<=^0[1-9]\.)|(?<=^1[0-2]\.)|(?<!\d[.,]))"
    r"((?:19|20)\d\d)(?:(s|['’]s)\b|\s*([-/\u2013])\s*(\d\d)(?![\d/-]))?"
    r"(?![0-9A-Za-z_]|[.,]\d|\.[A-Za-z]{2,4}\b|[x×]\d)"
)


def writes_year_of(text: str, span: TimeSpan) -> bool:
    """Whether `text` writes a year `span` is, alone or in a date, or a decade or school year holding one
    (_YEAR_IN_TEXT): a chunk that does speaks of the year asked, whatever days of other times it writes
    besides. Only a span of whole years: the year a journal day of January writes says nothing of that
    year's Christmas."""
    if span.granularity not in ("year", "years"):
        return False
    first, last = span.start.year, span.end.year
    return any(start <= last and first <= end for start, end in map(_years, _YEAR_IN_TEXT.finditer(text)))


def _years(match: re.Match[str]) -> tuple[int, int]:
    """The years a match of _YEAR_IN_TEXT writes: one ("2024's budget" too), a decade's ten ("the 1990s",
    "the 1990's"), or a school year's two ("2024–25", "2019/20"; "2011-12" is December 2011, as an ISO month
    is read)."""
    year = int(match.group(1))
    if match.group(2) and year % 10 == 0:
        return year, year + 9
    pair = match.group(4)
    if pair and int(pair) == (year + 1) % 100 and (match.group(3) != "-" or not 1 <= int(pair) <= 12):
        return year, year + 1
    return year, year
