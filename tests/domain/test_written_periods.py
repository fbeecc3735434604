"""What a chunk is of, from what it writes: the days and months in its text and headings, the period a heading
labels its section with, the daily notes it links to, then its note's own periods; and which years in a note's
name label it."""

from __future__ import annotations

import datetime as dt

from backend.domain.periods.written_periods import MAX_WRITTEN, chunk_periods, spans_in_text, title_span


def test_days_and_months_written_out_are_found_in_order_each_once() -> None:
    text = (
        "Decided at the 2026-03-12 kickoff and confirmed at the go/no-go on 26 March 2026; "
        "the cutover slipped to April 18, 2026. Budget reviewed in May 2026 and again in 2026-06."
    )
    found = [(span.start.isoformat(), span.end.isoformat()) for span in spans_in_text(text)]
    assert found == [
        ("2026-03-12", "2026-03-12"),
        ("2026-03-26", "2026-03-26"),  # not also "March 2026": the day holds it
        ("2026-04-18", "2026-04-18"),
        ("2026-05-01", "2026-05-31"),
        ("2026-06-01", "2026-06-30"),
    ]


def test_prose_years_and_impossible_days_are_not_periods() -> None:
    assert spans_in_text("Founded in 1989, the firm grew; version 2.0 shipped 2026-02-30.") == []


def test_a_chunk_of_a_note_that_states_no_time_is_of_the_days_it_writes_and_the_daily_notes_it_links() -> (
    None
):
    text = "Decided at the 2026-03-12 kickoff, after the dry run of [[Journal/2026-W11|that week]]."
    periods = chunk_periods(text, ("Database migration", "Decision"), (), note_states=False)
    assert periods == (("2026-03-12", "2026-03-09/2026-03-15"), True)


def test_a_chunk_of_a_dated_note_is_of_its_notes_time_whatever_days_it_mentions() -> None:
    text = "2022-01-01: started the new program."
    assert chunk_periods(text, (), ("2021-09-19",), note_states=True) == (("2021-09-19",), True)


def test_a_chunk_of_an_undated_note_that_writes_no_day_is_of_no_time() -> None:
    assert chunk_periods("Postgres or MySQL.", ("Options",), (), note_states=False) == ((), False)
    # a year its note's name only mentions is its period, but not one it states
    assert chunk_periods("The drought.", (), ("2010-01-01/2010-12-31",), note_states=False) == (
        ("2010-01-01/2010-12-31",),
        False,
    )


def test_a_heading_that_names_a_month_dates_the_chunk_under_it() -> None:
    periods, _ = chunk_periods("Paid the boatyard.", ("Ledger", "March 2025"), (), note_states=False)
    assert periods == ("2025-03-01/2025-03-31",)


def test_a_heading_that_labels_its_section_with_a_year_dates_the_chunk_under_it() -> None:
    """A running note kept by year ("## 2024", "## 2025" in a ledger or a log) speaks of each year under its
    heading, as a note named "Budget 2025" does; a year in a heading's prose, or as a bound, does not."""
    for heading, period in (
        ("2025", "2025-01-01/2025-12-31"),
        ("One-offs 2025", "2025-01-01/2025-12-31"),
        ("Pre-injury (2024)", "2024-01-01/2024-12-31"),
    ):
        written = chunk_periods("| Jan | coal | 120 |", ("Boat spend", heading), (), note_states=False)
        assert written == ((period,), True), heading
    for heading in ("Since 2020", "What the 1989 survey found about the hull"):
        assert chunk_periods("The hull.", ("Boat", heading), (), note_states=False) == ((), False), heading
    # a dated note's sections stay of its own time
    assert chunk_periods("Coal.", ("2025",), ("2024-12-27",), note_states=True) == (("2024-12-27",), True)


