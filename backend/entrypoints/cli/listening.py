"""Where `serve` listens: the socket bound to HOST:PORT, and a bind that fails said as the setting to change
(HOST when no port would help, PORT otherwise); and how it stops on Ctrl+C."""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import signal
import socket
import sys
from types import FrameType

import uvicorn

from backend.config import Settings, SettingsError

log = logging.getLogger("backend")

# the host, not the port: no other port would help (a name that resolves to nothing, "locahost", raises
# socket.gaierror, said the same way)
HOST_ERRORS = {
    errno.EADDRNOTAVAIL: "it is no address of this machine",
    # fe80::1 without its interface, a multicast address: Linux refuses the address itself
    errno.EINVAL: "this machine cannot listen on that address",
    errno.EAFNOSUPPORT: "this machine has no IPv6",
}


def listen(settings: Settings) -> socket.socket:
    """The server's socket, bound and listening (PORT=0: any free port, recorded as the one it got)."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:  # IPv6 switched off: the address family itself is missing
        raise _bind_error(settings, exc) from None
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # as uvicorn does for the sockets it opens: without it, Nagle and delayed ACKs cost 40 ms a request
    # (tests/live_server.py measured it)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((settings.host, settings.port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise _bind_error(settings, exc) from None
    sock.set_inheritable(True)
    return sock


def _bind_error(settings: Settings, exc: OSError) -> SettingsError:
    host, port = settings.host, settings.port
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(exc, socket.gaierror) or exc.errno in HOST_ERRORS:
        why = HOST_ERRORS.get(exc.errno or 0, "it is no address of this machine")
        if _link_local(host):
            why = "it is a link-local address (fe80::), which needs an interface that HOST cannot name"
        return SettingsError(
            f"invalid setting HOST: cannot listen on {where} ({exc.strerror}): {why}; "
            "use 127.0.0.1 (the default) or another address of this machine"
        )
    return SettingsError(
        f"invalid setting PORT: cannot listen on {where} ({exc.strerror}); "
        "another program (or another vault's service) may use it: choose another, e.g. "
        f"`PORT={port + 1} make run`"
    )


def _link_local(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_link_local
    except ValueError:  # a host name
        return False


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


class StoppingServer(uvicorn.Server):
    """uvicorn's server, with Ctrl+C pressed again while it stops said instead of obeyed, and a third press
    stopping the process at once. uvicorn's own second press skipped the app's shutdown (the watcher, the
    jobs and the index left unclosed) and printed tracebacks, and did not stop a shutdown already closing
    the index (joining a search warm-up takes seconds on a large vault)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._told = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            if self._told:
                try:
                    log.warning("stopped at once: the next start checks the index")
                    sys.stdout.flush()  # the access log's last lines: os._exit flushes nothing
                    sys.stderr.flush()
                finally:  # a pipe that will not take them does not keep it running
                    os._exit(130)
            self._told = True
            log.warning(
                "stopping: finishing the requests under way, then closing the index (Ctrl+C again: at once)"
            )
            return
        super().handle_exit(sig, frame)


def serve_until_stopped(server: uvicorn.Server, sock: socket.socket) -> None:
    """Serve on `sock` until a signal stops the server; KeyboardInterrupt once it has shut down when Ctrl+C
    stopped it (the CLI then says "interrupted", exit 130).

    uvicorn shuts down gracefully on SIGINT, then raises the signal again for whoever handled it before.
    Left to asyncio's runner, that SIGINT landed in the loop still closing and printed a traceback (a
    KeyboardInterrupt logged as ERROR) after a clean stop; a handler of ours, set first, takes it instead
    and the runner sets none of its own."""
    stopped: list[int] = []

    def taken(signum: int, frame: FrameType | None) -> None:
        stopped.append(signum)
        if not server.should_exit:  # pressed before uvicorn set its own handler: it stops all the same
            server.handle_exit(signum, frame)

    previous = signal.signal(signal.SIGINT, taken)
    try:
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGINT, previous)
    if stopped:
        raise KeyboardInterrupt
