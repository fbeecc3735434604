"""What the measurements share: the machine they ran on, percentiles, median and spread, the service's memory
and its Server-Timing header, the sections they write into the reports under docs/, and their progress."""

from __future__ import annotations

import os
import platform
import random
import re
import shutil
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path


def machine() -> str:
    model = platform.machine()  # where /proc/cpuinfo names no model (platform.processor() runs `uname -p`)
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            fields = [line.split(":", 1) for line in fh if ":" in line]
        named = {key.strip(): value.strip() for key, value in reversed(fields)}  # the first CPU's
        model = named.get("model name", model)
        flags = set(named.get("flags", "").split())
    except OSError:
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
    kernels = f", {int8_kernels(flags)}" if flags else ""
    return f"{model}, {os.cpu_count()} cores{memory}{kernels}, {python}, load average {load:.1f} at the start"


def int8_kernels(flags: set[str]) -> str:
    """Which integer instructions the int8 model runs on, by the CPU's flags: onnxruntime picks its kernels by
    them, so one text's vector, and a dev set's figures by a question or two, differ between machines that
    differ here (docs/measurements.md, "The figures depend on the machine's instruction set")."""
    if "avx512_vnni" in flags:
        return "int8 on AVX-512 VNNI"
    if "avx_vnni" in flags:
        return "int8 on AVX-VNNI"
    if "avx512bw" in flags:
        return "int8 on AVX-512 (no VNNI)"
    if "avx2" in flags:
        return "int8 on AVX2 (no VNNI)"
    return "int8 without AVX2"


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


def rss_mb(pid: int) -> float:
    """The resident memory of process `pid` (VmRSS), in MB; NaN where /proc does not say."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
            kb = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
    except (OSError, StopIteration, ValueError):
        return float("nan")
    return kb / 1024


def server_timing(header: str) -> dict[str, float]:
    """Milliseconds by stage from a `Server-Timing` header (`name;dur=1.23, ...`); a part without a duration
    is left out (a checkout that does not time that stage)."""
    spans = {}
    for part in header.split(","):
        name, _, duration = part.strip().partition(";dur=")
        if duration:
            spans[name] = float(duration)
    return spans


def link_models(data_dir: Path, models: Path) -> None:
    """`data_dir`'s models/ as a link to the shared cache of built graphs: a run times the index, not the
    graph's build (minutes), which a fresh temp data dir would do again every time."""
    models.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "models").symlink_to(models.resolve(), target_is_directory=True)


def section_head(heading: str, target: str, where: str) -> list[str]:
    """The first lines of a section that a `make` target writes on its own: its heading, the target, when, and
    on what machine (`where`)."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return [heading, "", f"`make {target}`, {when}:", f"{where}.", ""]


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


def replace_marked(report: Path, start: str, end: str, block: str, *, new: str = "") -> None:
    """`block` (from the `start` marker to the `end` one) in place of the report's block between those
    markers, the rest as it is; appended when the report has none (to `new` when there is no report yet)."""
    text = report.read_text(encoding="utf-8") if report.is_file() else new
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    report.write_text(text, encoding="utf-8")


def log(message: str) -> None:
    """A benchmark's progress, on stderr: its report goes to stdout."""
    print(f"[bench {datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)
