"""What an agent sees of a hit (application/search/presenting.py): secrets redacted in the text and the
heading, highlights found in the redacted text only, sensitive categories from the text, the tags and the
headings; and hits grouped by note. Plain values in, plain values out: no store at all."""

from __future__ import annotations

from typing import Any

from backend.application.search.presenting import group_by_note, present_hits
from backend.application.search.question import Question
from backend.domain.models import ScoredPoint
from backend.domain.text.content_policy import ContentPolicy
from backend.domain.text.sensitivity import SensitiveCategory
from backend.domain.text.text_analysis import TextAnalyzer
from tests.application.use_cases.conftest import SERVER_PASSWORD


def asked(text: str) -> Question:
    return Question.plain(text, TextAnalyzer())


def hit(path: str, content: str = "text", score: float = 1.0, **payload: Any) -> ScoredPoint:
    return ScoredPoint(f"{path}#{score}", score, {"note_path": path, "content": content, **payload})


SECRET = hit(
    "Infra/Servers.md",
    f"Connection: postgres://app:{SERVER_PASSWORD}@db.internal:5432/app",
    heading_context=f"Servers > password: {SERVER_PASSWORD}",
    start_line=5,
    end_line=5,
)


def test_secrets_are_redacted_in_the_text_and_the_heading_and_counted() -> None:
    (view,) = present_hits([SECRET], asked("database password"), ContentPolicy(), analyzer=TextAnalyzer())
    assert SERVER_PASSWORD not in view.content
    assert SERVER_PASSWORD not in view.heading_context
    assert "[REDACTED:password]" in view.content
    assert view.redactions == 1
    assert (view.note_path, view.start_line, view.end_line) == ("Infra/Servers.md", 5, 5)


def test_a_highlight_never_brings_a_secret_back() -> None:
    (view,) = present_hits(
        [SECRET], asked(f"password {SERVER_PASSWORD}"), ContentPolicy(), analyzer=TextAnalyzer()
    )
    assert view.highlights == ["password"]


def test_with_redaction_off_the_text_is_shown_as_written() -> None:
    (view,) = present_hits(
        [SECRET], asked(SERVER_PASSWORD), ContentPolicy(redact=False), analyzer=TextAnalyzer()
    )
    assert SERVER_PASSWORD in view.content
    assert view.redactions == 0
    assert view.highlights == [SERVER_PASSWORD]


def test_sensitive_categories_come_from_the_text_the_tags_and_the_headings() -> None:
    hits = [
        hit("Finance/Sreenivas.md", "I owe Sreenivas 1200 rupees."),
        hit("Sleep.md", "Went to bed early.", tags=["health/sleep"]),
        hit("Plans.md", "Numbers for March.", heading_path=["Plans", "Budget"]),
        hit("Shopping list.md", "oat milk, lemons"),
    ]
    views = present_hits(hits, asked("anything"), ContentPolicy(), analyzer=TextAnalyzer())
    assert [v.sensitive_categories for v in views] == [["finance"], ["health"], ["finance"], []]


def test_the_categories_are_the_configured_ones() -> None:
    garden = ContentPolicy(categories=(SensitiveCategory("garden", words=("tomato",)),))
    views = present_hits(
        [hit("Garden.md", "Sow tomatoes."), hit("Debt.md", "I owe rent.")],
        asked("x"),
        garden,
        analyzer=TextAnalyzer(),
    )
    assert [v.sensitive_categories for v in views] == [["garden"], []]
    assert (
        present_hits(
            [hit("Debt.md", "I owe rent.")], asked("x"), ContentPolicy(categories=()), analyzer=TextAnalyzer()
        )[0].sensitive_categories
        == []
    )


def test_grouping_by_note_keeps_the_best_notes_each_with_its_chunks_together() -> None:
    hits = [hit("a.md", score=0.9), hit("b.md", score=0.8), hit("a.md", score=0.7), hit("c.md", score=0.6)]
    grouped = group_by_note(hits, 2)
    assert [(h.payload["note_path"], h.score) for h in grouped] == [
        ("a.md", 0.9),
        ("a.md", 0.7),
        ("b.md", 0.8),
    ]
    assert group_by_note(hits, 0) == []
