"""The periods notes and questions in other languages than English write: days and months in German, French,
Spanish, Italian, Portuguese, Dutch, Russian, Chinese, Japanese and Korean, read as the English ones are (a
fixed `today`, so relative forms are checked exactly)."""

from __future__ import annotations

import datetime as dt

import pytest

from backend.domain.periods.question_time import days_telling, find_time_span
from backend.domain.periods.time_intent import parse_day
from backend.domain.periods.written_periods import chunk_periods, spans_in_text, title_span

TODAY = dt.date(2026, 4, 15)


def _written(text: str) -> list[tuple[str, str]]:
    """The first and last day of each period a note's text writes out."""
    return [(span.start.isoformat(), span.end.isoformat()) for span in spans_in_text(text)]


def _asked(question: str) -> tuple[str, str] | None:
    span = find_time_span(question, TODAY)
    return None if span is None else (span.start.isoformat(), span.end.isoformat())


MARCH_12 = [("2026-03-12", "2026-03-12")]
MARCH = [("2026-03-01", "2026-03-31")]


@pytest.mark.parametrize(
    "text",
    [
        "Am 12. März 2026 haben wir entschieden.",  # German
        "Donnerstag, 12. Maerz 2026",  # without the umlaut
        "Le 12 mars 2026, nous avons décidé.",  # French
        "El 12 de marzo de 2026 decidimos.",  # Spanish
        "Il 12 marzo 2026 abbiamo deciso.",  # Italian
        "Em 12 de março de 2026 decidimos.",  # Portuguese
        "Op 12 maart 2026 besloten we.",  # Dutch
        "12 марта 2026 г. мы решили.",  # Russian
        "12 марта 2026 года",
        "2026年3月12日に決めた。",  # Japanese
        "我们在2026年3月12日决定了。",  # Chinese
        "2026 年 3 月 12 日",
        "2026년 3월 12일에 결정했다.",  # Korean
        "Besprechung am 12.03.2026 um 10 Uhr",  # day-first, dotted
        "Termin: 12.3.2026.",
        "12 mrt. 2026",  # abbreviations
        "12 Mär. 2026",
    ],
)
def test_a_day_written_in_another_language_is_that_day(text: str) -> None:
    assert _written(text) == MARCH_12


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("1er mars 2026", "2026-03-01"),
        ("le 1ᵉʳ mai 2026", "2026-05-01"),
        ("1º de maio de 2026", "2026-05-01"),
        ("5. Februar 2026", "2026-02-05"),
        ("5 fevrier 2026", "2026-02-05"),  # without the accent
        ("3 janv. 2026", "2026-01-03"),
        ("3 févr. 2026", "2026-02-03"),
        ("3 Febr. 2026", "2026-02-03"),
        ("3 ene. 2026", "2026-01-03"),
        ("3 сент. 2026", "2026-09-03"),
        ("12 gen 2026", "2026-01-12"),  # as Italian calendars write it
        ("12 out. 2026", "2026-10-12"),  # "out" is a month with a day before it
        ("31.12.2025", "2025-12-31"),
        ("2025年12月31日", "2025-12-31"),
    ],
)
def test_ordinals_abbreviations_and_dropped_accents(text: str, day: str) -> None:
    assert _written(text) == [(day, day)]


@pytest.mark.parametrize(
    "text",
    [
        "Der Umzug war im März 2026.",
        "Reise Marz 2026",  # without the umlaut
        "Pläne: marzo de 2026",
        "marzo del 2026",
        "en mars 2026",
        "em março de 2026",
        "maart 2026",
        "в марте 2026 года",
        "март 2026",
        "Mrz. 2026",
        "2026年3月",
        "2026년 3월",
    ],
)
def test_a_month_of_a_year_in_another_language_is_that_month(text: str) -> None:
    assert _written(text) == MARCH


@pytest.mark.parametrize(
    ("text", "month"),
    [
        ("Jan. 2026", ("2026-01-01", "2026-01-31")),
        ("Febr. 2026", ("2026-02-01", "2026-02-28")),
        ("janv. 2026", ("2026-01-01", "2026-01-31")),
        ("fevrier 2026", ("2026-02-01", "2026-02-28")),
        ("ene. 2026", ("2026-01-01", "2026-01-31")),
        ("сент. 2026", ("2026-09-01", "2026-09-30")),
        ("Okt. 2026", ("2026-10-01", "2026-10-31")),
        ("mayo de 2025", ("2025-05-01", "2025-05-31")),
        ("maio de 2025", ("2025-05-01", "2025-05-31")),
    ],
)
def test_a_month_abbreviated_or_without_accents(text: str, month: tuple[str, str]) -> None:
    assert _written(text) == [month]


