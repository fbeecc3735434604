"""POST /context over HTTP: the block is never over budget, never cuts a word, holds no duplicate, and every
entry reads back from the note it names (checked over many queries and budgets on the example vault)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from backend.config import EXAMPLE_VAULT, load_settings
from backend.entrypoints.app import create_app
from tests.api.conftest import wait_for_job

QUERIES_FILE = Path(__file__).resolve().parents[1] / "data" / "example_vault_queries.json"
QUERIES = [q["query"] for q in json.loads(QUERIES_FILE.read_text(encoding="utf-8"))] + [
    "Sreenivas",
    "sleep",
    "pgloader cutover",
    "restic backup script",
    "Lisbon apartment deposit",
    "what should I read next",
]
BUDGETS = [200, 333, 600, 1000, 2500, 4000]
SEPARATOR = "\n\n"
ELLIPSIS = " …"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = load_settings(
        vault_path=EXAMPLE_VAULT,
        data_dir=tmp_path_factory.mktemp("context"),
        embedding_provider="none",
        watch=False,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        wait_for_job(c)
        yield c


def entries(body: dict) -> list[tuple[dict, str]]:
    """Each source with the text of its entry in the block, found by walking the headers in order."""
    block = body["context"]
    starts = []
    position = 0
    for i, source in enumerate(body["sources"]):
        marker = ("" if i == 0 else SEPARATOR) + f"[{source['attribution']}]"
        found = block.find(marker, position)
        assert found == position if i == 0 else found >= position, (marker, block)
        starts.append(found + (0 if i == 0 else len(SEPARATOR)))
        position = found + len(marker)
    out = []
    for i, source in enumerate(body["sources"]):
        end = starts[i + 1] - len(SEPARATOR) if i + 1 < len(starts) else len(block)
        entry = block[starts[i] : end]
        assert len(entry) == source["chars"]
        out.append((source, entry.split("\n", 1)[1]))
    return out


def _as_written(client: TestClient, source: dict, text: str) -> str:
    """The entry's text as its note writes it: without the line closing a code block the entry left open,
    which the packer adds (a cut entry ends with the ellipsis before it; a whole one is its note's text)."""
    fence = re.search(r"\n(?:`{3,}|~{3,})$", text)
    if fence is None:
        return text
    if source["truncated"]:
        return text[: fence.start()]
    params = {"start_line": source["start_line"], "end_line": source["end_line"]}
    written = client.get(f"/note/{quote(source['note_path'])}", params=params).json()["content"]
    return text if text in written else text[: fence.start()]


def check_block(client: TestClient, body: dict, budget: int) -> None:
    block = body["context"]
    assert len(block) <= budget
    assert body["chars"] == len(block)
    pairs = entries(body)
    assert sum(s["chars"] for s, _ in pairs) + len(SEPARATOR) * max(0, len(pairs) - 1) == len(block)
    seen_texts: list[str] = []
    spans: dict[str, list[tuple[int, int]]] = {}
    for source, text in pairs:
        text = _as_written(client, source, text)
        assert source["kind"] == "note"
        path, first, last = source["note_path"], source["start_line"], source["end_line"]
        assert source["attribution"] == f"{path}:{first}-{last}"
        kept = text[: -len(ELLIPSIS)] if source["truncated"] else text
        if source["truncated"]:
            assert text.endswith(ELLIPSIS)
        # no duplicates: no entry sharing half its lines with another of its note (neighbouring chunks share
        # a line through the chunker's overlap), no repeated text
        shared = [min(last, b) - max(first, a) + 1 for a, b in spans.get(path, [])]
        assert all(2 * lines < last - first + 1 for lines in shared), (path, first, last, spans)
        spans.setdefault(path, []).append((first, last))
        assert kept not in seen_texts
        seen_texts.append(kept)
        # the entry is the note's own text at those lines, ending where a word ends
        response = client.get(f"/note/{quote(path)}", params={"start_line": first, "end_line": last})
        assert response.status_code == 200, response.text
        lines = response.json()["content"]
        at = lines.find(kept)
        assert at >= 0, (kept, lines)
        after = lines[at + len(kept) : at + len(kept) + 1]
        # the text ends where the word ends: whitespace follows, or the end of its last line (a newline)
        assert after == "" or after.isspace(), (kept[-20:], after)
        if source["truncated"]:
            assert at + len(kept) > len(lines) - len(lines.split("\n")[-1]) - 1  # it ends on its end_line


@pytest.mark.parametrize("budget", BUDGETS)
def test_budget_words_and_duplicates_over_many_queries(client: TestClient, budget: int) -> None:
    filled = 0
    for query in QUERIES:
        response = client.post("/context", json={"query": query, "max_chars": budget})
        assert response.status_code == 200, response.text
        body = response.json()
        check_block(client, body, budget)
        filled += bool(body["sources"])
    assert filled >= len(QUERIES) - 2  # nearly every query finds something to inject


def test_a_small_budget_still_gets_a_cut_passage(client: TestClient) -> None:
    body = client.post("/context", json={"query": "how much do I owe Sreenivas?", "max_chars": 200}).json()
    assert body["sources"]
    assert body["sources"][0]["truncated"]
    assert body["omitted"] > 0


def test_messages_make_the_query(client: TestClient) -> None:
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "I'm flying to Lisbon with Sreenivas in May."},
        {"role": "assistant", "content": "Sounds great. Anything to sort out first?"},
        {"role": "user", "content": "How much do I owe him?"},
    ]
    body = client.post("/context", json={"messages": messages, "max_chars": 3000}).json()
    assert body["query"].startswith("How much do I owe him?")
    assert "Sreenivas" in body["query"]
    assert "helpful assistant" not in body["query"]
    assert "Finance/Money with Sreenivas.md" in [s["note_path"] for s in body["sources"]]


