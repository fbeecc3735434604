"""What the benchmark scripts share: the machine they ran on, percentiles, median and spread."""

from __future__ import annotations

import os
import platform
import random
import re
import shutil
import statistics
import sys
from datetime import datetime
from pathlib import Path


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            kb = int(next(line.split()[1] for line in fh if line.startswith("MemTotal")))
        memory = f", {kb / 1024**2:.0f} GB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return f"{model}, {os.cpu_count()} cores{memory}, {python}, load average {load:.1f} at the start"


def drawn_questions(notes: list[Path], count: int, rng: random.Random) -> list[str]:
    """`count` questions of three words drawn from the notes' own words (letters only): questions a vault
    can always match, the same for every checkout given the same `rng`."""
    words = [w for p in notes for w in p.read_text(encoding="utf-8", errors="replace").split() if w.isalpha()]
    return [" ".join(rng.sample(words, 3)) for _ in range(count)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def spread(values: list[float], unit: str = "", digits: int = 1) -> str:
    """'median (min-max, n=N)': the median of repeated runs and how far apart they were."""
    if not values:
        return "n/a"
    median = statistics.median(values)
    if len(values) == 1:
        return f"{median:.{digits}f}{unit} (n=1)"
    return f"{median:.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f}, n={len(values)})"


def subset_vault(source: Path, notes: int, target: Path) -> Path:
    """A copy of the first `notes` notes of `source` (sorted by path), with their folders."""
    hidden = lambda path: any(part.startswith(".") for part in path.relative_to(source).parts)  # noqa: E731
    paths = sorted(p for p in source.rglob("*.md") if not hidden(p))
    for path in paths[:notes]:
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
    return target


def replace_section(report: Path, heading: str, section: str) -> None:
    """`section` (starting with `heading`, a `## ` line) in place of the report's section of that heading,
    up to the next `## `; appended when the report has none."""
    text = report.read_text(encoding="utf-8")
    if heading in text:
        pattern = rf"{re.escape(heading)}\n.*?(?=\n## |\Z)"
        text = re.sub(pattern, lambda _: section.rstrip("\n"), text, flags=re.DOTALL)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    report.write_text(text, encoding="utf-8")


def log(message: str) -> None:
    """A benchmark's progress, on stderr: its report goes to stdout."""
    print(f"[bench {datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)
