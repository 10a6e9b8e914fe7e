"""HTTP GET with a bound on the whole request's time and on the size of the answer.

urllib's ``timeout`` bounds each socket operation, so a server that sends one byte every few
seconds (headers or body) keeps a reader waiting for ever, and ``read()`` takes whatever size it
is sent. Here a watchdog shuts the connection's socket when ``deadline`` seconds have passed
since the request began (connecting, headers, body, redirects included), and the body is read in
blocks and refused once it passes ``limit`` bytes (a larger ``Content-Length`` is refused before
reading).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.request


class TooLarge(Exception):
    """The answer is larger than the limit."""


class TooSlow(Exception):
    """The request took longer than its deadline."""


class _Watch:
    """The sockets of one request, shut down together when the deadline passes."""

    def __init__(self, deadline: float):
        self.sockets: list[socket.socket] = []
        self.expired = False
        self.lock = threading.Lock()
        self.timer = threading.Timer(deadline, self.expire)
        self.timer.daemon = True

    def add(self, sock) -> None:
        with self.lock:
            self.sockets.append(sock)
            if self.expired:
                self._shut(sock)

    def expire(self) -> None:
        with self.lock:
            self.expired = True
            for sock in self.sockets:
                self._shut(sock)

    @staticmethod
    def _shut(sock) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _opener(watch: _Watch):
    class Connection(http.client.HTTPConnection):
        def connect(self):
            super().connect()
            watch.add(self.sock)

    class SecureConnection(http.client.HTTPSConnection):
        def connect(self):
            super().connect()
            watch.add(self.sock)

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(Connection, req)

    class SecureHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(SecureConnection, req, context=self._context)

    return urllib.request.build_opener(Handler, SecureHandler)


def get(url: str, *, headers: dict | None = None, limit: int, deadline: float, timeout: float, into=None) -> bytes:
    """The body at ``url`` (or, with ``into``, written to that binary file and b"" returned).

    Raises :class:`TooLarge`, :class:`TooSlow`, or what urllib raises (``HTTPError`` for 4xx/5xx).
    """
    watch = _Watch(deadline)
    watch.timer.start()
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with _opener(watch).open(request, timeout=min(timeout, deadline)) as response:
            declared = response.headers.get("Content-Length", "")
            if declared.strip().isdigit() and int(declared) > limit:
                raise TooLarge()
            chunks, size = [], 0
            while block := response.read(1 << 16):
                size += len(block)
                if size > limit:
                    raise TooLarge()
                if into is not None:
                    into.write(block)
                else:
                    chunks.append(block)
            if watch.expired:  # a shut socket can look like a short body
                raise TooSlow()
            return b"".join(chunks)
    except (OSError, http.client.HTTPException):
        if watch.expired:
            raise TooSlow() from None
        raise
    finally:
        watch.timer.cancel()
