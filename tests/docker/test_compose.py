"""docker-compose.yml and its agent overlay as users run them, with the real tools: Compose v2 (`docker
compose`, the plugin scripts/compose_v2.py installs) and Debian's docker-compose 1.29. Each tool reads and
checks the files, and starts the one-machine mode (`up -d backend-embedded`: the backend alone on the
embedded default) from the image built by this run.

The Qdrant server and Ollama services cannot start here (no image registry for their images): their
wiring is checked in tests/test_deployment_files.py; docs/deployment.md says what has and has not run."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from backend.api.routes.page import CONTENT_SECURITY_POLICY
from tests.docker.engine import Engine, docker
from tests.docker.images import REPO, BuiltImage, inspect, logs
from tests.live_server import answers, indexed, wait_until
from tests.ports import refused_port

COMPOSE_FILE = REPO / "docker-compose.yml"
AGENT_FILE = REPO / "docker-compose.agent.yml"
STACK = {"qdrant", "ollama", "ollama-pull", "backend"}
GRACE_SECONDS = 10  # Compose's default stop_grace_period
# the variables the files read, so that the shell running the tests does not change what they mean
READ_BY_THE_FILES = ("VAULT_DIR", "API_KEY", "OPENCLAW_GATEWAY_TOKEN", "BACKEND_IMAGE", "BACKEND_PORT")


@dataclass(frozen=True)
class Compose:
    name: str
    command: tuple[str, ...]

    def __call__(
        self, *args: str, env: dict[str, str] | None = None, files: tuple[Path, ...] = (COMPOSE_FILE,)
    ) -> subprocess.CompletedProcess[str]:
        clean = {
            k: v for k, v in os.environ.items() if k not in READ_BY_THE_FILES and not k.startswith("COMPOSE_")
        }
        options = [part for file in files for part in ("--file", str(file))]
        return subprocess.run(
            [*self.command, *options, *args],
            cwd=REPO,
            env={**clean, **(env or {})},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )


def _version(command: list[str]) -> str:
    try:
        result = subprocess.run([*command, "version", "--short"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout.strip().lstrip("v") if result.returncode == 0 else ""


def find_tool(name: str) -> Compose | None:
    """`v2`: the `docker compose` plugin; `v1`: a docker-compose 1.x on PATH (Debian's is 1.29.2)."""
    if name == "v2":
        found = _version(["docker", "compose"]).startswith("2.")
        return Compose("Compose v2", ("docker", "compose")) if found else None
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = shutil.which("docker-compose", path=folder)
        if candidate and _version([candidate]).startswith("1."):
            return Compose("docker-compose 1.x", (candidate,))
    return None


@pytest.fixture(scope="module", params=["v2", "v1"])
def compose(request: pytest.FixtureRequest) -> Compose:
    tool = find_tool(request.param)
    if tool is None:
        wanted = "docker compose (v2)" if request.param == "v2" else "docker-compose 1.x"
        pytest.skip(f"{wanted} is missing: `make test` installs it when run as root")
    return tool


def test_the_tool_accepts_the_files_and_sees_the_stack(compose: Compose) -> None:
    checked = compose("config")
    assert checked.returncode == 0, checked.stderr
    # as the tool resolved the file: the stack starts by default, the one-machine mode only when named
    services = yaml.safe_load(checked.stdout)["services"]
    assert {name for name, service in services.items() if not service.get("profiles")} == STACK
    with_profile = compose("--profile", "embedded", "config")
    assert with_profile.returncode == 0, with_profile.stderr
    embedded = yaml.safe_load(with_profile.stdout)["services"]["backend-embedded"]
    assert embedded["profiles"] == ["embedded"]
    assert "depends_on" not in embedded


def test_the_agent_overlay_is_accepted_with_a_key_and_refused_without(compose: Compose) -> None:
    files = (COMPOSE_FILE, AGENT_FILE)
    keys = {"API_KEY": "k" * 48, "OPENCLAW_GATEWAY_TOKEN": "t" * 48}
    accepted = compose("config", "--quiet", files=files, env=keys)
    assert accepted.returncode == 0, accepted.stderr
    refused = compose("config", "--quiet", files=files, env={"OPENCLAW_GATEWAY_TOKEN": "t" * 48})
    assert refused.returncode != 0
    assert "set API_KEY" in refused.stderr


@pytest.fixture
def one_machine(
    compose: Compose, docker_engine: Engine, image: BuiltImage, run_id: str, tmp_path: Path
) -> Iterator[tuple[Compose, dict[str, str], str]]:
    vault = tmp_path / "vault"
    shutil.copytree(REPO / "docs" / "example-vault", vault)
    project = f"kb-test-{run_id}-{compose.command[-1].rsplit('/', 1)[-1]}".lower().replace(".", "-")
    env = {"VAULT_DIR": str(vault), "BACKEND_IMAGE": image.tag, "BACKEND_PORT": str(refused_port())}
    try:
        yield compose, env, project
    finally:
        # as the docs say to: Compose v2's plain `down` leaves the containers of profiles not named running
        down = compose("--project-name", project, "--profile", "embedded", "down", "--volumes", env=env)
        assert down.returncode == 0, down.stderr
        left = docker("ps", "--all", "--quiet", "--filter", f"label=com.docker.compose.project={project}")
        assert left.stdout.split() == [], f"`down` left {project}'s containers behind"
        volumes = docker("volume", "ls", "--quiet", "--filter", f"label=com.docker.compose.project={project}")
        assert volumes.stdout.split() == [], f"`down --volumes` left {project}'s volumes behind"


def test_the_one_machine_mode_serves_the_vault_alone_and_stops_cleanly(
    one_machine: tuple[Compose, dict[str, str], str],
) -> None:
    compose, env, project = one_machine
    started = compose("--project-name", project, "up", "--detach", "backend-embedded", env=env)
    assert started.returncode == 0, started.stderr
    (container,) = compose("--project-name", project, "ps", "--quiet", env=env).stdout.split()  # it alone
    url = f"http://127.0.0.1:{env['BACKEND_PORT']}"
    wait_until(lambda: answers(f"{url}/health"), "the backend to answer /health", timeout=180)
    wait_until(lambda: indexed(url), "the backend to index the vault", timeout=300)
    query = {"query": "how much do I owe Sreenivas?", "mode": "hybrid"}
    answer = httpx.post(f"{url}/search", json=query, timeout=30).json()
    assert (answer["mode"], answer["status"]) == ("hybrid", "healthy")
    assert answer["results"][0]["note_path"] == "Finance/Money with Sreenivas.md"
    status = httpx.get(f"{url}/index/status", timeout=10).json()
    assert (status["store"], status["embedder"]["provider"]) == ("embedded", "onnx")
    assert inspect(container)["Config"]["Image"] == env["BACKEND_IMAGE"]  # this run's image, not a build
    for path in ("/", "/page/main.js"):  # the look-inside page, on the stack as on `make run`
        page = httpx.get(f"{url}{path}", timeout=10)
        assert page.status_code == 200, path
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path

    began = time.monotonic()
    stopped = compose("--project-name", project, "stop", env=env)  # SIGTERM, SIGKILL after the grace period
    took = time.monotonic() - began
    assert stopped.returncode == 0, stopped.stderr
    assert inspect(container)["State"]["ExitCode"] == 0, logs(container)[-2000:]
    assert took < GRACE_SECONDS, f"compose stop took {took:.1f} s"
    print(f"{compose.name}: one-machine mode served, stopped in {took:.1f} s")