@pytest.mark.parametrize(
    "text",
    [
        "la planète Mars",  # the planet, not the month
        "Mars est rouge.",
        "Mayo Clinic",
        "el cinco de mayo",  # a month without a year is no period of a note
        "Version 1.2.2026",
        "v1.2.2026",
        "Build 3.4.2026",
        "pi is 3.14",
        "Preis 12.50 €",
        "1.250.000 Einwohner",
        "10.1.2026.4",  # a number of more parts
        "192.168.1.2026",
        "1.2.26",  # a two-digit year
        "31.02.2026",  # no such day
        "2026年13月",  # no such month
        "Sold out. 2026 will be different",  # "out." only with a day
        "Marco 2026",  # a name, not março
    ],
)
def test_what_is_no_date(text: str) -> None:
    assert spans_in_text(text) == []


def test_a_chunk_of_an_undated_note_is_of_the_day_it_writes_in_its_language() -> None:
    periods = chunk_periods(
        "Am 12. März 2026 haben wir Postgres gewählt.", ("Entscheidung",), (), note_states=False
    )
    assert periods == (("2026-03-12",), True)
    periods = chunk_periods("Budget.", ("Ausgaben", "März 2025"), (), note_states=False)
    assert periods == (("2025-03-01/2025-03-31",), True)


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        ("Reise März 2026", "2026-03-01", "2026-03-31"),
        ("Voyage mars 2026", "2026-03-01", "2026-03-31"),
        ("12.03.2026 Besprechung", "2026-03-12", "2026-03-12"),
        ("2026年3月12日 会议", "2026-03-12", "2026-03-12"),
        ("2026년 3월 회의", "2026-03-01", "2026-03-31"),
    ],
)
def test_a_note_named_with_a_period_in_another_language(name: str, start: str, end: str) -> None:
    span = title_span(name)
    assert span is not None
    assert (span.start.isoformat(), span.end.isoformat()) == (start, end)


def test_a_note_named_after_the_planet_is_of_no_month() -> None:
    assert title_span("Projekt Mars") is None


@pytest.mark.parametrize(
    ("value", "day"),
    [("12.03.2026", "2026-03-12"), ("12. März 2026", "2026-03-12"), ("2026年3月12日", "2026-03-12")],
)
def test_a_date_property_written_in_another_language(value: str, day: str) -> None:
    found = parse_day(value)
    assert found is not None
    assert found.isoformat() == day


