"""Readers for judged-query files: queries as JSON lines, relevance judgments as TSV."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from backend.application.evaluation import JudgedQuery
from backend.domain.errors import InvalidRequestError


def read_queries(path: Path) -> list[JudgedQuery]:
    """One JSON object per line with `id` (or `_id` / `query_id`) and `text` (or `query`), and optionally the
    question's `type` (or `kind`), which the scores are also reported by."""
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
            kind = row.get("type", row.get("kind"))
            queries.append(JudgedQuery(str(qid), str(text), str(kind) if kind else ""))
    return queries


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TSV with a header: `query_id`, `note` (vault-relative path), `relevance`."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(str(row["query_id"]), {})[row["note"]] = int(row.get("relevance") or 1)
    return qrels


@dataclass(frozen=True, slots=True)
class EvalSet:
    """A judged set: a vault, its queries and its relevance judgments, named for its index folder."""

    name: str
    vault: Path
    queries: Path
    qrels: Path

    def read_queries(self) -> list[JudgedQuery]:
        return read_queries(self.queries)

    def read_qrels(self) -> dict[str, dict[str, int]]:
        return read_qrels(self.qrels)


def find_set(folder: Path) -> EvalSet:
    """The set laid out as in ../shared/corpora: `vault/`, one `queries-<split>.jsonl` and the
    `qrels-<split>.tsv` of the same split. Named after the folder (`scifact`, `locomo-dev`). A set of
    questions about another set's notes (xquad-dev/en-over-de) has a `VAULT` file naming that set instead
    of a vault of its own, or a path from the folder to a vault (tests/data/example-vault names the example
    vault)."""
    folder = Path(folder)
    vault = folder / "vault"
    pointer = folder / "VAULT"
    if not vault.is_dir() and pointer.is_file():
        named = pointer.read_text(encoding="utf-8").strip()
        sibling = folder.parent / named / "vault"
        # a sibling set's name (xquad-dev/en-over-de: "de"), else a vault's own path from this folder
        vault = sibling if sibling.is_dir() else folder / named
    if not vault.is_dir():
        raise ValueError(
            f"{folder}: no vault/ folder (an evaluation set holds vault/, queries-*.jsonl, qrels-*.tsv)"
        )
    splits = sorted(p.name[len("queries-") : -len(".jsonl")] for p in folder.glob("queries-*.jsonl"))
    with_qrels = [s for s in splits if (folder / f"qrels-{s}.tsv").is_file()]
    if len(with_qrels) != 1:
        found = ", ".join(with_qrels) or "none"
        raise ValueError(
            f"{folder}: expected one queries-<split>.jsonl with its qrels-<split>.tsv, found {found}; "
            "use --vault, --queries and --qrels to name the files"
        )
    split = with_qrels[0]
    return EvalSet(
        name=folder.resolve().name,
        vault=vault,
        queries=folder / f"queries-{split}.jsonl",
        qrels=folder / f"qrels-{split}.tsv",
    )


def eval_sets(
    folders: list[Path] | None, vault: Path | None, queries: Path | None, qrels: Path | None
) -> list[EvalSet]:
    """The sets an `eval` run names: `--set` folders, or one set from `--vault --queries --qrels`."""
    if folders:
        if queries is not None or qrels is not None:
            raise InvalidRequestError(
                "give either --set folders or --queries/--qrels, not both",
                suggestion="Each --set folder holds its own vault, queries and judgments.",
            )
        try:
            return [find_set(folder) for folder in folders]
        except ValueError as exc:
            raise InvalidRequestError(
                str(exc), suggestion="Name the files with --vault, --queries, --qrels."
            ) from exc
    if queries is None or qrels is None:
        raise InvalidRequestError(
            "eval needs --set FOLDER (repeatable) or --queries and --qrels (with --vault)",
            suggestion="e.g. --set ../shared/corpora/scifact --set ../shared/corpora/locomo-dev",
        )
    folder = vault if vault is not None else Path(".")
    return [EvalSet(name=folder.resolve().name, vault=folder, queries=queries, qrels=qrels)]
