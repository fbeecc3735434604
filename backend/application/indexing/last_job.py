"""What a data dir keeps of its last job: how it ended, and when the index last met the vault. A status
read in another process (`python -m backend status` with no service running) or after a restart says when
the vault was last indexed or synced, and how that ended, as the process that ran the job said it, whichever
ran it: the service (its start, a sync, a rebuild) or `python -m backend index` in its own process."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from backend.application.indexing.jobs import JobSnapshot


@dataclass(frozen=True, slots=True)
class LastJob:
    job: JobSnapshot  # as it ended (finished_at set)
    last_sync: datetime | None  # the index's own, when the job ended (IndexHandle.last_sync)
    last_indexed: datetime | None


class LastJobStore(Protocol):
    def load(self) -> LastJob | None:
        """The record, or None: none made yet, or one that cannot be read (said in the log)."""
        ...

    def save(self, last: LastJob) -> None:
        """Replace the record whole (a crash leaves the old one or the new one)."""
        ...
