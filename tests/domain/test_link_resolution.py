import os
import unicodedata
from pathlib import Path

import pytest

from backend.domain.links import Link, LinkKind, LinkRecord
from backend.domain.notes.link_resolution import VaultFileMap, name_key, resolve_links

HELP_VAULT = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "obsidian-help" / "vault"


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


VAULT = [
    "Home.md",
    "Note.md",
    "b/Note.md",
    "a/b/Note.md",
    "Projects/Plan.md",
    "Projects/sub/Task.md",
    "Zed/sub/Task.md",
    "Projects/Diagram.png",
    "zzzz/deep/Other.md",
    "Archive/Topic.md",
    "a/b/Topic.md",
    "b/Topic.md",
    "img/Photo.PNG",
    "docs/Manual.pdf",
    "Board.canvas",
    "Tasks.base",
    "v1.2 release.md",
    nfd("Résumé.md"),  # as macOS may hand it out
    nfc("Notes/Café.md"),
    nfd("Bücher/Kapitel.md"),
    "Archiv/Kapitel.md",
]


@pytest.fixture
def files() -> VaultFileMap:
    return VaultFileMap(VAULT)


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        # 1. the vault path as written, ".md" optional, case-insensitive
        ("Projects/Plan", "Home.md", "Projects/Plan.md"),
        ("Projects/Plan.md", "Home.md", "Projects/Plan.md"),
        ("projects/PLAN", "Home.md", "Projects/Plan.md"),
        ("Projects/Diagram.png", "Home.md", "Projects/Diagram.png"),
        ("Note", "b/x.md", "Note.md"),  # an exact path beats a file beside the source
        ("b/Note", "zzzz/deep/Other.md", "b/Note.md"),  # ... and beats a longer path ending the same way
        ("/Projects/Plan", "Zed/x.md", "Projects/Plan.md"),  # leading "/" = from the vault root
        ("/Plan", "Projects/x.md", None),  # ... and nothing else
        # 2. relative to the source note's folder
        ("sub/Task", "Projects/Plan.md", "Projects/sub/Task.md"),  # by name alone Zed/sub/Task.md is shorter
        ("../Home", "Projects/Plan.md", "Home.md"),
        ("../Plan", "Projects/sub/Task.md", "Projects/Plan.md"),
        ("./Plan", "Projects/Home.md", "Projects/Plan.md"),
        ("./Plan", "Projects/sub/Task.md", None),  # "./" and "../" spell a path, not a name
        ("../../Home", "Projects/Plan.md", None),  # above the vault root
        # 3. by file name anywhere, case-insensitively; folders in the target must end the path
        ("plan", "Home.md", "Projects/Plan.md"),
        ("PLAN", "Zed/sub/Task.md", "Projects/Plan.md"),
        ("deep/Other", "Home.md", "zzzz/deep/Other.md"),
        ("DEEP/other.md", "Home.md", "zzzz/deep/Other.md"),
        ("eep/Other", "Home.md", None),  # segments match whole, not as substrings
        ("sub/Task", "Home.md", "Zed/sub/Task.md"),  # two end with sub/Task: the shorter path
        # 4. several files named alike: own folder, else shortest path
        ("Topic", "Archive/x.md", "Archive/Topic.md"),
        ("Topic", "a/b/x.md", "a/b/Topic.md"),
        ("Topic", "Home.md", "b/Topic.md"),
        ("Topic", "a/b/c/x.md", "b/Topic.md"),  # a parent folder counts for nothing
        ("Topic", "a/x.md", "b/Topic.md"),
        # 5. ".md" optional, any other extension required (compared case-insensitively)
        ("Plan.md", "Home.md", "Projects/Plan.md"),
        ("Plan.MD", "Home.md", "Projects/Plan.md"),
        ("Board", "Home.md", None),
        ("Board.canvas", "Home.md", "Board.canvas"),
        ("board.CANVAS", "Home.md", "Board.canvas"),
        ("Tasks.base", "Home.md", "Tasks.base"),
        ("Photo.png", "Home.md", "img/Photo.PNG"),
        ("Diagram", "Home.md", None),
        ("Manual", "Home.md", None),
        ("Manual.pdf", "Projects/Plan.md", "docs/Manual.pdf"),
        ("v1.2 release", "Home.md", "v1.2 release.md"),  # ".2 release" is no file extension
        # a link to the note itself: [[#Heading]], [[#^block]]
        ("", "Projects/Plan.md", "Projects/Plan.md"),
        # trailing and leading spaces, as in [[Plan ]] or [[Plan |text]]
        ("Plan ", "Home.md", "Projects/Plan.md"),
        ("  Projects/Plan  ", "Home.md", "Projects/Plan.md"),
        # unicode: NFD and NFC spellings are the same name; the path comes back as the vault spells it
        (nfc("Résumé"), "Home.md", nfd("Résumé.md")),
        (nfd("résumé"), "Home.md", nfd("Résumé.md")),
        (nfd("Café"), "Home.md", nfc("Notes/Café.md")),
        (nfc("Bücher/Kapitel"), "Home.md", nfd("Bücher/Kapitel.md")),
        ("Kapitel", nfc("Bücher/Vorwort.md"), nfd("Bücher/Kapitel.md")),  # own folder, across spellings
        ("Kapitel", "Home.md", "Archiv/Kapitel.md"),
        # not created yet
        ("Missing note", "Home.md", None),
        ("Projects/Missing", "Home.md", None),
    ],
)
def test_resolves_targets_like_obsidian(
    files: VaultFileMap, target: str, source: str, expected: str | None
) -> None:
    assert files.resolve(target, source=source) == expected


