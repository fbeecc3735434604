"""A deterministic sample of a corpus' notes for the chunking property test (tests/domain/test_chunking.py):
parsing and chunking all 13k notes of the Zettelkasten cost ~35 s of CPU, and most of them are alike.

The sample keeps what could break the chunker: the longest notes (oversized blocks, many chunks), the
shortest (a note with no words, or only a heading), a few of every kind of note (its set of Markdown features
read from the raw text: frontmatter, comments, code, math, tables, embeds, deep headings, text without
spaces, ...; the kind's longest, its shortest and three between), and every STRIDE-th note by path. A
small corpus is read whole."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

LONGEST = 10  # the largest notes, by characters (in the Zettelkasten, Excalidraw drawings of 100-550 kB)
SHORTEST = 50
PER_KIND = 5  # notes of each set of features, from its longest to its shortest
STRIDE = 40  # and every 40th note by path
WHOLE = 1000  # a corpus this small is read whole (the Obsidian help vault: 173 notes)

FEATURES: dict[str, Callable[[str], bool]] = {
    "frontmatter": lambda t: t.startswith(("---", "\ufeff---")),
    "comment": lambda t: "%%" in t,
    "html_comment": lambda t: "<!--" in t,
    "fence": lambda t: "```" in t or "~~~" in t,
    "indented_code": lambda t: re.search(r"^(    |\t)\S", t, re.M) is not None,
    "math": lambda t: "$$" in t,
    "table": lambda t: re.search(r"^\s*\|.*\|\s*$", t, re.M) is not None,
    "heading": lambda t: re.search(r"^#{1,6} ", t, re.M) is not None,
    "deep_heading": lambda t: re.search(r"^#{3,6} ", t, re.M) is not None,
    "embed": lambda t: "![[" in t,
    "carriage_return": lambda t: "\r" in t,
    "non_ascii": lambda t: not t.isascii(),
    "long_word": lambda t: re.search(r"\S{80,}", t) is not None,
    "blank": lambda t: not t.strip(),
}


def sample_notes(root: Path) -> list[tuple[Path, str]]:
    """(path, raw text) of the sampled notes under `root`, in path order."""
    notes = [(path, path.read_text(errors="replace")) for path in sorted(root.rglob("*.md"))]
    if len(notes) <= WHOLE:
        return notes
    by_size = sorted(range(len(notes)), key=lambda i: (-len(notes[i][1]), notes[i][0]))
    chosen = set(by_size[:LONGEST]) | set(by_size[-SHORTEST:]) | set(range(0, len(notes), STRIDE))
    kinds: dict[tuple[str, ...], list[int]] = {}
    for i in by_size:  # longest first
        kind = tuple(name for name, has in FEATURES.items() if has(notes[i][1]))
        kinds.setdefault(kind, []).append(i)
    for members in kinds.values():  # spread over the sizes: the longest, the shortest and between
        last = len(members) - 1
        chosen.update(members[round(last * k / (PER_KIND - 1))] for k in range(PER_KIND))
    return [notes[i] for i in sorted(chosen)]
