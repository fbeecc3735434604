from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import EXAMPLE_VAULT, Settings, load_settings
from backend.domain.recall.recall_budget import PLUGIN_RECALL
from backend.entrypoints.app import create_app

AppFactory = Callable[..., TestClient]


def wait_for_job(client: TestClient, timeout: float = 120.0) -> dict:
    """Poll /index/status until the current job has finished (an event we can see, not a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        status = client.get("/index/status").json()
        job = status.get("job")
        if job is None or job["finished_at"] is not None:
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"job did not finish in {timeout}s: {job}")
        time.sleep(0.05)


def fitted_gate(client: TestClient, timeout: float = 120.0) -> dict:
    """/index/status's recall_calibration once a gate is fitted (in the background, after the first index of
    a model without shipped weights): an event we can see."""
    deadline = time.monotonic() + timeout
    while True:
        gate = client.get("/index/status").json()["recall_calibration"]
        if gate["source"] == "fitted":
            return dict(gate)
        if time.monotonic() > deadline:
            raise AssertionError(f"no recall gate fitted in {timeout}s: {gate}")
        time.sleep(0.05)


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[AppFactory]:
    clients: list[TestClient] = []

    def factory(**overrides: object) -> TestClient:
        values: dict[str, object] = {
            "vault_path": EXAMPLE_VAULT,
            "data_dir": tmp_path / "data",
            "embedding_provider": "none",
            "watch": False,  # the watcher has its own tests (test_live_index_api.py)
        }
        values.update(overrides)
        settings: Settings = load_settings(**values)
        client = TestClient(create_app(settings), raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return client

    yield factory
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def indexed_client(make_client: AppFactory) -> AppFactory:
    """`make_client`, giving the client once the index's first job (started with the app) has finished."""

    def factory(**overrides: object) -> TestClient:
        client = make_client(**overrides)
        wait_for_job(client)
        return client

    return factory


def recall_block(client: TestClient, question: str, **extra: object) -> dict:
    """/context as the OpenClaw plugin asks it by its defaults."""
    body = {
        "messages": [{"role": "user", "content": question}],
        "max_chars": PLUGIN_RECALL.max_chars,
        "max_chunks": PLUGIN_RECALL.max_entries,
        "min_confidence": PLUGIN_RECALL.floor,
        "quoted": True,
        **extra,
    }
    response = client.post("/context", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def quoted_and_fates(client: TestClient, question: str, **extra: object) -> tuple[list[str], dict[str, str]]:
    """The notes the block quotes and what became of every candidate (by note), asked as the plugin's recall
    asks (a floor, three entries) with the explain data."""
    body = {"query": question, "max_chars": 1500, "max_chunks": 3, "min_confidence": PLUGIN_RECALL.floor}
    response = client.post("/context", json={**body, "explain": True, **extra})
    assert response.status_code == 200, response.text
    answer = response.json()
    fates = {c["note_path"]: c["reason"] for c in answer["explain"]["considered"]}
    return [source["note_path"] for source in answer["sources"]], fates


def recall_preview(client: TestClient, question: str) -> dict[str, str]:
    """What /search's explain data says the recall would make of each hit (the page's recall preview)."""
    response = client.post("/search", json={"query": question, "top_k": 10, "explain": True})
    assert response.status_code == 200, response.text
    return {hit["note_path"]: hit["why"]["recall"]["reason"] for hit in response.json()["results"]}


# a service by keyword alone (the weights every uncalibrated model uses) and with the default model (slow)
BY_KEYWORD_AND_MODEL = ["keyword", pytest.param("minilm", marks=pytest.mark.slow)]


def vault_client(files: Mapping[str, str], **settings: object) -> Callable[..., Iterator[TestClient]]:
    """A module's `client` fixture: a service over a vault of `files`, by keyword alone and with the default
    model (`BY_KEYWORD_AND_MODEL`), one index per module and model."""

    @pytest.fixture(scope="module", params=BY_KEYWORD_AND_MODEL)
    def client(
        request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[TestClient]:
        with served_vault(tmp_path_factory.mktemp(request.param), files, request.param, **settings) as client:
            yield client

    return client


@contextmanager
def served_vault(
    root: Path, files: Mapping[str, str], model: str, **settings: object
) -> Iterator[TestClient]:
    """A service over a vault of real `files` (path -> text) under `root`, by keyword alone (`model`
    "keyword") or with the default model, once its first index is done."""
    for path, text in files.items():
        (root / "vault" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "vault" / path).write_text(text, encoding="utf-8")
    provider = {"embedding_provider": "none"} if model == "keyword" else {}
    config = load_settings(
        vault_path=root / "vault", data_dir=root / "data", watch=False, **provider, **settings
    )
    with TestClient(create_app(config), raise_server_exceptions=False) as client:
        assert wait_for_job(client, timeout=600)["job"]["phase"] == "done"
        yield client