@pytest.mark.parametrize(
    ("candidates", "source", "expected"),
    [
        (["a/b/Topic.md", "Archive/Topic.md"], "Home.md", "a/b/Topic.md"),  # shorter string, more folders
        (["y/Topic.md", "x/Topic.md"], "Home.md", "x/Topic.md"),  # equal length: alphabetical
        (["x/Topic.md", "y/Topic.md"], "Home.md", "x/Topic.md"),  # ... whatever the insertion order
        (["x/Topic.md", "y/Topic.md"], "y/Other.md", "y/Topic.md"),
        (["Long folder name/Topic.md", "x/Topic.md"], "Long folder name/z.md", "Long folder name/Topic.md"),
    ],
)
def test_duplicate_names_pick_the_same_file_every_time(
    candidates: list[str], source: str, expected: str
) -> None:
    assert VaultFileMap(candidates).resolve("Topic", source=source) == expected


def test_every_resolution_shares_the_targets_name_key(files: VaultFileMap) -> None:
    # the graph re-resolves only links whose target key matches a changed file: that must find them all
    targets = [
        "Projects/Plan",
        "sub/Task",
        "../Home",
        "Photo.png",
        "Plan ",
        nfd("Café"),
        "Topic",
        "DEEP/other.md",
    ]
    sources = ["Home.md", "Projects/Plan.md", "Projects/sub/Task.md", "Archive/x.md"]
    for target in targets:
        for source in sources:
            resolved = files.resolve(target, source=source)
            if resolved is not None:
                assert name_key(resolved) == name_key(target), (target, source)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("Folder/Note.md", "note"),
        ("note", "note"),
        ("a/NOTE ", "note"),
        ("Note.MD", "note"),
        ("img/Photo.PNG", "photo.png"),
        ("Board.canvas", "board.canvas"),
        ("Note.md.md", "note.md"),  # only one ".md" is the note suffix
        ("v1.2 release", "v1.2 release"),
        (nfd("Bücher/Résumé.md"), nfc("résumé")),
        ("Straße", "strasse"),
        ("", ""),
    ],
)
def test_name_key(value: str, key: str) -> None:
    assert name_key(value) == key


@pytest.mark.parametrize(
    ("path", "attachment"),
    [
        ("Note.md", False),
        ("Folder/NOTE.MD", False),
        ("img/Photo.png", True),
        ("Board.canvas", True),
        ("Tasks.base", True),
        ("docs/Manual.pdf", True),
    ],
)
def test_is_attachment(path: str, attachment: bool) -> None:
    assert VaultFileMap([path]).is_attachment(path) is attachment


def test_a_new_note_turns_an_unresolved_link_into_a_resolved_one() -> None:
    files = VaultFileMap(["Home.md"])
    assert files.resolve("Ideas", source="Home.md") is None
    files.add("Inbox/Ideas.md")
    assert files.resolve("ideas", source="Home.md") == "Inbox/Ideas.md"
    assert "Inbox/Ideas.md" in files
    assert len(files) == 2


def test_adding_a_file_twice_counts_it_once() -> None:
    files = VaultFileMap(["Home.md", "Home.md"])
    files.add("Home.md")
    assert len(files) == 1
    assert files.paths_named("home") == ["Home.md"]


def test_removing_a_note_unresolves_its_links_or_falls_back_to_the_next_duplicate() -> None:
    files = VaultFileMap(["Home.md", "b/Topic.md", "Archive/Topic.md"])
    assert files.resolve("Topic", source="Home.md") == "b/Topic.md"
    files.remove("b/Topic.md")
    assert files.resolve("Topic", source="Home.md") == "Archive/Topic.md"
    assert files.paths_named("topic") == ["Archive/Topic.md"]
    files.remove("Archive/Topic.md")
    assert files.resolve("Topic", source="Home.md") is None
    assert files.paths_named("topic") == []
    assert "Archive/Topic.md" not in files
    assert len(files) == 1


def test_removing_an_unknown_path_changes_nothing() -> None:
    files = VaultFileMap(["Home.md"])
    files.remove("Nope.md")
    assert list(files) == ["Home.md"]