# --- questions ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        # a month of a year, not the year it writes
        ("was habe ich im Januar 2026 entschieden", "2026-01-01", "2026-01-31"),
        ("qu'ai-je décidé en mars 2026 ?", "2026-03-01", "2026-03-31"),
        ("¿qué decidí en enero de 2025?", "2025-01-01", "2025-01-31"),
        ("cosa ho deciso a gennaio 2025", "2025-01-01", "2025-01-31"),
        ("o que decidi em janeiro de 2025", "2025-01-01", "2025-01-31"),
        ("wat heb ik in januari 2025 besloten", "2025-01-01", "2025-01-31"),
        ("что я решил в январе 2026", "2026-01-01", "2026-01-31"),
        ("我2026年1月决定了什么", "2026-01-01", "2026-01-31"),
        ("2026年1月に何を決めた", "2026-01-01", "2026-01-31"),
        ("2026년 1월에 무엇을 결정했지", "2026-01-01", "2026-01-31"),
        # a day
        ("was war am 12.03.2026", "2026-03-12", "2026-03-12"),
        ("que s'est-il passé le 12 mars 2026", "2026-03-12", "2026-03-12"),
        ("2026년 3월 12일 회의", "2026-03-12", "2026-03-12"),
        # a month without its year: the latest not after this one (April 2026), as "in March" is
        ("was habe ich im März entschieden", "2026-03-01", "2026-03-31"),
        ("qu'ai-je décidé en mars", "2026-03-01", "2026-03-31"),
        ("¿qué decidí en marzo?", "2026-03-01", "2026-03-31"),
        ("cosa ho deciso a marzo", "2026-03-01", "2026-03-31"),
        ("что я решил в марте", "2026-03-01", "2026-03-31"),
        ("was war im Mai", "2025-05-01", "2025-05-31"),  # May is still to come this year
        ("fin mai", "2025-05-01", "2025-05-31"),
        ("wat deed ik in mei", "2025-05-01", "2025-05-31"),
        # "last": the latest before this month, as "last March" is
        ("was habe ich letzten März entschieden", "2026-03-01", "2026-03-31"),
        ("im letzten März", "2026-03-01", "2026-03-31"),
        ("qu'ai-je fait en mars dernier", "2026-03-01", "2026-03-31"),
        ("el pasado marzo", "2026-03-01", "2026-03-31"),
        ("en marzo pasado", "2026-03-01", "2026-03-31"),
        ("lo scorso maggio", "2025-05-01", "2025-05-31"),
        ("em maio passado", "2025-05-01", "2025-05-31"),
        ("afgelopen maart", "2026-03-01", "2026-03-31"),
        ("в прошлом марте", "2026-03-01", "2026-03-31"),
        ("letzten April", "2025-04-01", "2025-04-30"),  # this April is not over
        # last year and this year
        ("was habe ich letztes Jahr gelesen", "2025-01-01", "2025-12-31"),
        ("im letzten Jahr", "2025-01-01", "2025-12-31"),
        ("dieses Jahr", "2026-01-01", "2026-12-31"),
        ("qu'ai-je lu l'année dernière", "2025-01-01", "2025-12-31"),
        ("l’an dernier", "2025-01-01", "2025-12-31"),
        ("cette année", "2026-01-01", "2026-12-31"),
        ("¿qué leí el año pasado?", "2025-01-01", "2025-12-31"),
        ("este año", "2026-01-01", "2026-12-31"),
        ("l'anno scorso", "2025-01-01", "2025-12-31"),
        ("quest'anno", "2026-01-01", "2026-12-31"),
        ("o ano passado", "2025-01-01", "2025-12-31"),
        ("vorig jaar", "2025-01-01", "2025-12-31"),
        ("dit jaar", "2026-01-01", "2026-12-31"),
        ("что я читал в прошлом году", "2025-01-01", "2025-12-31"),
        ("в этом году", "2026-01-01", "2026-12-31"),
        ("我去年读了什么书", "2025-01-01", "2025-12-31"),
        ("今年の目標", "2026-01-01", "2026-12-31"),
        ("작년에 읽은 책", "2025-01-01", "2025-12-31"),
        ("올해 계획", "2026-01-01", "2026-12-31"),
    ],
)
def test_the_period_a_question_in_another_language_names(question: str, start: str, end: str) -> None:
    assert _asked(question) == (start, end)


@pytest.mark.parametrize(
    "question",
    [
        "was weiß ich über die Mission zum Mars",
        "qu'est-ce que je sais de la planète Mars",
        "¿qué dijo Mayo sobre el proyecto?",
        "Ziele für dieses Jahr",  # the year a plan is for, as "goals for this year"
        "objectifs pour cette année",
        "mein letztes Jahr an der Schule",  # someone's, as "my last year at school"
        "im letzten Jahr meines Studiums",  # a part of another time
        "Version 1.2.2026 veröffentlicht",
        "Preis 12.50",
    ],
)
def test_questions_in_another_language_that_name_no_time(question: str) -> None:
    assert find_time_span(question, TODAY) is None


def test_a_period_in_words_comes_before_a_bare_year_as_in_english() -> None:
    # "im Januar 2026" was read as the year 2026; the month is what the person asked about
    span = find_time_span("was habe ich im Januar 2026 entschieden", TODAY)
    assert span is not None
    assert span.granularity == "month"
    assert span.text == "Januar 2026"


# --- a word a case-blind pattern matches that no table spells so -------------------------------------------


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # the long s of old print is an s, as re.I matches it: the month it spells
        ("den 12 auguſtus 1920", "1920-08-12", "1920-08-12"),
        ("il 3 ſettembre 1920", "1920-09-03", "1920-09-03"),
        ("12 Auguſt 1905", "1905-08-12", "1905-08-12"),
        ("Auguſt 1905", "1905-08-01", "1905-08-31"),
    ],
)
def test_a_month_written_with_the_long_s_is_that_month(text: str, start: str, end: str) -> None:
    assert _written(text) == [(start, end)]
    span = find_time_span(text, TODAY)
    assert span is not None
    assert (span.start.isoformat(), span.end.isoformat()) == (start, end)


