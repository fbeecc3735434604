"""Several vaults at the command line (issue 46): which vault `--vault` means, which vaults `--vaults`
asks, and the vaults opened in this process when no service holds them.

`--vault` was, and stays, a vault folder; with several vaults (VAULTS) it also takes a vault's short name
(`--vault work`), as the routes' `?vault=` does. A name wins over a folder of the same name in the working
directory: with VAULTS set, `work` means the vault the person named `work`. A folder that is one of VAULTS'
is that vault; another folder is a vault on its own, VAULTS aside, as `--vault` always meant. Without VAULTS
here, a name is only meaningful to the service `--url` names (it may serve several), which checks it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.bootstrap import Services
from backend.config import Settings, SettingsError, load_settings
from backend.domain.errors import IndexNotReadyError
from backend.vault_set import Library, vault_settings
from backend.vault_set_settings import VAULT_KEY


def choose_vault(args: argparse.Namespace, overrides: dict[str, object]) -> dict[str, object]:
    """Read `--vault` (and `--vaults`) into `args.vault` (a folder or None) and `args.vault_name` (a VAULTS
    name or None); return the settings overrides to load with."""
    args.vault_name = None
    raw: Path | None = args.vault
    if raw is None:
        _check_vaults_option(args, None)
        return overrides
    configured = load_settings(**{**overrides, "vault_path": None}).vaults
    folder = raw.expanduser()
    if str(raw) in configured:
        args.vault_name, args.vault = str(raw), None
        overrides = {**overrides, "vault_path": None}
    elif folder.is_dir():
        same = [name for name, path in configured.items() if path.resolve() == folder.resolve()]
        if same:
            args.vault_name, args.vault = same[0], None
            overrides = {**overrides, "vault_path": None}
        elif configured:  # a folder of its own: a vault alone, as --vault always meant
            overrides = {**overrides, "vaults": {}}
    elif VAULT_KEY.fullmatch(str(raw)) and getattr(args, "url", None) and not configured:
        args.vault_name, args.vault = str(raw), None  # the service at --url knows its vaults' names
        overrides = {**overrides, "vault_path": None}
    else:
        names = f" nor a vault of VAULTS ({', '.join(configured)})" if configured else ""
        raise SettingsError(f"invalid option --vault: {raw} is not a directory{names}")
    _check_vaults_option(args, configured)
    return overrides


def _check_vaults_option(args: argparse.Namespace, configured: dict[str, Path] | None) -> None:
    """`--vaults a,b` as a list (None when not given); `--vault` and `--vaults` together are one too many."""
    given = getattr(args, "vaults", None)
    if given is None:
        return
    names = [name.strip() for name in str(given).split(",") if name.strip()]
    if args.vault_name is not None or args.vault is not None:
        raise SettingsError("invalid options: give --vault or --vaults, not both")
    if not names:
        raise SettingsError(
            "invalid option --vaults: name one vault or more, comma-separated (work,personal)"
        )
    args.vaults = names


def in_vault(settings: Settings, args: argparse.Namespace, typed: str) -> str:
    """A note's path as typed at a terminal: a file's own path (absolute or `~/...`, as a shell completes
    it) inside one of the vaults is that vault's path (`~/Vault/Projects/X.md` -> `Projects/X.md`), its vault
    named in `args.vault_name` when several are configured and none was; any other path as typed (the
    service refuses an absolute one outside every vault). Where the file really is decides: a symlink in
    the vault leading out is not the vault's."""
    # only the shell's own home forms: "~scratch.md" is a note's name (sorted last), not a user's home
    given = Path(typed).expanduser() if typed == "~" or typed.startswith("~/") else Path(typed)
    if not given.is_absolute():
        return typed
    real = given.resolve()
    for name, own in vault_settings(settings).items():
        root = own.vault_path.resolve()
        if args.vault_name not in (None, name) or not real.is_relative_to(root):
            continue
        if several(settings):
            args.vault_name = name
        return real.relative_to(root).as_posix()
    return typed


def several(settings: Settings) -> bool:
    """This command knows of more than one vault: answers name each result's vault."""
    return len(settings.vaults) > 1


def lookup_settings(settings: Settings) -> Settings:
    """The settings to find the running service with: with VAULTS, the first vault's (one service serves
    them all and records itself in each vault's data dir); else the settings as they are."""
    return next(iter(vault_settings(settings).values()))


def own_settings(settings: Settings, name: str | None) -> Settings:
    """The settings of the vault `name` (one of VAULTS), or the settings as they are."""
    if name is None or not settings.vaults:
        return settings
    return vault_settings(settings)[name]


def open_library(settings: Settings) -> Library:
    """Every vault opened in this process (one without VAULTS), as the service opens them: one vault's
    failure stops the command as it always did; with VAULTS it is recorded and the others answer."""
    return Library.open(settings, _open_indexed)


def _open_indexed(settings: Settings) -> Services:
    """A vault's index opened for a command that reads it: a data dir with no index yet is said, not made.
    Opening one makes it, recorded as this vault's: `status --data-dir <a typo>` answered "0 notes" of the
    example vault and left a folder its own vault's `index --data-dir` then refused (VAULT_MISMATCH)."""
    from backend.entrypoints.cli.target import open_local

    if settings.qdrant_url is None and not settings.store_dir.is_dir():
        raise IndexNotReadyError(f"no index of the vault {settings.vault_path} in {settings.data_dir} yet")
    return open_local(settings)


def job_vaults(settings: Settings, args: argparse.Namespace) -> list[str | None]:
    """The vaults a job command runs over: the one `--vault` names; with VAULTS and none named, every vault
    in turn. A person who sets up two vaults and types `index` (or `sync` after a day's notes) means the
    index of both, as `make run` serves both; refusing would make the first setup two commands to learn.
    Each vault's job gets its own progress bar and summary line. Without VAULTS: the one vault (None)."""
    if args.vault_name is not None:
        return [args.vault_name]
    if settings.vaults:
        return list(settings.vaults)
    return [None]
