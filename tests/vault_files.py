"""Writing notes into a test vault (real files in a temp folder), alone or as a judged set."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path


def write(root: Path, rel: str, text: str = "note") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_notes(root: Path, notes: Mapping[str, str]) -> Path:
    """Each vault-relative path with its text under `root` (created even when `notes` is empty)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in notes.items():
        write(root, rel, text)
    return root


def judged_set(
    root: Path, notes: Mapping[str, str], questions: Mapping[str, tuple[str, str]], split: str = "dev"
) -> Path:
    """A folder laid out like ../shared/corpora/<set>: the `notes` in vault/, and each question (id -> its
    text and the note that answers it) in queries-<split>.jsonl and qrels-<split>.tsv."""
    write_notes(root / "vault", notes)
    queries = "".join(json.dumps({"id": qid, "text": text}) + "\n" for qid, (text, _) in questions.items())
    (root / f"queries-{split}.jsonl").write_text(queries, encoding="utf-8")
    qrels = "".join(f"{qid}\t{note}\t1\n" for qid, (_, note) in questions.items())
    (root / f"qrels-{split}.tsv").write_text("query_id\tnote\trelevance\n" + qrels, encoding="utf-8")
    return root


# Two notes: for tests about the service's state or its embedder, where indexing a larger vault is only time.
TINY_NOTES = {
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n- lemons\n",
    "Sreenivas.md": "# Sreenivas\n\nI owe Sreenivas 1200 rupees for the tickets.\n",
}


def tiny_vault(root: Path, name: str = "vault") -> Path:
    return write_notes(root / name, TINY_NOTES)
