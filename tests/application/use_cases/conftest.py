"""Fixtures of the use-case tests: every use case wired on the in-memory fakes of the ports (tests/fakes),
over a small vault of Markdown notes. No engine and no model: each test takes milliseconds."""

from __future__ import annotations

import datetime as dt

import pytest

from backend.application.search.service import SearchOptions
from tests.fakes import FakeEmbedder, FakeHandles, wire

TODAY = dt.date(2026, 3, 20)
SERVER_PASSWORD = "Sup3rS3cretPw"

NOTES = {
    "Projects/Database migration.md": (
        "---\ntags: [work, project]\ndate: 2026-02-01\naliases: [DB move]\n---\n# Database migration\n\n"
        "## Decision\n\nWe move from MySQL to PostgreSQL in March.\n\n"
        "## Risks\n\nDowntime during the cutover. The [[Runbook]] lists the steps.\n"
    ),
    "Projects/Runbook.md": "# Runbook\n\nSteps for the PostgreSQL cutover night: freeze, copy, switch.\n",
    "Finance/Sreenivas.md": (
        "---\ntags: [finance]\n---\n# Sreenivas\n\nI owe Sreenivas 1200 rupees for the concert tickets.\n"
    ),
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n- lemons\n",
    "Journal/2026-01-09.md": "---\ndate: 2026-01-09\n---\n# Friday\n\nWalked by the river.\n",
    "Journal/2026-03-14.md": (
        "---\ndate: 2026-03-14\n---\n# Saturday\n\nWalked by the river, planned beds, fed ducks.\n"
    ),
    "Garden.md": (
        "# Garden\n\n## Spring\n\nSow tomatoes indoors.\n\n## Summer\n\nWater the tomatoes daily.\n\n"
        "## Autumn\n\nHarvest the last tomatoes.\n\n## Winter\n\nOrder tomatoes seeds.\n"
    ),
    "Infra/Servers.md": (
        f"# Servers\n\n## Database\n\nConnection: postgres://app:{SERVER_PASSWORD}@db.internal:5432/app\n"
    ),
}


@pytest.fixture
def options() -> SearchOptions:
    return SearchOptions(today=lambda: TODAY)


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder(spread=True)


@pytest.fixture
def handles(embedder: FakeEmbedder, options: SearchOptions) -> FakeHandles:
    return wire(NOTES, embedder=embedder, options=options)
