"""Schemathesis against our own OpenAPI schema: every operation, bounded and reproducible.

The service runs under uvicorn on a copy of the example vault with the fake embedder (fast, and the dense side
is exercised too). Schemathesis generates schema-valid and schema-breaking requests for every operation
(explicit examples, boundary coverage, then `MAX_EXAMPLES` derandomized fuzz cases: the same cases on every
run), plus requests with methods the path does not answer, and holds every answer to the schema: no 5xx,
only documented status codes, bodies valid against the documented response schema, the right content type,
`Allow` on a 405, schema-breaking input refused, schema-valid input accepted. A second run does the same
with API_KEY set, sending the key, and checks that every operation refuses a missing or invalid one.

What the schema cannot say, the checks are told:
- positive (schema-valid) input may be refused with 400 SECURITY_VIOLATION: "does not leave the vault" is a
  rule about a path's value that no JSON Schema keyword expresses;
- `date_to` before `date_from` compares two fields: such a case must answer 422, and is held to that;
- a `start_line` past the end of the note depends on the note's length: it answers 422 saying so, and the
  check holds the number it names against the note's lines;
- a `vault`/`vaults` name is the service's VAULTS, not a schema's: a name it does not serve answers 422
  UNKNOWN_VAULT (or the schema's own 422 for another field), and is held to that.

Nothing is excluded. /mcp is not an OpenAPI operation (the MCP tests and test_path_safety cover it);
POST /index/rebuild and /index/sync start real jobs, which is bounded here: a few calls, most answered 409
while the first runs.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from backend.bootstrap import build_services
from backend.config import EXAMPLE_VAULT, load_settings
from backend.entrypoints.app import create_app
from tests import live_server
from tests.application.fakes import FakeEmbedder

# its services embed with FakeEmbedder: `make test` runs this file alone, which then prepares no real model
pytestmark = pytest.mark.no_model

KEY = "fuzz-key-0123456789"
MAX_EXAMPLES = 10  # fuzz cases an operation, after its examples and boundary coverage (most of its cases)
FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,  # the same cases on every run: CI is reproducible, a failure replays
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
CASES: Counter[str] = Counter()
STATUSES: defaultdict[str, Counter[int]] = defaultdict(Counter)
POSITIVE_STATUSES = ["2xx", "3xx", "400", "401", "404", "409", "5xx"]  # 400: see the module docstring


def _schema(**overrides: object) -> schemathesis.BaseSchema:
    settings_ = load_settings(embedding_provider="none", vault_path=EXAMPLE_VAULT, **overrides)
    config: dict[str, Any] = {
        "checks": {"positive_data_acceptance": {"expected-statuses": POSITIVE_STATUSES}},
    }
    if "api_key" in overrides:
        config["auth"] = {"openapi": {"bearerAuth": {"bearer": KEY}}}
    return schemathesis.openapi.from_dict(
        create_app(settings_).openapi(), config=SchemathesisConfig.from_dict(config)
    )


open_schema = _schema()
keyed_schema = _schema(api_key=KEY)


def _serve(root: Any, **overrides: object) -> Iterator[str]:
    vault = root / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    config = load_settings(vault_path=vault, data_dir=root / "data", watch=False, **overrides)
    services = build_services(config, embedder=FakeEmbedder(spread=True))
    services.supervisor.open()
    headers = {"Authorization": f"Bearer {KEY}"} if "api_key" in overrides else {}
    with live_server.serving(create_app(config, services=services)) as base:
        live_server.wait_until(lambda: live_server.indexed(base, headers), "the first indexing")
        yield base


@pytest.fixture(scope="module")
def open_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(tmp_path_factory.mktemp("fuzz-open"))


@pytest.fixture(scope="module")
def keyed_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(tmp_path_factory.mktemp("fuzz-keyed"), api_key=KEY)


def _dates_in_order(values: object) -> bool:
    """The documented rule JSON Schema cannot say (it compares two fields): date_to not before date_from."""
    if not isinstance(values, dict):
        return True
    start, end = values.get("date_from"), values.get("date_to")
    return not (isinstance(start, str) and isinstance(end, str) and start > end)


# The operations that start a job: one job runs at a time (409 meanwhile), so each waits for the last to end
# and is exercised, not only refused because the case before it started one.
STARTS_A_JOB = {"/index/sync", "/index/rebuild", "/index/calibrate"}


def _check(case: schemathesis.Case, base: str, run: str) -> None:
    label = f"{run} {case.operation.label}"
    if case.operation.path in STARTS_A_JOB:
        headers = {"Authorization": f"Bearer {KEY}"} if run == "keyed" else {}
        live_server.wait_until(lambda: live_server.indexed(base, headers), "the running job to end")
    if _names_another_vault(case):
        refused = case.call(base_url=base)
        assert refused.status_code >= 400, refused.text  # never answered as if it were served
        if refused.status_code == 422:  # for that name, or for another field the schema itself refuses
            assert refused.json()["error_code"] in ("UNKNOWN_VAULT", "VALIDATION_ERROR"), refused.text
        _ask_the_served_vault(case)  # then the same case of the vault served, to exercise the operation
    response = case.call(base_url=base)
    CASES[label] += 1
    STATUSES[label][response.status_code] += 1
    # a 401 comes from the key check in front of everything (a case sent without the key): no field is read
    dates_wrong = not (_dates_in_order(case.body) and _dates_in_order(case.query))
    if dates_wrong and response.status_code != 401:
        assert response.status_code == 422, response.text
        return
    if _past_the_end(case, response):
        return
    case.validate_response(response, transport_kwargs={"base_url": base})


SERVED = "obsidian"  # the one vault these services serve, by its name (VAULT_NAME's default)


def _names_another_vault(case: schemathesis.Case) -> bool:
    """`vault` or `vaults` naming a vault the service does not serve: what a name means is the service's
    VAULTS, no schema keyword can say it (a null or empty list means every vault)."""
    asked = [
        (case.query or {}).get("vault"),
        *(((case.body or {}) if isinstance(case.body, dict) else {}).get("vaults") or []),
    ]
    if isinstance(case.body, dict) and isinstance(case.body.get("vault"), str):
        asked.append(case.body["vault"])
    return any(isinstance(name, str) and name != SERVED for name in asked)


def _ask_the_served_vault(case: schemathesis.Case) -> None:
    """Each name the schema allows (a string of at most 48 characters) made the served vault's: a case the
    schema refuses for a name stays refused for it."""
    served = lambda name: SERVED if isinstance(name, str) and len(name) <= 48 else name  # noqa: E731
    if isinstance(case.query, dict) and "vault" in case.query:
        case.query["vault"] = served(case.query["vault"])
    if isinstance(case.body, dict):
        if "vault" in case.body:
            case.body["vault"] = served(case.body["vault"])
        if isinstance(case.body.get("vaults"), list):
            case.body["vaults"] = [served(name) for name in case.body["vaults"]]


PAST_THE_END = re.compile(r"start_line \((\d+)\) is past the end of the note \((\d+) lines\)")


def _past_the_end(case: schemathesis.Case, response: Any) -> bool:
    """A read of a note from a line it does not have: 422 naming that line and the note's length."""
    if response.status_code != 422 or not case.operation.path.startswith("/note/"):
        return False
    said = PAST_THE_END.fullmatch(str(response.json().get("detail", "")))
    if said is None:
        return False
    start, total = int(said.group(1)), int(said.group(2))
    assert start == int((case.query or {}).get("start_line", -1)), response.text
    assert start > total, response.text
    return True