def test_filters_and_exclusions(client: TestClient) -> None:
    recipes = client.post("/context", json={"query": "tomato", "folders": ["Recipes"]}).json()
    assert recipes["sources"]
    assert all(s["note_path"].startswith("Recipes/") for s in recipes["sources"])
    money = client.post("/context", json={"query": "owe money balance", "max_chars": 4000}).json()
    assert money["sensitive_detected"] is True
    assert any("finance" in s["sensitive_categories"] for s in money["sources"])
    private = client.post(
        "/context", json={"query": "owe money balance", "max_chars": 4000, "exclude_categories": ["finance"]}
    ).json()
    assert all("finance" not in s["sensitive_categories"] for s in private["sources"])
    assert "€79.50" not in private["context"]


def test_keyword_only_says_it_is_degraded(client: TestClient) -> None:
    body = client.post("/context", json={"query": "knee exercises"}).json()
    assert body["status"] == "degraded"
    assert body["mode"] == "keyword"
    assert body["warnings"]


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"query": "   "},
        {"messages": []},
        {"messages": [{"role": "user", "content": "  "}]},
        {"query": "x", "max_chars": 199},
        {"query": "x", "max_chars": 32_001},
        {"query": "x", "max_chunks": 0},
        {"query": "x", "messages": [{"role": "robot", "content": "hi"}]},
        {"query": "x", "unknown": 1},
    ],
)
def test_bad_requests_are_validation_errors(client: TestClient, payload: dict) -> None:
    response = client.post("/context", json=payload)
    assert response.status_code == 422
    assert response.json()["error_code"] == "VALIDATION_ERROR"


def test_a_path_filter_leaving_the_vault_is_refused(client: TestClient) -> None:
    response = client.post("/context", json={"query": "x", "paths": ["../../etc/passwd"]})
    assert response.status_code == 400
    assert response.json()["error_code"] == "SECURITY_VIOLATION"


def test_a_block_too_small_for_any_entry_says_what_budget_would_hold_one(client: TestClient) -> None:
    asked = {"query": "what did I decide about the database migration?", "quoted": True}
    empty = client.post("/context", json={**asked, "max_chars": 300}).json()
    assert empty["context"] == ""
    assert empty["sources"] == []
    (said,) = [w for w in empty["warnings"] if w.startswith("no entry fits in max_chars=300")]
    least = int(re.search(r"needs max_chars=(\d+)", said).group(1))  # type: ignore[union-attr]

    assert client.post("/context", json={**asked, "max_chars": least}).json()["sources"]
    assert not client.post("/context", json={**asked, "max_chars": least - 1}).json()["sources"]
    # a block that holds an entry has no such warning
    fits = client.post("/context", json={**asked, "max_chars": 1500}).json()
    assert not any(w.startswith("no entry fits") for w in fits["warnings"])
