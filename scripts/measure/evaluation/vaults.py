"""Several vaults, one service, as the agent sees it (issue 46): each set's vault served beside the others,
each set's questions asked of one service over all of them and of its own vault alone, through the routes'
own merge (`backend/api/vault_search.py`, `backend/api/vault_answers.py`).

Per set: nDCG@10 and recall@10 of the ranked notes (the merged list against the vault alone), the questions
whose recall block (the plugin's defaults) quotes a relevant entry, and those answered from the wrong vault:
the first result, or any quoted entry, from a vault that is not the question's.

    python -m scripts.measure.evaluation.vaults --set ../shared/corpora/personal-dev \
        --set ../shared/corpora/locomo-dev \
        [--today 2025-11-15] [--data-dir data/eval-vaults]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean

from backend.api.context_schemas import ChatMessage, ContextRequest
from backend.api.schemas import SearchRequest
from backend.api.vault_answers import context_vaults
from backend.api.vault_search import search_vaults
from backend.bootstrap import Services
from backend.config import Settings, load_settings
from backend.domain.metrics import dedupe_notes, ndcg_at, recall_at
from backend.domain.recall.recall_budget import PLUGIN_RECALL
from backend.entrypoints.cli.commands import run_job
from backend.entrypoints.cli.target import open_local
from backend.infrastructure.eval_files import EvalSet, eval_sets
from backend.vault_set import Library

DATA_ROOT = Path("data/eval-vaults")
TOP_K = 10
HEADER = "set              asked of   nDCG@10  R@10 recalled first elsewhere quoted elsewhere"


@dataclass
class Asked:
    """One set's questions asked one way (its vault alone, or every vault)."""

    ndcg: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    recalled: int = 0  # answerable questions whose block quotes a relevant entry
    first_elsewhere: int = 0  # questions whose first result is of another vault
    quoted_elsewhere: int = 0  # questions whose block quotes an entry of another vault

    def row(self) -> str:
        return (
            f"{fmean(self.ndcg):>7.3f} {fmean(self.recall):>5.3f} {self.recalled:>8} "
            f"{self.first_elsewhere:>15} {self.quoted_elsewhere:>16}"
        )


def served(sets: Sequence[EvalSet], data_dir: Path, today: dt.date | None) -> Settings:
    pairs = ",".join(f"{_name(s)}={s.vault.resolve()}" for s in sets)
    settings = load_settings(vaults=pairs, data_dir=data_dir, watch=False)
    return settings.model_copy(update={"today": today}) if today else settings


def _name(eval_set: EvalSet) -> str:
    return eval_set.name.replace(".", "-").lower()


def indexed(settings: Settings) -> Library:
    """Every vault opened in this process and brought up to date as `eval` does it, then served together."""

    def opened(own: Settings) -> Services:
        services = open_local(own)
        try:
            run_job(services, services.supervisor.index_job())
        except BaseException:
            services.close()
            raise
        return services

    return Library.open(settings, opened)


def ask(library: Library, eval_set: EvalSet, vaults: list[str] | None) -> Asked:
    own = _name(eval_set)
    qrels: Mapping[str, Mapping[str, int]] = eval_set.read_qrels()
    asked = Asked()
    for query in eval_set.read_queries():
        relevant = qrels.get(query.id) or {}
        if not relevant:
            continue
        found, _ = asyncio.run(
            search_vaults(library, SearchRequest(query=query.text, top_k=TOP_K, vaults=vaults))
        )
        ranking = dedupe_notes(
            [r.note_path if r.vault == own else f"{r.vault}:{r.note_path}" for r in found.results]
        )
        asked.ndcg.append(ndcg_at(ranking, relevant, TOP_K))
        asked.recall.append(recall_at(ranking, relevant, TOP_K))
        asked.first_elsewhere += bool(found.results) and found.results[0].vault != own
        block = asyncio.run(
            context_vaults(
                library,
                ContextRequest(
                    messages=[ChatMessage(role="user", content=query.text)],
                    max_chars=PLUGIN_RECALL.max_chars,
                    max_chunks=PLUGIN_RECALL.max_entries,
                    min_confidence=PLUGIN_RECALL.floor,
                    quoted=True,
                    vaults=vaults,
                ),
            )
        )
        quoted = [(s.vault, s.note_path) for s in block.sources if s.note_path]
        asked.recalled += any(v == own and relevant.get(p, 0) > 0 for v, p in quoted)
        asked.quoted_elsewhere += any(v != own for v, _ in quoted)
    return asked


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="sets", type=Path, action="append", required=True)
    parser.add_argument("--today", type=dt.date.fromisoformat)
    parser.add_argument("--data-dir", type=Path, default=DATA_ROOT)
    args = parser.parse_args(argv)
    sets = eval_sets(args.sets, Path("."), None, None)
    library = indexed(served(sets, args.data_dir, args.today))
    try:
        print(HEADER)
        for eval_set in sets:
            for label, vaults in (("its vault", [_name(eval_set)]), ("all", None)):
                print(f"{eval_set.name:<16} {label:<10} {ask(library, eval_set, vaults).row()}")
    finally:
        library.close()


if __name__ == "__main__":
    main()
