"""The image under test: built from this checkout's Dockerfile on the Debian stand-in for python:3.11-slim
(scripts/docker_base.py; no image registry is reachable here), and what a container of it says."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from scripts.docker_base import base_image_tag, ensure_base_image, image_exists
from tests.docker.engine import docker

REPO = Path(__file__).resolve().parents[2]
LABEL = "org.knowledge-bridge.test"  # on every container and volume the tests make


@dataclass(frozen=True)
class BuiltImage:
    id: str
    tag: str  # unique to this run: compose files name images by tag
    base: str
    size_bytes: int
    base_seconds: float  # 0 when the base was there already
    build_seconds: float


def build_image(work_dir: Path, run_id: str) -> BuiltImage:
    """This checkout's image on the stand-in base (made first when the engine lacks it); the builder's layer
    cache makes a rebuild after a code change cost seconds, not minutes."""
    started = time.monotonic()
    cached = image_exists(base_image_tag())
    base = ensure_base_image(work_dir)
    base_seconds = 0.0 if cached else time.monotonic() - started
    iid = work_dir / "image.id"
    tag = f"knowledge-bridge:test-{run_id}"
    started = time.monotonic()
    # The classic builder, as Debian's docker.io builds by default: its layers are the next run's cache.
    docker(
        "build",
        "--build-arg",
        f"PYTHON_IMAGE={base}",
        "--iidfile",
        str(iid),
        "--tag",
        tag,
        str(REPO),
        timeout=1500,
        env={"DOCKER_BUILDKIT": "0"},
    )
    build_seconds = time.monotonic() - started
    image_id = iid.read_text().strip()
    size = int(docker("image", "inspect", "--format", "{{.Size}}", image_id).stdout.strip())
    return BuiltImage(image_id, tag, base, size, base_seconds, build_seconds)


def inspect(container: str) -> dict:
    found: list[dict] = json.loads(docker("inspect", container).stdout)
    return found[0]


def published_url(container: str) -> str:
    """The container's port 8000 as published on loopback (`-p 127.0.0.1::8000`)."""
    mapping = docker("port", container, "8000/tcp").stdout.split()[0]  # 127.0.0.1:32768
    return f"http://{mapping}"


def logs(container: str) -> str:
    result = docker("logs", container, check=False)
    return result.stdout + result.stderr


def layer_sizes(image: str) -> list[tuple[int, str]]:
    """(bytes, instruction) per layer with content, biggest first: what takes the image's space."""
    rows = docker("history", "--no-trunc", "--human=false", "--format", "{{.Size}}\t{{.CreatedBy}}", image)
    layers = []
    for line in rows.stdout.splitlines():
        size, _, created_by = line.partition("\t")
        if int(size) > 0:
            layers.append((int(size), " ".join(created_by.split())[:100] or "(the base image)"))
    return sorted(layers, reverse=True)


def unique_suffix() -> str:
    return f"{os.getpid()}-{int(time.time())}"
