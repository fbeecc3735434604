"""Fusion variants on every dev set at once, offline: each query's dense and keyword candidate lists are
fetched once per set (cached next to the set's index) and every variant is scored over them in Python.

    python -m scripts.measure.calibration.fusion_grid --set ../shared/corpora/scifact \
        --set ../shared/corpora/locomo-dev

Each set uses the evaluation index `python -m backend eval --set DIR` builds (data/eval/<set name>); the
script opens it read-only and indexes nothing. Prints one line per variant: nDCG@10 per set, and the worst
set's margin over its best single mode (what the default is chosen by).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.domain.metrics import dedupe_notes, ndcg_at
from backend.domain.ranking import fusion
from backend.infrastructure.eval_files import EvalSet, find_set

DEPTH = 200  # keyword candidates fetched; variants use a prefix of them
DENSE_DEPTH = 1000  # dense candidates: deep, so dense scores of most keyword candidates are known
FUSED = 100  # fused chunks kept per query (as the evaluation does)
ONLY: str | None = None  # --only

Cand = tuple[str, float, str, int, str | None]  # chunk id, score, note path, chunk index, note date


@dataclass
class QueryLists:
    qid: str
    text: str
    dense: list[Cand]
    keyword: list[Cand]
    foreign: bool = False  # in another language than the vault's (TextAnalyzer.foreign)


def collect(eval_set: EvalSet, data_root: Path) -> tuple[list[QueryLists], dict[str, dict[str, int]]]:
    qrels = eval_set.read_qrels()
    queries = [q for q in eval_set.read_queries() if qrels.get(q.id)]
    data_dir = data_root / eval_set.name
    digest = hashlib.sha1("\n".join(q.text for q in queries).encode()).hexdigest()[:10]
    settings = load_settings(vault_path=eval_set.vault, data_dir=data_dir)
    # the lists depend on how the index lays out its dense side (one vector a chunk, or windows)
    layout = f"-w{settings.dense_window_words}" if settings.dense_window_words else ""
    cache = data_dir / f"fusion-candidates-{DENSE_DEPTH}-{DEPTH}{layout}-q-{digest}.json"
    if cache.exists():
        raw = json.loads(cache.read_text())
        return [QueryLists(**r) for r in raw], qrels
    services = build_services(settings)
    services.index.open()
    encoder = services.search._encoder  # noqa: SLF001 - the same encoder the service uses
    out: list[QueryLists] = []
    try:
        assert services.embedder is not None
        # as queries (a model such as multilingual-e5 embeds a query unlike a passage)
        vectors = [services.embedder.embed_query(q.text) for q in queries]
        for q, vector in zip(queries, vectors, strict=True):
            sparse = encoder.encode_query(q.text)
            dense_pts = services.index.store.query(
                dense=vector, sparse=None, limit=DENSE_DEPTH, prefetch_limit=DENSE_DEPTH
            )
            kw_pts = (
                services.index.store.query(dense=None, sparse=sparse, limit=DEPTH, prefetch_limit=DEPTH)
                if not sparse.is_empty
                else []
            )
            out.append(
                QueryLists(
                    q.id,
                    q.text,
                    [_cand(p) for p in dense_pts],
                    [_cand(p) for p in kw_pts],
                    services.search.analyzer.foreign(q.text),
                )
            )
    finally:
        services.close()
    cache.write_text(json.dumps([r.__dict__ for r in out]))
    return out, qrels


def _cand(p: object) -> Cand:
    payload = p.payload  # type: ignore[attr-defined]
    path, index, day = str(payload["note_path"]), int(payload.get("chunk_index", 0)), payload.get("date")
    return (p.id, float(p.score), path, index, day)  # type: ignore[attr-defined]


Fuser = Callable[[QueryLists], list[str]]  # -> note ranking


def _ranking(scores: dict[str, float], info: dict[str, Cand]) -> list[str]:
    ordered = sorted(scores, key=lambda cid: (-scores[cid], info[cid][2], info[cid][3]))[:FUSED]
    return dedupe_notes([info[cid][2] for cid in ordered])


def _info(q: QueryLists) -> dict[str, Cand]:
    return {c[0]: c for c in [*q.dense, *q.keyword]}


def single(side: str) -> Fuser:
    def run(q: QueryLists) -> list[str]:
        return dedupe_notes([c[2] for c in getattr(q, side)[:FUSED]])

    return run


def rrf_variant(k: float, wd: float, wk: float, dd: int = 100, dk: int = 100) -> Fuser:
    def run(q: QueryLists) -> list[str]:
        lists = [[(c[0], c[1]) for c in q.dense[:dd]], [(c[0], c[1]) for c in q.keyword[:dk]]]
        return _ranking(fusion.rrf(lists, (wd, wk), k), _info(q))

    return run


def dbsf_variant(wd: float = 1.0, wk: float = 1.0, dd: int = 100, dk: int = 100) -> Fuser:
    def run(q: QueryLists) -> list[str]:
        lists = [[(c[0], c[1]) for c in q.dense[:dd]], [(c[0], c[1]) for c in q.keyword[:dk]]]
        return _ranking(fusion.dbsf(lists, (wd, wk)), _info(q))

    return run


def score_variant(wd: float, wk: float, cross: tuple[float, float] | None = None, depth: int = 100) -> Fuser:
    """Score fusion (each side over its top score, weighted), as the service runs it; `cross`: the
    weights for a question in another language than the vault's."""

    def run(q: QueryLists) -> list[str]:
        weights = cross if cross is not None and q.foreign else (wd, wk)
        lists = [[(c[0], c[1]) for c in q.dense[:depth]], [(c[0], c[1]) for c in q.keyword[:depth]]]
        return _ranking(fusion.top_scaled(lists, weights), _info(q))

    return run


