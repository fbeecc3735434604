"""Where a CLI command runs: the running service of its vault over HTTP when one answers, else in this
process.

The embedded store belongs to one process, so while the service runs only it can read or write the index:
every command that a service can answer asks the service of its vault first (`--url`, else the one recorded
in the vault's data dir, else HOST:PORT: backend/infrastructure/running_service.py), with API_KEY, and opens
the data dir itself only when none answers. It says which service and vault, or which data dir, on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx

from backend.bootstrap import Services, build_services
from backend.config import Settings
from backend.domain.errors import (
    IndexUnavailableError,
    KnowledgeBridgeError,
    ServiceUnreachableError,
    VaultMismatchError,
)
from backend.infrastructure.running_service import (
    RunningService,
    ServiceLookup,
    describe,
    find_running_service,
)

REQUEST_TIMEOUT = httpx.Timeout(300.0, connect=5.0)  # a first search may wait for the model to load


class ServiceError(KnowledgeBridgeError):
    """An error envelope the running service answered with, raised with its own code."""

    def __init__(self, answer: dict[str, Any], status: int) -> None:
        detail = str(answer.get("detail") or f"the service answered HTTP {status}")
        super().__init__(detail, suggestion=str(answer.get("suggestion") or ""))
        self.code = str(answer.get("error_code") or f"HTTP_{status}")


class RemoteService:
    """The running service, asked over HTTP."""

    def __init__(self, found: RunningService, api_key: str | None) -> None:
        self.found = found
        self.url = found.url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=self.url, headers=headers, timeout=REQUEST_TIMEOUT)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        try:
            response = self._client.request(method, path, json=body, params=params)
        except httpx.HTTPError as exc:
            raise ServiceUnreachableError(
                f"the service at {self.url} stopped answering ({exc.__class__.__name__})",
                suggestion="Check that it still runs (its log says why it stopped), then run the command "
                "again.",
            ) from None
        try:
            answer: dict[str, Any] = response.json()
        except ValueError:
            raise KnowledgeBridgeError(
                f"{self.url}{path} answered HTTP {response.status_code} without JSON: is it Knowledge "
                "Bridge?",
                suggestion="Point --url at the Knowledge Bridge service.",
            ) from None
        if response.status_code >= 400:
            raise ServiceError(answer, response.status_code)
        return answer

    def close(self) -> None:
        self._client.close()


def service_url(text: str) -> str:
    """`--url 127.0.0.1:8000` is http://127.0.0.1:8000, as curl takes it: read as a URL without a scheme it
    reached nothing, and the CLI said no service answered there while one did."""
    return text if "://" in text else f"http://{text}"


def find_service(settings: Settings, url: str | None) -> tuple[RemoteService | None, ServiceLookup]:
    """The service of the settings' vault (at `url` when given: that one or an error), and where the lookup
    went, for the message when none answers."""
    lookup = find_running_service(settings, url)
    if lookup.service is None:
        return None, lookup
    return RemoteService(lookup.service, settings.api_key), lookup


def asking(service: RemoteService, what: str = "") -> None:
    say(f"asking {describe(service.found, what)}")


def working_here(settings: Settings, lookup: ServiceLookup, doing: str) -> None:
    """No service answered: say where this process works, and where the lookup went."""
    where = f"the Qdrant server at {settings.qdrant_url}" if settings.qdrant_url else str(settings.data_dir)
    if settings.vaults:  # several vaults: each keeps its own data dir
        names = ", ".join(settings.vaults)
        say(f"no running service for the vaults {names}: {doing} each one's data dir in this process")
    else:
        say(f"no running service for the vault {settings.vault_path}: {doing} {where} in this process")
    say(f"  (looked at {'; '.join(lookup.looked)})")


def check_same_vault(service: RemoteService, vault: Path | None) -> None:
    """An explicit --vault the service does not serve: its answers would be about another vault."""
    if vault is None:
        return
    served = service.found.vault or service.request("GET", "/index/status").get("vault_path")
    if served and Path(served) != vault.expanduser().resolve():
        raise VaultMismatchError(
            f"the service at {service.url} serves the vault {served}, not --vault {vault}",
            suggestion="Leave --vault out to ask that service, pass --url of the service for this vault, or "
            "stop the service to work on this vault directly.",
        )


def open_local(settings: Settings) -> Services:
    """The index in the data dir, opened in this process (no service of its vault answered); the caller
    closes it."""
    services = build_services(settings)
    try:
        services.supervisor.open(start_indexing=False)  # the command says what runs
    except IndexUnavailableError as exc:
        services.close()
        if "in use by another process" not in exc.detail:
            raise
        # a service too old to record where it listens, on another port than PORT, holds the data dir
        raise IndexUnavailableError(
            exc.detail,
            suggestion="A service (or another command) holds this data directory but was not found (it "
            "records where it listens in the data dir's service.json once restarted): ask it with "
            "--url http://127.0.0.1:<its PORT>, or stop it.",
        ) from None
    except BaseException:
        services.close()
        raise
    return services


def say(message: str) -> None:
    """Where the command runs and what it is waiting for: stderr, so stdout stays the answer."""
    print(message, file=sys.stderr, flush=True)
