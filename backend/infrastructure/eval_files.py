"""Readers for judged-query files: queries as JSON lines, relevance judgments as TSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from backend.application.evaluation import JudgedQuery


def read_queries(path: Path) -> list[JudgedQuery]:
    """One JSON object per line with `id` (or `_id` / `query_id`) and `text` (or `query`)."""
    queries = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            qid = row.get("id", row.get("_id", row.get("query_id")))
            text = row.get("text", row.get("query"))
            if qid is None or not text:
                raise ValueError(f"{path}:{number}: a query needs an id and a text")
            queries.append(JudgedQuery(str(qid), str(text)))
    return queries


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TSV with a header: `query_id`, `note` (vault-relative path), `relevance`."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(str(row["query_id"]), {})[row["note"]] = int(row.get("relevance") or 1)
    return qrels
