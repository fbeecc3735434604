"""scripts/measure/evaluation/vaults.py: each set's questions asked of its vault alone and of one service over
every set's vault, through the routes' own merge; what it reports is what the agent would have received."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.measure.evaluation.vaults import main
from tests.vault_files import judged_set

GARDEN = {
    "Tomatoes.md": "# Tomatoes\n\nSown in March, potted on in April, blight in August.\n",
    "Compost.md": "# Compost\n\nThe bins by the shed, turned monthly; brown to green two to one.\n",
}
WORKSHOP = {
    "Lathe.md": "# Lathe\n\nThe lathe's belt was replaced in May; the chuck key lives in the drawer.\n",
    "Bandsaw.md": "# Bandsaw\n\nBlade tension set to the 10mm mark; the guides adjusted for resawing.\n",
}


def test_two_vaults_on_other_topics_rank_and_recall_as_each_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EMBEDDING_PROVIDER", "none")
    garden = judged_set(
        tmp_path / "garden",
        GARDEN,
        {
            "g1": ("when did blight hit the tomatoes", "Tomatoes.md"),
            "g2": ("turning the compost bins", "Compost.md"),
        },
    )
    workshop = judged_set(
        tmp_path / "workshop",
        WORKSHOP,
        {
            "w1": ("when was the lathe belt replaced", "Lathe.md"),
            "w2": ("bandsaw blade tension", "Bandsaw.md"),
        },
    )
    main(["--set", str(garden), "--set", str(workshop), "--data-dir", str(tmp_path / "data")])
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [(row[0], row[1]) for row in rows] == [
        ("garden", "its"),
        ("garden", "all"),
        ("workshop", "its"),
        ("workshop", "all"),
    ]
    for alone, together in (rows[0], rows[1]), (rows[2], rows[3]):
        alone_figures, together_figures = alone[-5:], together[-5:]
        assert together_figures[:3] == alone_figures[:3]  # nDCG@10, R@10, recalled
        assert together_figures[2] == "2"  # both questions of each set recalled
        assert together_figures[3:] == ["0", "0"]  # nothing answered from the other vault
    assert (tmp_path / "data" / "garden").is_dir()  # each vault's own index under --data-dir
