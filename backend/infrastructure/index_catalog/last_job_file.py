"""The last job kept beside the index (`last_job.json` beside `DATA_DIR/qdrant`, `last_job-<name>.json`
beside `DATA_DIR/qdrant-<name>`: named as the store is, data_dirs.records_suffix, so vaults sharing a DATA_DIR
keep their own): how it ended and when the index last met the vault (application/indexing/last_job.py). A
file that cannot be read is logged and taken as none: the next job writes it again.

A job ending starts the one queued behind it before its own end is recorded, so two ends may be saved at
once: saves take turns, and one never replaces the record of a job that ended later."""

from __future__ import annotations

import threading
from dataclasses import asdict, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from backend.application.indexing.jobs import JobSnapshot
from backend.application.indexing.last_job import LastJob
from backend.infrastructure.durable_files import read_json_record, write_json_durably

FILE_NAME = "last_job.json"
_MOMENTS = ("started_at", "finished_at")


class LastJobFile:
    def __init__(self, data_dir: Path, suffix: str = "") -> None:
        """`suffix`: data_dirs.records_suffix of the store the record is of."""
        self._path = data_dir / f"last_job{suffix}.json"
        self._turn = threading.Lock()

    def load(self) -> LastJob | None:
        return read_json_record(self._path, _last_job, "the next job records the last one again")

    def save(self, last: LastJob) -> None:
        with self._turn:
            kept = self.load()
            ended = last.job.finished_at
            if kept is not None and kept.job.finished_at and ended and kept.job.finished_at > ended:
                return  # the job queued behind this one ended first, and said so
            self._write(last)

    def _write(self, last: LastJob) -> None:
        job = {k: v.isoformat() if isinstance(v, datetime) else v for k, v in asdict(last.job).items()}
        write_json_durably(
            self._path,
            {
                "job": job,
                "last_sync": _text(last.last_sync),
                "last_indexed": _text(last.last_indexed),
            },
        )


def _last_job(record: dict[str, Any]) -> LastJob:
    known = {f.name for f in fields(JobSnapshot)}
    job = {k: v for k, v in record["job"].items() if k in known}  # a field a later version adds is left
    for moment in _MOMENTS:
        job[moment] = _moment(job.get(moment))
    if job["finished_at"] is None:
        raise ValueError("the job recorded has not ended")
    return LastJob(
        job=JobSnapshot(**job),
        last_sync=_moment(record.get("last_sync")),
        last_indexed=_moment(record.get("last_indexed")),
    )


def _text(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _moment(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text is not None else None
