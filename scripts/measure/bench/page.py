"""How quick the look-inside page is: from opening it to the first results shown, on the example vault with
the embedded default (edge Qdrant + MiniLM, fully dense), in Debian's Chromium driven by Playwright (as in
tests/api/test_page_in_browser.py). Each run opens the page in a fresh browser context (nothing cached),
types a question as soon as the page's HTML has loaded and presses Enter; the time is the page's own clock
(performance.now(), from the start of the navigation) when the first result enters the list. Also: when the
HTML had loaded (DOMContentLoaded) and how long /search took (Resource Timing). Writes its section of
docs/benchmarks.md. Goal (issue 36): ≤ 1 s; a benchmark, not a test.

    .venv/bin/python -m scripts.measure.bench.page [--runs 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
from pathlib import Path

from backend.api.routes.page import page_files
from backend.config import EXAMPLE_VAULT, REPO_ROOT
from scripts.measure.common import machine, percentile, replace_section, section_head
from scripts.measure.service import ServiceProcess

REPORT = REPO_ROOT / "docs" / "benchmarks.md"
SECTION = "## The look-inside page"
QUESTIONS = [
    "how much do I owe Sreenivas?",
    "knee exercises",
    "what did we decide about the database migration?",
    "tomato rasam recipe",
    "restic backup",
]
# the first result's arrival, on the page's clock: set before any of the page's scripts run
FIRST_RESULT = """
window.__firstResult = null;
new MutationObserver((_, observer) => {
    const list = document.getElementById('results');
    if (list && list.querySelector('.result')) {
        window.__firstResult = performance.now();
        observer.disconnect();
    }
}).observe(document, {childList: true, subtree: true});
"""


def _one_run(browser: object, url: str, question: str) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})  # type: ignore[attr-defined]
    context.add_init_script(FIRST_RESULT)
    page = context.new_page()
    try:
        page.goto(f"{url}/", wait_until="domcontentloaded")
        page.fill("#q", question)
        page.press("#q", "Enter")
        page.wait_for_selector("#results .result")
        return page.evaluate(
            """() => ({
                shown: window.__firstResult,
                html: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
                search: performance.getEntriesByType('resource')
                    .filter(e => e.name.endsWith('/search')).map(e => e.duration)[0],
            })"""
        )
    finally:
        context.close()


def bench(runs: int, data_dir: Path) -> dict:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("Chromium is not installed: apt-get install chromium")
    with ServiceProcess(EXAMPLE_VAULT, data_dir) as service:
        status = service.wait_dense(timeout=600, give_up=True)
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            for warm in range(3):  # the model's first queries and the service's first pages
                _one_run(browser, service.url, QUESTIONS[warm])
            rows = [_one_run(browser, service.url, QUESTIONS[i % len(QUESTIONS)]) for i in range(runs)]
            browser.close()
    shown = [row["shown"] for row in rows]
    return {
        "notes": status.get("indexed_notes"),
        "chunks": status.get("indexed_chunks"),
        "runs": len(rows),
        "shown": statistics.median(shown),
        "shown_p95": percentile(shown, 0.95),
        "html": statistics.median(row["html"] for row in rows),
        "search": statistics.median(row["search"] for row in rows),
        "bytes": sum(path.stat().st_size for path in page_files().values()),
    }


def _write(result: dict, where: str) -> str:
    lines = [
        *section_head(SECTION, "bench-page", where),
        "The page at `/` opened in headless Chromium (Debian's, driven by Playwright) in a fresh",
        "context each run (nothing cached), a question typed as soon as its HTML had loaded, Enter; the",
        "time is the page's own clock from the start of the navigation to the first result in the list.",
        f"The example vault ({result['notes']} notes, {result['chunks']} chunks), embedded default,",
        "fully dense; five questions in turn, after three warm-up runs. Goal (issue 36): ≤ 1 s.",
        "",
        "| runs | page + assets | HTML loaded | /search | first results (median) | p95 |",
        "|---|---|---|---|---|---|",
        f"| {result['runs']} | {result['bytes'] / 1024:.1f} KB | {result['html']:.0f} ms "
        f"| {result['search']:.0f} ms | {result['shown']:.0f} ms | {result['shown_p95']:.0f} ms |",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--data-dir", type=Path, default=REPO_ROOT / "data" / "bench-page")
    args = parser.parse_args()
    where = machine()
    section = _write(bench(args.runs, args.data_dir), where)
    print(section)
    replace_section(REPORT, SECTION, section)


if __name__ == "__main__":
    main()
