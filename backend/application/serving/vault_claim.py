"""A data directory (or a set of server collections) belongs to one vault.

The index records the vault it was built from. Opening it with another vault is refused, naming both and the
way out, instead of "syncing" the other vault's notes away: with one DATA_DIR and two vaults, a sync would
remove every note of the first as deleted. Nothing hands an index over to another vault: each vault gets its
own data dir (DATA_DIR unset: one folder per vault under ./data) or its own VAULT_NAME.
"""

from __future__ import annotations

from backend.application.ports import IndexCatalog
from backend.domain.errors import VaultMismatchError


def claim_index(catalog: IndexCatalog, vault: str) -> None:
    """Check (and on first use record) that the index belongs to `vault`; VaultMismatchError otherwise."""
    owner = catalog.vault_owner()
    if owner == vault:
        return
    if owner is None:  # a new index, or one built before the vault was recorded: it is this vault's now
        catalog.record_vault_owner(vault)
        return
    raise VaultMismatchError(
        f"the index in {catalog.describe()} belongs to the vault {owner}, not to {vault}; it is left as "
        "it is",
        suggestion=f"Give {vault} an index of its own: its own DATA_DIR (left unset, each vault gets its own "
        f"folder under data/) or, on a Qdrant server, its own VAULT_NAME. This index stays {owner}'s: "
        f"`--vault {owner}` reads it.",
    )
