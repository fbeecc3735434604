"""The in-process model's variant (ONNX_VARIANT) is part of what an index and the embedding cache record."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from backend.infrastructure.embedders.cache import CachedEmbedder, cache_key
from backend.infrastructure.embedders.onnx_minilm import DEFAULT_VARIANT, OnnxMiniLMEmbedder
from scripts.measure.service import ServiceProcess
from tests.application.fakes import FakeEmbedder


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Tides.md").write_text(
        "# Tides\n\nThe tide turns twice a day at the harbour.\n", encoding="utf-8"
    )
    (vault / "Debts.md").write_text("# Debts\n\nI owe Sam 50 dollars for the concert.\n", encoding="utf-8")
    return vault


def test_the_cache_key_includes_the_variant(tmp_path: Path) -> None:
    names = [OnnxMiniLMEmbedder(cache_dir=tmp_path, variant=v).model_name for v in ("fp32", DEFAULT_VARIANT)]
    assert cache_key(names[0], "same text") != cache_key(names[1], "same text")
    path = tmp_path / "cache.sqlite3"
    # counting fakes under the names the two variants record
    first = FakeEmbedder(model_name=names[0])
    CachedEmbedder(first, path).embed_documents(["same text"])
    second = FakeEmbedder(model_name=names[1])
    CachedEmbedder(second, path).embed_documents(["same text"])
    assert (first.texts_embedded, second.texts_embedded) == (1, 1)  # never served the other's vector


PREVIOUS_DEFAULT = "int8-opt-ffn2fp32"  # the default variant before issue 18's last change
# notes of 4 chunks: the re-embedding takes seconds, during which the loop below asks dozens of searches
NOTES = 60


def _notes(root: Path, count: int) -> Path:
    words = ("harbour", "tide", "lantern", "glacier", "orchard", "violin", "ledger", "comet")
    for n in range(count):
        topic = words[n % len(words)]
        body = "\n\n".join(
            f"Paragraph {p} of note {n} is about the {topic} and {words[(n + p) % len(words)]} {n}x{p}."
            for p in range(4)
        )
        (root / f"Note {n:03}.md").write_text(f"# Note {n} on the {topic}\n\n{body}\n", encoding="utf-8")
    return root


@pytest.mark.slow
def test_an_upgrade_to_a_new_default_variant_stays_hybrid_while_it_re_embeds_and_ends_on_the_new_model(
    tmp_path: Path,
) -> None:
    (tmp_path / "vault").mkdir()
    vault = _notes(tmp_path / "vault", NOTES)
    data = tmp_path / "data"
    old, new = f"all-MiniLM-L6-v2-{PREVIOUS_DEFAULT}", f"all-MiniLM-L6-v2-{DEFAULT_VARIANT}"
    with ServiceProcess(vault, data, env={"WATCH": "false", "ONNX_VARIANT": PREVIOUS_DEFAULT}) as before:
        status = before.wait_idle(timeout=600)
        assert (status["index_model"], status["dense_pending"]) == (old, 0)

    # the upgrade: the same data dir, the new default variant
    with ServiceProcess(vault, data, env={"WATCH": "false"}) as after:
        after.wait_ready()
        seen: list[str] = []
        answers: list[tuple[int, str, list[str]]] = []
        deadline = time.monotonic() + 600
        while True:
            status = after.get("/index/status").json()
            seen.append(status["model_change"] or "")
            found = after.post(
                "/search", {"query": "the glacier and the violin", "mode": "hybrid", "top_k": 3}
            )
            body = found.json()
            answers.append((found.status_code, body.get("mode", ""), body.get("warnings", [])))
            job = status["job"]
            if status["index_model"] == new and job is not None and job["finished_at"] is not None:
                break
            assert time.monotonic() < deadline, status
        assert status["embedding_model"] == new
        assert status["model_change"] is None
        assert status["dense_pending"] == 0
        assert job["kind"] == "rebuild"
        assert job["phase"] == "done"
    # every answer, before, during and after the switch, was a hybrid one with nothing degraded
    assert answers
    assert all(answer == (200, "hybrid", []) for answer in answers), [
        (i, answer) for i, answer in enumerate(answers) if answer != (200, "hybrid", [])
    ] + [f"of {len(answers)}"]
    re_embedding = [line for line in seen if line.startswith(f"serving {old}; re-embedding for {new}: ")]
    assert re_embedding, seen  # "serving X; re-embedding for Y: n of N" while it ran
    assert re_embedding[-1].endswith((f" of {NOTES}", " of 0"))
