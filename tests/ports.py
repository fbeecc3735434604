"""Loopback ports where nothing listens: a real refused connection, for a server that is down."""

from __future__ import annotations

from scripts.measure.service import free_port


def refused_port() -> int:
    return free_port()  # closed again once drawn: connections to it are refused


def refused_url() -> str:
    return f"http://127.0.0.1:{refused_port()}"
