"""No secret of the vault leaves the service: every body of every reading endpoint over a vault full of
secrets, searched, packed into context and read line by line, holds none of them, and no secret typed as a
query finds the note that holds it. With REDACT_SECRETS off the
same requests do show them (the check can fail, and the setting works)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests.api.conftest import wait_for_job
from tests.secret_vault import MEMORY_FACT, NOTES, QUERIES, TOKENS, leaks, write_secret_vault
from tests.vault_files import write


def _client(vault: Path, data: Path, **overrides: object) -> TestClient:
    settings = load_settings(
        vault_path=vault, data_dir=data, embedding_provider="none", watch=False, **overrides
    )
    return TestClient(create_app(settings), raise_server_exceptions=False)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_secret_vault(tmp_path_factory.mktemp("secret-vault"))


@pytest.fixture(scope="module")
def client(vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with _client(vault, tmp_path_factory.mktemp("data")) as c:
        wait_for_job(c)
        assert c.post("/memory", json=MEMORY_FACT).status_code == 201
        yield c


def bodies(client: TestClient) -> Iterator[tuple[str, str]]:
    """(request, response text) for everything an agent can read."""
    for query in QUERIES:
        for mode in ("keyword", "hybrid"):
            body = {
                "query": query,
                "top_k": 50,
                "max_chunks_per_note": 50,
                "include_memory": True,
                "mode": mode,
            }
            yield f"search {query}", client.post("/search", json=body).text
        for budget in (300, 32_000):
            body = {"query": query, "max_chars": budget, "max_chunks": 50, "include_memory": True}
            yield f"context {query} {budget}", client.post("/context", json=body).text
    messages = [{"role": "user", "content": "what is the ssh key for the build box and the wifi password?"}]
    yield "context messages", client.post("/context", json={"messages": messages, "max_chars": 32_000}).text
    yield "notes", client.get("/notes").text
    yield "memory", client.get("/memory").text
    for path, text in NOTES.items():
        url = f"/note/{quote(path)}"
        yield url, client.get(url).text
        yield f"{url}/links", client.get(f"{url}/links").text
        total = len(text.splitlines())
        for size in (1, 2, 5):  # every window: a range can start or end anywhere in a key block
            for start in range(1, total + 1):
                window = client.get(url, params={"start_line": start, "end_line": start + size - 1})
                yield f"{url} {start}+{size}", window.text


def test_the_key_is_split_across_chunks(client: TestClient) -> None:
    body = client.post(
        "/search",
        json={
            "query": "ssh deploy key",
            "paths": ["Infra/Servers.md"],
            "top_k": 50,
            "max_chunks_per_note": 50,
        },
    ).json()
    assert len(body["results"]) >= 3  # so some chunks hold key lines without BEGIN or END


def test_no_secret_leaves_through_any_endpoint(client: TestClient) -> None:
    checked = 0
    for request, text in bodies(client):
        assert leaks(text) == [], request
        checked += 1
    assert checked > 500


def _shifted(run: str) -> str:
    return "".join(
        str((int(c) + 1) % 10) if c.isdigit() else chr((ord(c.lower()) - 96) % 26 + 97) if c.isalpha() else c
        for c in run
    )


def _guessed(token: str) -> str:
    """A wrong guess of the same shape: its format's words kept ("github_pat_", "sk-live-"), every random
    run of 8 or more characters shifted (digits up by one, letters to the next); in a short one made of
    words ("Lantern-Fjord-42"), its digits, else its last word ("correct-horse-battery")."""
    for run in (r"[A-Za-z0-9]{8,}", r"[0-9]", r"[A-Za-z0-9]+$"):  # else its last word
        guess = re.sub(run, lambda m: _shifted(m.group(0)), token)
        if guess != token:
            return guess
    raise AssertionError(f"no guess of {token!r}")


def test_a_secret_typed_as_a_query_is_not_confirmed(client: TestClient) -> None:
    # shown redacted, a secret must not be findable either: a right guess finds what a wrong one finds
    # (the words of its label, "GitHub PAT"), never more
    def found(query: str) -> list[tuple[str, int, float]]:
        results = client.post("/search", json={"query": query, "top_k": 10}).json()["results"]
        return [(r["note_path"], r["start_line"], r["confidence"]) for r in results]

    for name, token in TOKENS.items():
        assert _guessed(token) != token
        assert found(token) == found(_guessed(token)), name


def test_redacted_text_says_what_was_there(client: TestClient) -> None:
    wallet = client.get(f"/note/{quote('Personal/Wallet.md')}").json()
    assert "**Password:** [REDACTED:password]" in wallet["content"]
    assert "Visa [REDACTED:card-number], expires 12/29" in wallet["content"]
    assert wallet["redactions"] >= 7
    servers = client.get(f"/note/{quote('Infra/Servers.md')}").json()
    assert "[REDACTED:private-key]" in servers["content"]
    assert "Rotate the key every year" in servers["content"]
    # the key block keeps its lines, so a window after it still shows the lines asked for
    last = servers["total_lines"]
    tail = client.get(f"/note/{quote('Infra/Servers.md')}", params={"start_line": last}).json()
    assert tail["content"] == NOTES["Infra/Servers.md"].splitlines()[-1]


def test_with_redaction_off_the_secrets_are_shown(vault: Path, tmp_path: Path) -> None:
    with _client(vault, tmp_path / "open", redact_secrets=False) as c:
        wait_for_job(c)
        note = c.get(f"/note/{quote('Dev/Tokens.md')}").text
        assert TOKENS["github"] in note
        assert TOKENS["openai"] in note
        found = c.post("/search", json={"query": "tokens github openai", "top_k": 50}).text
        assert leaks(found)


def test_a_window_inside_a_key_block_is_redacted_even_when_its_lines_look_harmless(tmp_path: Path) -> None:
    # Key lines without digits escape the lone-word rule; only the note around the window shows they are key
    # material, so a note read redacts the whole note before it cuts the lines asked for.
    line = "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIjKlMnOpQrStUvWxYz+/AbCdEfGhIjKl"
    key = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *[line] * 6, "-----END RSA PRIVATE KEY-----"])
    write(tmp_path / "v", "Key.md", f"# Key\n\n{key}\n\nAfter.\n")
    with _client(tmp_path / "v", tmp_path / "d") as c:
        wait_for_job(c)
        for number in range(1, 13):
            window = c.get("/note/Key.md", params={"start_line": number, "end_line": number}).json()
            assert line not in window["content"], number
        assert c.get("/note/Key.md", params={"start_line": 12}).json()["content"] == "After."
