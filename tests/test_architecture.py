"""The shape of the house: inner layers never import outer ones, the domain imports no framework or I/O, the
entry points live together and nothing inside imports them, the adapters sit in folders by what they adapt,
no import circle anywhere in backend/ or scripts/, no module grows past 450 lines, and every `make` target
that measures runs one module of scripts/measure/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

BACKEND = Path(__file__).resolve().parent.parent / "backend"
SCRIPTS = BACKEND.parent / "scripts"
MAKEFILE = BACKEND.parent / "Makefile"
MAX_LINES = 450

# the settings and the wiring at backend/'s root, and the entry points, are outer rings of their own
SETTINGS = (
    "backend.config", "backend.setting_values", "backend.data_dirs", "backend.embedding_server_settings",
    "backend.vault_set_settings",
)  # fmt: skip
WIRING = ("backend.bootstrap", "backend.adapters", "backend.vault_set")
ENTRY_POINTS = ("backend.entrypoints",)

FORBIDDEN = {
    "domain": (
        "backend.application", "backend.infrastructure", "backend.api", *ENTRY_POINTS, *WIRING, *SETTINGS,
        "fastapi", "pydantic", "qdrant_client", "qdrant_edge", "httpx", "onnxruntime", "yaml", "markdown_it",
        "watchdog", "os", "pathlib", "io",
    ),
    "application": (
        "backend.infrastructure", "backend.api", *ENTRY_POINTS, *WIRING, "fastapi", "qdrant_client",
        "qdrant_edge", "httpx", "onnxruntime",
    ),
    "infrastructure": ("backend.api", *ENTRY_POINTS, *WIRING, "fastapi"),
    # the API reaches adapters only through the services the composition root (bootstrap) built
    "api": ("backend.infrastructure", "backend.adapters", *ENTRY_POINTS),
}  # fmt: skip

# backend/'s root: the package, `python -m backend`, the settings (config: the one list of settings;
# setting_values: what single settings accept; data_dirs: where a vault's data lives, which settings derive;
# embedding_server_settings: the part of the settings about a model served over HTTP, which config inherits)
# and the wiring (bootstrap: the services; adapters: the adapters the settings name). The ways in are under
# entrypoints/.
ROOT_MODULES = {
    "__init__.py", "__main__.py", "config.py", "setting_values.py", "data_dirs.py", "bootstrap.py",
    "adapters.py", "embedding_server_settings.py", "vault_set_settings.py", "vault_set.py",
}  # fmt: skip
ROOT_PACKAGES = {"domain", "application", "infrastructure", "api", "entrypoints"}

# infrastructure/ by what each module adapts; the few left at its root are disk and process helpers that
# several adapters and the entry points share (durable JSON records, the disk guard, the data dir check,
# the running service's record, the heap, the judged-query files).
ADAPTER_FOLDERS = {"qdrant", "vault", "markdown", "embedders", "index_catalog", "languages"}
INFRASTRUCTURE_ROOT = {
    "__init__.py", "data_dir.py", "disk_space.py", "durable_files.py", "eval_files.py", "heap.py",
    "running_service.py",
}  # fmt: skip


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            # `from backend.x import y` may import the module backend.x.y
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _module_name(path: Path) -> str:
    parts = path.relative_to(BACKEND.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(root: Path = BACKEND) -> list[Path]:
    return sorted(root.rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_does_not_import_outward(layer: str) -> None:
    offences = [
        f"{path.relative_to(BACKEND)} imports {name}"
        for path in sorted((BACKEND / layer).rglob("*.py"))
        for name in _imports(path)
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[layer])
    ]
    assert offences == []


def test_no_route_and_no_other_door_imports_a_route() -> None:
    """A route only translates: what two doors share (the use case and its translation) lives outside the
    route modules, so no route imports another, and the MCP tools and the CLI import none (the app factory
    mounts them)."""
    routes = BACKEND / "api" / "routes"
    doors = [
        *routes.glob("*.py"),
        BACKEND / "api" / "mcp_server.py",
        *(BACKEND / "entrypoints" / "cli").glob("*.py"),
    ]
    offences = [
        f"{path.relative_to(BACKEND)} imports {name}"
        for path in sorted(doors)
        for name in _imports(path)
        if name.startswith("backend.api.routes.")
    ]
    assert offences == []


def test_backend_root_holds_only_the_package_settings_and_wiring() -> None:
    """A newcomer finds the ways in under entrypoints/ (the CLI and its parts, the HTTP app, MCP over stdio),
    not scattered among the wiring."""
    modules = {p.name for p in BACKEND.glob("*.py")}
    packages = {p.name for p in BACKEND.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert (modules, packages) == (ROOT_MODULES, ROOT_PACKAGES)
    entrypoints = {
        p.relative_to(BACKEND / "entrypoints").as_posix() for p in (BACKEND / "entrypoints").rglob("*.py")
    }
    assert {"app.py", "mcp_stdio.py", "cli/main.py"} <= entrypoints


def test_nothing_inside_imports_an_entry_point() -> None:
    """The entry points are the outermost ring: only `python -m backend` (__main__) reaches into them."""
    offences = [
        f"{path.relative_to(BACKEND)} imports {name}"
        for path in _sources()
        if "entrypoints" not in path.relative_to(BACKEND).parts and path.name != "__main__.py"
        for name in _imports(path)
        if name.startswith("backend.entrypoints")
    ]
    assert offences == []


def test_infrastructure_is_in_folders_by_what_it_adapts() -> None:
    infrastructure = BACKEND / "infrastructure"
    folders = {p.name for p in infrastructure.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == ADAPTER_FOLDERS
    assert {p.name for p in infrastructure.glob("*.py")} == INFRASTRUCTURE_ROOT
    # a name prefix is a folder waiting to be made
    prefixed = [
        p.name for p in infrastructure.rglob("*.py") if p.name.startswith(("qdrant_", "vault_", "markdown_"))
    ]
    assert prefixed == []


# application/ and domain/ in rooms by capability (docs/development.md draws them). A room imports only the
# rooms named here (besides its layer's root modules and the inner layers), so the rooms form no circle and a
# module's folder tells what it may use.
ROOMS = {
    "domain": {
        "notes": set(),
        "text": set(),
        "periods": set(),
        "index": {"notes", "text", "periods"},
        "ranking": {"index", "notes", "text"},
        "recall": {"ranking", "notes", "text"},
    },
    "application": {
        "serving": set(),
        "search": {"serving"},
        "notes": {"serving"},
        "recall": {"search", "notes"},
        "explanation": {"search", "serving"},
        "indexing": {"search", "serving"},
    },
}
# what stays at a layer's root: what every room shares (the domain's values and errors; the ports) and what
# joins the rooms (operations: one use case per operation; evaluation: judged queries through search)
LAYER_ROOTS = {
    "domain": {"__init__.py", "models.py", "links.py", "errors.py", "metrics.py"},
    "application": {"__init__.py", "ports.py", "operations.py", "evaluation.py"},
}


def _room(module: str, layer: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 3 and parts[:2] == ["backend", layer]:
        return parts[2]
    return None


@pytest.mark.parametrize("layer", sorted(ROOMS))
def test_layer_is_in_rooms_by_capability(layer: str) -> None:
    folder = BACKEND / layer
    rooms = {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert rooms == set(ROOMS[layer])
    assert {p.name for p in folder.glob("*.py")} == LAYER_ROOTS[layer]
    # each room says what lives there in its opening comment
    assert all(ast.get_docstring(ast.parse((folder / room / "__init__.py").read_text())) for room in rooms)


@pytest.mark.parametrize("layer", sorted(ROOMS))
def test_a_room_imports_only_the_rooms_it_may_use(layer: str) -> None:
    offences = sorted(
        f"{module} imports {imported}"
        for module, imports in _import_graph().items()
        if (room := _room(module, layer))
        for imported in imports
        if (other := _room(imported, layer)) and other != room and other not in ROOMS[layer][room]
    )
    assert offences == []


def _import_graph(root: Path = BACKEND) -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in _sources(root)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for imported in _imports(path):
            # `from backend.a import b` names a module when backend.a.b is one, else a name in backend.a
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                edges.add(imported)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each an import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_in_backend() -> None:
    """Every import counts, also the ones inside a function (a late import hides a circle, it does not
    remove it); a package's __init__ counts as the package."""
    assert _cycles(_import_graph()) == []