def test_paths_named_lists_notes_and_attachments_sharing_a_name_key(files: VaultFileMap) -> None:
    assert files.paths_named("note") == ["Note.md", "a/b/Note.md", "b/Note.md"]
    assert files.paths_named("photo.png") == ["img/Photo.PNG"]
    assert files.paths_named("nothing") == []


def test_resolve_links_builds_one_record_per_link_in_order() -> None:
    files = VaultFileMap(["Home.md", "Projects/Plan.md", "img/diagram.png"])
    links = [
        Link(target="plan", kind=LinkKind.WIKILINK, line=3, text="the plan", anchor="Goals"),
        Link(target="diagram.png", kind=LinkKind.EMBED, line=5),
        Link(target="", kind=LinkKind.WIKILINK, line=7, anchor="Intro"),
        Link(target="Someday", kind=LinkKind.MARKDOWN, line=9, text="later"),
        Link(target="plan", kind=LinkKind.WIKILINK, line=11),
    ]
    records = resolve_links(links, source="Home.md", files=files)
    assert records == [
        LinkRecord(
            "Home.md", 0, "plan", LinkKind.WIKILINK, 3, "the plan", "Goals", "Projects/Plan.md", False
        ),
        LinkRecord("Home.md", 1, "diagram.png", LinkKind.EMBED, 5, None, None, "img/diagram.png", True),
        LinkRecord("Home.md", 2, "", LinkKind.WIKILINK, 7, None, "Intro", "Home.md", False),
        LinkRecord("Home.md", 3, "Someday", LinkKind.MARKDOWN, 9, "later", None, None, False),
        LinkRecord("Home.md", 4, "plan", LinkKind.WIKILINK, 11, None, None, "Projects/Plan.md", False),
    ]


def test_resolve_links_of_a_note_without_links_is_empty() -> None:
    assert resolve_links([], source="Home.md", files=VaultFileMap(["Home.md"])) == []


# --- the Obsidian help vault ----------------------------------------------------------------------------


def _help_vault_files() -> list[str]:
    found = []
    for folder, dirs, names in os.walk(HELP_VAULT):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = os.path.relpath(folder, HELP_VAULT)
        found += [n if rel == "." else f"{rel}/{n}" for n in names if not n.startswith(".")]
    return found


@pytest.mark.skipif(not HELP_VAULT.is_dir(), reason="../shared/corpora is not beside the repo")
@pytest.mark.parametrize(
    ("source", "written", "target", "expected"),
    [
        # the link's case differs from the file name "Embed files.md"
        (
            "Linking notes and files/Internal links.md",
            "[[Embed Files]]",
            "Embed Files",
            "Linking notes and files/Embed files.md",
        ),
        # a bare name for a note in another folder
        (
            "Files and folders/Accepted file formats.md",
            "[[Community plugins]]",
            "Community plugins",
            "Extending Obsidian/Community plugins.md",
        ),
        # two "Security and privacy" notes: each product's pages link their own (same folder wins)
        (
            "Obsidian Publish/Introduction to Obsidian Publish.md",
            "[[Security and privacy]]",
            "Security and privacy",
            "Obsidian Publish/Security and privacy.md",
        ),
        (
            "Obsidian Sync/Set up Obsidian Sync.md",
            "[[Security and privacy]]",
            "Security and privacy",
            "Obsidian Sync/Security and privacy.md",
        ),
        # a folder path picks one of two "Templates" notes
        (
            "Editing and formatting/Properties.md",
            "[[Plugins/Templates|Templates]]",
            "Plugins/Templates",
            "Plugins/Templates.md",
        ),
        # a heading in the same note
        (
            "Linking notes and files/Internal links.md",
            "[[#Preview a linked file]]",
            "",
            "Linking notes and files/Internal links.md",
        ),
        # written as an example of display text, and no note "Example" exists: not created yet
        ("Linking notes and files/Internal links.md", "displays as [[Example]]", "Example", None),
    ],
)
def test_links_of_the_obsidian_help_vault(
    source: str, written: str, target: str, expected: str | None
) -> None:
    assert written in (HELP_VAULT / source).read_text(encoding="utf-8")
    files = VaultFileMap(_help_vault_files())
    assert files.resolve(target, source=source) == expected


@pytest.mark.skipif(not HELP_VAULT.is_dir(), reason="../shared/corpora is not beside the repo")
def test_an_image_embed_of_the_help_vault_resolves_once_the_image_is_there() -> None:
    # the corpus ships the notes without their images, so the embed is unresolved until the file appears
    source = "Linking notes and files/Internal links.md"
    assert "![[internal-links-header.png#interface]]" in (HELP_VAULT / source).read_text(encoding="utf-8")
    files = VaultFileMap(_help_vault_files())
    assert files.resolve("internal-links-header.png", source=source) is None
    image = "Attachments/internal-links-header.png"
    files.add(image)
    assert files.resolve("internal-links-header.png", source=source) == image
    assert files.is_attachment(image)
