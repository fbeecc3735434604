"""A persistent embedding cache in front of any embedder.

Keyed by the model name and a hash of the exact embedded text, stored in SQLite, so unchanged chunks of an
edited note, a renamed note, a rebuild of an unchanged vault, a model change back, a wiped data dir and
another vault holding the same text cost no embedding calls. The model is part of the key: vectors of
another model are never returned. It relies on a text's vector not depending on the texts embedded with it
(the in-process int8 variants embed one text a call for that).

One cache serves every vault and data dir of a user on a machine (`data_dirs.embedding_cache`: beside the
model cache, `~/.cache/knowledge-bridge/embeddings.sqlite3`); several services may use it at once (WAL, a
busy timeout). The cache a data dir kept before (`DATA_DIR/embedding_cache.sqlite3`) is still read, so an
install keeps its vectors: a vector found there is copied into the shared one. Each text is sent once: a text
written twice in one call (a template paragraph in 300 daily notes) is embedded once.

Vectors are committed as they are made, `COMMIT_EVERY` texts at a time, not once a call is done: a call of
the dense pass (1024 texts, up to a minute on 2 cores) killed half-way keeps the half it made, and the
restart embeds only the rest. The file stays under `max_bytes` (MAX_BYTES): past it, the vectors used least
recently (by day) are dropped, and SQLite reuses their pages.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from backend.application.ports import Embedder

log = logging.getLogger(__name__)

_LOOKUP_BATCH = 500  # keys per SELECT: well under SQLite's variable limit
# Texts per call of the model behind the cache, each call's vectors committed before the next: 1-3 s of work
# in-process, and two requests of OLLAMA_BATCH_SIZE 64 in flight at OLLAMA_CONCURRENCY 2.
COMMIT_EVERY = 128
# 2 GiB: about 500,000 vectors of 1,024 dimensions (4 KiB each as float32), 1.3 M of MiniLM's 384: a real
# vault of 28k chunks is 30k texts, so several vaults and models fit before anything is dropped.
MAX_BYTES = 2 << 30
_BUSY_SECONDS = 30.0  # another service committing its vectors: wait for it rather than fail
_DAY = 86_400


def cache_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


class CachedEmbedder:
    def __init__(
        self, inner: Embedder, path: Path, *, also_read: Sequence[Path] = (), max_bytes: int = MAX_BYTES
    ) -> None:
        """`path`: the cache written (and read). `also_read`: earlier caches (a data dir's own), read when
        `path` lacks a text, never written."""
        self._inner = inner
        self._max_bytes = max_bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        # one connection shared by the worker threads, serialised by our lock
        self._db = sqlite3.connect(path, timeout=_BUSY_SECONDS, check_same_thread=False)
        if new:  # vectors say something of the notes: the user's own, as the notes are (-wal/-shm follow it)
            with contextlib.suppress(OSError):
                path.chmod(0o600)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL, used INTEGER)"
        )
        if "used" not in {row[1] for row in self._db.execute("PRAGMA table_info(vectors)")}:
            self._db.execute("ALTER TABLE vectors ADD COLUMN used INTEGER")  # a cache from before the cap
        self._db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)")
        self._db.commit()
        self._older = [
            _read_only(old) for old in also_read if old.exists() and old.resolve() != path.resolve()
        ]
        self._lock = threading.Lock()
        self.hits = 0  # texts answered by the cache (a text repeated in a call counts each time)
        self.misses = 0  # texts sent to the model
        self._trim()

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embedding_counts(self) -> tuple[int, int]:
        """(texts sent to the model, texts answered by the cache) since this embedder was made."""
        with self._lock:
            return self.misses, self.hits

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [cache_key(self.model_name, text) for text in texts]
        found = self._lookup(set(keys))
        missing: dict[str, int] = {}  # each text missing sent once: its key and first position
        for i, key in enumerate(keys):
            if key not in found:
                missing.setdefault(key, i)
        pending = list(missing.values())
        for start in range(0, len(pending), COMMIT_EVERY):
            piece = pending[start : start + COMMIT_EVERY]
            fresh = self._inner.embed_documents([texts[i] for i in piece])
            rows = [
                (keys[i], np.asarray(vec, dtype=np.float32).tobytes())
                for i, vec in zip(piece, fresh, strict=True)
            ]
            self._store(rows)
            for i, vec in zip(piece, fresh, strict=True):
                found[keys[i]] = list(vec)
        with self._lock:
            self.hits += len(texts) - len(pending)
            self.misses += len(pending)
        return [found[key] for key in keys]

    def _store(self, rows: list[tuple[str, bytes]]) -> None:
        today = int(time.time()) // _DAY
        with self._lock:
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors (key, vector, used) VALUES (?, ?, ?)",
                    [(key, blob, today) for key, blob in rows],
                )
                self._db.commit()
            except sqlite3.Error as exc:  # e.g. a full disk: the vectors are good, only not kept for later
                self._db.rollback()
                log.warning("embedding cache: could not keep %d vectors: %s", len(rows), exc)
                return
        self._trim()

    def embed_query(self, text: str) -> list[float]:
        return self._inner.embed_query(text)  # queries rarely repeat; the cache is for documents

    def health(self) -> bool:
        return self._inner.health()

    def close(self) -> None:
        with self._lock:
            self._db.close()
            for older in self._older:
                older.close()
        self._inner.close()

    def _lookup(self, keys: set[str]) -> dict[str, list[float]]:
        found = self._select(self._db, sorted(keys))
        self._touch(list(found))
        rest = sorted(keys - found.keys())
        for older in self._older:
            if not rest:
                break
            kept = self._select(older, rest)
            if kept:  # into the shared cache, so another vault or data dir finds them too
                self._store([(key, np.asarray(vec, dtype=np.float32).tobytes()) for key, vec in kept.items()])
                found |= kept
                rest = [key for key in rest if key not in kept]
        return found

    def _select(self, db: sqlite3.Connection, ordered: list[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(ordered), _LOOKUP_BATCH):
                batch = ordered[start : start + _LOOKUP_BATCH]
                marks = ",".join("?" * len(batch))
                try:
                    rows = db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch)
                    for key, blob in rows:
                        found[key] = np.frombuffer(blob, dtype=np.float32).tolist()
                except sqlite3.Error as exc:  # an unreadable old cache: its texts are embedded again
                    if db is self._db:
                        raise
                    log.warning("embedding cache: cannot read an earlier cache: %s", exc)
                    return found
        return found

    def _touch(self, keys: list[str]) -> None:
        """Marks vectors used today (once a day: most lookups write nothing), so the cap drops the others."""
        if not keys:
            return
        today = int(time.time()) // _DAY
        with self._lock:
            try:
                for start in range(0, len(keys), _LOOKUP_BATCH):
                    batch = keys[start : start + _LOOKUP_BATCH]
                    marks = ",".join("?" * len(batch))
                    self._db.execute(
                        f"UPDATE vectors SET used = ? WHERE (used IS NULL OR used < ?) AND key IN ({marks})",
                        [today, today, *batch],
                    )
                self._db.commit()
            except sqlite3.Error as exc:  # busy past the timeout, a full disk: only the order of eviction
                self._db.rollback()
                log.warning("embedding cache: could not mark %d vectors used: %s", len(keys), exc)

    def _trim(self) -> None:
        """Drops the least recently used vectors while the file holds more than `max_bytes`."""
        with self._lock:
            try:
                page = self._db.execute("PRAGMA page_size").fetchone()[0]
                pages = self._db.execute("PRAGMA page_count").fetchone()[0]
                free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
                held = (pages - free) * page
                if held <= self._max_bytes:
                    return
                rows = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
                # down to 90% of the cap, so the next commits do not trim again at once
                drop = max(1, int(rows * (1 - 0.9 * self._max_bytes / held)))
                self._db.execute(
                    "DELETE FROM vectors WHERE key IN "
                    "(SELECT key FROM vectors ORDER BY used IS NOT NULL, used LIMIT ?)",
                    (drop,),
                )
                self._db.commit()
                log.info(
                    "embedding cache: over %d MB, dropped %d vectors used least recently",
                    self._max_bytes >> 20,
                    drop,
                )
            except sqlite3.Error as exc:
                self._db.rollback()
                log.warning("embedding cache: could not trim: %s", exc)


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=_BUSY_SECONDS, check_same_thread=False
    )