def test_a_chunk_writing_many_days_keeps_their_months() -> None:
    days = [dt.date(2025, 1, 1) + dt.timedelta(days=4 * i) for i in range(MAX_WRITTEN + 5)]
    text = "\n".join(f"- {day.isoformat()}: paid" for day in days)
    periods, _ = chunk_periods(text, (), (), note_states=False)
    assert len(periods) <= MAX_WRITTEN
    assert periods[0] == "2025-01-01/2025-01-31"
    assert all("/" in period for period in periods)


def test_a_year_labels_a_name_at_either_end_but_not_as_a_bound_or_in_its_middle() -> None:
    labelled = {
        "Trip to Lisbon 2019": ("2019-01-01", "2019-12-31"),
        "2024 budget": ("2024-01-01", "2024-12-31"),
        "Trip Oct 2024": ("2024-10-01", "2024-10-31"),
        "Meeting 2024-12-03 Boatyard quote call": ("2024-12-03", "2024-12-03"),
        "2025-W12": ("2025-03-17", "2025-03-23"),
    }
    for name, (start, end) in labelled.items():
        span = title_span(name)
        assert span is not None, name
        assert (span.start.isoformat(), span.end.isoformat()) == (start, end), name
    for name in (
        "What changed since 1989",
        "Before 2020",
        "The ship was used from 2001 after a visit",
        "1466 starben mutmaßlich 40.000 Menschen an",
    ):
        assert title_span(name) is None, name


def test_a_chunk_writes_the_year_asked_in_any_form_of_a_date_but_not_in_a_code() -> None:
    from backend.domain.periods.time_intent import TimeSpan
    from backend.domain.periods.written_periods import writes_year_of

    year = TimeSpan("2024", dt.date(2024, 1, 1), dt.date(2024, 12, 31), "year")
    written = [
        "in 2024",
        "Follow-up from [[2024-12-20]]",
        "20.12.2024",
        "2024/03/12",
        "20 December 2024",
        "2024年3月",
    ]
    for text in written:
        assert writes_year_of(text, year), text
    for text in [
        "IMG_2024.jpg",
        "IMG-2024.jpg",
        "ratio 0.2024",
        "report_2024.pdf",
        "Ticket #2024",
        "?p=2024",
        "commit 2024f9a",
        "£2024",
        "BA2024",
    ]:
        assert not writes_year_of(text, year), text
    # a month of the year is not the year: the year a January day writes says nothing of its Christmas
    assert not writes_year_of(
        "in 2024", TimeSpan("March 2024", dt.date(2024, 3, 1), dt.date(2024, 3, 31), "month")
    )


def test_a_decade_and_a_school_year_write_the_years_they_hold() -> None:
    from backend.domain.periods.time_intent import TimeSpan
    from backend.domain.periods.written_periods import writes_year_of

    nineties = TimeSpan("the 1990s", dt.date(1990, 1, 1), dt.date(1999, 12, 31), "years")
    assert writes_year_of("In the 1990s it became a university", nineties)
    season = TimeSpan("2025", dt.date(2025, 1, 1), dt.date(2025, 12, 31), "year")
    assert writes_year_of("the 2024–25 season", season)
    assert not writes_year_of("the 2023–24 season", season)


def test_the_year_asked_is_read_as_people_write_it_around_a_year() -> None:
    from backend.domain.periods.time_intent import TimeSpan
    from backend.domain.periods.written_periods import writes_year_of

    def year(y: int) -> TimeSpan:
        return TimeSpan(str(y), dt.date(y, 1, 1), dt.date(y, 12, 31), "year")

    nineties = TimeSpan("the 1990's", dt.date(1990, 1, 1), dt.date(1999, 12, 31), "years")
    assert writes_year_of("a playlist of the 1990's hits", nineties)
    assert writes_year_of("we reviewed 2024's budget", year(2024))
    assert writes_year_of("Stand: 03.2024", year(2024))  # a dotted month
    assert writes_year_of("March 3,2019", year(2019))
    assert writes_year_of("1999-00 season", year(2000))
    assert not writes_year_of("[[2011-12]]", year(2012))  # an ISO month: December 2011
    assert not writes_year_of("release v2.2024", year(2024))
