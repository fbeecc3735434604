"""Write the OpenClaw plugin's generated files from the service's OpenAPI schema (`--check`: fail on a diff).

integrations/openclaw/tools.json (the tools the plugin registers: schemas and HTTP calls) and
integrations/openclaw/openclaw.plugin.json (its manifest: config schema, tool contracts and metadata).

    .venv/bin/python -m scripts.openclaw_tools [--check]      # or: make agent-tools
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from backend.api.agent_tools import plugin_manifest, plugin_tools
from backend.config import REPO_ROOT, load_settings
from backend.entrypoints.app import create_app

PLUGIN_DIR = REPO_ROOT / "integrations" / "openclaw"
TOOLS_FILE = PLUGIN_DIR / "tools.json"
MANIFEST_FILE = PLUGIN_DIR / "openclaw.plugin.json"


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def render() -> dict[Path, str]:
    """Each generated file's text, from the schema of the app as it is built now (nothing is opened)."""
    schema = create_app(load_settings(embedding_provider="none")).openapi()
    return {
        TOOLS_FILE: _json(plugin_tools(schema)),
        MANIFEST_FILE: _json(plugin_manifest(schema["info"]["version"])),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is not what the API says")
    args = parser.parse_args()
    stale = []
    for path, text in render().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            continue
        stale.append(path.relative_to(REPO_ROOT))
        if not args.check:
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(map(str, stale))}: run `make agent-tools`", file=sys.stderr)
        return 1
    if not args.check:
        print(f"wrote {', '.join(map(str, stale)) or 'nothing (up to date)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