@pytest.mark.parametrize(
    "question",
    [
        "in Auguſt",
        "Auguſt and June 2024",
        "the firſt half of 2025",
        "ſpring 2024",
        "chriſtmas 2024",
        "this ſummer",
        "the paſt ſix weeks",
        "the laſt few weekſ",
        "laſt year",
        # the dotless i re.I takes for an i, which no casing makes one: no period, never an exception
        "in Augıst",
        "12 Augıst 1905",
        "fırst quarter of 2025",
        "the past sıx weeks",
        "this wınter",
    ],
)
def test_a_word_matched_case_blind_reads_as_its_letters_never_raising(question: str) -> None:
    find_time_span(question, TODAY)
    spans_in_text(question)
    title_span(question)
    parse_day(question)


def test_a_word_matched_case_blind_that_no_table_spells_is_no_period() -> None:
    assert parse_day("12 Augıst 1905") is None
    assert find_time_span("in Augıst", TODAY) is None
    assert find_time_span("this wınter", TODAY) is None
    assert find_time_span("the past sıx weeks", TODAY) is None
    assert parse_day("den 12 auguſtus 1920") == dt.date(1920, 8, 12)
    span = find_time_span("laſt year", TODAY)
    assert span is not None
    assert span.start == dt.date(2025, 1, 1)  # "laſt" is "last", not "this"


@pytest.mark.parametrize(
    "question",
    [
        "如今年轻人都在做什么",  # 如今 + 年轻, not 今年
        "当今年轻人的想法",  # 当今
        "我失去年轻时的梦想",  # 失去 + 年轻, not 去年
        "过去年代的音乐笔记",  # 过去 + 年代
        "過去年代的音樂",  # traditional
        "逝去年华",  # 逝去 + 年华
        "如今年纪大了",  # 年纪
        "今年龄",  # 年龄
        "一昨年の夏",  # the year before last, not last year
        "재작년에 읽은 책",  # the same in Korean
    ],
)
def test_this_year_and_last_year_inside_other_cjk_words_are_no_period(question: str) -> None:
    assert find_time_span(question, TODAY) is None


@pytest.mark.parametrize(
    ("question", "year"),
    [
        ("今年纪念活动", 2026),  # 纪念 (a commemoration) begins after 今年
        ("今年代表团", 2026),  # 代表
        ("今年华为发布了什么", 2026),  # 华为
        ("今年轻松完成", 2026),  # 轻松
        ("去年年底", 2025),
        ("今年度の予算", 2026),
        ("昨年の売上", 2025),
    ],
)
def test_this_year_and_last_year_before_another_word_are_that_year(question: str, year: int) -> None:
    span = find_time_span(question, TODAY)
    assert span is not None
    assert (span.start, span.end) == (dt.date(year, 1, 1), dt.date(year, 12, 31))


# --- a month English writes as a name -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "year"),
    [
        ("The Mars 2020 mission landed Perseverance", 2020),  # the mission, not March 2020
        ("Julio 2026 visited the farm", 2026),  # a name before a year in an English text
        ("Avril 2026 tour dates", 2026),
        ("Abril 2026 tour", 2026),
        ("Mayo 2026 report", 2026),
        ("MARS 2026", 2026),
    ],
)
def test_a_capitalised_name_before_a_year_is_no_month_but_the_year(text: str, year: int) -> None:
    # as on main, where only English months were read: the question names the year, the text no month
    span = find_time_span(text, TODAY)
    assert span is not None
    assert (span.text, span.granularity) == (str(year), "year")
    assert spans_in_text(text) == []


@pytest.mark.parametrize("name", ["Mars 2020 Rover", "Avril 2026 tour", "Julio 2026 visited"])
def test_a_note_named_after_a_name_and_a_year_is_of_no_month(name: str) -> None:
    assert title_span(name) is None


@pytest.mark.parametrize(
    ("text", "month"),
    [
        ("en Mars 2026", MARCH),  # a word of its language before it
        ("début Mars 2026", MARCH),
        ("mi-Mars 2026", MARCH),
        ("Depuis Mars 2026", MARCH),
        ("le 12 Mars 2026", MARCH_12),  # a day before it
        ("mars 2026", MARCH),  # in lower case, as French writes its months
        ("Julio de 2026", [("2026-07-01", "2026-07-31")]),  # "de" before the year
        ("desde Julio 2026", [("2026-07-01", "2026-07-31")]),
        ("julio 2026", [("2026-07-01", "2026-07-31")]),
        ("d'Avril 2026", [("2026-04-01", "2026-04-30")]),
    ],
)
def test_a_month_english_writes_as_a_name_is_a_month_where_its_language_says_so(
    text: str, month: list[tuple[str, str]]
) -> None:
    assert _written(text) == month


