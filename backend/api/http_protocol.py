"""uvicorn's HTTP/1.1 protocol with a deadline for the request head.

uvicorn times out idle keep-alive connections, but not a client that opens a connection and then sends its
request line and headers a byte at a time (slowloris): it would hold the connection for ever. Here the head
must have arrived within the deadline (REQUEST_BODY_TIMEOUT_SECONDS; the body has its own, in guards.py), or
the connection is closed. Only the first request of a connection is timed: later ones follow a response,
and uvicorn's keep-alive timeout covers the quiet before them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


def protocol_with_head_deadline(seconds: float) -> type[H11Protocol]:
    """The protocol class to hand to uvicorn (`http=`), closing connections whose head is late."""

    class HeadDeadlineProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._head_timer = self.loop.call_later(seconds, self._head_too_late)

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None:  # a whole request head has arrived
                self._stop_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_timer()
            super().connection_lost(exc)

        def _stop_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_too_late(self) -> None:
            self._head_timer = None
            if self.cycle is None and not self.transport.is_closing():
                self.transport.close()

    return HeadDeadlineProtocol
