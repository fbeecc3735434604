"""A data directory (or a set of server collections) belongs to one vault.

The index records the vault it was built from. Opening it with another vault is refused, naming both and the
fix, instead of "syncing" the other vault's notes away: with one DATA_DIR and two vaults, a sync would remove
every note of the first as deleted. `replace=True` (`python -m backend index --replace`) hands the index over
to this vault, whose rebuild then replaces what the other vault left.
"""

from __future__ import annotations

import logging

from backend.application.ports import IndexCatalog
from backend.domain.errors import VaultMismatchError

log = logging.getLogger(__name__)


def claim_index(catalog: IndexCatalog, vault: str, *, replace: bool = False) -> bool:
    """Check (and on first use record) that the index belongs to `vault`. True when `replace` took over an
    index of another vault: the caller must rebuild it from this vault."""
    owner = catalog.vault_owner()
    if owner == vault:
        return False
    if owner is None:  # a new index, or one built before the vault was recorded: it is this vault's now
        catalog.record_vault_owner(vault)
        return False
    if not replace:
        raise VaultMismatchError(
            f"the index in {catalog.describe()} belongs to the vault {owner}, not to {vault}; "
            "it is left as it is",
            suggestion=f"Give {vault} its own index: another DATA_DIR (--data-dir) or VAULT_NAME; or replace "
            f"the index of {owner} with this vault's: `python -m backend index --replace --vault {vault}`.",
        )
    log.warning("replacing the index of the vault %s with one of %s (--replace)", owner, vault)
    catalog.record_vault_owner(vault)
    return True
