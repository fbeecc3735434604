"""Suite-wide test settings."""

from __future__ import annotations

import os

# Starlette's TestClient calls the app as `http://testserver`: without API_KEY the service answers only
# loopback host names and ALLOWED_HOSTS (backend/api/guards.py), so the suite names its test host here.
# tests/api/test_rebinding.py checks the rule itself with raw Host and Origin headers.
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
