"""The lines a search names are the lines GET /note reads back, however the file ends its lines: what an
agent's citation (`memory_get`) depends on. A map of content kept by a Dataview query, found by its name, is
cited by its whole lines and never quoted by the recall (its name says nothing). Through the HTTP API on
real files, by keyword alone and with the default model (slow)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import vault_client

PARAGRAPHS = [
    "# Boiler service",
    "",
    "Engineer came on Tuesday and replaced the pressure relief valve.",
    "",
    "The flue check passed and the next service is due in October, reminder set.",
    "",
    "Paid the invoice of eighty five pounds by bank transfer the same evening.",
]
BOILERS = {
    "Home/Boiler LF.md": "\n".join(PARAGRAPHS) + "\n",
    "Home/Boiler CR.md": "\r".join(PARAGRAPHS) + "\r",  # an old Mac file
    "Home/Boiler CRCRLF.md": "\r\r\n".join(PARAGRAPHS) + "\r\r\n",  # a conversion that doubled them
    # a carriage return pasted into one line of an ordinary file
    "Home/Boiler stray.md": "\n".join(
        PARAGRAPHS[:2] + ["Engineer came on Tuesday.\rValve replaced."] + PARAGRAPHS[3:]
    )
    + "\n",
}

MOC = "MOCs/Active projects.md"
# a one-line note named by its own words, as a note per paragraph is: its text is its name, and it is quoted
NAMED_BY_ITS_WORDS = "Boiler pressure drops below one bar every winter.md"
FILES = {
    **BOILERS,
    MOC: "---\ntags: [moc]\n---\n# Active projects\n\n```dataview\nLIST FROM #project\n```\n",
    NAMED_BY_ITS_WORDS: "Boiler pressure drops below one bar every winter\n",
}

client = vault_client(FILES)


@pytest.mark.parametrize("path", sorted(BOILERS))
def test_the_lines_a_search_names_read_back_the_text_it_found(client: TestClient, path: str) -> None:
    hits = client.post("/search", json={"query": "invoice bank transfer", "top_k": 10}).json()["results"]
    hit = next(h for h in hits if h["note_path"] == path)
    read = client.get(f"/note/{path}", params={"start_line": hit["start_line"], "end_line": hit["end_line"]})

    assert read.status_code == 200, read.text
    window = read.json()
    lines = window["content"].split("\n")  # as the service numbers them
    assert len(lines) == hit["end_line"] - hit["start_line"] + 1
    assert lines[-1] == "Paid the invoice of eighty five pounds by bank transfer the same evening."
    assert lines[0] == "# Boiler service"


def test_a_note_found_by_its_name_alone_is_cited_whole_and_never_quoted(client: TestClient) -> None:
    hits = client.post("/search", json={"query": "active projects", "top_k": 10}).json()["results"]
    hit = next(h for h in hits if h["note_path"] == MOC)
    assert (hit["start_line"], hit["end_line"]) == (1, 8)  # the note's lines: none holds its name alone
    read = client.get(f"/note/{MOC}", params={"start_line": 1, "end_line": 8}).json()
    assert read["content"] == FILES[MOC].rstrip("\n")

    block = client.post("/context", json={"query": "active projects", "explain": True}).json()
    assert MOC not in {s["note_path"] for s in block["sources"]}
    fates = {c["note_path"]: c["reason"] for c in block["explain"]["considered"]}
    assert fates[MOC] == "holds only its note's name: nothing of it to quote"


def test_a_note_whose_text_is_its_name_is_quoted(client: TestClient) -> None:
    block = client.post(
        "/context", json={"query": "boiler pressure drops every winter", "explain": True}
    ).json()
    assert NAMED_BY_ITS_WORDS in {s["note_path"] for s in block["sources"]}
