"""Suite-wide test settings."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# Starlette's TestClient calls the app as `http://testserver`: without API_KEY the service answers only
# loopback host names and ALLOWED_HOSTS (backend/api/guards.py), so the suite names its test host here.
# tests/api/test_rebinding.py checks the rule itself with raw Host and Origin headers.
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import pytest  # noqa: E402 - after the environment above, which the app reads when imported

from tests.application.fakes import FakeEmbedder  # noqa: E402
from tests.docker.preparation import HANDOFF, Preparation, summary  # noqa: E402
from tests.harness import Harness  # noqa: E402

# the OpenClaw tests' shared fixtures: `model` (the model provider stub) and `gateway` (the Gateway of a test
# module's `openclaw` fixture)
pytest_plugins = ("tests.model_stub", "tests.openclaw_cli")

# Whole-service tests: each starts the app (TestClient or a loopback server), a child process or the CLI, and
# takes seconds. They are `slow`, so `make test-fast` (everything else: the rules, on fakes and the embedded
# store) stays a quick loop; `make test`, which CI runs, runs them all.
WHOLE_SERVICE = (
    "api/",
    "docker/",
    "faults/",
    "scripts/",
    "test_admin_cli.py",
    "test_cli.py",
    "test_deployment_files.py",
    "test_docker_image.py",
    "test_eval_cli.py",
    "test_openclaw.py",
    "test_openclaw_memory.py",
    "test_openclaw_plugin.py",
    "test_serve_bind.py",
    "test_vault_switching.py",
)
TESTS = Path(__file__).resolve().parent
QUICK_LOOP = "not slow"  # make test-fast's marker expression


def _whole_service(path: Path) -> bool:
    try:
        where = path.resolve().relative_to(TESTS).as_posix()
    except ValueError:  # outside tests/
        return False
    return f"{where}/".startswith(WHOLE_SERVICE) if path.is_dir() else where.startswith(WHOLE_SERVICE)


def _quick_loop(config: pytest.Config) -> bool:
    return " ".join(str(config.getoption("markexpr") or "").split()) == QUICK_LOOP


CONTROLLER_PREPARATION = pytest.StashKey[Preparation]()


def _parallel_controller(config: pytest.Config) -> bool:
    """The controller of a pytest-xdist run (`make test`): it runs no test, its workers do."""
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def _runs_docker_tests(config: pytest.Config) -> bool:
    """Whether tests/docker/ is among what was asked for (the controller collects nothing to tell by)."""
    if _quick_loop(config):
        return False
    asked = [Path(arg.split("::")[0]).resolve() for arg in config.args] or [TESTS]
    docker = TESTS / "docker"
    return any(path == docker or path in docker.parents or docker in path.parents for path in asked)


def _parallel_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# The tests' temp folders (vaults, data dirs, indexes: ~2 GB a run) in memory when the machine has a tmpfs
# with room for them: on this 2-core VM's disk the kernel read back what the tests had just written (265,000
# major page faults for the SIGKILL and corruption tests), and they took 144-173 s instead of 115 s.
MEMORY_TEMP = Path("/dev/shm")
MEMORY_TEMP_FREE = 6 << 30  # bytes free it needs: three times what a run writes


def _memory_temp_root() -> Path | None:
    """/dev/shm when it is a tmpfs with MEMORY_TEMP_FREE free, else None (the system's temp folder)."""
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
        on_tmpfs = any(line.split()[1:3] == [str(MEMORY_TEMP), "tmpfs"] for line in mounts)
        roomy = shutil.disk_usage(MEMORY_TEMP).free >= MEMORY_TEMP_FREE
    except (OSError, IndexError):
        return None
    return MEMORY_TEMP if on_tmpfs and roomy and os.access(MEMORY_TEMP, os.W_OK) else None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Before the temp folders are made: their root in memory (`_memory_temp_root`) unless the run names one
    itself (--basetemp, PYTEST_DEBUG_TEMPROOT). Workers are handed their folder inside the controller's."""
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ or hasattr(config, "workerinput"):
        return
    root = _memory_temp_root()
    if root is not None:
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(root)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """A parallel run prepares the Docker engine and image once, in its controller, from the start; its
    workers (started after this, inheriting HANDOFF) wait for it (tests/docker/preparation.py)."""
    if _parallel_worker(config):
        # two workers on two cores: an embedder's one thread per core (its default) would put four threads on
        # two cores, each idle one spinning between operators where the other worker's could run; child
        # processes (the services a test starts) inherit it
        os.environ.setdefault("ONNX_THREADS", "1")
        os.environ.setdefault("ONNX_QUERY_THREADS", "1")
    if _parallel_controller(config) and _runs_docker_tests(config):
        folder = Path(tempfile.mkdtemp(prefix="kb-docker-handoff-"))
        os.environ[HANDOFF] = str(folder)
        config.stash[CONTROLLER_PREPARATION] = Preparation(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    preparation = config.stash.get(CONTROLLER_PREPARATION, None)
    if preparation is not None:
        preparation.finish()
        shutil.rmtree(os.environ.pop(HANDOFF), ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    preparation = config.stash.get(CONTROLLER_PREPARATION, None)
    if preparation is not None:
        summary(terminalreporter, preparation, waits_here=False)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the quick loop every whole-service test would be deselected anyway, so their modules are not even
    imported: their imports (FastAPI apps, schemathesis, the MCP SDK) took the collection from ~9 s to ~12.5 s
    of CPU here."""
    if _quick_loop(config) and _whole_service(collection_path):
        return True
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if _quick_loop(config):
        return f"-m '{QUICK_LOOP}': whole-service tests not collected ({', '.join(WHOLE_SERVICE)})"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _whole_service(item.path):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def embedding_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own embedding cache (EMBEDDING_CACHE_DIR), not the user's nor another test's: a test
    that counts the texts sent to a model would otherwise find them cached by an earlier one; child
    processes inherit it."""
    monkeypatch.setenv("EMBEDDING_CACHE_DIR", str(tmp_path_factory.mktemp("embedding-cache")))


@pytest.fixture(autouse=True)
def recall_gate_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """No recall gate fitted after indexing (RECALL_GATE_FIT=false) unless a test asks for it: the fake
    embedders have no shipped weights, and 158 probe searches after every first index would cost the suite a
    minute and add texts to the counts tests read; child processes inherit it."""
    monkeypatch.setenv("RECALL_GATE_FIT", "false")


@pytest.fixture(autouse=True)
def sse_streams_stay_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """sse_starlette's process-wide exit flag as it was before each test: set (by any uvicorn server's
    handle_exit in this worker, which it patches), it ends every SSE stream served after it, and OpenClaw's
    `mcp probe` of a later test met "other side closed"."""
    try:
        from sse_starlette.sse import AppStatus  # comes with mcp, not named in requirements.txt
    except ImportError:
        return
    monkeypatch.setattr(AppStatus, "should_exit", AppStatus.should_exit)


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Graphs the suite builds (other variants, first-start builds) go to a cache of its own, not to the
    user's (MODEL_CACHE_DIR defaults to ~/.cache/knowledge-bridge/models); child processes inherit it."""
    if "MODEL_CACHE_DIR" in os.environ:
        yield
        return
    os.environ["MODEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("model-cache"))
    try:
        yield
    finally:
        os.environ.pop("MODEL_CACHE_DIR", None)


@pytest.fixture(scope="session", autouse=True)
def prepared_model(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Whole-service tests start the real embedder on a fresh DATA_DIR, which builds the in-process model
    (about 8 s) each time. They share one model prepared once, as the Docker image prepares it
    (ONNX_MODEL_DIR; child processes inherit it), by the first worker of a parallel run to need it, for all
    (the workers' temp folders share a parent). A test of the first-start build unsets it itself. Not
    prepared for a run of `no_model` tests alone (the API fuzzing, on a fake embedder)."""
    items = request.session.items
    wanted = any(it.get_closest_marker("slow") and not it.get_closest_marker("no_model") for it in items)
    if not wanted or "ONNX_MODEL_DIR" in os.environ:
        yield
        return
    from backend.infrastructure.embedders.onnx_minilm import prepare_model

    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if _parallel_worker(request.config) else shared
    folder = shared / "onnx-model"
    with open(shared / "onnx-model.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the one preparing it
        if not (folder / "prepared.json").is_file():  # written once the graph loads and embeds
            prepare_model(folder)
    os.environ["ONNX_MODEL_DIR"] = str(folder)
    try:
        yield
    finally:
        os.environ.pop("ONNX_MODEL_DIR", None)


@pytest.fixture
def make_harness(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    """Harness(vault, data, embedder, ...) that is closed after the test; data defaults to tmp_path/data."""
    made: list[Harness] = []

    def factory(vault: Path, embedder: FakeEmbedder | None = None, **options: Any) -> Harness:
        data = options.pop("data", tmp_path / "data")
        harness = Harness(vault, data, embedder, **options)
        made.append(harness)
        return harness

    yield factory
    for harness in reversed(made):
        harness.close()
