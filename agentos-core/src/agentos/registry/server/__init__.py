"""``agentos index serve``: the index folder over HTTP, with uploads (an ASGI app on Starlette).

Needs the ``server`` extra (``pip install agentos-core[server]``); nothing here is imported
until the server runs, except the token store, which is plain Python.
"""

from .._tokens import TokenStore


def create_app(root: str, *, max_upload: int | None = None):
    """The Starlette application serving (and taking uploads into) the index folder ``root``."""
    from ._app import DEFAULT_MAX_UPLOAD, create_app

    return create_app(root, max_upload=DEFAULT_MAX_UPLOAD if max_upload is None else max_upload)


def serve(
    root: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    workers: int = 1,
    max_upload: int | None = None,
    access_log: bool = True,
    **limits,
):
    """Run uvicorn in the foreground until interrupted.

    ``limits``: ``header_timeout``, ``body_idle``, ``body_total`` (seconds) and ``per_client``
    (open connections per client address and worker); see :mod:`._protocol` and :mod:`._guard`.
    ``verify_workers`` (0: off), ``verify_timeout`` (seconds) and ``verify_queue`` (claims pending at
    most): uploaded claims are verified in the background, see :mod:`._verifier`.
    """
    from ._run import serve

    return serve(root, host=host, port=port, workers=workers, max_upload=max_upload, access_log=access_log, **limits)


__all__ = ["TokenStore", "create_app", "serve"]
