"""A persistent embedding cache in front of any embedder.

Keyed by the model name and a hash of the exact embedded text, stored in SQLite under DATA_DIR, so unchanged
chunks of an edited note, a renamed note and a rebuild of an unchanged vault cost no embedding calls. The
model is part of the key: vectors of another model are never returned. It relies on a text's vector not
depending on the texts embedded with it (the in-process int8 variants embed one text a call for that).

Vectors are committed as they are made, `COMMIT_EVERY` texts at a time, not once a call is done: a call of
the dense pass (1024 texts, up to a minute on 2 cores) killed half-way keeps the half it made, and the
restart embeds only the rest.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from backend.application.ports import Embedder

log = logging.getLogger(__name__)

_LOOKUP_BATCH = 500  # keys per SELECT: well under SQLite's variable limit
# Texts per call of the model behind the cache, each call's vectors committed before the next: 1-3 s of work
# in-process, and two requests of OLLAMA_BATCH_SIZE 64 in flight at OLLAMA_CONCURRENCY 2.
COMMIT_EVERY = 128


def cache_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


class CachedEmbedder:
    def __init__(self, inner: Embedder, path: Path) -> None:
        self._inner = inner
        path.parent.mkdir(parents=True, exist_ok=True)
        # one connection shared by the worker threads, serialised by our lock
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [cache_key(self.model_name, text) for text in texts]
        found = self._lookup(set(keys))
        missing = [i for i, key in enumerate(keys) if key not in found]
        for start in range(0, len(missing), COMMIT_EVERY):
            piece = missing[start : start + COMMIT_EVERY]
            fresh = self._inner.embed_documents([texts[i] for i in piece])
            rows = [
                (keys[i], np.asarray(vec, dtype=np.float32).tobytes())
                for i, vec in zip(piece, fresh, strict=True)
            ]
            self._store(rows)
            for i, vec in zip(piece, fresh, strict=True):
                found[keys[i]] = list(vec)
        with self._lock:
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        return [found[key] for key in keys]

    def _store(self, rows: list[tuple[str, bytes]]) -> None:
        with self._lock:
            try:
                self._db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", rows)
                self._db.commit()
            except sqlite3.Error as exc:  # e.g. a full disk: the vectors are good, only not kept for later
                self._db.rollback()
                log.warning("embedding cache: could not keep %d vectors: %s", len(rows), exc)

    def embed_query(self, text: str) -> list[float]:
        return self._inner.embed_query(text)  # queries rarely repeat; the cache is for documents

    def health(self) -> bool:
        return self._inner.health()

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self._inner.close()

    def _lookup(self, keys: set[str]) -> dict[str, list[float]]:
        ordered = sorted(keys)
        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(ordered), _LOOKUP_BATCH):
                batch = ordered[start : start + _LOOKUP_BATCH]
                marks = ",".join("?" * len(batch))
                for key, blob in self._db.execute(
                    f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch
                ):
                    found[key] = np.frombuffer(blob, dtype=np.float32).tolist()
        return found
