"""Windows of a chunk for the dense side: runs of whole blocks short enough for a small embedding model.

MiniLM over a 200-word chunk of a chat session averages a dozen messages into one vector, so a question about
one message matches it weakly (measured: dense 0.60 nDCG@10 on LoCoMo against keyword 0.82). A chunk made of
several blocks (blank-line separated: chat messages, journal entries, list paragraphs) therefore also gets
one vector per window of consecutive blocks, up to `max_words` words, and the index compares a query with
the best of them (Qdrant's MAX_SIM over a multivector). A chunk that is one block (an abstract, a paragraph
of prose) has no windows: its own vector is all there is, exactly as before.
"""

from __future__ import annotations

import re

from backend.domain.notes.chunking import count_words

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def blocks(text: str) -> list[str]:
    """The blank-line separated blocks of `text`, stripped, without empty ones."""
    return [block.strip() for block in _BLANK_LINE.split(text) if block.strip()]


def chunk_windows(text: str, max_words: int) -> list[str]:
    """Consecutive blocks packed greedily up to `max_words` words (a longer block is a window alone), each
    window starting halfway through the previous one so a passage cut by a boundary is whole in a neighbour.

    Empty when the chunk would be a single window: the chunk's own vector covers it.
    """
    if max_words < 1:
        raise ValueError("max_words must be at least 1")
    parts = blocks(text)
    sizes = [count_words(part) for part in parts]
    if len(parts) < 2 or sum(sizes) <= max_words:
        return []
    windows: list[str] = []
    start = 0
    while True:
        end, words = start, 0
        while end < len(parts) and (end == start or words + sizes[end] <= max_words):
            words += sizes[end]
            end += 1
        windows.append("\n\n".join(parts[start:end]))
        if end >= len(parts):
            return windows
        start = max(start + 1, (start + end) // 2)
