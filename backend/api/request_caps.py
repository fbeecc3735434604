"""How much a request's filter lists may hold (MAX_FILTER_ITEMS entries per list, MAX_FILTER_BYTES in all).

A filter list is matched against every candidate chunk; a few hundred thousand paths would make one request
cost what thousands of searches cost. The body limit (MAX_REQUEST_BYTES) alone allows ~1 MB of them.
"""

from __future__ import annotations

from backend.config import Settings
from backend.domain.errors import RequestTooLargeError

FILTER_LISTS = ("paths", "folders", "tags", "exclude_categories")
_SUGGESTION = (
    "Send fewer filter values (the limits are MAX_FILTER_ITEMS per list and MAX_FILTER_BYTES in all): "
    "filter on folders or tags instead of long lists of paths."
)


def check_filter_caps(body: object, settings: Settings) -> None:
    """413 REQUEST_TOO_LARGE when a filter list of `body` (a /search or /context request) is over a cap."""
    total = 0
    for name in FILTER_LISTS:
        values: list[str] = getattr(body, name, None) or []
        if len(values) > settings.max_filter_items:
            raise RequestTooLargeError(
                f"{name}: {len(values):,} entries; at most {settings.max_filter_items:,} (MAX_FILTER_ITEMS)",
                suggestion=_SUGGESTION,
            )
        total += sum(len(value.encode("utf-8", "surrogatepass")) for value in values)
    if total > settings.max_filter_bytes:
        raise RequestTooLargeError(
            f"filter lists hold {total:,} bytes; at most {settings.max_filter_bytes:,} (MAX_FILTER_BYTES)",
            suggestion=_SUGGESTION,
        )
