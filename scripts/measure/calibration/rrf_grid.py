"""Grid over fusion parameters on an already-built evaluation index (query vectors embedded once).

    python -m scripts.measure.calibration.rrf_grid --data-dir data/eval/vault \
        --vault ../shared/corpora/scifact/vault \
        --queries ../shared/corpora/scifact/queries-train.jsonl \
        --qrels ../shared/corpora/scifact/qrels-train.tsv
"""

from __future__ import annotations

import argparse
from pathlib import Path
from statistics import fmean

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.domain.metrics import dedupe_notes, ndcg_at, recall_at
from backend.infrastructure.eval_files import read_qrels, read_queries


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--qrels", type=Path, required=True)
    args = ap.parse_args()
    services = build_services(load_settings(vault_path=args.vault, data_dir=args.data_dir))
    services.index.open()
    qrels = read_qrels(args.qrels)
    queries = [q for q in read_queries(args.queries) if q.id in qrels]
    assert services.embedder is not None
    dense = services.embedder.embed_documents([q.text for q in queries])
    sparse = [services.search._encoder.encode_query(q.text) for q in queries]  # noqa: SLF001
    try:
        for prefetch in (100, 200):
            for k in (2, 5, 10, 20):
                ndcg, recall = [], []
                for q, d, s in zip(queries, dense, sparse, strict=True):
                    points = services.index.store.query(
                        dense=d, sparse=s, limit=100, prefetch_limit=prefetch, rrf_k=k
                    )
                    ranking = dedupe_notes([p.payload["note_path"] for p in points])
                    ndcg.append(ndcg_at(ranking, qrels[q.id]))
                    recall.append(recall_at(ranking, qrels[q.id]))
                print(
                    f"prefetch={prefetch:<4} k={k:<3} nDCG@10={fmean(ndcg):.4f} recall@10={fmean(recall):.4f}"
                )
    finally:
        services.close()


if __name__ == "__main__":
    main()
