"""Parse and chunk every note of the shared corpora; print problems, chunk counts and timing.

Usage: .venv/bin/python -m scripts.measure.parsing.corpus_report [VAULT ...]  (default: the 3 shared vaults)
A crash in the parser or chunker is reported per note and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

from backend.config import REPO_ROOT
from backend.domain.models import Chunk
from backend.domain.notes.chunking import chunk_note
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.scanner import scan_vault_detailed

CORPORA = REPO_ROOT.parent / "shared" / "corpora"
DEFAULT_VAULTS = [CORPORA / name / "vault" for name in ("obsidian-help", "zettelkasten", "scifact")]


def _matches_file(text: str, chunk: Chunk) -> bool:
    """The chunk text starts on its start_line and ends on its end_line (title-only chunks aside)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff").split("\n")
    window = lines[chunk.start_line - 1 : chunk.end_line]
    if not chunk.text.strip():
        return False
    if "\n".join(window).find(chunk.text) >= 0:
        first, last = chunk.text.split("\n")[0], chunk.text.split("\n")[-1]
        return first in window[0] and last in window[-1]
    return chunk.heading_path == () and chunk.start_line == chunk.end_line == 1


def report(vault: Path, max_tokens: int = 200, overlap_tokens: int = 30) -> bool:
    started = time.perf_counter()
    scan = scan_vault_detailed(vault)
    scanned = time.perf_counter()
    problems: Counter[str] = Counter()
    notes_with_problems = 0
    per_note: list[int] = []
    words: list[int] = []
    crashes: list[str] = []
    bad_ranges = 0
    parse_s = chunk_s = 0.0
    for file in scan.files:
        text = file.abs_path.read_bytes().decode("utf-8-sig", errors="replace")
        try:
            t0 = time.perf_counter()
            note = parse_note(file.rel_path, text)
            t1 = time.perf_counter()
            chunks = chunk_note(note, max_tokens=max_tokens, overlap_tokens=overlap_tokens)
            chunk_s += time.perf_counter() - t1
            parse_s += t1 - t0
        except Exception:  # the point of this script is to find these
            crashes.append(f"{file.rel_path}\n{traceback.format_exc()}")
            continue
        bad_ranges += sum(not _matches_file(text, c) for c in chunks)
        notes_with_problems += bool(note.problems)
        problems.update(p.split(":", 1)[0] for p in note.problems)
        per_note.append(len(chunks))
        words.extend(len(c.text.split()) for c in chunks)
    total = time.perf_counter() - started
    print(f"== {vault}")
    print(f"notes: {len(scan.files)} parsed, {len(scan.skipped)} skipped by scanner, crashes: {len(crashes)}")
    print(f"chunks whose text is not on their start_line..end_line: {bad_ranges}")
    print(f"problems: {notes_with_problems} notes; by kind: {dict(problems.most_common())}")
    if per_note:
        dist = Counter(min(n, 10) for n in per_note)
        print(
            f"chunks: {sum(per_note)} total; per note median {statistics.median(per_note)}, "
            f"mean {statistics.fmean(per_note):.2f}, max {max(per_note)}; "
            f"distribution (10 = 10+): {dict(sorted(dist.items()))}"
        )
        print(f"words per chunk: median {statistics.median(words)}, max {max(words)}")
    print(f"time: {total:.1f}s (scan {scanned - started:.1f}s, parse {parse_s:.1f}s, chunk {chunk_s:.1f}s)")
    for crash in crashes[:5]:
        print(crash)
    return not crashes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("vaults", nargs="*", type=Path, metavar="VAULT", help="default: the 3 shared vaults")
    args = parser.parse_args(argv)
    ok = [report(v) for v in args.vaults or DEFAULT_VAULTS]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
