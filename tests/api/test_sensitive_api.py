"""Sensitive categories over HTTP on the example vault: results, notes, listings and context say which
categories they touch (tags, words, section names), from configurable categories."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from backend.setting_values import SensitiveCategorySetting
from tests.api.conftest import AppFactory, wait_for_job


@pytest.fixture
def client(indexed_client: AppFactory) -> TestClient:
    return indexed_client()


def categories_by_path(body: dict) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for result in body["results"]:
        found.setdefault(result["note_path"], set()).update(result["sensitive_categories"])
    return found


def test_results_are_flagged_by_the_categories_they_touch(client: TestClient) -> None:
    money = client.post("/search", json={"query": "how much do I owe Sreenivas?", "top_k": 5}).json()
    assert money["sensitive_detected"] is True
    assert "finance" in categories_by_path(money)["Finance/Money with Sreenivas.md"]
    knee = client.post("/search", json={"query": "knee physio exercises", "top_k": 3}).json()
    assert "health" in categories_by_path(knee)["Health/Knee physio plan.md"]  # by its #health tag
    # "therapy continues privately" in the budget: finance by tag, health by word
    budget = client.post(
        "/search", json={"query": "therapy session cost", "paths": ["Finance/Monthly budget.md"]}
    )
    flagged = categories_by_path(budget.json())["Finance/Monthly budget.md"]
    assert {"finance", "health"} <= flagged
    rasam = client.post("/search", json={"query": "tomato rasam recipe", "top_k": 1}).json()
    assert rasam["results"][0]["sensitive_categories"] == []
    assert rasam["sensitive_detected"] is False


def test_notes_and_listings_are_flagged(client: TestClient) -> None:
    note = client.get(f"/note/{quote('Health/Knee physio plan.md')}").json()
    assert "health" in note["sensitive_categories"]
    recipe = client.get(f"/note/{quote('Recipes/Tomato rasam.md')}").json()
    assert recipe["sensitive_categories"] == []
    listed = {
        n["note_path"]: n["sensitive_categories"]
        for n in client.get("/notes", params={"limit": 500}).json()["notes"]
    }
    assert "finance" in listed["Finance/Money with Sreenivas.md"]
    assert listed["Recipes/Tomato rasam.md"] == []


def test_categories_are_configurable(make_client: AppFactory) -> None:
    travel = {"travel": SensitiveCategorySetting(words=["Lisbon"], headings=["Flights"])}
    client = make_client(sensitive_categories=travel)
    wait_for_job(client)
    body = client.post("/search", json={"query": "Lisbon trip flights", "top_k": 5}).json()
    assert body["sensitive_detected"] is True
    assert all(set(r["sensitive_categories"]) <= {"travel"} for r in body["results"])
    money = client.post("/search", json={"query": "how much do I owe Sreenivas?", "top_k": 3}).json()
    assert all("finance" not in r["sensitive_categories"] for r in money["results"])


def test_flagging_can_be_turned_off(make_client: AppFactory) -> None:
    client = make_client(sensitive_categories={})
    wait_for_job(client)
    body = client.post("/search", json={"query": "how much do I owe Sreenivas?", "top_k": 5}).json()
    assert body["sensitive_detected"] is False
    assert all(r["sensitive_categories"] == [] for r in body["results"])
