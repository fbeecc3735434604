"""A DATA_DIR the service cannot write is one message that says what to do, checked before anything opens it.
The Docker image's own case (a root-owned bind mount, the image's uid 10001) runs for real in
tests/test_docker_runtime.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.infrastructure.data_dir import data_dir_problem
from tests.backend_cli import run_backend

IN_THE_WAY = "{} is not a directory (a file is in its way): point DATA_DIR at a folder"


def test_a_missing_data_dir_is_created(tmp_path: Path) -> None:
    data = tmp_path / "not" / "yet" / "there"
    assert data_dir_problem(data) is None
    assert data.is_dir()
    assert list(data.iterdir()) == []  # the check leaves nothing behind


def test_a_file_in_the_way_is_named(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a folder")
    problem = data_dir_problem(tmp_path / "data")
    assert problem == IN_THE_WAY.format(tmp_path / "data")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere; the image test does it as uid 10001")
def test_a_folder_this_user_cannot_write_names_the_user_and_the_chown(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o555)
    try:
        problem = data_dir_problem(data)
    finally:
        data.chmod(0o755)
    uid, gid = os.geteuid(), os.getegid()
    assert problem is not None
    assert f"{data} is not writable by this process (uid {uid}, gid {gid})" in problem
    assert "mode 0555" in problem
    assert f"`chown -R {uid}:{gid} {data}`" in problem


@pytest.mark.slow
def test_serve_stops_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a folder")
    result = run_backend("serve", "--data-dir", str(tmp_path / "data"), "--port", "1")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: invalid setting DATA_DIR: " + IN_THE_WAY.format(tmp_path / "data")
    ]
