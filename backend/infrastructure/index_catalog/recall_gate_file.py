"""The fitted recall gate kept beside the index (`recall_gate.json` beside `DATA_DIR/qdrant`,
`recall_gate-<name>.json` beside `DATA_DIR/qdrant-<name>`, as data_dirs.records_suffix names them: vaults
sharing a DATA_DIR each fit their own), so a restart serves it at once instead of fitting again. A file that
cannot be read (an older layout, a partial write from before writes were durable) is logged and treated as no
fit: the gate is fitted again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from backend.application.search.recall_gate import StoredGate
from backend.domain.ranking.confidence import Calibration
from backend.domain.recall.gate_fit import FittedGate, NullScale
from backend.infrastructure.durable_files import read_json_record, write_json_durably

FILE_NAME = "recall_gate.json"


class RecallGateFile:
    def __init__(self, data_dir: Path, suffix: str = "") -> None:
        """`suffix`: data_dirs.records_suffix of the store the record is of."""
        self._path = data_dir / f"recall_gate{suffix}.json"

    def load(self) -> StoredGate | None:
        return read_json_record(self._path, _stored, "the recall gate is fitted again")

    def save(self, stored: StoredGate) -> None:
        gate = stored.gate
        write_json_durably(
            self._path,
            {
                "embedder": stored.embedder,
                "fitted_at": stored.fitted_at,
                "seconds": stored.seconds,
                "weights": list(gate.calibration.weights),
                "bias": gate.calibration.bias,
                "null_mean": gate.scale.mean,
                "null_spread": gate.scale.spread,
                "chunks": gate.chunks,
                "probes": gate.probes,
                "generic": gate.generic,
            },
        )


def _stored(record: dict[str, Any]) -> StoredGate:
    embedder = str(record["embedder"])
    calibration = Calibration(
        name=embedder,
        weights=tuple(float(w) for w in record["weights"]),
        bias=float(record["bias"]),
        uses_dense=True,
    )
    if len(calibration.weights) != 5:
        raise ValueError(f"{len(calibration.weights)} weights, 5 expected")
    gate = FittedGate(
        calibration=calibration,
        scale=NullScale(float(record["null_mean"]), float(record["null_spread"])),
        chunks=int(record["chunks"]),
        probes=int(record["probes"]),
        generic=str(record["generic"]),
    )
    return StoredGate(embedder, gate, str(record["fitted_at"]), float(record["seconds"]))
