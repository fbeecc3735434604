"""Which running service answers for a vault: the service records where it listens in its data dir, and
every client (the CLI, `python -m backend mcp`) finds it there before it tries HOST:PORT.

The record, `DATA_DIR/service.json` (`service-<VAULT_NAME>.json` for another VAULT_NAME, as the store is
`qdrant-<VAULT_NAME>`), written once the socket listens and removed when the service stops::

    {"url": "http://127.0.0.1:8123", "instance": "<random hex>", "pid": 4242, "vault_path": "/abs/vault",
     "vault_name": "obsidian", "started_at": "2026-11-24T18:42:39Z", "version": "0.1.0"}

A record proves nothing by itself (a service killed with SIGKILL leaves it behind, and its port may be
another program's since): it counts only while GET {url}/health answers with the same `instance`.

Where a client looks, first hit wins (`find_running_service`):
1. `--url`, when given: that service or an error, never another.
2. A vault or a data dir named (--vault, --data-dir, VAULT_PATH, DATA_DIR): the record in its data dir.
   Neither named (the bundled example vault is only a default): the services recorded in every data dir
   under ./data. One: that one. Several: ServiceAmbiguousError, naming each with its `--vault`.
3. HOST:PORT from the settings (PORT, else 8000): a Knowledge Bridge service answering there, unless a vault
   is named and its /index/status says it serves another (one that will not say, for want of the right
   API_KEY, is asked: its 401 says what to fix).
None answering: the caller works on the data dir itself, or says so.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from backend.config import DEFAULT_VAULT_NAME, Settings
from backend.data_dirs import DATA_ROOT
from backend.domain.errors import ServiceAmbiguousError, ServiceUnreachableError
from backend.infrastructure.durable_files import write_json_durably

HEALTH_TIMEOUT_SECONDS = 2.0
RECORD_PREFIX = "service"


@dataclass(frozen=True, slots=True)
class ServiceRecord:
    url: str
    instance: str  # what GET /health answers as `instance` while this very process serves
    pid: int
    vault_path: str
    vault_name: str
    started_at: str
    version: str


@dataclass(frozen=True, slots=True)
class RunningService:
    url: str
    vault: str | None  # the vault it serves; None when it would not say (an API_KEY the client lacks)
    found: str  # how it was found, for the client's message: "recorded in data/x/service.json", ...


def record_path(data_dir: Path, vault_name: str = DEFAULT_VAULT_NAME) -> Path:
    name = RECORD_PREFIX if vault_name == DEFAULT_VAULT_NAME else f"{RECORD_PREFIX}-{vault_name}"
    return data_dir / f"{name}.json"


def client_url(host: str, port: int) -> str:
    """How a client on this machine reaches a service bound to host:port (0.0.0.0 and :: are every address:
    loopback is one of them)."""
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address in a URL
    return f"http://{host}:{port}"


def settings_url(settings: Settings) -> str:
    return client_url(settings.host, settings.port)


# -- the service's side ------------------------------------------------------------------------------


def record_service(settings: Settings, port: int, instance: str, version: str) -> Path:
    """Write the record of this process, serving `settings`' vault on `port`; returns where."""
    path = record_path(settings.data_dir, settings.vault_name)
    record = ServiceRecord(
        url=client_url(settings.host, port),
        instance=instance,
        pid=os.getpid(),
        vault_path=str(settings.vault_path),
        vault_name=settings.vault_name,
        started_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        version=version,
    )
    write_json_durably(path, asdict(record))
    return path


def forget_service(path: Path, instance: str) -> None:
    """Remove the record, unless another service has written its own there since."""
    record = read_record(path)
    if record is not None and record.instance == instance:
        path.unlink(missing_ok=True)


# -- the client's side -------------------------------------------------------------------------------


