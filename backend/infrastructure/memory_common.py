"""What both memory store adapters share: the collection's name and the payload of a fact."""

from __future__ import annotations

from typing import Any

from backend.domain.memory import MemoryRecord
from backend.infrastructure.index_catalog import DEFAULT_BASE

MEMORY_SUFFIX = "memory"
# Times are stored as integer microseconds: qdrant-edge 0.9 returns some payload floats one ulp off.
_MICROS = 1_000_000


def memory_collection(base: str = DEFAULT_BASE) -> str:
    """The facts' collection (qdrant-client) and shard folder (qdrant-edge) name: `<base>_memory`.

    Built here only, from the same base as the index collections, so a per-vault base is one argument away.
    Never one of the index generations' names: a rebuild does not touch it."""
    return f"{base}_{MEMORY_SUFFIX}"


def memory_payload(record: MemoryRecord) -> dict[str, Any]:
    return {
        "key": record.key,
        "value": record.value,
        "source": record.source,
        "created_at_us": round(record.created_at * _MICROS),
        "updated_at_us": round(record.updated_at * _MICROS),
        "dense_ready": int(record.dense_ready),  # an int: qdrant-edge does not match booleans
    }


def memory_from_payload(payload: dict[str, Any]) -> MemoryRecord:
    return MemoryRecord(
        key=str(payload["key"]),
        value=str(payload.get("value", "")),
        source=str(payload.get("source", "")),
        created_at=int(payload.get("created_at_us") or 0) / _MICROS,
        updated_at=int(payload.get("updated_at_us") or 0) / _MICROS,
        dense_ready=bool(payload.get("dense_ready", 1)),
    )
