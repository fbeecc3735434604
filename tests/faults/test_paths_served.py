"""Note paths as an agent meets them (issue 17, points 4-6), on a live service with its watcher.

* Symlinks inside the vault are not followed: a symlinked note or folder is never a second copy that could
  go stale; its target is indexed once, where it lives, and edits and deletes of the target reach it. The
  link is listed in `failed_files` with the reason.
* Paths match by NFC: a note named in decomposed form on the disk (as synced from macOS) is listed composed,
  and read, linked to, filtered on and remembered by either spelling; its tags match either spelling too.
* Every path the service hands out can be read back (`/note`, `/note/.../links`); a file whose name it
  could not take back (tab, newline, backslash, bytes that are not UTF-8, a path over 1,024 characters) is
  not indexed but listed with the reason (such bytes shown as `\\xNN`), also when it appears while the
  service runs.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from backend.infrastructure.vault.scanner import IN_VAULT_SYMLINK
from tests.api.test_live_index_api import LiveApp
from tests.application.fakes import FakeEmbedder
from tests.vault_files import write

CAFE_NFC = unicodedata.normalize("NFC", "Café/Crème brûlée.md")
CAFE_NFD = unicodedata.normalize("NFD", CAFE_NFC)
LONG = "/".join(["l" * 200] * 5) + "/" + "x" * 20 + "/over the limit.md"  # 1,043 characters
LATIN1 = os.fsdecode(b"Odd/caf\xe9 in Latin-1.md")  # not UTF-8: Python keeps the byte as \udce9
UNSERVABLE = ["Odd/tab\there.md", "Odd/new\nline.md", "Odd/back\\slash.md", LONG, LATIN1]


def shown(name: str) -> str:
    """A file name as status shows it: bytes that are not UTF-8 as `\\xNN`."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def failed(app: LiveApp) -> dict[str, str]:
    return {f["path"]: f["reason"] for f in app.status()["failed_files"]}


def paths_found(app: LiveApp, query: str, **filters: object) -> list[str]:
    body = {"query": query, "mode": "keyword", "top_k": 20} | filters
    response = app.client.post("/search", json=body)
    assert response.status_code == 200, response.text
    return [r["note_path"] for r in response.json()["results"]]


@pytest.fixture
def app(tmp_path: Path) -> Iterator[LiveApp]:
    vault = tmp_path / "vault"
    write(vault, "Target.md", "# Target\n\nThe walrus sleeps.\n")
    write(vault, "Real/Inside.md", "# Inside\n\nThe narwhal swims.\n")
    (vault / "Link.md").symlink_to(vault / "Target.md")
    (vault / "Shared").symlink_to(vault / "Real", target_is_directory=True)
    write(
        vault, CAFE_NFD, unicodedata.normalize("NFD", "# Crème brûlée\n\nCaramelised custard. #pâtisserie\n")
    )
    write(vault, "Menu.md", f"# Menu\n\nDessert: [[{unicodedata.normalize('NFD', 'Crème brûlée')}]].\n")
    for name in UNSERVABLE:
        write(vault, name, "# Odd\n\nThe quokka hides here.\n")
    live = LiveApp(vault, tmp_path / "data", FakeEmbedder())
    yield live
    live.close()


