"""The docs are true and short (issue 30): the README is a page a newcomer reads in five minutes and points at
docs/ for the rest; the settings table is the settings class; every route is listed; the fusion and every
mode's score scale are described as the search computes them, in the README, docs/api.md and the OpenAPI
text."""

from __future__ import annotations

import argparse
import re
import secrets
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.routing import iter_route_contexts
from starlette.routing import Mount, Route

from backend.api.schemas import SCORE_SCALES
from backend.config import EXAMPLE_VAULT, REPO_ROOT, Settings, load_settings
from backend.domain.recall.context_packing import quote_overhead
from backend.entrypoints.app import create_app
from scripts.settings_doc import SETTINGS_DOC, render
from tests.application.fakes import FakeEmbedder
from tests.harness import Harness

README = REPO_ROOT / "README.md"
API_DOC = REPO_ROOT / "docs" / "api.md"
SECTIONS = [
    "## Two commands",
    "## Look inside",
    "## Try it",
    "## Your own vault",
    "## Languages",
    "## Connect OpenClaw",
    "## The command line",
    "## The code",
    "## Where the rest lives",
]
DEFAULTS = Settings.model_fields


def test_the_readme_is_short_and_in_the_order_a_newcomer_needs() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 260, f"README has {len(lines)} lines: move the long material into docs/"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == SECTIONS


def test_the_layout_drawn_is_the_code() -> None:
    """The trees in the README and docs/development.md name every folder of backend/ and of its
    infrastructure, and every module at backend/'s root (tests/test_architecture.py keeps that list short)."""
    backend = REPO_ROOT / "backend"
    readme = README.read_text(encoding="utf-8").split("## The code", 1)[1].split("\n## ", 1)[0]
    layout = (REPO_ROOT / "docs" / "development.md").read_text(encoding="utf-8").split("## Layout", 1)[1]
    folders = [
        p
        for p in [*backend.iterdir(), *(backend / "infrastructure").iterdir()]
        if (p / "__init__.py").exists()
    ]
    for tree in (readme, layout):
        assert [p.name for p in folders if f"{p.name}/" not in tree] == []
    assert [p.name for p in backend.glob("*.py") if p.name != "__init__.py" and p.name not in layout] == []


