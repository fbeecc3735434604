"""Which language a text is in: `py3langid` (a maintained fork of langid.py: 97 languages, naive Bayes over
byte n-grams, its model inside the package, numpy only, ~0.05 ms for a question).

Its probabilities are calibrated by text length, so a two-word query gets a low confidence and the keyword
side then relies on the vault's languages instead (`text_analysis.MIN_DETECT_CONFIDENCE`). The model loads
on first use (~0.5 s), once per process.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib.metadata import version
from typing import Any

_lock = threading.Lock()
_identifier: Any = None


def name() -> str:
    """The detector and its version: part of the keyword index's identity (it decides notes' stemmers)."""
    return f"py3langid-{version('py3langid')}"


@lru_cache(maxsize=4096)  # a query is detected for its terms, the fusion and each result's highlights
def detect_language(text: str) -> tuple[str, float] | None:
    """(ISO 639-1 code, probability) of `text`, or None for a text without letters."""
    if not any(ch.isalpha() for ch in text):
        return None
    language, confidence = _model().classify(text)
    return str(language), float(confidence)


def _model() -> Any:
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _identifier