def read_record(path: Path) -> ServiceRecord | None:
    """The record at `path`; None when there is none or it is not one (a half-written or foreign file)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return ServiceRecord(**{name: raw[name] for name in ServiceRecord.__dataclass_fields__})
    except (OSError, ValueError, TypeError, KeyError):
        return None


_clients: dict[bool, httpx.Client] = {}


def _client(base: str) -> httpx.Client:
    """One client per process for the probes, by whether `base` is https: each `httpx.get` built a client and
    its TLS context anew, 70 ms of CPU a probe here, even for the plain-HTTP loopback address a service
    records, where no TLS is spoken at all (so there is nothing to verify)."""
    tls = base.startswith("https:")
    if tls not in _clients:
        _clients[tls] = httpx.Client(verify=tls)
    return _clients[tls]


def health_instance(base: str) -> str | None:
    """The `instance` a Knowledge Bridge service answering at `base` gives on /health ("" for a service
    too old to give one); None when none answers there."""
    try:
        response = _client(base).get(f"{base}/health", timeout=HEALTH_TIMEOUT_SECONDS)
        answer = response.json()
        if response.status_code == 200 and answer.get("status") == "ok":
            return str(answer.get("instance") or "")
    except (httpx.HTTPError, ValueError, AttributeError):
        pass
    return None


def is_alive(record: ServiceRecord) -> bool:
    return health_instance(record.url) == record.instance


def served_vault(base: str, api_key: str | None) -> str | None:
    """The vault the service at `base` serves, from its /index/status; None when it does not say (it needs
    another API key, or answers something else)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = _client(base).get(
            f"{base}/index/status", headers=headers, timeout=HEALTH_TIMEOUT_SECONDS * 5
        )
        vault = response.json().get("vault_path") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return vault if isinstance(vault, str) else None


def recorded_services(root: Path = DATA_ROOT) -> list[tuple[Path, ServiceRecord]]:
    """Every service recorded in `root` and its data dirs one level down (the per-vault folders), that
    still answers as itself."""
    paths = sorted({*root.glob(f"{RECORD_PREFIX}*.json"), *root.glob(f"*/{RECORD_PREFIX}*.json")})
    found = [(path, record) for path in paths if (record := read_record(path)) is not None]
    return [(path, record) for path, record in found if is_alive(record)]


@dataclass(frozen=True, slots=True)
class ServiceLookup:
    service: RunningService | None
    looked: tuple[str, ...]  # where it looked and why that did not do, for the message when none did


def find_running_service(settings: Settings, url: str | None = None) -> ServiceLookup:
    """The running service for `settings`' vault (see the module's docstring for the order)."""
    if url is not None:
        base = url.rstrip("/")
        if health_instance(base) is None:
            raise ServiceUnreachableError(
                f"no Knowledge Bridge service answers at {base}",
                suggestion="Check --url (and that the service runs), or leave --url out to find the service "
                "of this vault (or work on its data dir while none runs).",
            )
        return ServiceLookup(RunningService(base, served_vault(base, settings.api_key), "--url"), ())
    named = settings.vault_named or settings.data_dir_named
    if named:
        own = record_path(settings.data_dir, settings.vault_name)
        record = read_record(own)
        if record is not None and is_alive(record):
            return ServiceLookup(RunningService(record.url, record.vault_path, f"recorded in {own}"), ())
        looked = [f"{own}: {'no service recorded' if record is None else f'{record.url} has stopped'}"]
    else:  # the example vault is only a default: any vault's service recorded under ./data is meant
        # one service of several vaults (VAULTS) records itself in each vault's data dir: one service
        running = list({record.instance: (path, record) for path, record in recorded_services()}.values())
        if len(running) == 1:
            path, found = running[0]
            return ServiceLookup(RunningService(found.url, found.vault_path, f"recorded in {path}"), ())
        if running:
            raise ServiceAmbiguousError(
                f"{len(running)} services run and no vault is named: "
                + ", ".join(f"{found.url} serves {found.vault_path}" for _, found in running),
                suggestion="Name the vault: "
                + ", or ".join(f"`--vault {found.vault_path}`" for _, found in running)
                + " (or set VAULT_PATH).",
            )
        looked = [f"{DATA_ROOT}/: no service recorded in its data dirs"]
    if settings.port == 0:  # any free port: only its record says which
        return ServiceLookup(None, tuple(looked))
    base = settings_url(settings)
    if health_instance(base) is None:
        return ServiceLookup(None, (*looked, f"{base}: nothing answers"))
    vault = served_vault(base, settings.api_key)
    # one that will not say (another API_KEY) is asked all the same: its answer, 401, says what to fix
    if not named or vault is None or vault == str(settings.vault_path):
        return ServiceLookup(RunningService(base, vault, "at HOST:PORT"), ())
    return ServiceLookup(None, (*looked, f"{base}: serves {vault}"))


def describe(service: RunningService, doing: str = "") -> str:
    """`the service at URL<doing> (vault V; recorded in ...)`, for a client's messages."""
    vault = f"vault {service.vault}" if service.vault else "its vault not known"
    return f"the service at {service.url}{doing} ({vault}; {service.found})"
