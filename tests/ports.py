"""Loopback ports where nothing listens: a real refused connection, for a server that is down."""

from __future__ import annotations

import socket


def refused_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again on leaving: connections to it are refused


def refused_url() -> str:
    return f"http://127.0.0.1:{refused_port()}"
