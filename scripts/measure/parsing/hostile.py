"""What a hostile note costs to parse and chunk, at growing sizes: the cost must grow in proportion (no
quadratic blow-up), so MAX_NOTE_BYTES bounds it.

    python -m scripts.measure.parsing.hostile [--repeats 3]      # about 4 minutes with one repeat

Prints, per shape and size, the median seconds of `parse_note` and of `chunk_note`, and the seconds per MB.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from backend.domain.notes.chunking import chunk_note
from backend.infrastructure.markdown.parser import parse_note
from scripts.measure.common import machine

MB = 1_000_000

SHAPES: dict[str, Callable[[int], str]] = {
    "one line of words": lambda size: ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size],
    "one line, no spaces": lambda size: "x" * size,
    "headings": lambda size: "".join(f"# Heading {i}\n\ntext {i}\n\n" for i in range(size // 27)),
    "short lines": lambda size: "x\n" * (size // 2),
    "open brackets": lambda size: "[" * size,
    "nested quotes, one per line": lambda size: "".join("> " * (i % 200) + "x\n" for i in range(size // 200)),
}
SIZES = (MB // 4, MB // 2, MB, 2 * MB)
# the 5 MB line; brackets cost ~30 us each (markdown-it looks for a link label), so smaller sizes
SIZES_BY_SHAPE = {
    "one line of words": (*SIZES, 5 * MB),
    "one line, no spaces": (*SIZES, 5 * MB),
    "open brackets": (MB // 8, MB // 4, MB // 2),
}


def timed(run: Callable[[], object], repeats: int) -> float:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    print(f"machine: {machine()}")
    print("| shape | size | parse s | chunk s | chunks | parse+chunk s per MB |")
    print("|---|---|---|---|---|---|")
    for shape, make in SHAPES.items():
        for size in SIZES_BY_SHAPE.get(shape, SIZES):
            text = make(size)
            parse = timed(lambda text=text: parse_note("hostile.md", text), args.repeats)
            note = parse_note("hostile.md", text)
            chunk = timed(lambda note=note: chunk_note(note), args.repeats)
            chunks = len(chunk_note(note))
            per_mb = (parse + chunk) / (len(text) / MB)
            print(
                f"| {shape} | {len(text) / MB:.2f} MB | {parse:.2f} | {chunk:.2f} | {chunks} | {per_mb:.2f} |"
            )


if __name__ == "__main__":
    main()
