"""Exchange addresses (``local``, ``redis://host:port``, ``http://host:port``) to Academy factories."""

from __future__ import annotations

from urllib.parse import urlsplit

from agentos.errors import UsageError


def exchange_factory(address: str):
    """The Academy exchange factory for ``address``."""
    address = (address or "local").strip()
    if address == "local":
        from academy.exchange import LocalExchangeFactory

        return LocalExchangeFactory()
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("redis", "http", "https") or not parts.hostname or port is None:
        raise UsageError(f"bad exchange {address!r}: use local, redis://HOST:PORT or http://HOST:PORT")
    if parts.scheme == "redis":
        from academy.exchange import RedisExchangeFactory

        return RedisExchangeFactory(parts.hostname, port, socket_timeout=None, socket_connect_timeout=10)
    from academy.exchange.cloud.client import HttpExchangeFactory

    return HttpExchangeFactory(f"{parts.scheme}://{parts.hostname}:{port}", ssl_verify=parts.scheme == "https")
