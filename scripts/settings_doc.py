"""Write docs/settings.md from the settings class (backend/config.py): one row per setting, its default, what
it accepts and its description, as the class says them (`--check`: fail on a diff; tests/test_docs.py does).

    .venv/bin/python -m scripts.settings_doc [--check]
"""

from __future__ import annotations

import argparse
import sys
import typing
from pathlib import Path
from typing import Any

from annotated_types import Ge, Gt, Le
from pydantic.fields import FieldInfo

from backend.config import REPO_ROOT, Settings

SETTINGS_DOC = REPO_ROOT / "docs" / "settings.md"

HEAD = """# Settings

<!-- generated from backend/config.py by `python -m scripts.settings_doc`: edit the class, not this -->

Environment variables, or a `.env` file in the working directory. An invalid value stops the start with one
line naming the variable. Lists are comma-separated. Hidden folders (`.obsidian`, `.trash`, `.git`, ...) are
never indexed. The embedding model, its dimension, its document instruction, the dense windows and the
keyword settings are recorded with the index, and never mixed: a service configured differently serves the
index as it was built while it rebuilds it in the background (`AUTO_REEMBED`); only an index neither of whose
sides can be served here (keyword settings changed and its model not loadable) answers
`409 EMBEDDING_MODEL_MISMATCH` until the rebuild switches. An index also records its vault: another vault is
refused (`VAULT_MISMATCH`), never synced over.

| variable | default | accepts | meaning |
|---|---|---|---|
"""


def render() -> str:
    # the class's own settings first, then those it inherits (the embedding server's), which pydantic
    # lists first
    fields = sorted(Settings.model_fields.items(), key=lambda item: item[0] not in Settings.__annotations__)
    return HEAD + "".join(_row(name, field) for name, field in fields)


def _row(name: str, field: FieldInfo) -> str:
    description = (field.description or "").replace("|", "\\|")
    return f"| `{name.upper()}` | {_default(field)} | {_accepts(field)} | {description} |\n"


def _default(field: FieldInfo) -> str:
    factory = field.default_factory
    if factory is not None:
        if (
            field.default_factory_takes_validated_data
        ):  # derived from the settings before it: its meaning says how
            return "derived (see meaning)"
        value: Any = factory()  # type: ignore[call-arg]
        if isinstance(value, dict):
            return ", ".join(value) or "empty"
        return ", ".join(map(str, value)) if value else "empty"
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Path):
        return f"`{value.relative_to(REPO_ROOT) if value.is_absolute() else value}`"
    return f"`{value}`"


def _accepts(field: FieldInfo) -> str:
    choices = [arg for arg in _flat(field.annotation) if isinstance(arg, str)]
    if choices:
        return ", ".join(f"`{choice}`" for choice in choices)
    low = next((f"{m.ge}" for m in field.metadata if isinstance(m, Ge)), None)
    low = low or next((f"> {m.gt}" for m in field.metadata if isinstance(m, Gt)), None)
    high = next((f"{m.le}" for m in field.metadata if isinstance(m, Le)), None)
    if low is not None and high is not None:
        return f"{low} – {high}" if not low.startswith(">") else f"{low}, ≤ {high}"
    return ""


def _flat(annotation: object) -> list[object]:
    """The Literal values inside an annotation (through Optional and Annotated)."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return list(args)
    return [value for arg in args for value in _flat(arg)]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/settings.md is not up to date")
    args = parser.parse_args()
    text = render()
    if args.check:
        if SETTINGS_DOC.read_text(encoding="utf-8") != text:
            print(f"{SETTINGS_DOC} is out of date: run python -m scripts.settings_doc", file=sys.stderr)
            return 1
        return 0
    SETTINGS_DOC.write_text(text, encoding="utf-8")
    print(f"wrote {SETTINGS_DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
