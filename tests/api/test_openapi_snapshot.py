"""The refactor of issue 19 must not change what clients see: the OpenAPI schema equals the one before it.

After a deliberate API change, write the snapshot again with
`python -m tests.api.test_openapi_snapshot` and review its diff like code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.config import load_settings
from backend.entrypoints.app import create_app

SNAPSHOT = Path(__file__).with_name("openapi_snapshot.json")


def current_schema() -> dict[str, Any]:
    return create_app(load_settings(embedding_provider="none")).openapi()


def test_openapi_schema_matches_the_snapshot() -> None:
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    # compared through JSON so that tuples and lists (and key order) do not count as a change
    assert json.loads(json.dumps(current_schema())) == expected


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(current_schema(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
