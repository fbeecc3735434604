"""Which vaults a command covers (issue 46): the one `--vault` names, else those of VAULTS here, else those
of the service `--url` names when it serves several (a person at another shell than the service's has no
VAULTS set, and means the service's vaults); and whether what is printed names its vault."""

from __future__ import annotations

import argparse
from typing import Any

from backend.config import Settings
from backend.entrypoints.cli.target import find_service
from backend.entrypoints.cli.vaults import job_vaults, lookup_settings, several


def vault_param(args: argparse.Namespace) -> dict[str, str]:
    """The query parameter naming the vault `--vault NAME` named (none: the service decides, as a route)."""
    return {"vault": args.vault_name} if getattr(args, "vault_name", None) else {}


def labelled(settings: Settings, args: argparse.Namespace) -> bool:
    """Several vaults in play: what is printed names its vault."""
    return (
        several(settings) or getattr(args, "vault_name", None) is not None or len(served(settings, args)) > 1
    )


def vault_names(settings: Settings, args: argparse.Namespace) -> list[str | None]:
    """The vaults a job, or a read of every vault, covers (`job_vaults`); without VAULTS here, those of the
    service `--url` names when it serves several: a person at another shell than the service's has no VAULTS
    set, and means the service's vaults."""
    names = job_vaults(settings, args)
    theirs = served(settings, args) if names == [None] else []
    return list(theirs) if len(theirs) > 1 else names


def served(settings: Settings, args: argparse.Namespace) -> list[str]:
    """The vaults of the service `--url` names, when this command names none itself (no VAULTS, no
    `--vault`); empty otherwise, or when it does not answer."""
    if settings.vaults or getattr(args, "vault_name", None) or not getattr(args, "url", None):
        return []
    if not hasattr(args, "_served"):  # asked once a command
        service, _ = find_service(lookup_settings(settings), args.url)
        status: dict[str, Any] = {}
        if service is not None:
            try:
                status = service.request("GET", "/index/status")
            finally:
                service.close()
        args._served = [str(v["vault"]) for v in status.get("vaults") or ()]
    return list(args._served)


def each_vault(settings: Settings, args: argparse.Namespace) -> list[argparse.Namespace]:
    """The arguments once per vault a read of every vault covers: the one `--vault` names, else with VAULTS
    each vault in turn (as a job runs over every vault: `job_vaults`), else the one vault as given."""
    return [of_vault(args, name) for name in vault_names(settings, args)]


def of_vault(args: argparse.Namespace, name: str | None) -> argparse.Namespace:
    """The arguments with `--vault name`."""
    return argparse.Namespace(**{**vars(args), "vault_name": name})
