"""The engine and the image, prepared in a thread while the rest of the suite runs.

On a machine that has never built it, the image costs minutes, mostly downloads (Debian's packages for the
base, the wheels for the venv); the suite's other tests keep the cores busy meanwhile. So the preparation
starts as soon as the tests are collected and the Docker tests run last: by then it is usually done.

A parallel run (`make test`: pytest-xdist) prepares once, in its controller, from the start (`handed_over`):
each worker that runs a Docker test waits for that preparation (a lock the controller holds until it is
done) and reads what it made, instead of building the image again beside it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.docker.engine import Engine, EngineUnavailable, docker, engine
from tests.docker.images import BuiltImage, build_image, unique_suffix

HANDOFF = "KB_DOCKER_PREPARATION"  # the folder a parallel run's controller hands its preparation over in
_LOCK, _RESULT, _RUN_ID = "lock", "prepared.json", "run_id"


class Preparation:
    def __init__(self, handoff: Path | None = None) -> None:
        self.run_id = unique_suffix()
        self._handoff = handoff
        self._lock = None
        if handoff is not None:  # held from now until the preparation ends: the workers wait on it
            (handoff / _RUN_ID).write_text(self.run_id)
            self._lock = (handoff / _LOCK).open("w")
            fcntl.flock(self._lock, fcntl.LOCK_EX)
        self._work_dir = Path(tempfile.mkdtemp(prefix="kb-docker-tests-"))
        self._engine: Engine | None = None
        self._image: BuiltImage | None = None
        self._error: BaseException | None = None
        self.waited_seconds = 0.0  # how long the first test that needed the image waited for it
        # a daemon: an interrupted run does not wait minutes for a build nobody will use
        self._thread = threading.Thread(target=self._prepare, name="docker-image", daemon=True)
        self._thread.start()

    def _prepare(self) -> None:
        try:
            self._engine = engine(self._work_dir)
            self._image = build_image(self._work_dir, self.run_id)
        except BaseException as exc:  # handed to the test that needs it, skip or failure alike
            self._error = exc
        finally:
            if self._handoff is not None and self._lock is not None:
                self._hand_over(self._handoff)
                fcntl.flock(self._lock, fcntl.LOCK_UN)

    def _hand_over(self, handoff: Path) -> None:
        error = self._error
        result = {
            "image": dataclasses.asdict(self._image) if self._image is not None else None,
            "skip": str(error) if isinstance(error, EngineUnavailable) else None,
            "error": f"{type(error).__name__}: {error}" if error is not None else None,
        }
        (handoff / _RESULT).write_text(json.dumps(result))

    @property
    def built(self) -> BuiltImage | None:
        return self._image

    @property
    def started_engine(self) -> bool:
        return self._engine is not None and self._engine.started is not None

    def engine(self) -> Engine:
        """The engine (EngineUnavailable: the reason to skip)."""
        if self._thread.is_alive():
            began = time.monotonic()
            self._thread.join()
            self.waited_seconds += time.monotonic() - began
        if self._engine is None:
            assert self._error is not None
            raise self._error
        return self._engine

    def image(self) -> BuiltImage:
        engine = self.engine()
        if self._image is None:
            assert self._error is not None, f"no image and no error (engine {engine})"
            raise self._error
        return self._image

    def finish(self) -> None:
        """Untag this run's image (its layers stay as the next build's cache), stop an engine started here."""
        if self._thread.is_alive():  # interrupted mid-build: stopping the engine ends the build
            self._thread.join(timeout=1)
        if self._image is not None:
            docker("rmi", "--no-prune", self._image.tag, check=False)
        if self._engine is not None:
            self._engine.stop()
        if self._lock is not None:
            self._lock.close()
        shutil.rmtree(self._work_dir, ignore_errors=True)


class HandedOver:
    """A parallel run's worker: the controller's preparation, once it is done (the same face as
    `Preparation` to the fixtures; the controller untags the image and stops an engine it started)."""

    def __init__(self, handoff: Path) -> None:
        self._handoff = handoff
        self.run_id = (handoff / _RUN_ID).read_text()
        self.built: BuiltImage | None = None
        self.started_engine = False
        self.waited_seconds = 0.0
        self._result: dict | None = None

    def _read(self) -> dict:
        if self._result is None:
            began = time.monotonic()
            with (self._handoff / _LOCK).open() as lock:
                fcntl.flock(lock, fcntl.LOCK_SH)  # returns once the controller's preparation has ended
                self._result = json.loads((self._handoff / _RESULT).read_text())
            self.waited_seconds = time.monotonic() - began
            image = self._result["image"]
            self.built = BuiltImage(**image) if image is not None else None
        return self._result

    def engine(self) -> Engine:
        result = self._read()
        if result["skip"] is not None:
            raise EngineUnavailable(result["skip"])
        return Engine()  # the running one; the controller's when it started it

    def image(self) -> BuiltImage:
        self.engine()
        if self.built is None:
            raise RuntimeError(f"the controller's image build failed: {self._read()['error']}")
        return self.built

    def finish(self) -> None:
        """Nothing to undo: the controller's preparation is its own."""


def handed_over() -> HandedOver | None:
    """In a worker of a parallel run that prepared in its controller: that preparation."""
    folder = os.environ.get(HANDOFF)
    return HandedOver(Path(folder)) if folder else None


def summary(reporter: pytest.TerminalReporter, preparation: Preparation, *, waits_here: bool = True) -> None:
    """What the image cost, for the run's summary (`waits_here`: the tests waited in this process, not in
    a parallel run's workers)."""
    built = preparation.built
    if built is None:
        return
    reporter.write_sep("-", "Docker image")
    base = f"built in {built.base_seconds:.0f} s" if built.base_seconds else "found (cached)"
    engine = "started by the tests" if preparation.started_engine else "already running"
    waited = f", {preparation.waited_seconds:.0f} s of it waited for" if waits_here else ""
    reporter.write_line(
        f"image {built.size_bytes / 1e6:.0f} MB; base image {base}; image built in "
        f"{built.build_seconds:.0f} s in the background{waited}; engine {engine}"
    )