def test_symlinks_inside_the_vault_index_the_target_once_and_follow_its_changes(
    app: LiveApp, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    assert paths_found(app, "walrus") == ["Target.md"]
    assert paths_found(app, "narwhal") == ["Real/Inside.md"]
    reasons = failed(app)
    assert reasons["Link.md"] == IN_VAULT_SYMLINK
    assert reasons["Shared"] == IN_VAULT_SYMLINK
    assert app.client.get("/note/Link.md").json()["error_code"] == "NOTE_NOT_FOUND"

    write(vault, "Target.md", "# Target\n\nThe walrus woke up and left.\n")
    app.wait_until(lambda: paths_found(app, "left") == ["Target.md"], "the edit of the target")
    # an edit made through the symlinked folder is an edit of the real note: still one copy
    with (vault / "Shared/Inside.md").open("a", encoding="utf-8") as fh:
        fh.write("\nIt found a herring.\n")
    app.wait_until(lambda: paths_found(app, "herring") == ["Real/Inside.md"], "the edit through the link")
    assert paths_found(app, "narwhal") == ["Real/Inside.md"]
    (vault / "Target.md").unlink()
    app.wait_until(lambda: paths_found(app, "walrus") == [], "the delete of the target")
    # a symlink made while the service runs is reported the same way
    (vault / "Later.md").symlink_to(vault / "Real/Inside.md")
    write(vault, "Marker.md", "# Marker\n\nokapi\n")
    app.wait_until(lambda: "Later.md" in failed(app), "the new symlink in status")
    assert failed(app)["Later.md"] == IN_VAULT_SYMLINK
    assert paths_found(app, "narwhal") == ["Real/Inside.md"]
    assert app.client.get("/index/verify").json()["consistent"] is True


def test_paths_match_by_nfc_whatever_the_disk_uses(app: LiveApp, tmp_path: Path) -> None:
    assert paths_found(app, "custard") == [CAFE_NFC]
    for spelling in (CAFE_NFC, CAFE_NFD):
        note = app.client.get(f"/note/{quote(spelling)}")
        assert note.status_code == 200, note.text
        assert note.json()["note_path"] == CAFE_NFC
        links = app.client.get(f"/note/{quote(spelling)}/links").json()
        assert [b["note_path"] for b in links["backlinks"]] == ["Menu.md"]
        assert paths_found(app, "custard", paths=[spelling]) == [CAFE_NFC]
        assert paths_found(app, "custard", folders=[spelling.split("/")[0]]) == [CAFE_NFC]
        tag = unicodedata.normalize("NFD" if spelling == CAFE_NFD else "NFC", "pâtisserie")
        assert paths_found(app, "custard", tags=[tag]) == [CAFE_NFC]
        tagged = app.client.get("/notes", params={"tag": tag}).json()["notes"]
        assert [n["note_path"] for n in tagged] == [CAFE_NFC]
        remembered = app.client.post(
            "/memory", json={"key": f"dessert {len(spelling)}", "value": "brûlée", "source": spelling}
        )
        assert remembered.status_code in (200, 201), remembered.text
        assert remembered.json()["fact"]["source"] == CAFE_NFC
        assert remembered.json()["fact"]["source_exists"] is True
    listed = app.client.get("/notes", params={"folder": unicodedata.normalize("NFD", "Café")}).json()
    assert [n["note_path"] for n in listed["notes"]] == [CAFE_NFC]
    assert app.client.get("/index/verify").json()["consistent"] is True

    # the watcher reports the disk's (decomposed) names: its edits, renames and deletes reach the one entry
    vault = tmp_path / "vault"
    with (vault / CAFE_NFD).open("a", encoding="utf-8") as fh:
        fh.write("\nServed with raspberries.\n")
    app.wait_until(lambda: paths_found(app, "raspberries") == [CAFE_NFC], "the edit of the decomposed note")
    moved = unicodedata.normalize("NFD", "Café/Crème caramel.md")
    (vault / CAFE_NFD).rename(vault / moved)
    moved_nfc = unicodedata.normalize("NFC", moved)
    app.wait_until(lambda: paths_found(app, "custard") == [moved_nfc], "the rename of the decomposed note")
    assert app.client.get(f"/note/{quote(moved_nfc)}").status_code == 200
    (vault / moved).unlink()
    app.wait_until(lambda: paths_found(app, "custard") == [], "the delete of the decomposed note")
    assert app.client.get("/index/verify").json()["consistent"] is True


def test_every_path_handed_out_reads_back_and_the_rest_is_reported(app: LiveApp, tmp_path: Path) -> None:
    listed = [n["note_path"] for n in app.client.get("/notes", params={"limit": 500}).json()["notes"]]
    assert sorted(listed) == sorted(["Target.md", "Real/Inside.md", CAFE_NFC, "Menu.md"])
    for path in listed:
        assert app.client.get(f"/note/{quote(path)}").status_code == 200, path
        assert app.client.get(f"/note/{quote(path)}/links").status_code == 200, path
    assert paths_found(app, "quokka") == []
    reasons = failed(app)
    for name in UNSERVABLE:
        assert "cannot serve back" in reasons[shown(name)], name
    assert reasons["Odd/caf\\xe9 in Latin-1.md"].startswith("name the service cannot serve back (bytes")

    # one made while the service runs is reported too, and a served one beside it is indexed
    vault = tmp_path / "vault"
    late_latin1 = os.fsdecode(b"Odd/late \xe9t\xe9.md")
    write(vault, "Odd/late\ttab.md", "# Late\n\nThe quokka again.\n")
    write(vault, late_latin1, "# Late\n\nThe quokka once more.\n")
    write(vault, "Odd/Fine.md", "# Fine\n\nThe tapir is fine.\n")
    app.wait_until(lambda: "Odd/late\ttab.md" in failed(app), "the unservable note in status")
    app.wait_until(lambda: shown(late_latin1) in failed(app), "the note named in Latin-1 in status")
    app.wait_until(lambda: paths_found(app, "tapir") == ["Odd/Fine.md"], "the servable note")
    assert paths_found(app, "quokka") == []
    report = app.client.get("/index/verify").json()
    assert report["consistent"] is True
    assert {shown(name) for name in UNSERVABLE} <= {f["path"] for f in report["skipped"]}
    os.unlink(vault / "Odd/late\ttab.md")
    os.unlink(vault / late_latin1)
    app.wait_until(lambda: shown(late_latin1) not in failed(app), "the deleted note gone from status")
