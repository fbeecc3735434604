"""/docs and /redoc render in a real browser with no internet: headless Chromium (Debian's `chromium`
package) loads the pages from the service, every other host made unreachable, and the rendered DOM holds the
/search operation. Skips, saying why, where Chromium is not installed (`make test` installs it as root)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests import live_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed: `apt-get install chromium` (make test does it when run as root)",
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = load_settings(data_dir=tmp_path_factory.mktemp("data"), embedding_provider="none", watch=False)
    with live_server.serving(create_app(settings)) as url:
        yield url


def rendered(url: str, profile: Path) -> str:
    """The DOM after the page's scripts ran, in a browser that can reach nothing but 127.0.0.1."""
    assert CHROMIUM is not None
    result = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
            # no internet: every host name but loopback fails, so a CDN script could not load
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--virtual-time-budget=20000", "--dump-dom", url,
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_swagger_ui_renders_the_search_operation_offline(base: str, tmp_path: Path) -> None:
    dom = rendered(f"{base}/docs", tmp_path / "profile")
    assert 'id="operations-search-search"' in dom  # Swagger UI built the operation from /openapi.json
    assert 'id="operations-notes-get_note"' in dom


def test_redoc_renders_the_search_operation_offline(base: str, tmp_path: Path) -> None:
    dom = rendered(f"{base}/redoc", tmp_path / "profile")
    assert 'id="tag/search/operation/search"' in dom


def test_the_pages_load_nothing_from_another_host(base: str) -> None:
    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{base}{page}").text
        assert "/docs-assets/" in html
        assert "http://" not in html
        assert "https://" not in html
    assert httpx.get(f"{base}/docs-assets/swagger-ui-bundle.js").status_code == 200
    assert httpx.get(f"{base}/docs-assets/redoc.standalone.js").status_code == 200