@open_schema.parametrize()
@FUZZ
def test_the_api_answers_within_its_schema(case: schemathesis.Case, open_service: str) -> None:
    _check(case, open_service, "open")


@keyed_schema.parametrize()
@FUZZ
def test_with_an_api_key_too(case: schemathesis.Case, keyed_service: str) -> None:
    _check(case, keyed_service, "keyed")


def test_every_operation_was_fuzzed(request: pytest.FixtureRequest) -> None:
    """Guards against a fuzz run that silently generates nothing (a filter, a broken schema). It reads what
    the two fuzz tests above counted, so it needs them in the same session (they run first, in file order)."""
    fuzzers = {"test_the_api_answers_within_its_schema", "test_with_an_api_key_too"}
    collected = {getattr(item, "originalname", item.name) for item in request.session.items}
    if not fuzzers <= collected:
        pytest.skip("only meaningful with both fuzz tests of this module in the same run")
    operations = {
        f"{method.upper()} {path}"
        for path, methods in open_schema.raw_schema["paths"].items()
        for method in methods
    }
    for run in ("open", "keyed"):
        for label in operations:
            assert CASES[f"{run} {label}"] >= 3, (run, label, dict(CASES))
            # answered, not only refused: with the key sent, every operation succeeds at least once
            served = sum(n for status, n in STATUSES[f"{run} {label}"].items() if status < 300)
            assert served >= 1, (run, label, STATUSES[f"{run} {label}"])
    total = sum(CASES.values())
    print(f"\nfuzz cases: {total} ({len(operations)} operations x 2 runs)")
    for label in sorted(STATUSES):
        print(f"  {label}: {CASES[label]} cases, statuses {dict(sorted(STATUSES[label].items()))}")