# --- the words that change what a period means --------------------------------------------------------------

MARCH_15 = dt.date(2026, 3, 15)


@pytest.mark.parametrize(
    "question",
    [
        "März bis Mai 2026",
        "was war zwischen März und Mai 2026",
        "März–Mai 2026",
        "qu'ai-je fait de mars à mai 2026",
        "entre mars et mai 2026",
        "de marzo a mayo de 2026",
        "desde marzo hasta mayo de 2026",  # "desde" opens the range: not "since"
        "da marzo a maggio 2026",
        "de março a maio de 2026",
        "van maart tot mei 2026",
        "с марта по май 2026",
        "March to May 2026",  # as English reads it
    ],
)
def test_a_range_of_months_is_all_of_them(question: str) -> None:
    span = find_time_span(question, MARCH_15)
    assert span is not None
    assert (span.start, span.end, span.granularity) == (dt.date(2026, 3, 1), dt.date(2026, 5, 31), "months")


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("was ist seit März 2025 passiert", "2025-03-01"),
        ("depuis mars 2025", "2025-03-01"),
        ("Depuis Mars 2025", "2025-03-01"),  # the French word makes "Mars" a month
        ("desde marzo de 2025", "2025-03-01"),
        ("dall'aprile 2025", "2025-04-01"),
        ("sinds maart 2025", "2025-03-01"),
        ("что изменилось с марта 2025 года", "2025-03-01"),
        ("seit dem 12.03.2025", "2025-03-12"),
        ("desde el 12 de marzo de 2025", "2025-03-12"),
        ("seit 2024", "2024-01-01"),
        ("seit März", "2026-03-01"),  # the latest March, as "since March"
        ("depuis l'année dernière", "2025-01-01"),
        ("since March 2025", "2025-03-01"),
    ],
)
def test_since_a_period_is_from_its_start_to_today(question: str, start: str) -> None:
    span = find_time_span(question, MARCH_15)
    assert span is not None
    assert (span.start.isoformat(), span.end, span.granularity) == (start, MARCH_15, "since")


def test_the_start_of_a_range_of_years_is_no_since() -> None:
    # "с 2000 по 2005 год" is from 2000 to 2005, not since 2000: its first year, as before
    span = find_time_span("вырубалось ежегодно в период с 2000 по 2005 год", MARCH_15)
    assert span is not None
    assert span.granularity == "year"


@pytest.mark.parametrize(
    "question",
    [
        "vor März 2026",
        "was war nach März 2025",
        "bis Mai 2026",
        "avant mars 2026",
        "après mars 2025",
        "antes de marzo de 2026",
        "prima di marzo 2026",
        "depois de março de 2025",
        "na maart 2025",
        "до марта 2026 года",
        "before March 2026",
    ],
)
def test_a_period_that_bounds_the_time_asked_tells_no_days(question: str) -> None:
    span = find_time_span(question, MARCH_15)
    assert span is not None
    assert days_telling(question, span) is None


@pytest.mark.parametrize(
    "question",
    [
        "Pläne für März 2026",
        "mes plans pour mars 2026",
        "lo planeado para marzo de 2026",
        "plans for March 2026",
    ],
)
def test_a_plan_for_a_month_is_of_its_year_told_by_any_earlier_day(question: str) -> None:
    # as "plans for March 2026": the month is what the plan is for, its year the period, told from any day
    span = find_time_span(question, MARCH_15)
    assert span is not None
    assert (span.text, span.granularity) == ("2026", "year")
    days = days_telling(question, span)
    assert days is not None
    assert (days.start, days.end) == (dt.date.min, dt.date(2026, 12, 31))


@pytest.mark.parametrize(
    "question",
    [
        "Ziele für dieses Jahr",
        "was habe ich für März 2026 geplant",
        "piani per marzo 2026",
        "piani per il 2026",
        "doelen voor 2026",
    ],
)
def test_what_a_plan_is_for_is_no_period_of_its_own(question: str) -> None:
    span = find_time_span(question, MARCH_15)
    assert span is None or span.granularity == "year"


