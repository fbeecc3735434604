"""A vault of hostile and broken files, each carrying one distinctive word so a test can tell whether it was
indexed. Written as real files; the sizes are the real ones (a 50 MB note is 50 MB on the disk)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

MB = 1024 * 1024


def _bytes(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_hostile_vault(root: Path) -> dict[str, str]:
    """Write the vault; return {note path: distinctive word} for every note that must be searchable."""
    found: dict[str, str] = {}

    def note(rel: str, data: bytes | str, word: str | None) -> None:
        _bytes(root, rel, data.encode("utf-8") if isinstance(data, str) else data)
        if word is not None:
            found[unicodedata.normalize("NFC", rel)] = word  # the index names notes in NFC

    note(
        "Projects/Database migration.md",
        "# Database migration\n\nWe move from MySQL to PostgreSQL.\n",
        "postgresql",
    )
    note("Shopping list.md", "# Shopping list\n\n- oat milk\n- basmati rice\n", "basmati")
    note("Journal/2026-01-03.md", "# 3 January\n\nWalked to the lighthouse.\n", "lighthouse")

    # broken bytes
    note("Broken/invalid utf8.md", b"# Invalid\n\nvalid start \xff\xfe\xc3 zebra crossing\n", "zebra")
    note("Broken/nul bytes.md", b"# Binary\n\nheader\x00\x01\x02\x03 armadillo\x00\n", "armadillo")
    note("Broken/empty.md", b"", None)  # indexed by its title only
    note("Broken/only whitespace.md", b" \n\t\n\n", None)
    # size: 50 MB (over MAX_NOTE_BYTES), one 5 MB line, 10,000 headings
    note("Huge/fifty megabytes.md", b"wombat " + b"filler text " * (50 * MB // 12), "wombat")
    note("Huge/one long line.md", b"quokka " + b"x" * (5 * 1000 * 1000), "quokka")
    headings = "".join(f"# Section {i}\n\nitem {i}\n\n" for i in range(10_000))
    note("Huge/ten thousand headings.md", headings + "# Last\n\nnarwhal\n", "narwhal")
    # deep nesting
    note("Deep/quotes.md", "> " * 5_000 + "pangolin\n", "pangolin")
    note("Deep/lists.md", "".join("  " * i + f"- level {i}\n" for i in range(1_000)) + "ocelot\n", "ocelot")
    note("Deep/brackets.md", "[" * 20_000 + "\n\nmongoose\n" + "]" * 20_000, "mongoose")
    # YAML bombs
    laughs = "".join(
        f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9 if prev else ["lol"] * 9) + "]\n"
        for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
    )
    note("Yaml/billion laughs.md", f"---\n{laughs}tags: [bomb]\n---\n# Laughs\n\ncapybara\n", "capybara")
    note("Yaml/deep nesting.md", "---\nx: " + "[" * 5_000 + "]" * 5_000 + "\n---\nmeerkat\n", "meerkat")
    keys = "".join(f"key{i}: value {i}\n" for i in range(100_000))
    note("Yaml/huge frontmatter.md", f"---\n{keys}---\nwolverine\n", "wolverine")
    note("Yaml/unclosed.md", "---\ntitle: never closed\n\ncaracal\n", "caracal")
    # odd names
    note(unicodedata.normalize("NFD", "Names/Café crème.md"), "tapir\n", "tapir")
    note("Names/\u202eevil.md", "okapi\n", "okapi")
    note("Names/fox 🦊.md", "fennec\n", "fennec")
    note("Names/e\u0301\u0301\u0301 combining.md", "gecko\n", "gecko")
    note("Names/new\nline.md", "axolotl\n", None)  # a name /note could not take back: skipped
    note("Names/" + "long" * 60 + ".md", "dugong\n", "dugong")  # 243 bytes: near the 255-byte limit
    # not notes, or not readable as one
    odd = root / "Not notes"
    odd.mkdir()
    os.mkfifo(odd / "fifo.md")
    (odd / "folder.md").mkdir()  # a folder named like a note: walked into, nothing to index
    (odd / "dangling.md").symlink_to(odd / "missing.md")
    secret = root.parent / "secret.md"
    secret.write_text("outside the vault: never indexed\n")
    (odd / "outside.md").symlink_to(secret)
    return found


SKIPPED = {
    "Not notes/fifo.md": "not a regular file",
    "Not notes/dangling.md": "symlink target missing",
    "Not notes/outside.md": "symlink points outside the vault",
    "Names/new\nline.md": "name the service cannot serve back",
}
