"""One model per process, however many vaults use it (issue 46): each vault of a service leases the model its
settings name, and vaults naming the same one (the same in-process weights and variant, or the same server
and model) share one instance. An in-process MiniLM is ~60 MB resident with its two sessions: a second vault
no longer loads its own.

A question asked of several vaults is embedded once: while one vault's search embeds a text, another asking
the same text waits for that vector instead of computing it again, and the last `RECENT` texts' vectors are
kept (the same text, the same model: the same vector). The embedding cache stays each vault's own, in front
of the lease (backend/adapters.py wires it so): only the model is shared.

A lease's `close()` gives it back; the model is closed when its last lease is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future

from backend.application.ports import Embedder

RECENT = 16  # texts whose query vectors are kept: a question and its vaults, a turn's recall and search


class _Shared:
    """A model and what its leases share: the count of leases, the queries in flight and the recent ones."""

    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.leases = 0
        self._lock = threading.Lock()
        self._pending: dict[str, Future[list[float]]] = {}
        self._recent: OrderedDict[str, list[float]] = OrderedDict()

    def query(self, text: str) -> list[float]:
        with self._lock:
            kept = self._recent.get(text)
            if kept is not None:
                self._recent.move_to_end(text)
                return list(kept)
            pending = self._pending.get(text)
            mine = pending is None
            if pending is None:
                pending = self._pending[text] = Future()
        if not mine:
            return list(pending.result())  # the vault asking first embeds it; its failure is ours too
        try:
            vector = self.model.embed_query(text)
        except BaseException as exc:
            with self._lock:
                del self._pending[text]
            pending.set_exception(exc)
            raise
        with self._lock:
            self._recent[text] = vector
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
            del self._pending[text]
        pending.set_result(vector)
        return list(vector)


class ModelLease:
    """Satisfies `backend.application.ports.Embedder`: a vault's use of a shared model."""

    def __init__(self, shared: _Shared, give_back: Callable[[], None]) -> None:
        self._shared = shared
        self._give_back: Callable[[], None] | None = give_back
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self._shared.model.model_name

    @property
    def dimension(self) -> int:
        return self._shared.model.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._shared.model.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._shared.query(text)

    def health(self) -> bool:
        return self._shared.model.health()

    def close(self) -> None:
        """Give the model back (once): closed with its last lease. As a closed model does, a later call
        still answers (the model loads again)."""
        with self._lock:
            give_back, self._give_back = self._give_back, None
        if give_back is not None:
            give_back()


class SharedModels:
    """The models of a process, by what makes two of them the same (`key`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[Hashable, _Shared] = {}

    def lease(self, key: Hashable, build: Callable[[], Embedder]) -> ModelLease:
        """The model `key` names, built by `build` when no vault holds it now."""
        with self._lock:
            shared = self._models.get(key)
            if shared is None:
                shared = self._models[key] = _Shared(build())  # building loads nothing yet: cheap
            shared.leases += 1
        return ModelLease(shared, lambda: self._give_back(key, shared))

    def held(self) -> int:
        """Models held now."""
        with self._lock:
            return len(self._models)

    def _give_back(self, key: Hashable, shared: _Shared) -> None:
        with self._lock:
            shared.leases -= 1
            if shared.leases > 0:
                return
            if self._models.get(key) is shared:
                del self._models[key]
        shared.model.close()


MODELS_IN_PROCESS = SharedModels()
