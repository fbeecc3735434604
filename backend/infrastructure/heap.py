"""The cyclic garbage collector in a long-running service that holds its index's state in memory.

A vault of 53k notes keeps ~230k long-lived objects (note records, names, the vault's file map); CPython's
full collection walks all of them, ~145 ms with the GIL held, once every ~200 searches: the search p99 at
53k notes was 1.7x the one at 13k (issue 28). `settle_heap` collects once, then moves every object alive
into the collector's permanent generation (`gc.freeze`), so later collections walk only what is new; it is
called when the index has been loaded and after each job, so what a job added is settled too. Objects are
unfrozen first each time, so garbage made of once-frozen objects is found by that collection.
"""

from __future__ import annotations

import gc
import logging
import threading
import time

log = logging.getLogger(__name__)

_lock = threading.Lock()  # two jobs ending at once settle one after the other


def settle_heap() -> None:
    """Collect everything once, then leave what is alive out of later collections."""
    with _lock:
        started = time.perf_counter()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        log.debug(
            "heap settled in %.0f ms: %d objects kept out of collections",
            (time.perf_counter() - started) * 1000,
            gc.get_freeze_count(),
        )


def freeze_heap() -> None:
    """Leave what is alive now out of later collections, without collecting first: for state read in while
    the service answers (the search memory's warm-up), where a full collection holds the interpreter and
    stalls every request (350 ms on the Zettelkasten's heap); a little garbage frozen with it waits for the
    next `settle_heap`, which unfreezes everything first."""
    with _lock:
        gc.freeze()
