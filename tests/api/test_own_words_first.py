"""The person's own words before what they saved from the web: on a small vault of real files, a note of
their own advice ranks above a clipping on the topic, and the recall quotes it alone; the same page clipped
twice counts once; a clipping answers when the question asks about something read or saved, or when none of
the person's own notes does, and the block says where it was saved from. Through the HTTP API, by keyword
alone (the weights every uncalibrated model uses)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from backend.application.recall.gate import SAVED
from backend.config import load_settings
from backend.domain.ranking.confidence import RECALL_FLOOR
from backend.entrypoints.app import create_app
from tests.api.conftest import wait_for_job

STEPS = (
    "# 15 steps to launch your own startup\n\nLaunch your own startup in 15 steps: validate the idea, "
    "write a business plan, raise money from friends and family, build a website, launch on Product Hunt, "
    "hire your first employee, launch and iterate. A startup needs a launch plan and advice from mentors "
    "before it raises money.\n"
)
VAULT = {
    "People/Sam.md": "# Sam\n\nFriend from uni, now running a small coffee roasting startup.\n\n## Advice I "
    "gave him\n\nOver lunch in March I told Sam to launch his startup with one product, sell to cafés he "
    "knows before building a website, and not to raise money until ten cafés reorder. Launch small.\n",
    # as Obsidian Web Clipper saves a page, and the same page saved again by hand at the root
    "Clippings/15 steps to launch your own startup.md": "---\ntitle: 15 steps to launch your own startup\n"
    'source: "https://www.example.com/blog/15-steps/?utm_source=newsletter"\nauthor: "[[Jane Founder]]"\n'
    "tags: [clippings]\n---\n" + STEPS,
    "15 steps to launch your own startup.md": "---\nsource: https://example.com/blog/15-steps\n---\n" + STEPS,
    "Clippings/Sleep and memory.md": "---\nsource: https://sleep.example.org/memory\n---\n# Sleep and memory"
    "\n\nDeep sleep consolidates memory: the hippocampus replays the day's learning to the cortex.\n",
    # `author:` on a note of one's own about a book: still one's own words
    "Books/Four Thousand Weeks.md": "---\nauthor: Oliver Burkeman\n---\n# Four Thousand Weeks\n\nRead it "
    "before Easter. Choose what to neglect, on purpose.\n",
}
PAGE = "example.com/blog/15-steps"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("own-words")
    for path, text in VAULT.items():
        (root / "vault" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "vault" / path).write_text(text, encoding="utf-8")
    settings = load_settings(
        vault_path=root / "vault", data_dir=root / "data", watch=False, embedding_provider="none"
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        assert wait_for_job(client)["job"]["phase"] == "done"
        yield client


def search(client: TestClient, question: str) -> list[dict]:
    response = client.post("/search", json={"query": question, "top_k": 10, "explain": True})
    assert response.status_code == 200, response.text
    return response.json()["results"]


def recall(client: TestClient, question: str) -> dict:
    body = {"query": question, "max_chars": 1500, "max_chunks": 3, "min_confidence": RECALL_FLOOR}
    response = client.post("/context", json={**body, "explain": True})
    assert response.status_code == 200, response.text
    return response.json()


def test_ones_own_advice_comes_before_the_clipping_and_is_quoted_alone(client: TestClient) -> None:
    question = "what advice did I give about launching a startup"
    results = search(client, question)

    assert results[0]["note_path"] == "People/Sam.md"
    assert results[0]["saved_from"] is None
    clipped = [r for r in results if r["saved_from"] is not None]
    # the page clipped twice is one source: one copy, saying where it came from
    assert [r["saved_from"] for r in clipped] == [PAGE]
    assert any("Saved from elsewhere" in rule for rule in clipped[0]["why"]["rules"])
    answer = recall(client, question)
    assert [s["note_path"] for s in answer["sources"]] == ["People/Sam.md"]
    fates = {c["note_path"]: c["reason"] for c in answer["explain"]["considered"]}
    assert fates[clipped[0]["note_path"]] == SAVED


def test_a_question_about_something_read_ranks_the_clipping_as_it_scores(client: TestClient) -> None:
    results = search(client, "the article I read about launching a startup")

    clipped = next(r for r in results if r["saved_from"] == PAGE)
    assert not any("Saved from elsewhere" in rule for rule in clipped["why"]["rules"])
    assert clipped["score"] == pytest.approx(clipped["why"]["keyword"]["score"], rel=1e-3)  # its own BM25
    lowered = next(r for r in search(client, "launching a startup") if r["saved_from"] == PAGE)
    assert lowered["score"] == pytest.approx(lowered["why"]["keyword"]["score"] / 2, rel=1e-3)


def test_a_clipping_answers_when_nothing_of_ones_own_does_and_says_where_it_is_from(
    client: TestClient,
) -> None:
    answer = recall(client, "how does sleep affect memory")

    assert [s["note_path"] for s in answer["sources"]] == ["Clippings/Sleep and memory.md"]
    assert "(saved from sleep.example.org/memory)" in answer["context"]


def test_a_book_note_with_an_author_is_ones_own(client: TestClient) -> None:
    results = search(client, "four thousand weeks neglect")

    assert results[0]["note_path"] == "Books/Four Thousand Weeks.md"
    assert results[0]["saved_from"] is None
