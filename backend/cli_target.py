"""Where a CLI command runs: the running service over HTTP when one answers, else in this process.

The embedded store belongs to one process, so while the service runs only it can read or write the index:
every command that a service can answer asks it first (`--url`, else http://HOST:PORT from the settings, with
API_KEY), and opens DATA_DIR itself only when nothing answers. It says which, on stderr.
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

HEALTH_TIMEOUT_SECONDS = 2.0
REQUEST_TIMEOUT = httpx.Timeout(300.0, connect=5.0)  # a first search may wait for the model to load


class ServiceError(KnowledgeBridgeError):
    """An error envelope the running service answered with, raised with its own code."""

    def __init__(self, answer: dict[str, Any], status: int) -> None:
        detail = str(answer.get("detail") or f"the service answered HTTP {status}")
        super().__init__(detail, suggestion=str(answer.get("suggestion") or ""))
        self.code = str(answer.get("error_code") or f"HTTP_{status}")


class RemoteService:
    """The running service, asked over HTTP."""

    def __init__(self, url: str, api_key: str | None) -> None:
        self.url = url.rstrip("/")
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


def settings_url(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address in a URL
    return f"http://{host}:{settings.port}"


def find_service(settings: Settings, url: str | None) -> RemoteService | None:
    """The service answering at `url` (or at HOST:PORT); None when nothing does and no --url was given."""
    base = (url or settings_url(settings)).rstrip("/")
    if service_answers(base):
        return RemoteService(base, settings.api_key)
    if url is not None:  # asked for this one: working on DATA_DIR instead would answer another question
        raise ServiceUnreachableError(
            f"no Knowledge Bridge service answers at {base}",
            suggestion="Check --url (and that the service runs), or leave --url out to work on DATA_DIR "
            "directly while no service runs.",
        )
    return None


def service_answers(base: str) -> bool:
    """A Knowledge Bridge service (its /health, not just any server) answers at `base`."""
    try:
        response = httpx.get(f"{base}/health", timeout=HEALTH_TIMEOUT_SECONDS)
        return response.status_code == 200 and response.json().get("status") == "ok"
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def check_same_vault(service: RemoteService, status: dict[str, Any], vault: Path | None) -> None:
    """An explicit --vault the service does not serve: its answers would be about another vault."""
    if vault is None:
        return
    served = status.get("vault_path")
    if served and Path(served) != vault.expanduser().resolve():
        raise VaultMismatchError(
            f"the service at {service.url} serves the vault {served}, not --vault {vault}",
            suggestion="Leave --vault out to ask that service, pass --url of the service for this vault, or "
            "stop the service to work on this vault directly.",
        )


def open_local(settings: Settings, *, replace: bool = False, asked: str = "") -> Services:
    """The index in DATA_DIR, opened in this process (no service answered at `asked`); the caller closes
    it."""
    services = build_services(settings)
    services.supervisor.replace_vault = replace
    try:
        services.supervisor.open(start_indexing=False)  # the command says what runs
    except IndexUnavailableError as exc:
        services.close()
        if "in use by another process" not in exc.detail:
            raise
        # the case: a service on another port holds DATA_DIR; the CLI asked the default one
        raise IndexUnavailableError(
            exc.detail,
            suggestion=f"A service (or another command) holds this data directory but does not answer at "
            f"{asked or 'HOST:PORT'}: ask it with --url http://127.0.0.1:<its PORT>, or stop it.",
        ) from None
    except BaseException:
        services.close()
        raise
    return services


def say(message: str) -> None:
    """Where the command runs and what it is waiting for: stderr, so stdout stays the answer."""
    print(message, file=sys.stderr, flush=True)
