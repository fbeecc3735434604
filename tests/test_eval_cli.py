"""`python -m backend eval` over several judged sets in one run, as `make eval` runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.domain.index.chunk_rules import CHUNK_RULES
from backend.infrastructure.qdrant.edge_engine import IDENTITY_FILE
from tests.backend_cli import run_backend
from tests.vault_files import judged_set


@pytest.fixture
def two_sets(tmp_path: Path) -> tuple[Path, Path]:
    work = judged_set(
        tmp_path / "work-notes",
        {
            "Database migration.md": "# Database migration\n\nWe move from MySQL to PostgreSQL in April.\n",
            "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n",
        },
        {"1": ("PostgreSQL migration", "Database migration.md"), "2": ("basmati rice", "Shopping list.md")},
        "train",
    )
    chats = judged_set(
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
    assert result.returncode == 2  # a bad option
    assert "queries-<split>.jsonl" in result.stderr
    assert "Traceback" not in result.stderr


def test_questions_of_each_kind_get_a_line_and_unanswerable_ones_are_counted(
    two_sets: tuple[Path, Path], tmp_path: Path
) -> None:
    root, _ = two_sets
    kinds = {"1": "decision", "2": "lookup"}  # the move to PostgreSQL, the rice on the shopping list
    rows = [json.loads(line) for line in (root / "queries-train.jsonl").read_text().splitlines()]
    rows = [{**row, "type": kinds[row["id"]]} for row in rows]
    rows.append({"id": "n1", "text": "what is the mead recipe", "type": "none"})  # no judged note
    (root / "queries-train.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))

    result = run_backend("eval", "--set", str(root), "--mode", "keyword", "--data-dir", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert ["by", "kind", "(keyword):"] in lines
    by_kind = {line[0]: line for line in lines if line and line[0] in ("decision", "lookup", "none")}
    assert by_kind["decision"][1:4] == ["1", "1.000", "1/1"]  # one question, ranked first
    assert by_kind["lookup"][1:4] == ["1", "1.000", "1/1"]
    assert by_kind["none"][1] == "1"
    assert by_kind["none"][6] in ("0/1", "1/1")  # whether the recall gave the mead question anything
    keyword_row = next(line for line in lines if line[:1] == ["keyword"])
    assert keyword_row[1] == "2"  # the unanswerable question is not ranked, only asked of the recall

    as_json = run_backend(
        "eval", "--set", str(root), "--mode", "keyword", "--json", "--data-dir", str(tmp_path / "d")
    )
    (row,) = json.loads(as_json.stdout)
    assert row["unanswerable"] == 1
    assert [k["kind"] for k in row["kinds"]] == ["decision", "lookup", "none"]


def test_the_example_vault_set_asks_the_example_questions() -> None:
    """tests/data/example-vault is the evaluation set of the example vault's questions: the same questions and
    notes as tests/data/example_vault_queries.json, which the API tests read."""
    from backend.infrastructure.eval_files import find_set

    data = Path(__file__).parent / "data"
    judged = json.loads((data / "example_vault_queries.json").read_text())
    example = find_set(data / "example-vault")
    assert example.vault.resolve() == (Path(__file__).parents[1] / "docs" / "example-vault").resolve()
    queries = example.read_queries()
    qrels = example.read_qrels()
    assert [q.text for q in queries] == [case["query"] for case in judged]
    assert [set(qrels[q.id]) for q in queries] == [{case["expected_note"]} for case in judged]


def test_this_year_in_a_sets_questions_counts_from_the_day_given(tmp_path: Path) -> None:
    budget = "# Chemistry budget\n\nThe chemistry budget for consumables and glassware.\n"
    judged = judged_set(
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


def test_the_recall_blocks_entries_are_judged_as_the_agent_receives_them(tmp_path: Path) -> None:
    """Each entry the /context block quotes (the plugin's defaults) is counted: relevant, judged not relevant
    (nonrel-<split>.tsv), and the questions given an entry that is not relevant."""
    root = judged_set(
        tmp_path / "quotes",
        {
            "Bees/Mites.md": "# Mites\n\nOxalic acid dribble for varroa mites in December, broodless.\n",
            "Bees/Mite count.md": "# Mite count\n\nVarroa mites counted on the board: 12 in December.\n",
            "Bees/Honey.md": "# Honey\n\nTwelve jars of honey sold at the gate.\n",
        },
        {"q1": ("oxalic acid dribble for varroa mites in December", "Bees/Mites.md")},
        "dev",
    )
    (root / "nonrel-dev.tsv").write_text(
        "query_id\tnote\treason\nq1\tBees/Mite count.md\ta count, no treatment\n"
    )

    result = run_backend(
        "eval", "--set", str(root), "--mode", "keyword", "--json", "--data-dir", str(tmp_path / "d")
    )
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)
    quoted = row["quoted"]
    assert row["recalled"] == 1
    # the treatment note quoted and the count of mites beside it, judged not relevant: the question is off
    assert (quoted["entries"], quoted["relevant"], quoted["judged_not"]) == (2, 1, 1)
    assert quoted["questions_off"] == 1


def test_a_templated_copy_dates_each_note_when_it_was_made_not_what_it_speaks_of(tmp_path: Path) -> None:
    root = judged_set(
        tmp_path / "plain",
        {
            "Projects/Cutover.md": "# Cutover\n\nDecided on 2024-04-12: the warehouse moves on 3 May 2024.\n",
            "Journal/2024-04-12.md": "---\ndate: 2024-04-12\n---\nThe cutover was decided today.\n",
            "Ideas.md": "---\ntags: [idea]\n---\nA shed with solar panels.\n",
        },
        {"q1": ("when was the warehouse cutover decided", "Projects/Cutover.md")},
        "dev",
    )
    result = run_backend(
        "eval", "--set", str(root), "--mode", "keyword", "--templated", "--data-dir", str(tmp_path / "d")
    )
    assert result.returncode == 0, result.stderr
    assert "plain-templated" in result.stdout.splitlines()
    copy = tmp_path / "d" / "plain-templated-vault"
    assert (copy / "Projects/Cutover.md").read_text().startswith("---\ncreated: 2024-02-27\n---\n# Cutover")
    assert (copy / "Journal/2024-04-12.md").read_text() == (root / "vault/Journal/2024-04-12.md").read_text()
    assert (copy / "Ideas.md").read_text() == (root / "vault/Ideas.md").read_text()  # mentions no day
    assert "created" not in (root / "vault/Projects/Cutover.md").read_text()  # the set's vault only read


def test_an_evaluation_index_cut_by_older_chunk_rules_is_built_again(
    two_sets: tuple[Path, Path], tmp_path: Path
) -> None:
    """An evaluation index is a cache: one whose chunks older code cut (no chunk rules recorded, as that code
    wrote its record) is built again before it is measured, never measured as it is."""
    work, _ = two_sets
    data = tmp_path / "data"
    args = ("eval", "--set", str(work), "--mode", "keyword", "--json", "--data-dir", str(data))
    assert run_backend(*args).returncode == 0
    records = list(data.rglob(IDENTITY_FILE))
    assert records
    for record in records:
        stored = json.loads(record.read_text(encoding="utf-8"))
        del stored["chunk_rules"]
        record.write_text(json.dumps(stored), encoding="utf-8")

    result = run_backend(*args)

    assert result.returncode == 0, result.stderr
    rebuilt = [json.loads(r.read_text(encoding="utf-8")) for r in data.rglob(IDENTITY_FILE)]
    assert rebuilt
    assert {stored.get("chunk_rules") for stored in rebuilt} == {CHUNK_RULES}
