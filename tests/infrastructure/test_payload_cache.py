"""The payloads kept between searches are never older than the store (backend/infrastructure/qdrant/
payload_cache.py); the store-level behaviour is in tests/contract/test_chunk_store_contract.py."""

from __future__ import annotations

from backend.infrastructure.qdrant.payload_cache import PayloadCache, payload_bytes


def _payload(note: str, text: str) -> dict[str, object]:
    return {"note_path": note, "content": text}


def test_a_read_that_began_before_a_write_is_not_kept_after_it() -> None:
    cache = PayloadCache(1_000_000)
    epoch = cache.epoch  # a search starts reading the store...
    cache.forget(["p1"])  # ... a writer rewrites p1 and drops its entry meanwhile
    cache.keep(epoch, {"p1": _payload("a.md", "old")})  # the search's (old) read arrives late
    assert cache.found(["p1"]) == ({}, ["p1"])


def test_kept_payloads_are_found_until_their_note_is_forgotten() -> None:
    cache = PayloadCache(1_000_000)
    cache.keep(
        cache.epoch, {"p1": _payload("a.md", "x"), "p2": _payload("a.md", "y"), "p3": _payload("b.md", "z")}
    )
    found, missing = cache.found(["p1", "p3", "p4"])
    assert found == {"p1": _payload("a.md", "x"), "p3": _payload("b.md", "z")}
    assert missing == ["p4"]
    cache.forget_note("a.md")
    assert cache.found(["p1", "p2", "p3"])[1] == ["p1", "p2"]


def test_the_least_recently_read_leave_first() -> None:
    cache = PayloadCache(2 * payload_bytes(_payload("a.md", "1")))
    cache.keep(cache.epoch, {"p1": _payload("a.md", "1"), "p2": _payload("b.md", "2")})
    cache.found(["p1"])  # p1 read again: p2 is now the oldest
    cache.keep(cache.epoch, {"p3": _payload("c.md", "3")})
    assert cache.found(["p1", "p2", "p3"])[1] == ["p2"]
    assert len(cache) == 2


def test_no_capacity_keeps_nothing() -> None:
    cache = PayloadCache(0)
    cache.keep(cache.epoch, {"p1": _payload("a.md", "1")})
    assert cache.found(["p1"]) == ({}, ["p1"])


def test_warming_keeps_what_fits_and_makes_nothing_leave() -> None:
    one = payload_bytes(_payload("a.md", "1"))
    cache = PayloadCache(3 * one)
    cache.keep(cache.epoch, {"p1": _payload("a.md", "1")})
    kept = cache.keep(
        cache.epoch,
        {
            "p1": _payload("a.md", "1"),
            "p2": _payload("b.md", "2"),
            "p3": _payload("c.md", "3"),
            "p4": _payload("d.md", "4"),
        },
        only_into_room=True,
    )
    assert kept == 2
    assert cache.full
    assert cache.found(["p1", "p2", "p3", "p4"])[1] == ["p4"]
    assert cache.used == 3 * one
