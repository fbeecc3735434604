"""The look-inside page's files (backend/api/page/) as they ship: small, self-contained, nothing fetched from
another host, no inline script or style (the CSP forbids them: they would be dead code), no way for data to
be parsed as HTML, and the recall preview on the OpenClaw plugin's own defaults."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from backend.api.routes.page import CONTENT_TYPES, PAGE_DIR, page_files
from backend.domain.recall.recall_budget import PLUGIN_RECALL

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_MANIFEST = ROOT / "integrations" / "openclaw" / "openclaw.plugin.json"
BUDGET_BYTES = 150 * 1024  # the budget: the page and every asset it loads
SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # a name, not a request


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.script_text.append(data)


def _html() -> _Tags:
    parsed = _Tags()
    parsed.feed((PAGE_DIR / "index.html").read_text(encoding="utf-8"))
    return parsed


def _scripts() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in PAGE_DIR.glob("*.js")}


def test_the_page_and_its_assets_fit_the_budget() -> None:
    files = page_files()
    assert {"index.html", "main.js", "style.css"} <= set(files)
    total = sum(path.stat().st_size for path in files.values())
    assert total <= BUDGET_BYTES, f"{total} bytes > {BUDGET_BYTES}"
    # and nothing in the folder escapes the count by a type the route would not serve
    assert all(p.suffix in CONTENT_TYPES for p in PAGE_DIR.iterdir()), list(PAGE_DIR.iterdir())


def test_nothing_is_loaded_from_another_host() -> None:
    for path in page_files().values():
        text = path.read_text(encoding="utf-8").replace(SVG_NAMESPACE, "")
        assert not re.search(r"(?i)\b(?:https?:)?//[a-z0-9.-]+\.[a-z]", text), path.name
        assert "@import" not in text, path.name
        assert "url(" not in text, path.name
    for tag, attrs in _html().tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            if value and tag in ("script", "link"):
                assert value.startswith("/page/") or value == "data:,", (tag, value)  # data:, is "no icon"


def test_every_script_and_import_is_a_file_the_page_serves() -> None:
    files = page_files()
    loaded = [attrs["src"] for tag, attrs in _html().tags if tag == "script"]
    assert loaded == ["/page/main.js"]
    for name, text in _scripts().items():
        for target in re.findall(r"""^import [^;]*? from "([^"]+)";""", text, flags=re.M | re.S):
            assert target.startswith("./"), (name, target)
            assert target[2:] in files, (name, target)


def test_no_inline_script_style_or_handler() -> None:
    parsed = _html()
    assert not parsed.script_text
    for tag, attrs in parsed.tags:
        assert tag != "style"
        assert "style" not in attrs, tag
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if tag == "script":
            assert attrs.get("type") == "module", attrs
            assert attrs.get("src"), attrs


def test_no_data_is_ever_parsed_as_html_or_code() -> None:
    forbidden = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function"
        r"|createContextualFragment|DOMParser|setAttribute\(\s*[\"'](?:on|style|href)"
    )
    for name, text in _scripts().items():
        assert not forbidden.search(text), (name, forbidden.search(text))


def test_the_recall_preview_uses_the_plugins_defaults() -> None:
    recall = json.loads(PLUGIN_MANIFEST.read_text(encoding="utf-8"))["configSchema"]["properties"]["recall"]
    plugin = {name: spec["default"] for name, spec in recall["properties"].items()}
    found = re.search(r"RECALL_DEFAULTS = Object\.freeze\((\{[^}]*\})\)", _scripts()["recall.js"])
    assert found, "recall.js names its defaults in RECALL_DEFAULTS"
    page = json.loads(found.group(1))
    assert page == {name: plugin[name] for name in ("maxChars", "maxEntries", "minConfidence", "repeatTurns")}
    # and the budget by which /search's explain data says whether the recall would quote a hit
    assert page == {
        "maxChars": PLUGIN_RECALL.max_chars,
        "maxEntries": PLUGIN_RECALL.max_entries,
        "minConfidence": PLUGIN_RECALL.floor,
        "repeatTurns": PLUGIN_RECALL.repeat_turns,
    }


def test_every_field_has_a_label_and_every_button_a_type() -> None:
    tags = _html().tags
    labelled = {attrs.get("for") for tag, attrs in tags if tag == "label"}
    for tag, attrs in tags:
        if tag in ("input", "select", "textarea"):
            assert attrs.get("id") in labelled, (tag, attrs)  # a screen reader names it by its label
        if tag == "button":
            assert attrs.get("type") in ("button", "submit"), attrs  # no button submits a form by accident
