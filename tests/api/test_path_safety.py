"""Every path a client sends stays inside the vault, on every entry point, over a real socket.

A canary file with a unique token sits OUTSIDE the vault — beside it (in its parent folder), in a sibling
folder whose name starts like the vault's, two levels up, and in /tmp — and symlinks inside the vault point
at it (a file, a folder, the parent folder) and at an in-vault note and folder. A long list of vectors (`..`
in every position, percent-, double- and triple-encoded, overlong UTF-8, absolute paths, backslashes, drive
letters, UNC paths, NUL bytes, Windows device names, fullwidth and NFKC look-alikes, NFC/NFD, bidi
overrides, very long paths, the symlinks) goes to every entry point that takes a path: GET /note/{path},
GET /note/{path}/links, GET /notes?folder=, the `paths` and `folders` filters of POST /search and POST
/context, the `source` of POST /memory, DELETE /memory/{key}, and the MCP tools (get_note, note_links,
search, build_context, remember).

The app runs under uvicorn and is called over a real socket: JSON bodies through httpx, and raw request
lines for what a client library would rewrite first (httpx collapses `/note/../../x` to `/x` before sending).
Each answer must be 400 SECURITY_VIOLATION or NOTE_NOT_FOUND / an empty result — refusal vectors exactly
400 — and no answer may hold the token, /etc/passwd's first line, or a 5xx.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest

from backend.api.errors import STATUS_BY_CODE
from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests import live_server
from tests.path_vectors import (
    CANARY_TEXT,
    NFD_NAME,
    PASSWD_LINE,
    QUERY,
    TOKEN,
    Site,
    Vector,
    build_site,
    vectors,
)

# -- the entry points -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: int
    code: str | None  # the envelope's error_code
    text: str  # everything the client got: headers and body
    paths: list[str]  # note paths in a successful answer


def _url(value: str) -> str:
    # percent-encode so the server decodes exactly `value` (dots too: httpx would collapse `..` segments)
    return quote(value, safe="/").replace(".", "%2E")


def _http(response: httpx.Response) -> Outcome:
    text = f"{response.headers}\n{response.text}"
    try:
        body = response.json()
    except ValueError:
        return Outcome(response.status_code, None, text, [])
    code = body.get("error_code") if isinstance(body, dict) else None
    return Outcome(response.status_code, code, text, _paths(body) if response.status_code < 300 else [])


def _paths(body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []
    found = [body["note_path"]] if isinstance(body.get("note_path"), str) else []
    fact = body.get("fact")  # a fact kept names the note it was tied to
    found += [fact["source"]] if isinstance(fact, dict) and isinstance(fact.get("source"), str) else []
    for listed in ("results", "notes", "sources", "related_notes", "outlinks", "backlinks"):
        found += [item["note_path"] for item in body.get(listed) or [] if item.get("note_path")]
    return found


def _mcp(client: httpx.Client, tool: str, arguments: dict[str, Any]) -> Outcome:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    response = client.post("/mcp", json=request, headers={"accept": "application/json, text/event-stream"})
    text = f"{response.headers}\n{response.text}"
    assert response.status_code == 200, text
    result = response.json()["result"]
    content = result.get("structuredContent") or {}
    if result.get("isError"):
        code = content.get("error_code")
        return Outcome(STATUS_BY_CODE.get(code, 500) if code else 500, code, text, [])
    return Outcome(200, None, text, _paths(content))


def _post(client: httpx.Client, path: str, body: dict[str, Any]) -> Outcome:
    return _http(client.post(path, json=body))


Call = Callable[[httpx.Client, str], Outcome]
SEARCH = {"query": QUERY, "top_k": 50, "include_memory": True}
CONTEXT = {"query": QUERY, "max_chars": 32_000, "include_memory": True}

# name -> (how to send a vector, "file" or "folder" or "key")
ENTRY_POINTS: dict[str, tuple[Call, str]] = {
    "GET /note/{path}": (lambda c, v: _http(c.get("/note/" + _url(v))), "file"),
    "GET /note/{path}/links": (lambda c, v: _http(c.get("/note/" + _url(v) + "/links")), "file"),
    "GET /notes?folder=": (lambda c, v: _http(c.get("/notes", params={"folder": v})), "folder"),
    "POST /search paths": (lambda c, v: _post(c, "/search", {**SEARCH, "paths": [v]}), "file"),
    "POST /search folders": (lambda c, v: _post(c, "/search", {**SEARCH, "folders": [v]}), "folder"),
    "POST /context paths": (lambda c, v: _post(c, "/context", {**CONTEXT, "paths": [v]}), "file"),
    "POST /context folders": (lambda c, v: _post(c, "/context", {**CONTEXT, "folders": [v]}), "folder"),
    "POST /memory source": (
        lambda c, v: _post(c, "/memory", {"key": f"k{hash(v)}", "value": "a fact", "source": v}),
        "file",
    ),
    "DELETE /memory/{key}": (lambda c, v: _http(c.delete("/memory/" + _url(v))), "key"),
    "MCP get_note": (lambda c, v: _mcp(c, "get_note", {"path": v}), "file"),
    "MCP get_note lines": (
        lambda c, v: _mcp(c, "get_note", {"path": v, "start_line": 1, "end_line": 3}),
        "file",
    ),
    "MCP note_links": (lambda c, v: _mcp(c, "note_links", {"path": v}), "file"),
    "MCP search paths": (lambda c, v: _mcp(c, "search", {"query": QUERY, "paths": [v]}), "file"),
    "MCP search folders": (lambda c, v: _mcp(c, "search", {"query": QUERY, "folders": [v]}), "folder"),
    "MCP build_context paths": (
        lambda c, v: _mcp(c, "build_context", {"query": QUERY, "paths": [v]}),
        "file",
    ),
    "MCP build_context folders": (
        lambda c, v: _mcp(c, "build_context", {"query": QUERY, "folders": [v]}),
        "folder",
    ),
    "MCP remember source": (
        lambda c, v: _mcp(c, "remember", {"key": f"m{hash(v)}", "value": "a fact", "source": v}),
        "file",
    ),
}


def _named(asked: str, path: str) -> bool:
    return path.casefold() in (asked.casefold(), f"{asked.casefold()}.md")


def judge(vector: Vector, how: str, outcome: Outcome, notes: set[str]) -> str | None:
    """What is wrong with `outcome` (None when nothing is)."""
    if TOKEN in outcome.text:
        return "LEAK: the canary token is in the answer"
    if PASSWD_LINE in outcome.text:
        return "LEAK: /etc/passwd is in the answer"
    if outcome.status >= 500:
        return f"server error {outcome.status}"
    if not set(outcome.paths) <= notes:
        return f"answered with paths that are not vault notes: {sorted(set(outcome.paths) - notes)}"
    if how == "key":  # a fact's key is no path: refused, not found or redirected (a trailing /), never a read
        return None if outcome.status in (307, 400, 404, 422) else f"status {outcome.status}"
    refused = outcome.status == 400 and outcome.code == "SECURITY_VIOLATION"
    if how == "folder":  # folders filter indexed notes: refused, or nothing (or vault notes) found
        return None if refused or outcome.status == 200 else f"status {outcome.status} {outcome.code}"
    if vector.kind == "refuse":
        return None if refused else f"not refused: {outcome.status} {outcome.code}"
    if vector.kind == "absent":
        if refused or outcome.code == "NOTE_NOT_FOUND" or (outcome.status == 200 and not outcome.paths):
            return None
        if outcome.status in (200, 201) and all(_named(vector.value, path) for path in outcome.paths):
            return (
                None  # a note named forgives case and `.md` (`CON` is the vault's `Con.md`, read or tied to)
            )
        return f"expected refused or not found: {outcome.status} {outcome.code} {outcome.paths}"
    return None  # inside: an in-vault note may be read


# -- the service ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("path-safety")
    built = build_site(root)
    settings = load_settings(
        vault_path=built.vault, data_dir=root / "data", embedding_provider="none", watch=False
    )
    try:
        with live_server.serving(create_app(settings)) as base:
            live_server.wait_until(lambda: live_server.indexed(base), "the first indexing")
            built.base = base
            listed = httpx.get(f"{base}/notes", params={"limit": 500}).json()["notes"]
            built.notes = {n["note_path"] for n in listed}
            # the note was indexed as a file; now it leads out of the vault (no watcher: the index keeps it)
            (built.vault / "Swap.md").unlink()
            os.symlink(built.home / "canary.md", built.vault / "Swap.md")
            yield built
    finally:
        shutil.rmtree(built.tmp_canary, ignore_errors=True)


TRIED: Counter[str] = Counter()


def test_the_site_is_what_the_vectors_assume(site: Site) -> None:
    # the symlinks were skipped (out of the vault, or inside it: never followed), the decomposed name is
    # listed composed (NFC), and the canaries are where the vectors point
    nfc_name = unicodedata.normalize("NFC", NFD_NAME)
    assert site.notes == {"Home.md", "Projects/Plan.md", "Con.md", nfc_name, "Swap.md"}
    assert (site.vault / "../canary.md").read_text() == CANARY_TEXT
    assert (site.vault / "Leak.md").read_text() == CANARY_TEXT


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_no_vector_leaves_the_vault(site: Site, entry: str) -> None:
    call, how = ENTRY_POINTS[entry]
    problems = []
    with httpx.Client(base_url=site.base, timeout=60) as client:
        for vector in vectors(site):
            outcome = call(client, vector.value)
            problem = judge(vector, how, outcome, site.notes)
            if problem:
                problems.append(f"{vector.value[:80]!r} ({vector.kind}): {problem}")
            TRIED[entry] += 1
    assert problems == [], f"{entry}: {len(problems)} problems\n" + "\n".join(problems)


def test_a_note_that_became_a_symlink_out_is_refused_when_read(site: Site) -> None:
    answer = httpx.get(f"{site.base}/note/Swap.md")
    assert answer.status_code == 400
    assert answer.json()["error_code"] == "SECURITY_VIOLATION"
    assert TOKEN not in answer.text


def test_in_vault_links_are_not_followed_and_any_unicode_form_reads_the_note(site: Site) -> None:
    alias = httpx.get(f"{site.base}/note/Alias.md").json()
    assert alias["error_code"] == "NOTE_NOT_FOUND"
    for form in ("NFD", "NFC"):
        answer = httpx.get(f"{site.base}/note/{quote(unicodedata.normalize(form, NFD_NAME))}")
        assert answer.status_code == 200
        assert answer.json()["note_path"] == unicodedata.normalize("NFC", NFD_NAME)
    con = httpx.get(f"{site.base}/note/Con.md")
    assert con.json()["content"].startswith("# Con")


# -- raw request lines: what a client library would rewrite before sending --------------------------

RAW_TARGETS = [
    "/note/../../canary.md",
    "/note/../../../../../../../../etc/passwd",
    "/note/Projects/../../canary.md",
    "/note/./../canary.md",
    "/note/../canary.md/links",
    "/note/..%2f..%2fcanary.md",
    "/note/%2e%2e/%2e%2e/canary.md",
    "/note/%2e%2e%2f%2e%2e%2fcanary.md",
    "/note/%252e%252e%252fcanary.md",
    "/note/%c0%ae%c0%ae/canary.md",
    "/note/..\\..\\canary.md",
    "/note/..%5c..%5ccanary.md",
    "/note//etc/passwd",
    "/note/%2fetc%2fpasswd",
    "/note/C:%5cWindows%5cwin.ini",
    "/note/c:/windows/win.ini",
    "/note/%5c%5cserver%5cshare%5ccanary.md",
    "/note///server/share/canary.md",
    "/note/Home.md%00.png",
    "/note/%00../canary.md",
    "/note/%ef%bc%8e%ef%bc%8e%ef%bc%8fcanary.md",
    "/note/Leak.md",
    "/note/Outside/canary.md",
    "/note/Parent/canary.md",
    "/note/Swap.md",
    "/note/CON",
    "/notes?folder=../..",
    "/notes?folder=%2e%2e%2f%2e%2e",
    "/notes?folder=//server/share",
    "/notes?folder=Outside",
    "/../../canary.md",
    "/..%2f..%2fcanary.md",
    "/note/Home.md/../../../canary.md",
    "/note/%2E%2E/%2E%2E/etc/passwd/links",
]


def raw_get(base: str, target: str) -> tuple[int, str]:
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: {url.netloc}\r\nConnection: close\r\n\r\n".encode("latin-1")
        )
        answer = b""
        while data := sock.recv(65536):
            answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), answer.decode("latin-1")


def test_raw_request_lines_never_leave_the_vault(site: Site) -> None:
    problems = []
    for target in RAW_TARGETS:
        status, answer = raw_get(site.base, target)
        TRIED["raw request lines"] += 1
        if TOKEN in answer or PASSWD_LINE in answer:
            problems.append(f"{target}: LEAK")
        elif status >= 500:
            problems.append(f"{target}: {status}")
        elif status not in (200, 400, 404):
            problems.append(f"{target}: status {status}")
        elif status == 200 and not target.startswith("/notes?"):
            read = json.loads(answer.partition("\r\n\r\n")[2]).get("note_path", "")
            if not (read in site.notes and _named(target.removeprefix("/note/"), read)):
                problems.append(f"{target}: 200")  # only a vault note named so (any case, no .md) may answer
    assert problems == [], "\n".join(problems)


def test_dot_segments_reach_the_route_unchanged_and_are_refused_there(site: Site) -> None:
    # uvicorn does not normalise the path: the route itself sees the traversal and refuses it by name
    status, answer = raw_get(site.base, "/note/../../canary.md")
    assert status == 400
    assert json.loads(answer.partition("\r\n\r\n")[2])["detail"] == "path leaves the vault: '../../canary.md'"
    # httpx would have sent GET /canary.md instead: the route would never have seen it
    assert httpx.URL(f"{site.base}/note/../../canary.md").raw_path == b"/canary.md"


def test_every_entry_point_was_tried_with_every_vector(site: Site) -> None:
    count = len(vectors(site))
    assert count >= 140
    for entry in ENTRY_POINTS:
        assert TRIED[entry] == count, entry
    assert TRIED["raw request lines"] == len(RAW_TARGETS)
    summary = ", ".join(f"{name}: {n}" for name, n in TRIED.items())
    print(f"\npath vectors tried per entry point ({sum(TRIED.values())} requests): {summary}")
