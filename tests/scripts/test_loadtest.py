"""`make loadtest` in miniature: a few clients for a few seconds, so the script keeps working. The full run
(32 clients, 60 s, the real embedder) is `make loadtest`; its figures are in docs/loadtest.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from backend.config import EXAMPLE_VAULT

REPO = Path(__file__).resolve().parents[2]


def test_a_short_load_test_reports_latency_and_no_server_error(tmp_path: Path) -> None:
    report = tmp_path / "loadtest.md"
    result = subprocess.run(
        [sys.executable, "-m", "scripts.measure.load.loadtest", "--vault", str(EXAMPLE_VAULT),
         "--seconds", "3", "--clients", "4", "--edit-every", "0.3", "--provider", "none",
         "--output", str(report)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    text = report.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| ") and "req/s" in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    requests, server_errors, transport_errors = int(cells[0]), int(cells[6]), int(cells[7])
    assert requests > 0
    assert (server_errors, transport_errors) == (0, 0)
    assert all(cell.endswith(" ms") for cell in cells[2:6])  # p50, p95, p99, max
    assert "GET /index/verify consistent" in text  # the watcher kept up with the writer
