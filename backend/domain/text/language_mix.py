"""Which languages a vault is written in, from a sample of its notes, and what follows from it: the languages
every query is also stemmed in, and which in-process embedding model suits the vault."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

ENGLISH = "en"
MAIN_SHARE = 0.05  # a language of at least this share of the notes is one queries are stemmed in
MAIN_LIMIT = 4  # ... at most this many of them, the largest first
MULTILINGUAL_SHARE = 0.5  # "most of the vault is not English": the multilingual model is proposed


@dataclass(frozen=True, slots=True)
class LanguageMix:
    """The languages of the sampled notes (ISO codes), by number of notes; `unknown` could not be told."""

    counts: dict[str, int] = field(default_factory=dict)
    unknown: int = 0

    @classmethod
    def of(cls, languages: Iterable[str | None]) -> LanguageMix:
        seen = Counter(languages)
        unknown = seen.pop(None, 0)
        return cls({str(lang): n for lang, n in seen.most_common()}, unknown)

    @property
    def notes(self) -> int:
        """Notes whose language was told."""
        return sum(self.counts.values())

    def share(self, language: str) -> float:
        return self.counts.get(language, 0) / self.notes if self.notes else 0.0

    @property
    def non_english_share(self) -> float:
        return 1.0 - self.share(ENGLISH) if self.notes else 0.0

    @property
    def mostly_not_english(self) -> bool:
        return self.non_english_share > MULTILINGUAL_SHARE

    def main_languages(self) -> tuple[str, ...]:
        """The languages queries are also stemmed in: each with at least `MAIN_SHARE` of the notes."""
        ranked = sorted(self.counts, key=lambda lang: -self.counts[lang])
        return tuple(lang for lang in ranked if self.share(lang) >= MAIN_SHARE)[:MAIN_LIMIT]

    def shares(self) -> dict[str, float]:
        """Each language's share of the notes told, largest first, rounded for showing."""
        return {lang: round(self.share(lang), 3) for lang in self.counts}

    def describe(self) -> str:
        if not self.notes:
            return "no note's language could be told"
        top = ", ".join(f"{lang} {self.share(lang):.0%}" for lang in list(self.counts)[:5])
        return f"{top} of {self.notes} sampled notes"
