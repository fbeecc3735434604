"""Write docs/agents/openclaw-tools.json from the service's OpenAPI schema (`--check`: fail if it differs).

.venv/bin/python -m scripts.openclaw_tools [--check]      # or: make agent-tools
"""

from __future__ import annotations

import argparse
import json
import sys

from backend.api.agent_tools import openclaw_tools
from backend.config import REPO_ROOT, load_settings
from backend.main import create_app

TOOLS_FILE = REPO_ROOT / "docs" / "agents" / "openclaw-tools.json"


def render() -> str:
    """The file's text, from the schema of the app as it is built now (nothing is opened or indexed)."""
    schema = create_app(load_settings(embedding_provider="none")).openapi()
    return json.dumps(openclaw_tools(schema), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is not what the API says")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = TOOLS_FILE.read_text(encoding="utf-8") if TOOLS_FILE.exists() else ""
        if current != text:
            print(
                f"{TOOLS_FILE.relative_to(REPO_ROOT)} is out of date: run `make agent-tools`", file=sys.stderr
            )
            return 1
        return 0
    TOOLS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {len(json.loads(text)['tools'])} tools to {TOOLS_FILE.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
