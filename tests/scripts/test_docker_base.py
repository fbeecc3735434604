"""The stand-in base image's recipe: which Debian mirror it takes from apt's sources, and a tag that changes
with what goes into the image (building it runs in tests/docker, where an engine and root are at hand)."""

from __future__ import annotations

from pathlib import Path

from scripts.docker_base import debian_mirror, image_tag

DEB822 = """\
Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security

Types: deb
URIs: http://mirror.example/debian/
Suites: bookworm bookworm-updates
Components: main
"""


def test_the_mirror_is_apt_s_main_debian_archive_in_either_format(tmp_path: Path) -> None:
    one_line = tmp_path / "sources.list"
    one_line.write_text("# a comment\ndeb [arch=amd64] http://old.example/debian bookworm main\n")
    folder = tmp_path / "sources.list.d"
    folder.mkdir()
    (folder / "debian.sources").write_text(DEB822)
    (folder / "other.list").write_text("deb https://packages.example/apt stable main\n")

    assert debian_mirror((folder,)) == "http://mirror.example/debian"  # not the security archive
    assert debian_mirror((one_line, folder)) == "http://old.example/debian"  # the first one apt reads
    assert debian_mirror((tmp_path / "nothing-here",)) == "http://deb.debian.org/debian"


def test_the_tag_follows_the_mirror_and_the_certificates(tmp_path: Path) -> None:
    certificate = tmp_path / "proxy.crt"
    certificate.write_text("-----BEGIN CERTIFICATE-----\none\n")
    first = image_tag("http://deb.debian.org/debian", [certificate])

    assert first.startswith("knowledge-bridge/python-base:3.11-bookworm-")
    assert image_tag("http://deb.debian.org/debian", [certificate]) == first  # found again, not rebuilt
    assert image_tag("http://other.example/debian", [certificate]) != first
    certificate.write_text("-----BEGIN CERTIFICATE-----\ntwo\n")
    assert image_tag("http://deb.debian.org/debian", [certificate]) != first
