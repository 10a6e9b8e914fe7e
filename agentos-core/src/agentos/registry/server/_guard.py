"""ASGI middleware around the app: request-body time limits and the security headers of every answer.

**Body time**: while a request body is incomplete, each chunk must arrive within ``body_idle``
seconds and the whole body within ``body_total`` seconds; otherwise the request is answered 408
and the connection closed, so a stalled upload gives back its temporary file at once.

**Headers on every response**: a Content-Security-Policy that allows only the index's own scripts,
styles and images and no framing, ``X-Content-Type-Options: nosniff`` and ``X-Frame-Options:
DENY`` (for browsers without CSP ``frame-ancestors``), and ``Referrer-Policy: no-referrer``.
"""

from __future__ import annotations

import asyncio
import time

DEFAULT_BODY_IDLE = 30.0
DEFAULT_BODY_TOTAL = 600.0

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        b"form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


class BodyTimeout(Exception):
    """The client sends its request body too slowly."""


class Guard:
    """Wraps an ASGI app: bounded body time, security headers."""

    def __init__(self, app, *, body_idle: float = DEFAULT_BODY_IDLE, body_total: float = DEFAULT_BODY_TOTAL):
        self.app = app
        self.body_idle = body_idle
        self.body_total = body_total

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        deadline = time.monotonic() + self.body_total
        body_done = False
        started = False

        async def timed_receive():
            nonlocal body_done
            if body_done:
                return await receive()  # e.g. waiting for a disconnect while a file streams
            wait = min(self.body_idle, deadline - time.monotonic())
            try:
                if wait <= 0:
                    raise TimeoutError
                message = await asyncio.wait_for(receive(), wait)
            except TimeoutError:
                raise BodyTimeout() from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def secured_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in SECURITY_HEADERS if name not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            await self.app(scope, timed_receive, secured_send)
        except BodyTimeout:
            if started:
                raise
            await secured_send(
                {
                    "type": "http.response.start",
                    "status": 408,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")],
                }
            )
            await send({"type": "http.response.body", "body": b"request body too slow: timed out\n"})
