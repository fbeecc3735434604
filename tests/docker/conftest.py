"""The engine and the image, once per test run, for the tests that build and run the image for real.

Prepared in the background from the end of the collection on (preparation.py), and these tests run last."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docker.engine import Engine, EngineUnavailable
from tests.docker.images import BuiltImage
from tests.docker.preparation import HandedOver, Preparation, handed_over, summary

HERE = Path(__file__).resolve().parent
PREPARATION = pytest.StashKey[Preparation | HandedOver]()
NEEDS_THE_ENGINE = {"docker_engine", "image"}


def _ours(item: pytest.Item) -> bool:
    return HERE in item.path.resolve().parents


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Last, so that the image builds while everything else runs (a stable sort keeps their own order)."""
    items.sort(key=_ours)


def pytest_collection_finish(session: pytest.Session) -> None:
    ours = [item for item in session.items if _ours(item)]
    if any(NEEDS_THE_ENGINE & set(getattr(item, "fixturenames", ())) for item in ours):
        session.config.stash[PREPARATION] = handed_over() or Preparation()


def pytest_sessionfinish(session: pytest.Session) -> None:
    preparation = session.config.stash.get(PREPARATION, None)
    if preparation is not None:
        preparation.finish()


def _preparation(config: pytest.Config) -> Preparation | HandedOver:
    if PREPARATION not in config.stash:  # collected some other way: prepare now
        config.stash[PREPARATION] = handed_over() or Preparation()
    return config.stash[PREPARATION]


@pytest.fixture(scope="session")
def docker_engine(request: pytest.FixtureRequest) -> Engine:
    try:
        return _preparation(request.config).engine()
    except EngineUnavailable as exc:
        pytest.skip(f"the image is not built or run here: {exc}")


@pytest.fixture(scope="session")
def run_id(request: pytest.FixtureRequest) -> str:
    """Names this run's containers, volumes and compose projects apart from another run's on the engine."""
    return _preparation(request.config).run_id


@pytest.fixture(scope="session")
def image(docker_engine: Engine, request: pytest.FixtureRequest) -> BuiltImage:
    return _preparation(request.config).image()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    preparation = config.stash.get(PREPARATION, None)
    if isinstance(preparation, Preparation):  # a worker's summary is not shown: the controller's is
        summary(terminalreporter, preparation)


def vault_snapshot(vault: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's content and mtime: what must be the same after the container read the vault."""
    return {
        str(path.relative_to(vault)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(vault.rglob("*"))
        if path.is_file()
    }
