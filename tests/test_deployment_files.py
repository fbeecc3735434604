"""The deployment files (docker-compose.yml, its agent overlay, the healthchecks) describe a stack that can
start; the Dockerfile: test_docker_image.py.

The real tools read the files and start the one-machine mode in tests/docker/ (where a Docker engine runs);
the Qdrant server and Ollama cannot be pulled there, so these tests check what `docker compose up` of the
whole stack would trip over: the files against the official Compose Specification schema, the wiring between
services, the settings the backends receive, and the healthcheck commands themselves (run against a stand-in
HTTP server on loopback).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from tests.dockerfile import final_stage

ROOT = Path(__file__).resolve().parents[1]
COMPOSE_FILE = ROOT / "docker-compose.yml"
ONE_SHOT_CONDITION = "service_completed_successfully"
HEALTH_CONDITIONS = {"service_healthy", "service_started", ONE_SHOT_CONDITION}


# -- loading -----------------------------------------------------------------------------------------------


def compose_spec_schema() -> dict[str, Any]:
    """The Compose Specification schema as vendored (with its Apache-2.0 licence) by check-jsonschema."""
    try:
        dist = distribution("check-jsonschema")
    except PackageNotFoundError:
        pytest.fail("check-jsonschema (dev dependency) is not installed; it ships the compose-spec schema")
    path = Path(str(dist.locate_file("check_jsonschema/builtin_schemas/vendor/compose-spec.json")))
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    return document


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


def env_names(service: dict[str, Any]) -> dict[str, Any]:
    environment = service.get("environment") or {}
    if isinstance(environment, list):
        pairs = (item.split("=", 1) for item in environment)
        return {pair[0]: (pair[1] if len(pair) > 1 else None) for pair in pairs}
    return dict(environment)


def mounts(service: dict[str, Any]) -> list[dict[str, Any]]:
    """Volumes in long syntax, whichever syntax the file uses."""
    result: list[dict[str, Any]] = []
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            result.append(volume)
            continue
        parts = volume.split(":")
        mode = parts[2] if len(parts) > 2 else ""
        result.append({"source": parts[0], "target": parts[1], "read_only": "ro" in mode.split(",")})
    return result


# -- docker-compose.yml ------------------------------------------------------------------------------------


def test_compose_file_is_valid_against_the_compose_specification(compose: dict[str, Any]) -> None:
    schema = compose_spec_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)

    errors = sorted(validator.iter_errors(compose), key=lambda error: list(error.absolute_path))

    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_the_schema_check_rejects_a_broken_compose_file(compose: dict[str, Any]) -> None:
    # Guards against a schema that accepts anything (e.g. a stub or an unresolvable $ref).
    broken = json.loads(json.dumps(compose))
    broken["services"]["backend"]["depends_on"]["qdrant"]["condition"] = "service_ready"
    broken["services"]["backend"]["restart_policy"] = "always"
    schema = compose_spec_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)

    assert len(list(validator.iter_errors(broken))) >= 2


def test_stack_has_the_four_services_and_the_one_machine_mode(services: dict[str, dict[str, Any]]) -> None:
    assert set(services) == {"qdrant", "ollama", "ollama-pull", "backend", "backend-embedded"}
    # a profile: `docker compose up` leaves it out, `docker compose up backend-embedded` starts it alone
    assert services["backend-embedded"]["profiles"] == ["embedded"]
    assert "depends_on" not in services["backend-embedded"]
    assert all("profiles" not in service for name, service in services.items() if name != "backend-embedded")


def test_every_image_is_pinned_to_a_version(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        image = service.get("image")
        if "build" in service:  # its image is the one it builds (BACKEND_IMAGE, a local tag)
            continue
        assert image is not None, f"{name} has neither image nor build"
        if "@sha256:" in image:
            continue
        repository, _, tag = image.rpartition(":")
        assert repository, f"{name}: image {image!r} has no tag"
        assert "/" not in tag, f"{name}: image {image!r} has no tag"
        assert tag != "latest", f"{name}: image {image!r} floats on latest"
        assert re.search(r"\d+\.\d+", tag), f"{name}: image tag {tag!r} is not a version"


def test_every_dependency_exists_and_waits_for_health_or_completion(
    services: dict[str, dict[str, Any]],
) -> None:
    dockerfile_has_healthcheck = any(keyword == "HEALTHCHECK" for keyword, _ in final_stage())
    for name, service in services.items():
        depends_on = service.get("depends_on") or {}
        assert isinstance(depends_on, dict), f"{name}: list-form depends_on only waits for the start"
        for target, rule in depends_on.items():
            assert target in services, f"{name} depends on unknown service {target}"
            condition = rule.get("condition")
            assert condition in HEALTH_CONDITIONS, f"{name} -> {target}: condition {condition!r}"
            dependency = services[target]
            if condition == "service_healthy":
                has_check = "healthcheck" in dependency or (
                    "build" in dependency and dockerfile_has_healthcheck
                )
                assert has_check, f"{name} waits for {target} to be healthy, but {target} has no healthcheck"
            elif condition == ONE_SHOT_CONDITION:
                assert dependency.get("restart") == "no", f"{target} is one-shot, so it must not restart"


def test_backend_waits_for_qdrant_healthy_and_ollama_started_not_for_the_pull(
    services: dict[str, dict[str, Any]],
) -> None:
    # keyword first: a slow or failed `ollama pull` must not keep the backend from starting
    depends_on = services["backend"]["depends_on"]
    assert depends_on == {
        "qdrant": {"condition": "service_healthy"},
        "ollama": {"condition": "service_started"},
    }
    assert services["ollama-pull"]["depends_on"]["ollama"] == {"condition": "service_healthy"}


def test_readme_and_deployment_docs_say_what_compose_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    deployment = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    assert "[docs/deployment.md](docs/deployment.md)" in readme
    assert "Ollama has started (not when the pull finishes" in deployment
    assert "the pull has completed" not in deployment


def test_the_runtime_gets_the_baked_model_owned_by_its_user() -> None:
    copies = [arguments for keyword, arguments in final_stage() if keyword == "COPY"]
    (model,) = [arguments for arguments in copies if "/opt/models" in arguments]
    assert "--chown=app:app" in model.split()


def test_every_backend_env_var_is_a_setting(services: dict[str, dict[str, Any]]) -> None:
    from backend.config import Settings

    known: set[str] = set()
    for field_name, field in Settings.model_fields.items():
        known.add(field_name.lower())
        for alias in (field.alias, field.validation_alias):
            if isinstance(alias, str):
                known.add(alias.lower())

    for backend in ("backend", "backend-embedded"):
        unknown = {name for name in env_names(services[backend]) if name.lower() not in known}
        assert not unknown, f"{backend} gets env vars that Settings ignores: {sorted(unknown)}"


def test_backend_env_values_are_accepted_by_settings(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from backend.adapters import instructions_in_force
    from backend.config import Settings

    environment = env_names(services["backend"])
    # Inside the container these are the mount points; here they must be real directories.
    local_paths = {"VAULT_PATH": tmp_path / "vault", "DATA_DIR": tmp_path / "data"}
    for path in local_paths.values():
        path.mkdir()
    for name, value in environment.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(local_paths.get(name, value)))

    settings = Settings(_env_file=None)  # type: ignore[call-arg]

    assert settings.embedding_provider == "ollama"
    assert settings.embedding_model == "mxbai-embed-large"
    assert settings.qdrant_url == "http://qdrant:6333"
    # the default stack sends mxbai its query instruction, from the table: nothing to set for it
    instructions = instructions_in_force(settings, settings.model_name)
    assert instructions.query == "Represent this sentence for searching relevant passages: "
    assert instructions.document == ""


def test_backend_urls_point_at_services_of_the_stack(services: dict[str, dict[str, Any]]) -> None:
    environment = env_names(services["backend"])
    assert environment["EMBEDDING_PROVIDER"] == "ollama"
    for variable, service in (("QDRANT_URL", "qdrant"), ("OLLAMA_URL", "ollama")):
        assert urlsplit(environment[variable]).hostname == service
    assert environment["HOST"] == "0.0.0.0"
    assert services["ollama-pull"]["environment"]["OLLAMA_HOST"] == "ollama:11434"


def test_model_pulled_is_the_model_the_backend_uses(services: dict[str, dict[str, Any]]) -> None:
    pull = services["ollama-pull"]
    model = env_names(services["backend"])["EMBEDDING_MODEL"]
    assert pull["image"] == services["ollama"]["image"]
    assert pull["entrypoint"][-2:] == ["pull", model]


def test_qdrant_publishes_rest_with_the_dashboard_and_grpc_on_loopback(
    services: dict[str, dict[str, Any]],
) -> None:
    assert services["qdrant"]["ports"] == ["127.0.0.1:6333:6333", "127.0.0.1:6334:6334"]
    assert services["qdrant"]["image"].startswith("qdrant/qdrant:v")


def test_backend_is_published_on_loopback_only(services: dict[str, dict[str, Any]]) -> None:
    for name in ("backend", "backend-embedded"):
        assert services[name]["ports"] == ["127.0.0.1:${BACKEND_PORT:-8000}:8000"]


def test_both_backends_build_the_same_image_on_a_base_that_can_be_swapped(
    services: dict[str, dict[str, Any]],
) -> None:
    for name in ("backend", "backend-embedded"):
        assert services[name]["build"] == {
            "context": ".",
            "args": {"PYTHON_IMAGE": "${PYTHON_IMAGE:-python:3.11-slim}"},  # the Dockerfile's ARG
        }
        assert services[name]["image"] == "${BACKEND_IMAGE:-knowledge-bridge:latest}"


def test_the_one_machine_mode_runs_on_the_embedded_default_with_its_own_data(
    compose: dict[str, Any],
    services: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from backend.config import Settings

    embedded = services["backend-embedded"]
    environment = env_names(embedded)
    for name in ("QDRANT_URL", "EMBEDDING_PROVIDER", "EMBEDDING_MODEL", "OLLAMA_URL"):
        assert name not in environment
        monkeypatch.delenv(name, raising=False)
    for name in ("VAULT_PATH", "DATA_DIR"):
        monkeypatch.setenv(name, str(tmp_path))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (settings.qdrant_url, settings.embedding_provider) == (None, "onnx")
    by_target = {mount["target"]: mount for mount in mounts(embedded)}
    production = {mount["target"]: mount for mount in mounts(services["backend"])}
    assert by_target["/vault"] == production["/vault"]  # the same read-only vault
    assert by_target["/data"]["source"] in compose["volumes"]
    assert by_target["/data"]["source"] != production["/data"]["source"]  # never mixed with the stack's


def test_vault_is_mounted_read_only_and_data_on_a_named_volume(
    compose: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    by_target = {mount["target"]: mount for mount in mounts(services["backend"])}
    environment = env_names(services["backend"])

    vault = by_target[environment["VAULT_PATH"]]
    assert vault["read_only"] is True
    assert vault["source"] == "${VAULT_DIR:-./docs/example-vault}"
    assert by_target[environment["DATA_DIR"]]["source"] in compose["volumes"]


def test_named_volumes_are_declared(compose: dict[str, Any], services: dict[str, dict[str, Any]]) -> None:
    declared = set(compose.get("volumes") or {})
    for name, service in services.items():
        for mount in mounts(service):
            source = mount.get("source", "")
            if mount.get("type", "volume") == "volume" and source and not source.startswith((".", "/", "$")):
                assert source in declared, f"{name} mounts undeclared volume {source}"
    targets = {m["target"]: m["source"] for s in services.values() for m in mounts(s)}
    assert targets["/qdrant/storage"] in declared
    assert targets["/root/.ollama"] in declared


# -- healthcheck commands, run for real against a stand-in server on loopback ------------------------------


class _StandIn(http.server.BaseHTTPRequestHandler):
    status = 200
    path_ok = "/"

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.send_response(self.status if self.path == self.path_ok else 404)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # probes hang up after the status line; that is expected


@pytest.fixture
def stand_in() -> Iterator[tuple[type[_StandIn], int]]:
    handler = type("Handler", (_StandIn,), {})
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash, as the qdrant image has")
def test_qdrant_healthcheck_passes_only_when_readyz_answers_200(
    services: dict[str, dict[str, Any]], stand_in: tuple[type[_StandIn], int]
) -> None:
    handler, port = stand_in
    handler.path_ok = "/readyz"
    test = services["qdrant"]["healthcheck"]["test"]
    assert test[0] == "CMD"
    # Compose turns `$$` into `$`; the probe targets 6333 inside the container, the stand-in's port here.
    command = [part.replace("$$", "$").replace("6333", str(port)) for part in test[1:]]

    def probe() -> int:
        return subprocess.run(command, capture_output=True, timeout=30, check=False).returncode

    assert probe() == 0
    handler.status = 503
    assert probe() != 0


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash, as the qdrant image has")
def test_qdrant_healthcheck_fails_when_nothing_listens(services: dict[str, dict[str, Any]]) -> None:
    test = services["qdrant"]["healthcheck"]["test"]
    with _QuietServer(("127.0.0.1", 0), _StandIn) as server:
        free_port = server.server_address[1]  # closed again when the block ends
    command = [part.replace("$$", "$").replace("6333", str(free_port)) for part in test[1:]]

    result = subprocess.run(command, capture_output=True, timeout=30, check=False)

    assert result.returncode != 0


def test_dockerfile_healthcheck_passes_only_when_health_answers_2xx(
    stand_in: tuple[type[_StandIn], int],
) -> None:
    handler, port = stand_in
    handler.path_ok = "/health"
    healthcheck = next(arguments for keyword, arguments in final_stage() if keyword == "HEALTHCHECK")
    exec_form = json.loads(healthcheck.split("CMD", 1)[1])
    assert exec_form[0] == "python"
    command = [sys.executable, *exec_form[1:]]
    environment = {**os.environ, "PORT": str(port)}

    def probe() -> int:
        return subprocess.run(
            command, capture_output=True, timeout=30, env=environment, check=False
        ).returncode

    assert probe() == 0
    handler.status = 503
    assert probe() != 0
    assert "'8000'" in exec_form[-1]  # the image's default port


# -- docker-compose.agent.yml: an agent container reaching the backend by its service name ------------------

AGENT_FILE = ROOT / "docker-compose.agent.yml"
AGENT = "openclaw-gateway"


@pytest.fixture(scope="module")
def agent_overlay() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(AGENT_FILE.read_text(encoding="utf-8"))
    return document


def test_the_agent_overlay_is_valid_against_the_compose_specification(agent_overlay: dict[str, Any]) -> None:
    schema = compose_spec_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = list(validator.iter_errors(agent_overlay))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    # Debian's docker-compose 1.29 rejects a top-level name; both files take the project's name from the
    # folder (tests/docker/test_compose.py runs them through both tools)
    assert "name" not in agent_overlay
    assert "name" not in yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))


def test_the_agent_reaches_the_backend_by_service_name_with_the_key(
    agent_overlay: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    agent = agent_overlay["services"][AGENT]
    environment = env_names(agent)
    url = urlsplit(environment["KB_URL"])
    assert url.hostname == "backend"
    assert url.hostname in services  # a service of the stack, on its default network
    assert url.port == 8000
    assert env_names(services["backend"])["HOST"] == "0.0.0.0"  # listens beyond its own loopback
    # the backend demands a key in this setup, and the agent gets that very key
    backend_key = env_names(agent_overlay["services"]["backend"])["API_KEY"]
    assert backend_key.startswith("${API_KEY:?")
    assert environment["KB_API_KEY"].startswith("${API_KEY")
    assert agent["depends_on"] == {"backend": {"condition": "service_healthy"}}
    assert "networks" not in agent  # the stack's default network, as the backend's
    assert "network_mode" not in agent


def test_the_agent_overlay_mounts_the_plugin_and_skill_read_only_and_pins_its_image(
    agent_overlay: dict[str, Any],
) -> None:
    agent = agent_overlay["services"][AGENT]
    repository, _, tag = agent["image"].rpartition(":")
    assert repository == "ghcr.io/openclaw/openclaw"
    assert tag == json.loads((ROOT / "tools/openclaw/package.json").read_text())["dependencies"]["openclaw"]
    binds = {mount["target"]: mount for mount in mounts(agent) if mount.get("type") == "bind"}
    assert (ROOT / binds["/opt/knowledge-bridge/plugin"]["source"] / "openclaw.plugin.json").is_file()
    assert (ROOT / binds["/opt/knowledge-bridge/skill"]["source"] / "SKILL.md").is_file()
    assert all(mount["read_only"] for mount in binds.values())
    assert agent["ports"] == ["127.0.0.1:18789:18789"]
    declared = set(agent_overlay.get("volumes") or {})
    assert {m["source"] for m in mounts(agent) if m.get("type", "volume") == "volume"} <= declared


def test_the_deployment_guide_shows_the_agent_container_commands() -> None:
    guide = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    assert "docker compose -f docker-compose.yml -f docker-compose.agent.yml up -d" in guide
    for command in (
        "plugins install /opt/knowledge-bridge/plugin",
        "mcp add kb --url http://backend:8000/mcp",
    ):
        assert command in guide
    assert "skills install /opt/knowledge-bridge/skill" in guide


# -- docker-compose.vaults.yml: a work and a personal vault on one backend ----------------------------------

VAULTS_FILE = ROOT / "docker-compose.vaults.yml"


def test_the_vaults_overlay_serves_two_read_only_mounts_by_name() -> None:
    overlay: dict[str, Any] = yaml.safe_load(VAULTS_FILE.read_text(encoding="utf-8"))
    schema = compose_spec_schema()
    errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(overlay))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    assert "name" not in overlay
    backend = overlay["services"]["backend"]
    # as compose fills it in with the defaults: each pair's path is one of the read-only mounts
    pairs = dict(
        pair.split("=", 1)
        for pair in env_names(backend)["VAULTS"]
        .replace("${WORK_VAULT_NAME:-Work}", "Work")
        .replace("${PERSONAL_VAULT_NAME:-Notes}", "Notes")
        .split(",")
    )
    assert pairs == {"work": "/vaults/Work", "personal": "/vaults/Notes"}
    targets = {
        m["target"]
        .replace("${WORK_VAULT_NAME:-Work}", "Work")
        .replace("${PERSONAL_VAULT_NAME:-Notes}", "Notes")
        for m in backend["volumes"]
        if m.get("read_only")
    }
    assert targets == set(pairs.values())
    assert all(m["type"] == "bind" and m["read_only"] for m in backend["volumes"])
    guide = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    assert "docker compose -f docker-compose.yml -f docker-compose.vaults.yml up -d" in guide
