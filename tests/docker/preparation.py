"""The engine and the image, prepared in a thread while the rest of the suite runs.

On a machine that has never built it, the image costs minutes, mostly downloads (Debian's packages for the
base, the wheels for the venv); the suite's other tests keep the cores busy meanwhile. So the preparation
starts as soon as the tests are collected and the Docker tests run last: by then it is usually done.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

from tests.docker.engine import Engine, docker, engine
from tests.docker.images import BuiltImage, build_image, unique_suffix


class Preparation:
    def __init__(self) -> None:
        self.run_id = unique_suffix()
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
        shutil.rmtree(self._work_dir, ignore_errors=True)
