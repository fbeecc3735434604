"""`make eval` and `make eval-languages`: retrieval quality on the dev sets, each evaluation a `python -m
backend eval` of its own, one after another, stopping at the first that fails (as the Makefile's lines ran
them).

    python -m scripts.measure.evaluation.dev_sets --person ../shared/corpora/personal-dev=2025-11-15 \\
        --set tests/data/example-vault --set ../shared/corpora/scifact
    python -m scripts.measure.evaluation.dev_sets --stand-in e5 --set ../shared/corpora/xquad-dev/de

`--person SET=DAY`: a person's own vault, asked on its owner's "now" (its questions' "this year", "last
month") and also over a templated copy (`created:` on every note, as templates leave a vault), in an
evaluation of its own; `--set SET`: asked on today's date, every such set in one evaluation. `--stand-in e5`
(or minilm): every evaluation through the stand-in server (stand_in.py), the model served over Ollama's API
as mxbai-embed-large: its instruction sent, its recall gate fitted on each vault.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

from scripts.measure.common import machine
from scripts.measure.evaluation.stand_in_server import SERVED


def person(given: str) -> tuple[Path, str]:
    """SET=DAY: the set's folder and the day its questions are asked on."""
    folder, _, day = given.rpartition("=")
    if not folder or not day:
        raise argparse.ArgumentTypeError(f"{given!r}: SET=YYYY-MM-DD")
    return Path(folder), day


def commands(people: list[tuple[Path, str]], sets: list[Path], stand_in: str | None) -> list[list[str]]:
    """The evaluations, each a command: one per person's vault (its day, templated too), then one of every
    other set."""
    if stand_in:
        head = [sys.executable, "-m", "scripts.measure.evaluation.stand_in", "--serve", stand_in, "--"]
    else:
        head = [sys.executable, "-m", "backend"]
    found = [[*head, "eval", "--today", day, "--templated", "--set", str(folder)] for folder, day in people]
    if sets:
        found.append([*head, "eval", *(arg for folder in sets for arg in ("--set", str(folder)))])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--person", dest="people", type=person, action="append", default=[], metavar="SET=DAY",
        help="repeatable: a person's own vault, asked on DAY and over a templated copy too",
    )  # fmt: skip
    parser.add_argument(
        "--set", dest="sets", type=Path, action="append", default=[], metavar="SET",
        help="repeatable: a set asked on today's date (all of them in one evaluation)",
    )  # fmt: skip
    parser.add_argument("--stand-in", choices=sorted(SERVED), help="every set through the stand-in server")
    args = parser.parse_args(argv)
    if not args.people and not args.sets:
        parser.error("name a set: --person SET=DAY or --set SET")
    # the figures are the machine's as much as the code's: the int8 model's kernels differ by CPU
    print(f"machine: {machine()}", flush=True)
    for command in commands(args.people, args.sets, args.stand_in):
        # each evaluation in a process of its own, as from the Makefile: one's model and settings stay its own
        print(shlex.join(command), flush=True)
        done = subprocess.run(command, check=False)
        if done.returncode != 0:
            return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
