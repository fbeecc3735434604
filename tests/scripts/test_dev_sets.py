"""scripts/measure/evaluation/dev_sets.py, `make eval`'s one entry: the evaluations the Makefile's lines ran,
each its own `python -m backend eval` (or through the stand-in server), stopping at the first that fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scripts.measure.common import int8_kernels
from scripts.measure.evaluation import dev_sets

BACKEND_EVAL = [sys.executable, "-m", "backend", "eval"]


def test_a_person_s_vault_is_asked_on_its_day_and_templated_and_the_other_sets_together() -> None:
    people = [(Path("corpora/personal-dev"), "2025-11-15"), (Path("corpora/real-dev"), "2025-09-20")]
    sets = [Path("tests/data/example-vault"), Path("corpora/scifact")]
    assert dev_sets.commands(people, sets, None) == [
        [*BACKEND_EVAL, "--today", "2025-11-15", "--templated", "--set", "corpora/personal-dev"],
        [*BACKEND_EVAL, "--today", "2025-09-20", "--templated", "--set", "corpora/real-dev"],
        [*BACKEND_EVAL, "--set", "tests/data/example-vault", "--set", "corpora/scifact"],
    ]
    through = [sys.executable, "-m", "scripts.measure.evaluation.stand_in", "--serve", "e5", "--", "eval"]
    assert dev_sets.commands([], sets[:1], "e5") == [[*through, "--set", "tests/data/example-vault"]]


def test_the_first_evaluation_that_fails_ends_the_run_with_its_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[list[str]] = []

    def run(command: list[str], check: bool) -> subprocess.CompletedProcess[str]:
        ran.append(command)
        return subprocess.CompletedProcess(command, 3 if len(ran) == 1 else 0)

    monkeypatch.setattr(dev_sets.subprocess, "run", run)
    assert dev_sets.main(["--person", "a/b=c=2025-01-02", "--set", "s"]) == 3
    assert ran == [[*BACKEND_EVAL, "--today", "2025-01-02", "--templated", "--set", "a/b=c"]]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("machine: ")  # whose figures they are
    assert printed[1].endswith("eval --today 2025-01-02 --templated --set a/b=c")


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        ({"avx2", "avx512bw", "avx512_vnni"}, "int8 on AVX-512 VNNI"),
        ({"avx2", "avx_vnni"}, "int8 on AVX-VNNI"),
        ({"avx2", "avx512bw"}, "int8 on AVX-512 (no VNNI)"),
        ({"avx2", "fma"}, "int8 on AVX2 (no VNNI)"),  # AMD EPYC Zen 3: personal-dev reads otherwise there
        ({"sse4_2"}, "int8 without AVX2"),
    ],
)
def test_the_machine_line_names_the_instructions_the_int8_model_runs_on(flags: set[str], named: str) -> None:
    assert int8_kernels(flags) == named
