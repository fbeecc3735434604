"""`python -m backend eval` over several judged sets in one run, as `make eval` runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.backend_cli import run_backend


def _judged_set(root: Path, notes: dict[str, str], queries: dict[str, tuple[str, str]], split: str) -> Path:
    """A folder laid out like ../shared/corpora/<set>: vault/, queries-<split>.jsonl, qrels-<split>.tsv."""
    for path, text in notes.items():
        (root / "vault" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "vault" / path).write_text(text)
    (root / f"queries-{split}.jsonl").write_text(
        "".join(json.dumps({"id": qid, "text": text}) + "\n" for qid, (text, _) in queries.items())
    )
    (root / f"qrels-{split}.tsv").write_text(
        "query_id\tnote\trelevance\n" + "".join(f"{qid}\t{note}\t1\n" for qid, (_, note) in queries.items())
    )
    return root


@pytest.fixture
def two_sets(tmp_path: Path) -> tuple[Path, Path]:
    work = _judged_set(
        tmp_path / "work-notes",
        {
            "Database migration.md": "# Database migration\n\nWe move from MySQL to PostgreSQL in April.\n",
            "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n",
        },
        {"1": ("PostgreSQL migration", "Database migration.md"), "2": ("basmati rice", "Shopping list.md")},
        "train",
    )
    chats = _judged_set(
        tmp_path / "chats",
        {
            "Ana and Bo/Session 01.md": "**Ana**: I adopted a puppy called Pixel.\n",
            "Ana and Bo/Session 02.md": "**Bo**: My pottery class starts on Monday.\n",
        },
        {
            "a": ("what is the puppy called", "Ana and Bo/Session 01.md"),
            "b": ("pottery", "Ana and Bo/Session 02.md"),
        },
        "dev",
    )
    return work, chats


def test_eval_scores_every_set_named_in_one_run(two_sets: tuple[Path, Path], tmp_path: Path) -> None:
    work, chats = two_sets
    data = tmp_path / "data"
    result = run_backend(
        "eval",
        "--set",
        str(work),
        "--set",
        str(chats),
        "--mode",
        "keyword",
        "--json",
        "--data-dir",
        str(data),
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [(row["set"], row["mode"], row["queries"]) for row in rows] == [
        ("work-notes", "keyword", 2),
        ("chats", "keyword", 2),
    ]
    assert all(row["ndcg_10"] == pytest.approx(1.0) for row in rows)
    # each set has its own index, named after its folder: the second set never searches the first's notes
    assert (data / "work-notes").is_dir()
    assert (data / "chats").is_dir()


def test_the_table_shows_each_set_and_hybrids_margin(two_sets: tuple[Path, Path], tmp_path: Path) -> None:
    work, chats = two_sets
    result = run_backend("eval", "--set", str(work), "--set", str(chats), "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "work-notes" in lines
    assert "chats" in lines
    for mode in ("hybrid", "dense", "keyword"):
        assert sum(line.split()[:2] == [mode, "2"] for line in lines) == 2, result.stdout
    assert "hybrid - best single mode" in result.stdout
    assert "worst set's margin" in result.stdout


def test_a_set_folder_without_judgments_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "loose" / "vault").mkdir(parents=True)
    result = run_backend("eval", "--set", str(tmp_path / "loose"), "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 1
    assert "queries-<split>.jsonl" in result.stderr
    assert "Traceback" not in result.stderr


def test_this_year_in_a_sets_questions_counts_from_the_day_given(tmp_path: Path) -> None:
    budget = "# Chemistry budget\n\nThe chemistry budget for consumables and glassware.\n"
    judged = _judged_set(
        tmp_path / "school",
        {"Budget 2024.md": budget, "Budget 2025.md": budget},
        {"1": ("the chemistry budget this year", "Budget 2025.md")},
        "dev",
    )

    def ndcg(today: str) -> float:
        result = run_backend(
            "eval", "--set", str(judged), "--mode", "keyword", "--json", "--today", today,
            "--data-dir", str(tmp_path / "data"),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return float(json.loads(result.stdout)[0]["ndcg_10"])

    assert ndcg("2025-11-15") == pytest.approx(1.0)
    assert ndcg("2024-11-15") < 1.0  # the other year's budget first


def test_a_today_that_is_no_day_is_refused(tmp_path: Path) -> None:
    result = run_backend("eval", "--today", "15/11/2025", "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 2
    assert "not a YYYY-MM-DD day" in result.stderr
