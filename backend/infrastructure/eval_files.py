"""Readers for judged-query files: queries as JSON lines, relevance judgments as TSV."""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from backend.application.evaluation import JudgedQuery
from backend.domain.errors import InvalidRequestError
from backend.domain.periods.written_periods import spans_in_text
from backend.infrastructure.markdown.frontmatter import split_frontmatter


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
    nonrel: Path | None = None  # notes judged not relevant (`query_id`, `note`, `reason`), where pooled

    def read_queries(self) -> list[JudgedQuery]:
        return read_queries(self.queries)

    def read_qrels(self) -> dict[str, dict[str, int]]:
        return read_qrels(self.qrels)

    def read_nonrel(self) -> dict[str, frozenset[str]]:
        """Per question, the notes judged not relevant (empty without a `nonrel-<split>.tsv`)."""
        if self.nonrel is None:
            return {}
        found: dict[str, set[str]] = {}
        with self.nonrel.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                found.setdefault(str(row["query_id"]), set()).add(row["note"])
        return {query: frozenset(notes) for query, notes in found.items()}


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
    nonrel = folder / f"nonrel-{split}.tsv"
    return EvalSet(
        name=folder.resolve().name,
        vault=vault,
        queries=folder / f"queries-{split}.jsonl",
        qrels=folder / f"qrels-{split}.tsv",
        nonrel=nonrel if nonrel.is_file() else None,
    )


# -- a templated copy: `created:` on every note, as Obsidian templates leave a vault ------------------------

TEMPLATE_LEAD_DAYS = 45  # a templated note is taken to be made this long before the first day it mentions
_FRONT_DAY = re.compile(r"^(?:date|created)\s*:", re.M)


def templated_copy(eval_set: EvalSet, into: Path) -> EvalSet:
    """The set over a copy of its vault (made at `into`, replacing any earlier copy) in which every note
    without `date:` or `created:` has `created:` TEMPLATE_LEAD_DAYS before the first day its text mentions —
    the property Obsidian's templates write on every note, which says when a file was made, not what it
    speaks of. A note mentioning no day is copied as it is. The set's own vault is only read."""
    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(eval_set.vault, into)
    for path in sorted(into.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        created = _made_before(text)
        if created is not None:
            path.write_text(_with_created(text, created), encoding="utf-8")
    return replace(eval_set, name=f"{eval_set.name}-templated", vault=into)


def _made_before(text: str) -> dt.date | None:
    front, body, _ = split_frontmatter(text, [])
    if front is not None and _FRONT_DAY.search(front):
        return None
    written = spans_in_text(body)  # days and months written out, in the order the text has them
    return written[0].start - dt.timedelta(days=TEMPLATE_LEAD_DAYS) if written else None


def _with_created(text: str, day: dt.date) -> str:
    line = f"created: {day.isoformat()}\n"
    if split_frontmatter(text, [])[0] is not None:  # after the opening fence
        fence_end = text.index("\n") + 1
        return text[:fence_end] + line + text[fence_end:]
    return f"---\n{line}---\n" + text


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
