"""HTTP requests that carry a credential (a token, a password): it never leaves the origin it was meant for.

urllib's redirect handler copies every header of a request to whatever URL a redirect names, the
``Authorization`` header included, and it follows ``https`` to ``http``. Every AgentOS client that
sends a credential (``publish --to``, ``--from-run mlflow:``) opens its requests with :func:`urlopen`:

- a redirect to the same origin (scheme, host and port) keeps the credential;
- a redirect to another origin is followed without it (``Authorization``, ``Proxy-Authorization``
  and ``Cookie`` are dropped, and stay dropped for the rest of the chain);
- a redirect from ``https`` to ``http`` is refused (:class:`RedirectRefused`, one line);
- ``follow_redirects=False`` follows none (urllib then raises its ``HTTPError`` with the 3xx code).
"""

from __future__ import annotations

import urllib.parse
import urllib.request

from ._safe_text import printable
from .errors import UsageError

#: The headers that hold a credential (compared in lower case).
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


class RedirectRefused(UsageError):
    """A redirect that would carry the request from ``https`` to plain ``http``."""


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, lower case, the scheme's default port filled in."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


def _shown(url: str) -> str:
    """``url`` without user name, password, query or fragment, for a message."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or "?"
    try:
        port = parts.port
    except ValueError:
        port = None
    return printable(f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path}")[:200]


class _SameOriginCredentials(urllib.request.HTTPRedirectHandler):
    """Follows redirects; drops the credential headers when the origin changes, refuses https -> http."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is None:
            return None
        before, after = origin(req.full_url), origin(new.full_url)
        if before[0] == "https" and after[0] != "https":
            raise RedirectRefused(f"{_shown(req.full_url)} redirected to {_shown(new.full_url)}: from https to "
                                  f"{after[0] or 'another scheme'}, refused (a credential never travels in clear)")
        if after != before:
            for name in [n for n in new.headers if n.lower() in CREDENTIAL_HEADERS]:
                del new.headers[name]
            for name in [n for n in new.unredirected_hdrs if n.lower() in CREDENTIAL_HEADERS]:
                del new.unredirected_hdrs[name]
        return new


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects become urllib's HTTPError (3xx): nothing is sent anywhere else."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_FOLLOWING = urllib.request.build_opener(_SameOriginCredentials)
_NOT_FOLLOWING = urllib.request.build_opener(_NoRedirects)


def urlopen(request: urllib.request.Request, *, timeout: float, follow_redirects: bool = True):
    """``urllib.request.urlopen(request, timeout=timeout)`` under the rules of this module."""
    return (_FOLLOWING if follow_redirects else _NOT_FOLLOWING).open(request, timeout=timeout)