def test_no_import_circle_in_scripts() -> None:
    """The same for the tools: the measurements' parts import what they share from common.py, service.py and
    bench/parts.py, never the suite that runs them."""
    assert _cycles(_import_graph(SCRIPTS)) == []


def test_the_cycle_check_sees_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_over_450_lines() -> None:
    long = {
        str(path.relative_to(BACKEND.parent)): lines
        for path in [*_sources(), *_sources(SCRIPTS)]
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def _recipes() -> dict[str, list[str]]:
    """Each Makefile target's command lines, continuations joined and the Makefile's own variables expanded
    once (`$(EVAL)`)."""
    text = MAKEFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    variables = dict(re.findall(r"^([A-Z_]+) :?= (.*)$", text, flags=re.MULTILINE))
    recipes: dict[str, list[str]] = {}
    target = None
    for line in text.splitlines():
        if match := re.match(r"^([a-z][\w-]*):", line):
            target = match.group(1)
            recipes[target] = []
        elif line.startswith("\t") and target is not None:
            recipes[target].append(re.sub(r"\$\((EVAL)\)", lambda m: variables[m.group(1)], line.strip()))
        elif line and not line.startswith("#"):
            target = None  # a variable or a directive: the recipe has ended
    return recipes


def test_every_measuring_make_target_runs_one_module_of_scripts_measure() -> None:
    """`make eval`, `eval-*`, `bench`, `bench-*` and `loadtest`: one command each (a usage check aside), which
    runs one module of scripts/measure/ that exists."""
    measuring = {t: lines for t, lines in _recipes().items() if re.match(r"(eval|bench|loadtest)\b", t)}
    assert {"eval", "eval-languages", "eval-vaults", "bench", "loadtest"} <= measuring.keys()
    for target, lines in measuring.items():
        commands = [line for line in lines if not line.startswith("@")]  # bench-compare's usage check
        modules = [m for line in commands for m in re.findall(r"-m (scripts\.measure\.[\w.]+)", line)]
        assert len(commands) == len(modules) == 1, (target, lines)
        assert (SCRIPTS.parent / (modules[0].replace(".", "/") + ".py")).is_file(), (target, modules[0])
