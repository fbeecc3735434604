"""Capture real answers of the service for docs/agents/references/examples.md (the skill's examples).

Starts the service as `make run` does (the bundled example vault, embedded Qdrant, MiniLM on onnxruntime) with
a temporary data directory on a free loopback port - or talks to a running one with `--url` - makes the
example calls over HTTP, and rewrites each block between `<!-- example: NAME -->` and `<!-- /example -->` in
examples.md with the call and the answer it really got. Times and ids change from run to run; the shape
and the content are what the service answers.

    .venv/bin/python -m scripts.agent_examples            # or: make agent-docs
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import uvicorn

from backend.config import EXAMPLE_VAULT, REPO_ROOT, load_settings
from backend.entrypoints.app import create_app

SKILL = REPO_ROOT / "docs" / "agents" / "references" / "examples.md"
LEDGER = "Finance/Money with Sreenivas.md"
FACT = {
    "key": "sreenivas-balance",
    "value": "I owe Sreenivas €79.50 (28 March 2026); pay it before the Lisbon trip on 14 May.",
    "source": LEDGER,
}

# name -> (method, path, query parameters, JSON body)
CALLS: list[tuple[str, str, str, dict[str, Any] | None, dict[str, Any] | None]] = [
    (
        "search",
        "POST",
        "/search",
        None,
        {"query": "how much do I owe Sreenivas?", "top_k": 2, "include_related": False},
    ),
    ("get_note", "GET", f"/note/{LEDGER}", {"start_line": 12, "end_line": 18}, None),
    (
        "context",
        "POST",
        "/context",
        None,
        {"query": "what did I decide about the database migration?", "max_chars": 900},
    ),
    (
        "context_messages",
        "POST",
        "/context",
        None,
        {
            "messages": [
                {"role": "user", "content": "I'm flying to Lisbon with Sreenivas in May."},
                {"role": "assistant", "content": "Nice! Anything to sort out before you go?"},
                {"role": "user", "content": "Do I still owe him money?"},
            ],
            "max_chars": 700,
        },
    ),
    ("list_notes", "GET", "/notes", {"tag": "finance", "sort": "date", "limit": 2}, None),
    ("note_links", "GET", "/note/People/Sreenivas.md/links", None, None),
    ("remember", "POST", "/memory", None, FACT),
    (
        "search_memory",
        "POST",
        "/search",
        None,
        {"query": "what do I owe Sreenivas", "top_k": 1, "include_memory": True, "include_related": False},
    ),
    ("list_memories", "GET", "/memory", None, None),
    ("forget", "DELETE", f"/memory/{FACT['key']}", None, None),
    ("status", "GET", "/index/status", None, None),
    ("error_not_found", "GET", "/note/Projects/Nope.md", None, None),
    ("error_traversal", "GET", "/note/%2e%2e/%2e%2e/etc/passwd", None, None),
]


@contextmanager
def local_service() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="kb-examples-") as data:
        settings = load_settings(vault_path=EXAMPLE_VAULT, data_dir=Path(data))
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level="warning"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
        finally:
            server.should_exit = True
            thread.join(timeout=60)
            sock.close()


def wait_until_indexed(client: httpx.Client, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            job = client.get("/index/status").json().get("job")
        except httpx.TransportError:
            job = None
        if job is not None and job["finished_at"] is not None and job["phase"] == "done":
            return
        time.sleep(0.2)
    raise SystemExit("the service did not finish indexing in time")


def curl(method: str, path: str, params: dict[str, Any] | None, body: dict[str, Any] | None) -> str:
    url = "localhost:8000" + path.replace(" ", "%20") + (f"?{urlencode(params)}" if params else "")
    if body is None:
        return f"curl -s {'-X ' + method + ' ' if method != 'GET' else ''}'{url}'"
    data = json.dumps(body, ensure_ascii=False).replace("'", "'\\''")  # inside a single-quoted shell word
    return f"curl -s {url} -H 'content-type: application/json' \\\n     -d '{data}'"


def capture(base: str) -> dict[str, str]:
    blocks: dict[str, str] = {}
    with httpx.Client(base_url=base, timeout=120) as client:
        wait_until_indexed(client)
        for name, method, path, params, body in CALLS:
            response = client.request(method, path, params=params, json=body)
            answer = json.dumps(response.json(), indent=2, ensure_ascii=False)
            status = f"# HTTP {response.status_code}\n" if response.status_code >= 300 else ""
            blocks[name] = f"```bash\n{curl(method, path, params, body)}\n```\n```json\n{status}{answer}\n```"
    return blocks


def rewrite(skill: Path, blocks: dict[str, str]) -> None:
    text = skill.read_text(encoding="utf-8")
    for name, block in blocks.items():
        start = f"<!-- example: {name} -->"
        pattern = re.compile(rf"{re.escape(start)}(?:(?!<!-- /example -->).)*<!-- /example -->", re.DOTALL)
        if not pattern.search(text):
            raise SystemExit(f"{skill} has no block for example {name!r}")
        replacement = f"{start}\n{block}\n<!-- /example -->"
        text = pattern.sub(lambda m, replacement=replacement: replacement, text)
    skill.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running service (default: start one on the example vault)")
    args = parser.parse_args()
    if args.url:
        blocks = capture(args.url.rstrip("/"))
    else:
        with local_service() as base:
            blocks = capture(base)
    rewrite(SKILL, blocks)
    print(f"wrote {len(blocks)} examples into {SKILL.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
