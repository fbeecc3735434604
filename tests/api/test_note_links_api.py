"""The link graph over HTTP, on the real Obsidian help vault. Every expected fact below was checked by
reading the notes in ../shared/corpora/obsidian-help/vault."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import wait_for_job

HELP_VAULT = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "obsidian-help" / "vault"
ALIASES = "Linking notes and files/Aliases.md"

pytestmark = pytest.mark.skipif(not HELP_VAULT.is_dir(), reason="../shared/corpora is not beside the repo")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    from backend.config import load_settings
    from backend.entrypoints.app import create_app

    settings = load_settings(
        vault_path=HELP_VAULT, data_dir=tmp_path_factory.mktemp("help"), embedding_provider="none"
    )
    with TestClient(create_app(settings)) as c:
        status = wait_for_job(c, timeout=300)
        assert status["job"]["phase"] == "done", status["job"]
        yield c


def links(client: TestClient, path: str) -> dict:
    response = client.get(f"/note/{quote(path)}/links")
    assert response.status_code == 200, response.text
    return response.json()


def test_outlinks_carry_titles_anchors_shown_text_and_embeds(client: TestClient) -> None:
    body = links(client, ALIASES)
    assert body["note_title"] == "Aliases"
    out = {(o["note_path"], o["kind"], o["anchor"], o["text"]) for o in body["outlinks"]}
    internal = "Linking notes and files/Internal links.md"
    assert (internal, "wikilink", "Change the link display text", "Change the link display text") in out
    assert (internal, "embed", "^callout-internal-links-link-text", None) in out
    assert (internal, "wikilink", None, "internal link") in out
    assert ("Editing and formatting/Properties.md", "wikilink", None, None) in out
    assert ("Plugins/Backlinks.md", "wikilink", None, None) in out
    titles = {o["note_path"]: o["note_title"] for o in body["outlinks"]}
    assert titles["Plugins/Backlinks.md"] == "Backlinks"


def test_links_inside_inline_code_are_not_links(client: TestClient) -> None:
    # Aliases.md shows `[[Artificial Intelligence|AI]]` and `[[AI]]` as code examples
    body = links(client, ALIASES)
    targets = [o["note_path"] for o in body["outlinks"]] + [u["target"] for u in body["unresolved"]]
    assert not any("Artificial Intelligence" in t or t == "AI" for t in targets)


def test_backlinks_include_links_written_in_another_case(client: TestClient) -> None:
    back = {b["note_path"] for b in links(client, ALIASES)["backlinks"]}
    # "Advanced formatting syntax" writes [[aliases]] in lower case
    assert "Editing and formatting/Advanced formatting syntax.md" in back
    assert "Linking notes and files/Internal links.md" in back
    assert "Editing and formatting/Properties.md" in back


def test_unknown_note_is_404_in_the_error_shape(client: TestClient) -> None:
    response = client.get(f"/note/{quote('No such/note.md')}/links")
    assert response.status_code == 404
    assert response.json()["error_code"] == "NOTE_NOT_FOUND"


def test_search_returns_related_notes_by_links(client: TestClient) -> None:
    body = client.post("/search", json={"query": "aliases alternative name for a note", "top_k": 3}).json()
    assert body["results"][0]["note_path"] == ALIASES
    related = body["related_notes"]
    assert related
    result_paths = {r["note_path"] for r in body["results"]}
    assert all(r["note_path"] not in result_paths for r in related)
    assert all(r["relationship"] in ("backlink", "outlink") and r["link_count"] >= 1 for r in related)
    assert any(r["note_path"] == "Linking notes and files/Internal links.md" for r in related) or (
        "Linking notes and files/Internal links.md" in result_paths
    )
    quiet = client.post("/search", json={"query": "aliases", "top_k": 3, "include_related": False}).json()
    assert quiet["related_notes"] == []


def test_related_limit_keeps_the_notes_linked_with_the_most_results(client: TestClient) -> None:
    ask = {"query": "internal links embed files", "top_k": 10}
    every = client.post("/search", json={**ask, "related_limit": 200}).json()["related_notes"]
    assert len(every) > 20  # the help vault's link pages are hubs: more than the default keeps
    counts = [r["link_count"] for r in every]
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > counts[-1]
    assert client.post("/search", json=ask).json()["related_notes"] == every[:20]
    assert client.post("/search", json={**ask, "related_limit": 2}).json()["related_notes"] == every[:2]
    for wrong in (0, 201, "many"):
        response = client.post("/search", json={**ask, "related_limit": wrong})
        assert response.status_code == 422
        assert "related_limit" in response.json()["detail"]


def test_an_alias_finds_its_note(client: TestClient) -> None:
    # "Add aliases to note" is only an alias of Aliases.md, not its title or file name
    body = client.post("/search", json={"query": "How to Add aliases to note", "top_k": 1}).json()
    assert body["results"][0]["note_path"] == ALIASES


def test_status_counts_links_of_the_whole_vault(client: TestClient) -> None:
    status = client.get("/index/status").json()
    counts = status["links"]
    assert status["indexed_notes"] == 173
    assert counts["total"] == counts["resolved"] + counts["unresolved"]
    assert counts["total"] > 1000  # the corpus README counts 1,582 wikilinks
    assert 0 < counts["embeds"] < counts["total"]
    # the corpus ships no images, so embeds of attachments stay unresolved
    assert counts["unresolved"] >= 200


@pytest.mark.parametrize(
    ("path", "aliases"),
    [
        ("Editing and formatting/Tags.md", ["How to/Working with tags"]),
        ("Plugins/Backlinks.md", ["How to/Working with backlinks"]),
        ("Bases/Introduction to Bases.md", ["Bases", "Base"]),
        (ALIASES, ["alias", "aliases", "How to/Add aliases to note"]),
    ],
)
def test_aliases_from_frontmatter_reach_the_results(
    client: TestClient, path: str, aliases: list[str]
) -> None:
    body = client.post("/search", json={"query": aliases[-1], "top_k": 10, "paths": [path]}).json()
    assert body["results"]
    assert body["results"][0]["aliases"] == aliases


@pytest.mark.parametrize(
    ("path", "query", "heading_context"),
    [
        ("Editing and formatting/Properties.md", "Templates plugin properties", "Advanced uses > Templates"),
        ("Editing and formatting/Properties.md", "Vim navigation properties", "Hotkeys > Vim (advanced)"),
        ("Editing and formatting/Callouts.md", "nested callouts", "Nested callouts"),
        ("Linking notes and files/Internal links.md", "link to a block", "Link to a block in a note"),
    ],
)
def test_chunks_carry_their_full_heading_path(
    client: TestClient, path: str, query: str, heading_context: str
) -> None:
    body = client.post("/search", json={"query": query, "top_k": 20, "paths": [path]}).json()
    contexts = [r["heading_context"] for r in body["results"]]
    assert heading_context in contexts
