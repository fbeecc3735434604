"""What is said about index generations: one built for another identity than the configured one (another
model, dense windows or keyword encoding), how they differ and which side of search still answers until a
rebuild switches; and one found beside the active one at start, why it is there. The rules are IndexHandle's
(index_handle.py); the words are here, for its errors, its logs and the warnings searches pass on."""

from __future__ import annotations

from backend.domain.models import IndexIdentity


def describe_mismatch(stored: IndexIdentity, configured: IndexIdentity) -> str:
    """How the generation (`stored`) differs from what the service is configured for."""
    if stored.embedding_model != configured.embedding_model or stored.dimension != configured.dimension:
        return (
            f"the index was built with {stored.embedding_model} ({stored.dimension}-d) but the service "
            f"is configured for {configured.embedding_model} ({configured.dimension}-d); "
            "it will not mix models"
        )
    if stored.dense_windows != configured.dense_windows:
        return (
            f"the index's dense vectors were built {_layout(stored.dense_windows)} but the service is "
            f"configured for {_layout(configured.dense_windows)} (DENSE_WINDOW_WORDS); it will not "
            "mix them"
        )
    if stored.document_instruction != configured.document_instruction:
        return (
            f"the index's dense vectors were built with {_instruction(stored.document_instruction)} before "
            "each document but the service is configured for "
            f"{_instruction(configured.document_instruction)} (EMBEDDING_DOCUMENT_INSTRUCTION, or the "
            "model's own); it will not mix them"
        )
    return (
        f"the index's keyword vectors were built with [{stored.keyword_encoding or 'an older encoder'}] "
        f"but the service is configured for [{configured.keyword_encoding}]; it will not mix them"
    )


def until_switch(*, rebuilding: bool) -> str:
    if rebuilding:
        return "until the rebuild running now switches to the configured settings"
    return "until a rebuild (POST /index/rebuild) switches to the configured settings"


def one_side_only(stored: IndexIdentity, configured: IndexIdentity, side: str, *, rebuilding: bool) -> str:
    """Why searches answer from one `side` only ("keyword" or "dense")."""
    until = until_switch(rebuilding=rebuilding)
    return f"{describe_mismatch(stored, configured)}: answered from {side} search only {until}"


def _instruction(text: str) -> str:
    return f"the instruction {text!r}" if text else "no instruction"


def _layout(window_words: int) -> str:
    return f"with windows of up to {window_words} words" if window_words else "one vector a chunk"


def left_by(leftover: str, active: str | None) -> str:
    """Why a generation beside the active one is there, from the order their names were handed out in."""
    if active is None:
        return "left by a first indexing that stopped before it was recorded"
    if _number(leftover) < _number(active):
        return f"replaced by {active} when a rebuild finished (it was not dropped then)"
    return "left by a rebuild that stopped before it switched"


def _number(generation: str) -> int:
    """N of a generation named "gN" (the catalog's names: handed out in increasing order)."""
    digits = generation[1:]
    return int(digits) if digits.isdigit() else -1
