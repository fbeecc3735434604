"""Deterministic point ids: re-indexing a note overwrites its points instead of duplicating them."""

from __future__ import annotations

import hashlib
import uuid

_NAMESPACE = uuid.UUID("6f1c7c9e-4d0a-4d8e-9a53-0b6b2f1f6a11")


def chunk_point_id(note_path: str, chunk_index: int) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{note_path}\x00{chunk_index}"))


def note_point_id(note_path: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"note\x00{note_path}"))


def link_point_id(source_path: str, position: int) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"link\x00{source_path}\x00{position}"))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def memory_point_id(key: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"memory\x00{key}"))
