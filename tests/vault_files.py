"""Writing notes into a test vault (real files in a temp folder)."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
