"""What the service does to note text before an agent sees it: redact secrets, name sensitive categories."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from backend.domain.text.secrets import Redacted, redact_secrets
from backend.domain.text.sensitivity import DEFAULT_CATEGORIES, SensitiveCategory, sensitive_categories


@dataclass(frozen=True, slots=True)
class ContentPolicy:
    redact: bool = True  # REDACT_SECRETS
    categories: tuple[SensitiveCategory, ...] = DEFAULT_CATEGORIES  # SENSITIVE_CATEGORIES

    def clean(self, text: str) -> Redacted:
        return redact_secrets(text) if self.redact else Redacted(text)

    def categories_of(
        self, text: str, *, tags: Iterable[str] = (), headings: Iterable[str] = ()
    ) -> list[str]:
        return sensitive_categories(self.categories, text, tags=tags, headings=headings)
