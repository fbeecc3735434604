"""A stand-in for the `python:3.11-slim` base image, made from Debian's packages, where Debian's mirror can be
reached but no image registry can (this project's development machines and its CI).

    .venv/bin/python -m scripts.docker_base           # builds it when missing; prints its tag
    docker build --build-arg PYTHON_IMAGE=<that tag> -t knowledge-bridge .

`debootstrap --variant=minbase bookworm` from the mirror apt is configured with, plus python3 (3.11, as the
real base), python3-venv, ca-certificates, the `/usr/local/bin/python` the real base has, and this machine's
extra CA certificates (where HTTPS goes through an inspecting proxy, pip in the image build fails certificate
checks without them); without documentation, manual pages and translations, as Debian's slim images (120 MB
instead of 169). The result is imported with `docker import`.

The tag carries a hash of the recipe, the mirror and those certificates, so the image is built once and found
again in the engine's image store by every later run, a fresh clone's included; a change to any of them builds
a new one. About 1.5 min on 2 cores; as root only (debootstrap and chroot).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

SUITE = "bookworm"  # Python 3.11 is bookworm's python3, as in python:3.11-slim
PACKAGES = ("python3", "python3-venv", "ca-certificates")
REPOSITORY = "knowledge-bridge/python-base"
FALLBACK_MIRROR = "http://deb.debian.org/debian"
EXTRA_CERTIFICATES = Path("/usr/local/share/ca-certificates")
APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
# What `docker import` sets, as the real base does; part of the recipe hashed into the tag.
IMAGE_CHANGES = ("ENV LANG=C.UTF-8", 'CMD ["python3"]')
# Left by debootstrap, never read at run time (the .debs alone are ~45 MB); apt makes them again when used.
CLEANED = ("var/cache/apt/archives", "var/lib/apt/lists")
# What Debian's slim images leave out, for packages installed later too (dpkg reads this file).
SLIM_DPKG_CONFIG = """\
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
"""
RECIPE_VERSION = "1"  # bump when the steps below change in a way the hash would not see


def debian_mirror(sources: tuple[Path, ...] = APT_SOURCES) -> str:
    """The first Debian archive apt is configured with (one-line or deb822 format), or deb.debian.org."""
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            files += sorted(p for p in source.iterdir() if p.suffix in {".list", ".sources"})
        elif source.is_file():
            files.append(source)
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.split("#", 1)[0].split()
            if path.suffix == ".sources" and words[:1] == ["URIs:"]:
                uris = words[1:]
            elif path.suffix == ".list" and words[:1] == ["deb"]:
                uris = [word for word in words[1:] if "://" in word][:1]
            else:
                continue
            for uri in uris:
                # the main archive, not the security one (its suite is bookworm-security)
                if uri.rstrip("/").endswith("/debian"):
                    return uri.rstrip("/")
    return FALLBACK_MIRROR


def extra_certificates() -> list[Path]:
    if not EXTRA_CERTIFICATES.is_dir():
        return []
    return sorted(path for path in EXTRA_CERTIFICATES.rglob("*.crt") if path.is_file())


def image_tag(mirror: str, certificates: list[Path]) -> str:
    digest = hashlib.sha256()
    for part in (RECIPE_VERSION, SUITE, mirror, *PACKAGES, *IMAGE_CHANGES, *CLEANED, SLIM_DPKG_CONFIG):
        digest.update(part.encode() + b"\0")
    for certificate in certificates:
        digest.update(certificate.name.encode() + b"\0" + certificate.read_bytes())
    return f"{REPOSITORY}:3.11-{SUITE}-{digest.hexdigest()[:12]}"


def image_exists(tag: str) -> bool:
    inspect = ["docker", "image", "inspect", "--format", "{{.Id}}", tag]
    return subprocess.run(inspect, capture_output=True, check=False).returncode == 0


def build_root(root: Path, mirror: str, certificates: list[Path]) -> None:
    """The file system of the image, in `root`."""
    debootstrap = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(root)]
    _run([*debootstrap, mirror], "debootstrap")
    target = root / EXTRA_CERTIFICATES.relative_to("/")
    target.mkdir(parents=True, exist_ok=True)
    for certificate in certificates:
        shutil.copy2(certificate, target / certificate.name)
    _run(["chroot", str(root), "update-ca-certificates"], "update-ca-certificates")
    (root / "usr/local/bin/python").symlink_to("/usr/bin/python3")
    for folder in CLEANED:
        path = root / folder
        if path.is_dir():
            shutil.rmtree(path)
            path.mkdir()
    slim(root)


def slim(root: Path) -> None:
    """Leave out what SLIM_DPKG_CONFIG excludes, from what is installed and what will be."""
    (root / "etc/dpkg/dpkg.cfg.d/slim").write_text(SLIM_DPKG_CONFIG, encoding="utf-8")
    share = root / "usr/share"
    for folder in ("man", "groff", "info", "lintian", "linda", "locale"):
        if (share / folder).is_dir():
            shutil.rmtree(share / folder)
    docs = share / "doc"
    for path in sorted(docs.glob("*/*")) if docs.is_dir() else []:
        if path.name == "copyright":
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:  # already gone when its folder is a link to another package's (libgcc-s1 -> gcc-12-base)
            path.unlink(missing_ok=True)


def import_image(root: Path, tag: str) -> None:
    changes = [arg for change in IMAGE_CHANGES for arg in ("--change", change)]
    pack = ["tar", "--numeric-owner", "-C", str(root), "-c", "."]
    with subprocess.Popen(pack, stdout=subprocess.PIPE) as tar:
        imported = subprocess.run(
            ["docker", "import", *changes, "-", tag], stdin=tar.stdout, capture_output=True, check=False
        )
        assert tar.stdout is not None
        tar.stdout.close()
    if tar.returncode != 0 or imported.returncode != 0:
        raise RuntimeError(f"docker import failed: {imported.stderr.decode(errors='replace').strip()}")


def base_image_tag() -> str:
    """The tag of the stand-in this machine's mirror and certificates make (built or not)."""
    return image_tag(debian_mirror(), extra_certificates())


def ensure_base_image(work_dir: Path | None = None) -> str:
    """The stand-in's tag, built first when the engine does not have it."""
    mirror = debian_mirror()
    certificates = extra_certificates()
    tag = image_tag(mirror, certificates)
    if image_exists(tag):
        logger.info("base image %s is there", tag)
        return tag
    for tool in ("debootstrap", "chroot", "tar", "docker"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not installed: it is needed to build the base image {tag}")
    logger.info("building base image %s: debootstrap %s from %s", tag, SUITE, mirror)
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="python-base-") as scratch:
        root = Path(scratch) / "root"
        build_root(root, mirror, certificates)
        import_image(root, tag)
    return tag


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{what} failed (exit {result.returncode}):\n{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work-dir", type=Path, default=None, help="where the root file system is made")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    try:
        print(ensure_base_image(args.work_dir))
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
