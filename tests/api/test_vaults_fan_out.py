"""How a request over several vaults reaches them (issue 46, point 8): vaults whose stores run in this
process are asked in turn in one trip to the thread pool (the embedded store holds the interpreter while
it searches, so threads would only take turns at a higher price), vaults on a Qdrant server at once (their
waits on the network overlap). Either way every vault answers, and a failing one is named missing."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from backend.api.vault_answers import fan_out
from backend.domain.errors import IndexUnavailableError
from backend.vault_set import Library


def _library(root: Path, **urls: str | None) -> Library:
    """Vaults of folders of their own under `root`, each served by a store in this process (url None) or
    on the server at its url; their work is the test's."""
    services: dict[str, Any] = {}
    for name, url in urls.items():
        (root / name).mkdir()
        services[name] = SimpleNamespace(
            name=name, settings=SimpleNamespace(qdrant_url=url, vault_path=root / name)
        )
    return Library(services)


def test_vaults_served_in_process_are_asked_in_turn_in_one_thread(tmp_path: Path) -> None:
    threads: dict[str, int] = {}

    def work(services: Any) -> str:
        threads[services.name] = threading.get_ident()
        return services.name

    answered, missing = asyncio.run(fan_out(_library(tmp_path, work=None, home=None), ["work", "home"], work))
    assert answered == [("work", "work"), ("home", "home")]
    assert missing == []
    assert threads["work"] == threads["home"] != threading.get_ident()


def test_vaults_on_a_server_are_asked_at_once(tmp_path: Path) -> None:
    # each waits for the other: asked one after another, the first would wait in vain
    both = threading.Barrier(2, timeout=30)

    def work(services: Any) -> str:
        both.wait()
        return services.name

    library = _library(tmp_path, work="http://qdrant-a:6333", home="http://qdrant-b:6333")
    answered, _ = asyncio.run(fan_out(library, ["work", "home"], work))
    assert answered == [("work", "work"), ("home", "home")]


@pytest.mark.parametrize("url", [None, "http://qdrant:6333"])
def test_a_vault_that_fails_is_missing_while_the_other_answers(tmp_path: Path, url: str | None) -> None:
    def work(services: Any) -> str:
        if services.name == "work":
            raise IndexUnavailableError("the index is being rebuilt")
        return services.name

    answered, missing = asyncio.run(fan_out(_library(tmp_path, work=url, home=url), ["work", "home"], work))
    assert answered == [("home", "home")]
    assert [(m.vault, m.error_code) for m in missing] == [("work", "INDEX_UNAVAILABLE")]
