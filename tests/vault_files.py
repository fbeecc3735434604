"""Writing notes into a test vault (real files in a temp folder)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write(root: Path, rel: str, text: str = "note") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_notes(root: Path, notes: Mapping[str, str]) -> Path:
    """Each vault-relative path with its text under `root` (created even when `notes` is empty)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in notes.items():
        write(root, rel, text)
    return root


# Two notes: for tests about the service's state or its embedder, where indexing a larger vault is only time.
TINY_NOTES = {
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n- lemons\n",
    "Sreenivas.md": "# Sreenivas\n\nI owe Sreenivas 1200 rupees for the tickets.\n",
}


def tiny_vault(root: Path, name: str = "vault") -> Path:
    return write_notes(root / name, TINY_NOTES)
