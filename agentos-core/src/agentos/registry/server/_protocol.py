"""The HTTP protocol the server runs: uvicorn's h11 protocol with the guards it lacks.

uvicorn bounds the idle time between requests (``timeout_keep_alive``) and the number of
concurrent connections (``limit_concurrency``, a 503 once headers arrive), but not the time a
client may take to send its headers, nor how many connections one client may hold. So:

- **header timeout**: a request's headers must be complete within ``header_timeout`` seconds of
  the connection (or of the previous response); otherwise the connection is closed;
- **connections per client**: a client address holding ``per_client`` open connections has any
  further one answered 503 and closed at once, before a byte is read (counted per worker
  process), so that slow or idle connections of one client never use up the server's file
  descriptors. Behind a reverse proxy every connection comes from the proxy's address: raise the
  limit there and let the proxy limit its clients;
- **connections in all**: past the process's open-file limit less a reserve (for the index's
  files, uploads and logs), a new connection is answered 503 and closed the same way, so that
  accepting never fails for want of a file descriptor;
- **reason phrase**: a response header ``x-agentos-reason`` (set by the app) becomes the status
  line's reason phrase, where twine and pip show it (as PyPI does), and is not sent as a header.

The limits come from the environment (set by :func:`agentos.registry.server._run.serve`), so that
every worker process reads the same values.
"""

from __future__ import annotations

import os
from collections import Counter

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_ENV = "AGENTOS_SERVE_HEADER_TIMEOUT"
PER_CLIENT_ENV = "AGENTOS_SERVE_PER_CLIENT"
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_PER_CLIENT = 32
REASON_HEADER = b"x-agentos-reason"

_open_per_client: Counter = Counter()
_warned: set = set()
_BUSY_TEXT = b"too many open connections\n"
_BUSY = (
    b"HTTP/1.1 503 Too many open connections\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)


FILE_RESERVE = 64  # file descriptors kept for everything but connections


def _limits() -> tuple[float, int, int]:
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    total = 1 << 20 if soft == resource.RLIM_INFINITY else max(16, soft - FILE_RESERVE)
    return (
        float(os.environ.get(HEADER_TIMEOUT_ENV, DEFAULT_HEADER_TIMEOUT)),
        int(os.environ.get(PER_CLIENT_ENV, DEFAULT_PER_CLIENT)),
        total,
    )


def reason_phrase(text: str) -> bytes:
    """``text`` as a safe reason phrase: printable ASCII on one line, at most 200 characters."""
    line = (text.splitlines() or [""])[0]
    # cut, then stripped: h11 refuses a header value (the reason travels as one) that ends in a space
    return "".join(c if " " <= c <= "~" else "?" for c in line)[:200].strip().encode("ascii")


class _ReasonConnection:
    """An ``h11.Connection`` whose responses take their reason phrase from ``x-agentos-reason``."""

    def __init__(self, conn: h11.Connection):
        self._conn = conn

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def send(self, event):
        if isinstance(event, h11.Response) and any(name == REASON_HEADER for name, _ in event.headers):
            reason = next(value for name, value in event.headers if name == REASON_HEADER)
            headers = [(name, value) for name, value in event.headers if name != REASON_HEADER]
            event = h11.Response(status_code=event.status_code, headers=headers, reason=reason)
        return self._conn.send(event)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout, a per-client connection limit and reasons."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.conn = _ReasonConnection(self.conn)
        self._header_timeout, self._per_client, self._total = _limits()
        self._header_timer = None
        self._armed_cycle = None
        self._peer = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        peer = self.client[0] if self.client else None
        if len(self.connections) > self._total or (peer is not None and _open_per_client[peer] >= self._per_client):
            key = peer if len(self.connections) <= self._total else "*"
            if key not in _warned:  # one line per episode, not one per connection
                _warned.add(key)
                self.logger.warning("%s: over the limit of open connections; refusing more", key)
            transport.write(_BUSY)
            transport.close()
            return
        self._peer = peer
        if peer is not None:
            _open_per_client[peer] += 1
        self._arm_header_timer()

    def connection_lost(self, exc) -> None:
        self._cancel_header_timer()
        if self._peer is not None:
            _open_per_client[self._peer] -= 1
            if _open_per_client[self._peer] <= 0:
                del _open_per_client[self._peer]
                _warned.discard(self._peer)
        if len(self.connections) < self._total:
            _warned.discard("*")
            self._peer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not self._armed_cycle:  # a new request's headers are complete
            self._cancel_header_timer()

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._arm_header_timer()  # the next request's headers have the same time
        super().on_response_complete()
        if self.cycle is not self._armed_cycle:  # a pipelined request was already complete
            self._cancel_header_timer()

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._armed_cycle = self.cycle
        self._header_timer = self.loop.call_later(self._header_timeout, self._headers_too_slow)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()