@pytest.mark.parametrize("page", [README, *sorted((REPO_ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if not re.match(r"[a-z]+://", target):
            assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"


def test_the_settings_table_is_the_settings_class() -> None:
    assert SETTINGS_DOC.read_text(encoding="utf-8") == render(), "run python -m scripts.settings_doc"
    table = SETTINGS_DOC.read_text(encoding="utf-8")
    for name, field in DEFAULTS.items():
        assert f"| `{name.upper()}` |" in table
        assert (field.description or "").replace("|", "\\|") in table


def _routes() -> set[str]:
    """`METHOD /path` of every route the app serves (API routes from the schema, the rest from the app)."""
    app = create_app(load_settings(embedding_provider="none"))
    found = {f"{method.upper()} {path}" for path, item in app.openapi()["paths"].items() for method in item}
    # every route, those of included routers left out of the schema too (the look-inside page)
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, Mount):
            found.add(f"GET {context.path}/")
        elif isinstance(route, Route):
            methods = (context.methods or {"GET", "POST"}) - {"HEAD"}  # /mcp: GET (SSE) and POST (streamable)
            found |= {f"{method} {context.path_format}" for method in methods}
    return found


def _shape(route: str) -> str:
    """`GET /note/{path}` and `GET /note/{note_path}` are one route; `GET /docs-assets/...` is its prefix."""
    return re.sub(r"\{[^}]*\}", "{}", route).removesuffix("...")


def test_every_command_is_in_the_cli_doc() -> None:
    """docs/cli.md's list of commands is the parser's (`calibrate` was missing from it)."""
    from backend.entrypoints.cli.main import _parser

    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    listed = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("## Which vault")[0]
    assert not [c for c in commands if not re.search(rf"python -m backend (?:[a-z]+ \| )*{c}\b", listed)]


@pytest.mark.parametrize("page", [README, API_DOC], ids=lambda p: p.name)
def test_every_route_is_listed(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    listed = {_shape(span) for span in re.findall(r"`([A-Z]+ /[^`]*)`", text)}
    listed |= {f"GET {span}" for span in re.findall(r"`(/docs-assets/)", text)}
    missing = {route for route in _routes() if _shape(route) not in listed}
    assert not missing, f"{page.name} does not list {sorted(missing)}"


def test_the_quoted_fence_is_described_at_its_cost() -> None:
    """What docs/api.md says a quoted /context block's fence takes is quote_overhead's: with and without
    citations, and a vault's name and one more where the head names the block's vault."""
    nonce = secrets.token_hex(8)  # the length a block's fence has (application/recall/entries.py)
    cited, uncited = quote_overhead(nonce), quote_overhead(nonce, cite=False)
    row = next(
        line
        for line in API_DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `POST /context`") and "fence alone" in line
    )
    said = re.search(
        r"fence alone takes (\d+) characters, (\d+) with `cite: false`, and the vault's name and one more",
        row,
    )
    assert said, row
    assert (int(said[1]), int(said[2])) == (cited, uncited)
    assert quote_overhead(nonce, vault="work") == cited + len("work") + 1
    assert quote_overhead(nonce, vault="work", cite=False) == uncited + len("work") + 1


def test_fusion_and_score_scales_are_described_as_configured() -> None:
    low, high = DEFAULTS["fusion_dense_low"].default, DEFAULTS["fusion_dense_high"].default
    dense, keyword = DEFAULTS["fusion_weight_dense"].default, DEFAULTS["fusion_weight_keyword"].default
    assert DEFAULTS["fusion"].default == "adaptive"
    search_text = create_app(load_settings(embedding_provider="none")).openapi()["paths"]["/search"]["post"]
    readme, api = README.read_text(encoding="utf-8"), API_DOC.read_text(encoding="utf-8")
    for text in (readme, api, search_text["description"]):
        assert "adaptive fusion" in text
        assert f"{low} to {high}" in text
        assert "0 to 1" in text
        assert "confidence" in text
    for text in (readme, api, SCORE_SCALES):
        assert f"at most {high}" in text  # a chunk no keyword matches
        assert f"{dense} dense" in text or f"{dense} x dense" in text  # FUSION=score, the option
        assert f"{keyword} keyword" in text or f"{keyword} x keyword" in text
        assert "cosine similarity" in text
        assert "BM25" in text
    for text in (readme, api, SCORE_SCALES, search_text["description"]):
        assert "RRF scores for hybrid" not in text  # the old claim
        for mention in re.finditer(r"Reciprocal Rank Fusion|RRF", text):
            around = text[max(0, mention.start() - 80) : mention.end() + 80]
            assert "FUSION=rrf" in around or "RRF_K" in around, around  # an option, never the default


def test_hybrid_scores_run_as_described(make_harness: Callable[..., Harness]) -> None:
    """0 to 1, and at most the highest dense weight (0.7) for a chunk no keyword matches, on the example vault
    (English questions over English notes: never the foreign weights)."""
    harness = make_harness(EXAMPLE_VAULT, FakeEmbedder(dimension=64, spread=True))
    harness.index.open()
    harness.indexer.sync()
    dense_weight = DEFAULTS["fusion_dense_high"].default
    without_keyword = 0
    for query in ("how much do I owe Sreenivas?", "what did I decide about the database migration?",
                  "rasam recipe", "home lab NAS disks", "quarterly goals"):  # fmt: skip
        # the keyword side itself, every chunk a query word matches (not the keyword mode's refined answer)
        sparse = harness.encoder.encode_query(query)
        keyword = {
            p.id for p in harness.store.query(dense=None, sparse=sparse, limit=1000, prefetch_limit=1000)
        }
        for hit in harness.search.search(query, top_k=50, candidates=1000, max_chunks_per_note=50).hits:
            assert 0.0 <= hit.score <= 1.0 + 1e-9, (query, hit.score)
            if hit.id not in keyword:
                without_keyword += 1
                assert hit.score <= dense_weight + 1e-9, (query, hit.score)
    assert without_keyword > 0  # the bound was checked on some chunk found by meaning alone