def service_adaptive_variant(
    weights: fusion.AdaptiveWeights, cross: tuple[float, float] | None = (0.9, 0.1), depth: int = 100
) -> Fuser:
    """The service's default (`fusion.adaptive`): each side spread onto 0..1, the dense side weighted by
    its winner's lead; `cross`: the weights for a question in another language than the vault's."""

    def run(q: QueryLists) -> list[str]:
        fixed = cross if q.foreign else None
        dense = [(c[0], c[1]) for c in q.dense[:depth]]
        keyword = [(c[0], c[1]) for c in q.keyword[:depth]]
        return _ranking(fusion.adaptive(dense, keyword, weights, fixed), _info(q))

    return run


def adaptive_variant(k: float, rule: Callable[[QueryLists], tuple[float, float]], depth: int = 100) -> Fuser:
    def run(q: QueryLists) -> list[str]:
        wd, wk = rule(q)
        lists = [[(c[0], c[1]) for c in q.dense[:depth]], [(c[0], c[1]) for c in q.keyword[:depth]]]
        return _ranking(fusion.rrf(lists, (wd, wk), k), _info(q))

    return run


def score(fuser: Fuser, data: list[QueryLists], qrels: dict[str, dict[str, int]]) -> float:
    return fmean(ndcg_at(fuser(q), qrels[q.qid], 10) for q in data)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="sets", type=Path, action="append", required=True)
    ap.add_argument("--data-root", type=Path, default=Path("data") / "eval")
    ap.add_argument("--dense-depth", type=int, default=DENSE_DEPTH, help="dense candidates fetched a query")
    ap.add_argument("--only", help="one family of variants (adaptive)")
    args = ap.parse_args()
    globals()["DENSE_DEPTH"] = args.dense_depth
    globals()["ONLY"] = args.only
    sets = [find_set(path) for path in args.sets]
    loaded = {s.name: collect(s, args.data_root) for s in sets}
    best_single = {
        name: max(score(single("dense"), d, r), score(single("keyword"), d, r))
        for name, (d, r) in loaded.items()
    }
    for name, (d, r) in loaded.items():
        print(
            f"# {name}: dense {score(single('dense'), d, r):.4f} keyword {score(single('keyword'), d, r):.4f}"
        )
    for label, fuser in variants():
        per_set = {name: score(fuser, d, r) for name, (d, r) in loaded.items()}
        worst = min(per_set[name] - best_single[name] for name in per_set)
        cells = "  ".join(f"{name} {value:.4f}" for name, value in per_set.items())
        print(f"{label:<48} {cells}  worst margin {worst:+.4f}", flush=True)


def variants() -> Iterable[tuple[str, Fuser]]:
    if ONLY == "adaptive":
        for low, high in ((0.3, 0.7), (0.3, 0.6), (0.4, 0.6), (0.3, 0.5), (0.5, 0.5), (0.6, 0.6)):
            for unsure, sure in ((1.0, 4.0), (1.5, 3.0), (2.0, 3.5)):
                for cross in ((0.9, 0.1), (0.8, 0.2), (1.0, 0.0), None):
                    yield (
                        f"adaptive dense {low}..{high} lead {unsure}..{sure} foreign {cross}",
                        (service_adaptive_variant(fusion.AdaptiveWeights(low, high, unsure, sure), cross)),
                    )
        return
    for wk in (0.5, 0.55, 0.6, 0.65, 0.7):
        yield f"score w=({1 - wk:.2f},{wk})", score_variant(1 - wk, wk)
        for cross in (0.0, 0.1, 0.2, 0.3):
            yield (
                f"score w=({1 - wk:.2f},{wk}) cross=({1 - cross:.1f},{cross})",
                score_variant(1 - wk, wk, (1 - cross, cross)),
            )
    for k in (1, 2, 3, 5, 10):
        for wd, wk in ((1, 1), (0.75, 1), (0.5, 1), (0.35, 1), (0.25, 1), (0.15, 1), (1, 0.5)):
            yield f"rrf k={k} w=({wd},{wk})", rrf_variant(k, wd, wk)
    for dd, dk in ((20, 100), (50, 100), (100, 50), (200, 200)):
        for k, wd in ((5, 1), (2, 0.25)):
            yield f"rrf k={k} w=({wd},1) depth=({dd},{dk})", rrf_variant(k, wd, 1, dd, dk)
    for wd, wk in ((1, 1), (0.5, 1)):
        for depth in (50, 100, 200):
            yield f"dbsf w=({wd},{wk}) depth={depth}", dbsf_variant(wd, wk, depth, depth)
    for k in (1, 2, 5):
        for scale in (0.5, 1.0, 2.0):
            yield f"adaptive-lead k={k} scale={scale}", adaptive_variant(k, lead_rule(scale))
        yield f"adaptive-agree k={k}", adaptive_variant(k, agreement_rule)


def lead_rule(scale: float) -> Callable[[QueryLists], tuple[float, float]]:
    """Weights from each side's top-score lead (z-score of the winner): the surer side counts more."""

    def rule(q: QueryLists) -> tuple[float, float]:
        d = fusion.SideShape.of([c[1] for c in q.dense]).lead
        k = fusion.SideShape.of([c[1] for c in q.keyword]).lead
        diff = scale * (k - d)
        wk = 2 / (1 + math.exp(-diff))
        return 2 - wk, wk

    return rule


def agreement_rule(q: QueryLists) -> tuple[float, float]:
    notes_d = list(dict.fromkeys(c[2] for c in q.dense))
    notes_k = list(dict.fromkeys(c[2] for c in q.keyword))
    a = fusion.agreement(notes_d, notes_k)
    return 0.5 + 0.5 * a, 1.0


if __name__ == "__main__":
    main()