def test_the_italian_per_before_a_number_is_no_purpose() -> None:
    span = find_time_span("as per 2024 rules", MARCH_15)
    assert span is not None
    assert span.text == "2024"


@pytest.mark.parametrize(
    "question",
    [
        "verglichen mit März 2025",
        "wie war der Umsatz im Vergleich zum letzten Jahr",
        "gegenüber 2024",
        "par rapport à l'année dernière",
        "comparé à mars 2025",
        "comparado con el año pasado",
        "rispetto al 2024",
        "em comparação com 2024",
        "vergeleken met vorig jaar",
        "по сравнению с 2024 годом",
        "засуха сильнее, чем в 2005 году",
        "compared with last year",
    ],
)
def test_a_period_compared_against_in_another_language_is_not_the_period_asked(question: str) -> None:
    assert find_time_span(question, MARCH_15) is None


@pytest.mark.parametrize(
    "name",
    [
        "Seit März 2020",
        "Depuis mars 2020",
        "Desde marzo de 2020",
        "Bis Mai 2026",
        "Nach 2020",
        "Avant mars 2026",
        "Antes de marzo de 2026",
        "Dall'aprile 2020",
        "Sinds maart 2020",
        "С марта 2020",
        "До марта 2026",
        "Since March 2020",
    ],
)
def test_a_note_named_with_a_bound_of_a_period_is_of_no_period(name: str) -> None:
    assert title_span(name) is None


def test_a_day_after_a_bound_labels_a_note_in_any_language_as_in_english() -> None:
    # a day labels a note wherever it stands in its name ("Before 12 March 2026" is of the 12th): so in German
    english, german = title_span("Before 12 March 2026"), title_span("vor 12.03.2026")
    assert english is not None
    assert german is not None
    assert english.start == german.start == dt.date(2026, 3, 12)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        # the English "per", not the Italian purpose: the month asked about
        ("What were sales per March 2024?", dt.date(2024, 3, 1), dt.date(2024, 3, 31)),
        ("sales per Mar 2024", dt.date(2024, 3, 1), dt.date(2024, 3, 31)),  # no Italian "mar" after "per"
        ("As per June 2024 minutes, what did we decide?", dt.date(2024, 6, 1), dt.date(2024, 6, 30)),
        # the English "plant", not the German plan: no earlier day told
        ("When did I plant the tomatoes in May 2024?", dt.date(2024, 5, 1), dt.date(2024, 5, 31)),
        ("What plant did I buy in 2024?", dt.date(2024, 1, 1), dt.date(2024, 12, 31)),
    ],
)
def test_english_words_the_other_languages_write_too_read_as_english(
    question: str, start: dt.date, end: dt.date
) -> None:
    span = find_time_span(question, MARCH_15)
    assert span is not None
    telling = days_telling(question, span)
    assert telling is not None
    assert (telling.start, telling.end) == (start, end)


@pytest.mark.parametrize(
    ("name", "start"),
    [("What I ate March 2024", dt.date(2024, 3, 1))],
)
def test_an_english_name_is_labelled_as_before_whatever_other_languages_write(
    name: str, start: dt.date
) -> None:
    # "ate" is no Portuguese "até" without its accent
    span = title_span(name)
    assert span is not None
    assert span.start == start


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("Quanto ho speso dal 2024?", dt.date(2024, 1, 1)),  # the Italian "since", with a year
        ("Dal marzo 2025 cosa ho fatto?", dt.date(2025, 3, 1)),  # and opening a question
    ],
)
def test_the_italian_dal_is_since_before_a_year_or_a_month(question: str, start: dt.date) -> None:
    span = find_time_span(question, MARCH_15)
    assert span is not None
    assert (span.start, span.end, span.granularity) == (start, MARCH_15, "since")


@pytest.mark.parametrize("question", ["Tot maart 2026 heb ik gespaard?", "Na maart 2025, wat deed ik?"])
def test_the_dutch_bounds_opening_a_question_tell_no_days(question: str) -> None:
    span = find_time_span(question, MARCH_15)
    assert span is not None
    assert days_telling(question, span) is None


@pytest.mark.parametrize("name", ["Dal 2024", "Dal marzo 2025", "Tot maart 2026", "Na maart 2025"])
def test_a_note_named_with_an_italian_or_dutch_bound_opening_it_is_of_no_period(name: str) -> None:
    assert title_span(name) is None
